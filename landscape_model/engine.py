"""Runs the model through time: fast (as quickly as it computes) or in real time.

Each tick of `dt` simulated seconds moves the queues of the current configuration
(dynamics.py: dispatcher queues and update backlogs grow and drain by conservation) and
draws that tick's dialog steps, their times, SQL executions and buffer-pool reads from a
generator seeded by (seed, tick). A tick's numbers therefore depend only on the seed, the
tick and the faults active in it, never on wall-clock timing: fast and real-time runs agree
exactly.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from landscape_model.catalog import Catalog
from landscape_model.config import Landscape, Scenario
from landscape_model.cpu_stations import station_busy
from landscape_model.dynamics import Dynamics
from landscape_model.network import CompiledNetwork, compile_network
from landscape_model.results import BUCKETS, OperatingPoint
from landscape_model.solver import Solver
from landscape_model.terms import COMPONENTS, RESPONSE_PARTS

_C = {name: k for k, name in enumerate(COMPONENTS)}
_SAMPLED = [k for k, name in enumerate(COMPONENTS) if name not in ("response", "cpu")]
_RESPONSE = [_C[p] for p in RESPONSE_PARTS]


@dataclass
class Totals:
    """Cumulative counters since the start of the run, as a monitor would read them."""

    sim_time: float
    steps: np.ndarray  # [instance, task_type, transaction]
    seconds: np.ndarray  # [instance, task_type, transaction, component]
    db_calls: np.ndarray  # [instance, task_type, transaction]
    bucket_counts: np.ndarray  # [instance, task_type, transaction, bucket] (non-cumulative)
    roll_file_bytes: np.ndarray  # [instance]
    sap_buffer_requests: np.ndarray  # [instance, buffer]
    sap_buffer_hits: np.ndarray
    sap_buffer_swaps: np.ndarray
    stmt_exec: np.ndarray  # [statement]
    stmt_rows: np.ndarray
    stmt_seconds: np.ndarray
    pool_data_logical: np.ndarray  # [bufferpool]
    pool_data_physical: np.ndarray
    pool_index_logical: np.ndarray
    pool_index_physical: np.ndarray
    pool_data_writes: np.ndarray
    pool_async_data_writes: np.ndarray
    pool_index_writes: np.ndarray
    pool_async_index_writes: np.ndarray
    host_cpu_seconds: np.ndarray  # [host] busy CPU-seconds
    # Every simulated host (app servers, then the central-services host, then the DB host):
    os_cpu_busy_seconds: np.ndarray
    os_page_ops: np.ndarray  # Memory\\Pages/sec, summed
    os_disk_queue_seconds: np.ndarray  # outstanding I/Os integrated over time
    os_disk_reads: np.ndarray
    os_disk_writes: np.ndarray
    db_cpu_seconds: float = 0.0
    cs_cpu_seconds: float = 0.0
    disk_busy_seconds: float = 0.0
    # [CPU station] (placement.py) busy CPU-seconds of its tenants; runs stored before it
    # was counted have none.
    cpu_station_busy_seconds: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def copy(self) -> Totals:
        return Totals(
            **{k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in vars(self).items()}
        )

    @classmethod
    def zeros(
        cls, n_i: int, n_t: int, n_s: int, n_p: int, n_b: int, n_app: int, n_os: int, n_cpu: int
    ) -> Totals:
        """Nothing counted yet: n_i instances, n_t transactions, n_s statements, n_p buffer
        pools, n_b SAP buffers, n_app application hosts, n_os simulated hosts, n_cpu CPU
        stations."""
        return cls(
            sim_time=0.0,
            steps=np.zeros((n_i, 2, n_t)),
            seconds=np.zeros((n_i, 2, n_t, len(COMPONENTS))),
            db_calls=np.zeros((n_i, 2, n_t)),
            bucket_counts=np.zeros((n_i, 2, n_t, len(BUCKETS) + 1)),
            roll_file_bytes=np.zeros(n_i),
            sap_buffer_requests=np.zeros((n_i, n_b)),
            sap_buffer_hits=np.zeros((n_i, n_b)),
            sap_buffer_swaps=np.zeros((n_i, n_b)),
            stmt_exec=np.zeros(n_s),
            stmt_rows=np.zeros(n_s),
            stmt_seconds=np.zeros(n_s),
            pool_data_logical=np.zeros(n_p),
            pool_data_physical=np.zeros(n_p),
            pool_index_logical=np.zeros(n_p),
            pool_index_physical=np.zeros(n_p),
            pool_data_writes=np.zeros(n_p),
            pool_async_data_writes=np.zeros(n_p),
            pool_index_writes=np.zeros(n_p),
            pool_async_index_writes=np.zeros(n_p),
            host_cpu_seconds=np.zeros(n_app),
            os_cpu_busy_seconds=np.zeros(n_os),
            os_page_ops=np.zeros(n_os),
            os_disk_queue_seconds=np.zeros(n_os),
            os_disk_reads=np.zeros(n_os),
            os_disk_writes=np.zeros(n_os),
            cpu_station_busy_seconds=np.zeros(n_cpu),
        )


@dataclass
class Snapshot:
    """What a scrape sees: the counters and the current state (gauges)."""

    totals: Totals
    state: OperatingPoint
    scenario: str
    faults: tuple[str, ...]
    sid: str
    users: int
    think_time_s: float
    host_cpus: int
    db_cpus: int
    cs_cpus: int
    steps_per_cycle: int
    line_items: dict[str, int] = field(default_factory=dict)
    pool_pages: list[int] = field(default_factory=list)
    os_hosts: list[str] = field(default_factory=list)
    os_roles: list[str] = field(default_factory=list)  # Landscape.host_role of each
    os_cpus: list[int] = field(default_factory=list)
    os_memory_bytes: list[int] = field(default_factory=list)
    os_available_bytes: list[float] = field(default_factory=list)
    os_system_cpu_share: float = 0.0
    pool_page_bytes: list[int] = field(default_factory=list)
    dialog_steps: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class UnconvergedSolve:
    """An analytic solve whose fixed point was not reached (`Solver.converged` False): the
    faults and users it was of, its sweeps and what one more sweep would still change
    (`Solver.residual`)."""

    faults: tuple[str, ...]
    users: int
    iterations: int
    residual: float


class ModelRun(ABC):
    """What both engines share: the configuration they run, the run loop over ticks, and
    the snapshot a scrape sees. An engine provides `step`, `set_faults` and `snapshot`."""

    def __init__(
        self,
        scenario: str,
        faults: Iterable[str] = (),
        seed: int = 1,
        dt: float = 1.0,
        catalog: Catalog | None = None,
        overrides: dict | None = None,
        landscape: Path | None = None,
        settings: Sequence[str] = (),
    ) -> None:
        self.catalog = catalog or Catalog()
        self.scenario_name = scenario
        self.landscape_file = landscape
        self.settings = tuple(settings)
        self.seed = seed
        self.dt = dt
        self.overrides = overrides or {}
        self.tick = 0
        self._lock = threading.Lock()
        # The analytic engine's solves whose fixed point was not reached (Solver.converged),
        # for the commands to say so; the discrete-event engine solves none.
        self.unconverged: list[UnconvergedSolve] = []
        self._networks: dict[tuple, CompiledNetwork] = {}
        self._start(tuple(faults))

    @abstractmethod
    def _start(self, faults: tuple[str, ...]) -> None:
        """Set up the engine's state for the scenario under these faults."""

    def compiled(self, faults: tuple[str, ...]) -> CompiledNetwork:
        """The scenario under these faults compiled into the network an engine runs: once per
        (faults, overrides), for whichever engine this run is (neither engine compiles)."""
        key = (faults, repr(sorted(self.overrides.items())))
        if key not in self._networks:
            self._networks[key] = compile_network(self._scenario(faults))
        return self._networks[key]

    def _scenario(self, faults: tuple[str, ...]) -> Scenario:
        """The scenario under these faults, with the run's landscape, settings, overrides."""
        return self.catalog.scenario(
            self.scenario_name,
            faults,
            overrides=self.overrides,
            landscape=self.landscape_file,
            settings=self.settings,
        )

    def rebuild(self, scenario: str, faults: Iterable[str], users: int | None = None) -> ModelRun:
        """A fresh run of `scenario` under `faults` on this run's engine (the live model's
        one path for a scenario switch and for a restore after a restart): the same seed,
        tick, catalog, landscape file, settings and overrides, the users given or the
        scenario's own."""
        overrides = {k: v for k, v in self.overrides.items() if k != "users"}
        if users is not None:
            overrides["users"] = users
        return type(self)(
            scenario,
            faults=faults,
            seed=self.seed,
            dt=self.dt,
            catalog=self.catalog,
            overrides=overrides,
            landscape=self.landscape_file,
            settings=self.settings,
        )

    def configure(self, faults: Iterable[str], users: int) -> None:
        """These faults and this many users, both or neither: a change the model refuses
        (a configuration error, even MemoryError) leaves the run exactly on the
        configuration it had, its cached solution with it."""
        faults = tuple(dict.fromkeys(faults))
        old_overrides, old_faults = dict(self.overrides), self.faults
        try:
            if faults != self.faults:
                self.set_faults(faults)
            if users != self.scenario.users:
                self.set_users(users)
        except BaseException:
            # set_users stores its override before solving: put it back with the faults.
            self.overrides = old_overrides
            self.set_faults(old_faults)
            raise

    def _override_users(self, users: int) -> None:
        if users <= 0:
            raise ValueError("users must be positive")
        self.overrides = {**self.overrides, "users": int(users)}

    @abstractmethod
    def step(self) -> None:
        """Advance one tick of dt simulated seconds."""

    @abstractmethod
    def set_faults(self, faults: Iterable[str]) -> None:
        """Switch the active faults from the next tick."""

    def run(
        self,
        duration_s: float,
        progress: Callable[[int, int], None] | None = None,
        schedule: dict[int, tuple[str, ...]] | None = None,
    ) -> Totals:
        """Fast mode: `duration_s` of simulated time; schedule maps tick -> faults."""
        ticks = round(duration_s / self.dt)
        for k in range(ticks):
            if schedule and self.tick in schedule:
                self.set_faults(schedule[self.tick])
            self.step()
            if progress and (k % 60 == 59 or k == ticks - 1):
                progress(k + 1, ticks)
        return self.snapshot().totals

    @abstractmethod
    def snapshot(self) -> Snapshot:
        """What a scrape sees now."""

    def _snapshot(self, totals: Totals, state: OperatingPoint) -> Snapshot:
        """The snapshot of the current scenario with these counters and this state."""
        sc = self.scenario
        land = sc.landscape
        return Snapshot(
            totals=totals.copy(),
            state=state,
            scenario=self.scenario_name,
            faults=self.faults,
            sid=land.sid,
            users=sc.users,
            think_time_s=sc.think_time_s,
            host_cpus=land.app_servers.cpus,
            db_cpus=land.host(land.database.host).cpus,
            cs_cpus=land.host(land.central_services.host).cpus,
            steps_per_cycle=sc.steps_per_cycle,
            line_items={k: t.line_items for k, t in sc.transactions.items()},
            dialog_steps={k: t.dialog_steps for k, t in sc.transactions.items()},
            pool_pages=[p.pages for p in land.database.bufferpools],
            **_os_view(land, state),
            pool_page_bytes=[p.page_kb * 1024 for p in land.database.bufferpools],
        )


class Simulation(ModelRun):
    """The landscape model of one scenario, advanced tick by tick."""

    def _start(self, faults: tuple[str, ...]) -> None:
        self._targets: dict[tuple, tuple[Scenario, OperatingPoint, Solver]] = {}
        self.faults: tuple[str, ...] = ()
        self.scenario, self.target, solver = self._resolve(faults)
        self.faults = faults
        # Start settled: a run begins from the steady state of its configuration.
        self.dynamics = Dynamics(self.target, solver)
        self.current = self.dynamics.advance(0.0)
        op = self.target
        n_i, _, n_t = op.step_rate.shape
        self.totals = Totals.zeros(
            n_i,
            n_t,
            len(op.statements),
            len(op.bufferpools),
            len(op.sap_buffers),
            len(op.hosts),
            len(self.scenario.landscape.hosts),
            len(solver.net.placement.stations),
        )

    def _resolve(self, faults: tuple[str, ...]) -> tuple[Scenario, OperatingPoint, Solver]:
        key = (faults, repr(sorted(self.overrides.items())))
        if key not in self._targets:
            network = self.compiled(faults)
            scenario = network.scenario
            solver = Solver(network, seed=self.seed)
            self._targets[key] = (scenario, solver.solve(), solver)
            if not solver.converged:
                self.unconverged.append(
                    UnconvergedSolve(faults, scenario.users, solver.iterations, solver.residual)
                )
        return self._targets[key]

    def set_users(self, users: int) -> None:
        """Change the number of logged-on users (ramp-up, ramp-down) from the next tick."""
        self._override_users(users)
        scenario, target, solver = self._resolve(self.faults)
        with self._lock:
            self.scenario, self.target = scenario, target
            self.dynamics.retarget(target, solver)

    def set_faults(self, faults: Iterable[str]) -> None:
        """Switch the active faults; queues move toward the new state from the next tick."""
        faults = tuple(dict.fromkeys(faults))
        scenario, target, solver = self._resolve(faults)
        with self._lock:
            self.scenario, self.target, self.faults = scenario, target, faults
            self.dynamics.retarget(target, solver)

    def step(self) -> None:
        """Advance one tick of dt simulated seconds."""
        with self._lock:
            configuration = self.dynamics.configuration()
        # The slow part of a tick after a change, outside the lock (Dynamics.prepare).
        self.dynamics.prepare(configuration)
        with self._lock:
            scenario = self.scenario
            dt = self.dt
            op = self.dynamics.advance(dt)
            net = self.dynamics.solver.net
        rng = np.random.default_rng([self.seed, self.tick])
        cv = scenario.histogram_cv
        n = rng.poisson(op.step_rate * dt).astype(float)
        # A sum of n gamma-distributed step times is gamma with n times the shape:
        # exact, unbiased and never negative, however few steps a tick holds.
        shape = 1.0 / cv**2
        sums = rng.gamma(np.broadcast_to(n[..., None] * shape, op.means.shape), op.means / shape)
        out = np.zeros_like(sums)
        out[..., _SAMPLED] = sums[..., _SAMPLED]
        # CPU time lies within processing time; keep their ratio from the operating point.
        ratio = np.divide(
            op.means[..., _C["cpu"]],
            op.means[..., _C["processing"]],
            out=np.zeros_like(n),
            where=op.means[..., _C["processing"]] > 0,
        )
        out[..., _C["cpu"]] = out[..., _C["processing"]] * ratio
        out[..., _C["response"]] = out[..., _RESPONSE].sum(axis=-1)
        # Per transaction; from a stream of its own, so the histogram's draws never shift
        # the tick's other numbers.
        buckets = np.random.default_rng([self.seed, self.tick, 1]).multinomial(
            n.astype(np.int64), op.bucket_probs
        )
        calls = rng.poisson(n * op.db_calls_per_step[None, :, :])
        stmt = rng.poisson(op.stmt_exec_rate * dt).astype(float)
        with self._lock:
            t = self.totals
            t.steps += n
            t.seconds += out
            t.db_calls += calls
            t.bucket_counts += buckets
            t.roll_file_bytes += op.roll_file_bytes_rate * dt
            t.stmt_exec += stmt
            t.stmt_rows += stmt * np.divide(
                op.stmt_rows_rate,
                op.stmt_exec_rate,
                out=np.zeros_like(stmt),
                where=op.stmt_exec_rate > 0,
            )
            t.stmt_seconds += stmt * op.stmt_time
            for name in (
                "pool_data_logical",
                "pool_data_physical",
                "pool_index_logical",
                "pool_index_physical",
            ):
                getattr(t, name)[:] += rng.poisson(getattr(op, name) * dt)
            db_writes = 0.0
            for kind in ("data", "index"):
                rate = getattr(op, f"pool_{kind}_writes")
                writes = rng.poisson(rate * dt).astype(float)
                share = np.divide(
                    getattr(op, f"pool_async_{kind}_writes"),
                    rate,
                    out=np.zeros_like(writes),
                    where=rate > 0,
                )
                getattr(t, f"pool_{kind}_writes")[:] += writes
                getattr(t, f"pool_async_{kind}_writes")[:] += np.round(writes * share)
                db_writes += float(writes.sum())
            db_reads = float(
                rng.poisson((op.pool_data_physical.sum() + op.pool_index_physical.sum()) * dt)
            )
            self._os_tick(t, op, scenario, rng, db_reads, db_writes, dt)
            requests = rng.poisson(op.sap_buffer_request_rate * dt).astype(float)
            hit_share = np.divide(
                op.sap_buffer_hit_rate,
                op.sap_buffer_request_rate,
                out=np.zeros_like(requests),
                where=op.sap_buffer_request_rate > 0,
            )
            t.sap_buffer_requests += requests
            t.sap_buffer_hits += rng.binomial(requests.astype(np.int64), np.clip(hit_share, 0, 1))
            t.sap_buffer_swaps += rng.poisson(op.sap_buffer_swap_rate * dt)
            land = scenario.landscape
            t.host_cpu_seconds += op.host_cpu_util * land.app_servers.cpus * dt
            t.db_cpu_seconds += op.db_cpu_util * land.host(land.database.host).cpus * dt
            t.cs_cpu_seconds += op.cs_cpu_util * land.host(land.central_services.host).cpus * dt
            t.disk_busy_seconds += op.disk_util * land.database.disks.count * dt
            t.cpu_station_busy_seconds += station_busy(net, op) * dt
            t.sim_time += dt
            self.current = op
            self.tick += 1

    @staticmethod
    def _os_tick(
        t: Totals,
        op: OperatingPoint,
        scenario: Scenario,
        rng,
        db_reads: float,
        db_writes: float,
        dt: float,
    ) -> None:
        """OS counters of every simulated host for one tick (windows/node exporter view)."""
        land = scenario.landscape
        hosts = [h.name for h in land.hosts]
        cpus = np.array([h.cpus for h in land.hosts], dtype=float)
        app = np.array([hosts.index(h) for h in op.hosts])
        db, cs = hosts.index(land.database.host), hosts.index(land.central_services.host)
        busy = np.zeros(len(hosts))
        busy[app] += op.host_cpu_util * land.app_servers.cpus
        busy[cs] += op.cs_cpu_util * cpus[cs]
        busy[db] += op.db_cpu_util * cpus[db]
        t.os_cpu_busy_seconds += busy * dt
        t.os_page_ops += rng.poisson(land.os.page_ops_per_s * dt, size=len(hosts))
        # Roll-file traffic is the app servers' disk load; each roll is one I/O.
        roll_rate = np.bincount(
            op.instance_host, weights=op.roll_file_bytes_rate, minlength=len(op.hosts)
        )
        util = np.minimum(roll_rate / land.instance.roll.roll_file_bytes_per_s, 0.95)
        db_util = min(op.disk_util, 0.99)
        # Mean outstanding I/Os: an M/M/1 queue per disk.
        disk_q = np.zeros(len(hosts))
        disk_q[app] += util / (1 - util)
        disk_q[db] += land.database.disks.count * db_util / (1 - db_util)
        t.os_disk_queue_seconds += disk_q * dt
        roll_ios = roll_rate * dt / land.instance.roll.user_roll_bytes
        t.os_disk_reads[app] += roll_ios / 2
        t.os_disk_writes[app] += roll_ios / 2
        t.os_disk_reads[db] += db_reads
        t.os_disk_writes[db] += db_writes

    def snapshot(self) -> Snapshot:
        with self._lock:
            return self._snapshot(self.totals, self.current)


class RealTimeRunner:
    """Advances a Simulation with the wall clock (speed x real time) in a daemon thread."""

    def __init__(self, sim: Simulation, speed: float = 1.0) -> None:
        if speed <= 0:
            raise ValueError("speed must be positive")
        self.sim = sim
        self.speed = speed
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="wlmon-model", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._thread.join(timeout)

    def _loop(self) -> None:
        start = time.monotonic()
        start_tick = self.sim.tick
        while not self._stop.is_set():
            due = start + (self.sim.tick - start_tick + 1) * self.sim.dt / self.speed
            delay = due - time.monotonic()
            if delay > 0 and self._stop.wait(delay):
                return
            self.sim.step()


def _os_view(land: Landscape, op: OperatingPoint) -> dict:
    """Hosts, CPUs, memory and what is left available, as the OS would report it."""
    hosts = land.hosts
    names = [h.name for h in hosts]
    used = np.zeros(len(hosts))
    per_inst = land.instance.base_memory_bytes + op.em_used + op.roll_buffer_used
    np.add.at(used, [names.index(op.hosts[h]) for h in op.instance_host], per_inst)
    pools = sum(p.pages * p.page_kb * 1024 for p in land.database.bufferpools)
    used[names.index(land.database.host)] += pools + land.database.other_memory_bytes
    return {
        "os_hosts": names,
        "os_roles": [land.host_role(name) for name in names],
        "os_cpus": [h.cpus for h in hosts],
        "os_memory_bytes": [h.memory_bytes for h in hosts],
        "os_available_bytes": [
            max(0.0, h.memory_bytes - land.os.base_memory_bytes - u)
            for h, u in zip(hosts, used, strict=True)
        ],
        "os_system_cpu_share": land.os.system_cpu_share,
    }
