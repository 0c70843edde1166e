"""The operating point of a scenario: steady-state means of every ST03 component.

Method (docs/model.md): a closed queueing network with work-process concurrency, solved by
decomposition with flow-equivalent servers.

- Classes: the dialog steps of each instance (a closed class: its users) and its V1 updates
  (an open class fed by the dialog steps that save).
- Inner network: what a busy work process visits. Host CPUs (processor sharing over the
  host's cores, shared by every instance and the database placed there), the database host's
  CPUs, the data disks (one FCFS queue per disk, service by device kind), the log devices
  (or the data disks, when the log shares them: `database.log_on_data_disks`),
  locks, the enqueue server, and pure delays (network round trips, roll-in/out, load).
  For each class it is solved exactly (single-class product form, by convolution) at every
  number k of busy work processes, k = 1..work processes, with the other classes present as
  a background population at each shared station: X(k), and the queue at each station.
- Outer chain: users thinking (think + GUI time) in front of the flow-equivalent server
  X(min(n, work processes)) of their instance: the dispatcher queue is what waits beyond
  the work processes. Updates: a Poisson stream in front of X(min(n, update processes)).
  Where all work processes are busy the chains' completions are phase-type with the
  holding time's own SCV (`_holding_scv`, phase_type.fit_phase_type), not exponential.
- The backgrounds are iterated to a fixed point (Lazowska et al. 1984, ch. 9, memory
  constraints with several classes). With one class the decomposition is exact for a
  product-form inner network (Chandy-Herzog-Woo); the rest is approximate (docs/model.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from landscape_model.chains import ChainResult, bounded_chain, open_chain
from landscape_model.convolution import NetworkResult, Station, closed_network
from landscape_model.network import (
    DIALOG,
    UPDATE,
    CompiledNetwork,
    InstanceLayout,
    sap_buffers,
)
from landscape_model.results import (
    BUCKETS,
    COMPONENT_INDEX,
    ClassSolution,
    OperatingPoint,
    bucketize,
)
from landscape_model.sqltext import statement_hash
from landscape_model.terms import COMPONENTS, RESPONSE_PARTS

_UPDATE_QUEUE = 2  # third layer of the solver's fixed-point state


@dataclass(frozen=True)
class SolverOptions:
    """How the solver reaches its fixed point; the defaults are the fast path. Benches and
    tests ask for the reference paths by passing other options, never by editing the class."""

    # Vector extrapolation in the damped fallback of the fixed point (`_extrapolated`);
    # False is the plain damped iteration, the reference bench/whatif.py measures against.
    extrapolate: bool = True
    # Anderson passes from the start, by mixing, before that fallback ((1.0, 0.5) before
    # issue 24 item 6: the reference path of bench/whatif.py).
    anderson_mixing: tuple[float, ...] = (1.0,)
    # Classes of identical instances copied within a sweep (`_copies`); False solves each.
    group_instances: bool = True
    # The chains' holding time phase-type with its own SCV (`_holding_scv`); False takes it
    # exponential (SCV 1), the birth-death chains before.
    phase_type: bool = True
    # The exact algorithms a class is solved with; bench/whatif.py's reference path passes
    # the slower ones (population by population; scaling the class to its bound) to compare.
    closed_network: Callable[..., NetworkResult] = closed_network
    bounded_chain: Callable[..., tuple[ChainResult, np.ndarray]] = bounded_chain


class Solver:
    """Computes the OperatingPoint of one (faulted) scenario: solves its compiled network
    (network.py), the stations and demands the discrete-event engine simulates too."""

    def __init__(
        self,
        network: CompiledNetwork,
        options: SolverOptions | None = None,
        histogram_samples: int = 20000,
        seed: int = 0,
    ) -> None:
        # The stations and demands it solves, compiled once by the caller
        # (network.compile_network; the live model's ModelRun.compiled) for either engine.
        self.net = network
        self.sc = network.scenario
        self.land = network.scenario.landscape
        self.options = options or SolverOptions()
        self.histogram_samples = histogram_samples
        self.seed = seed
        self._delay_memo: dict[tuple[int, int], float] = {}
        self._own: np.ndarray | None = None  # per instance: what `_copies` compares
        self._cached: tuple | None = None  # the write caches' terms (`_writes`)
        # The throughputs known to lie below and above the write caches' fixed point, and
        # the one their terms were last taken at (`_cache_throughput`).
        self._cache_bracket = [0.0, math.inf]
        self._cache_x = 0.0
        self._caches = any(self.land.write_cache(t) is not None for t in ("data", "log"))
        self._streamed = self._shorter_bursts()
        self._shared = self._shared_rows()  # `_demand` rows no host CPU may be

    # The compiled figures callers read off a solver (tests, whatif's breakdowns).
    @property
    def layout(self) -> list[InstanceLayout]:
        return self.net.layout

    @property
    def station_names(self) -> list[str]:
        return self.net.station_names

    @property
    def host_station(self) -> dict[str, int]:
        return self.net.host_station

    @property
    def db_cpu_station(self) -> int:
        return self.net.db_cpu_station

    @property
    def updates_per_step(self) -> float:
        return self.net.updates_per_step

    @property
    def db_cpu(self) -> np.ndarray:
        return self.net.db_cpu

    @property
    def rtt(self) -> np.ndarray:
        return self.net.rtt

    def delays(self, i: int, k: int) -> dict[str, np.ndarray]:
        """Pure delays per step of instance i, task k, per transaction, by component."""
        n_tx = len(self.net.tx_names)
        roll = self.net.roll[i]["roll_in"] if k == DIALOG else self.net.update_roll_s
        return {
            "roll_in": np.full(n_tx, roll),
            "roll_out": np.full(n_tx, roll),
            "load_gen": np.full(n_tx, self.land.instance.load_gen_s),
            "db_request": self.net.rtt[k],
            "enqueue": self.net.enq_rtt[k],
        }

    def _mean_delay(self, i: int, k: int) -> float:
        """A step's mean pure delay (all components, over the task's transaction mix):
        fixed for a solve, asked for by every class in every sweep, so computed once."""
        if (i, k) not in self._delay_memo:
            w = self.net.weights[k]
            self._delay_memo[i, k] = sum(float(v @ w) for v in self.delays(i, k).values())
        return self._delay_memo[i, k]

    def station_demand(self, i: int, k: int, sync_share: float, async_util: float) -> np.ndarray:
        """[global station, transaction]: demand per step of instance i's task k."""
        host_cpu = self.net.cpu_s[k] * self.net.cpu_stretch[i]
        return self._demand(k, sync_share, async_util, self.net.inst_cpu_station[i], host_cpu)

    def _shared_rows(self) -> frozenset[int]:
        """The stations `_demand` fills whatever the instance: its own host's CPUs are the
        only row that differs between instances where the host is none of these."""
        nt = self.net
        rows = {nt.db_cpu_station, nt.disk_station, *nt.lock_stations}
        rows.add(nt.disk_station if nt.log_shared else nt.log_station)
        rows.add(nt.cs_cpu_station if nt.cs_cpu_station >= 0 else nt.enqueue_station)
        return frozenset(int(r) for r in rows)

    def _demand(
        self,
        k: int,
        sync_share: float,
        async_util: float,
        host: int = -1,
        host_cpu: np.ndarray | None = None,
    ) -> np.ndarray:
        """`station_demand` with the host's CPU row given (host -1: left at 0)."""
        out = np.zeros((len(self.net.station_names), len(self.net.tx_names)))
        if host >= 0:
            out[host] += host_cpu
        out[self.net.db_cpu_station] += self.net.db_cpu[k]
        # Cleaner writes occupy the disks too: the reads see them as lost capacity; so do
        # the writes a write cache destages. The writes it acknowledged wait for it only.
        (h_data, _, bg_data), (h_log, _, bg_log) = self._cached
        inflate = 1.0 / max(1.0 - async_util - bg_data, 1e-3)
        out[self.net.disk_station] = (
            self.net.phys[k] * self.net.read_s
            + self.net.page_writes_step[k] * sync_share * (1.0 - h_data) * self.net.write_s
        ) * inflate
        if self.net.log_shared:
            out[self.net.disk_station] += self.net.log_demand[k] * (1.0 - h_data) * inflate
        else:
            out[self.net.log_station] = (
                self.net.log_demand[k] * (1.0 - h_log) / max(1.0 - bg_log, 1e-3)
            )
        cs = self.net.cs_cpu_station
        if cs >= 0:
            # The enqueue work process and the message server run on a CPU station with
            # other tenants (pinned, or a shared host's cores: placement.py): their CPU
            # competes there; the enqueue station stays idle.
            out[cs] += self.net.enq_demand[k] + self.net.msg_cpu[k]
        else:
            out[self.net.enqueue_station] = self.net.enq_demand[k]
        for li, s in enumerate(self.net.lock_stations):
            out[s] = self.net.lock_demand[li, k]
        return out

    # ---------------------------------------------------------------- the fixed point
    def _writes(self, x_total: float, step: bool = False) -> tuple[float, float, float]:
        """Cleaners write what they can keep up with; the rest is written synchronously by the
        agent that needs the page (pool_data_writes > pool_async_data_writes). With `step`
        (a sweep of the fixed point, only) it also sets the write caches' terms (`_cached`,
        read by station_demand) for this sweep (`_cache_throughput`); the results read
        them as they are."""
        db = self.land.database
        total = x_total * self.net.writes_per_mix
        capacity = db.io_cleaners * db.io_cleaner_pages_per_s
        async_share = min(1.0, capacity / total) if total > 0 else 1.0
        async_util = total * async_share * self.net.write_s / db.disks.count
        self._sync_share = 1.0 - async_share
        if not step:
            return async_share, 1.0 - async_share, async_util
        xc = self._cache_throughput(x_total)
        pages = xc * self.net.writes_per_mix
        sync = 1.0 - min(1.0, capacity / pages) if pages > 0 else 0.0
        self._cached = self._write_caches(xc, pages, sync)
        return async_share, 1.0 - async_share, async_util

    def _cache_throughput(self, x_total: float) -> float:
        """The throughput a sweep takes the write caches' terms at. A cache that falls
        behind turns writes back to its devices, whose time its destaging already takes
        nearly all of (MAX_DESTAGE_SHARE): just past the destage rate a step's response
        grows steeply with the throughput, so the throughput a sweep gives falls steeply
        with the one the cache was taken at, and the iteration swings across the point
        where the two meet (a write cache destaging at its devices' speed: 145.9 and
        25.1 steps/s about a fixed point near 100, never converging). That response is
        monotone in the cache's throughput, so each sweep tells on which side of the fixed
        point it lies (`_observe_cache`); an iterate outside the bracket this builds is
        replaced by its middle (bisection), which closes on the fixed point however steep
        the slope. Without a write cache the terms do not depend on it."""
        if not self._caches:
            return x_total
        lo, hi = self._cache_bracket
        if not lo < x_total < hi and math.isfinite(hi):
            if hi - lo > 1e-9 * hi:
                x_total = 0.5 * (lo + hi)
            else:  # closed, and the iterate is elsewhere: the rest of the state moved it
                self._cache_bracket = [0.0, math.inf]
        self._cache_x = x_total
        return x_total

    def _observe_cache(self, x_out: float) -> None:
        """After a sweep: its throughput above the cache's says the fixed point lies above
        that throughput, below it says below. A bracket the iterate has left behind (the
        rest of the state moved the fixed point) is widened again."""
        xc = self._cache_x
        lo, hi = self._cache_bracket
        if x_out > xc:
            lo = xc
            hi = hi if hi > lo else math.inf
        elif x_out < xc:
            hi = xc
            lo = lo if lo < hi else 0.0
        self._cache_bracket = [lo, hi]

    def _write_caches(self, x_total: float, pages: float, sync_share: float) -> tuple:
        """Per target (data disks, log): the share of its synchronous writes a write cache
        acknowledges, its ack time, and its devices' busy share destaging them. Every write
        to the storage passes the cache (the cleaners' too), so when they come faster than
        it destages it is full and a share destage/offered finds room (fluid: the cache's
        size only absorbs bursts); the rest wait for the device as without a cache."""
        db, land = self.land.database, self.land
        commits = x_total * float((self.net.steps_per_mix * self.net.commits).sum())
        none = (0.0, 0.0, 0.0)
        data = land.write_cache("data")
        if data is None:
            data_terms = none
        else:
            ack, rate, _ = data
            offered = pages + commits * self.net.log_shared
            h = min(1.0, rate / offered) if offered > 0 else 1.0
            destaged = (pages * sync_share + commits * self.net.log_shared) * h * self.net.write_s
            data_terms = (h, ack, destaged / db.disks.count)
        if self.net.log_shared:
            return data_terms, (*data_terms[:2], 0.0)  # one cache; destage counted once
        log = land.write_cache("log")
        if log is None:
            return data_terms, none
        ack, rate, _ = log
        h = min(1.0, rate / commits) if commits > 0 else 1.0
        return data_terms, (h, ack, commits * h * self.net.log_write_s / db.log.count)

    def _ack_s(self, k: int) -> np.ndarray:
        """[transaction]: per step of task k, the time its cached writes wait for the cache's
        acknowledgement (a pure delay: the cache does not queue)."""
        (h_data, ack_data, _), (h_log, ack_log, _) = self._cached
        sync = self.net.page_writes_step[k] * self._sync_share
        return sync * h_data * ack_data + self.net.commits[k] * h_log * ack_log

    def _solve_class(
        self,
        i: int,
        k: int,
        demand_t: np.ndarray,
        background: np.ndarray,
        arrival: float,
        stream: tuple[np.ndarray, int],
        shadow: tuple[int, float, float] = (-1, 0.0, 0.0),
        loads: tuple | None = None,
    ) -> ClassSolution:
        lay = self.net.layout[i]
        w = self.net.weights[k]
        demand = demand_t @ w
        used = [s for s in range(len(demand)) if demand[s] > 0]
        delay = self._mean_delay(i, k) + float(self._ack_s(k) @ w)
        wps = lay.dialog_wps if k == DIALOG else lay.update_wps
        users = lay.users if k == DIALOG else 0
        gui = float(self.net.gui[DIALOG] @ w) if k == DIALOG else 0.0
        think = max(self.sc.think_time_s + gui - self.net.roll[i]["roll_out"], 1e-9)
        stations = [
            Station(
                demand=float(demand[s]),
                servers=int(self.net.station_servers[s]),
                copies=int(self.net.station_copies[s]),
                background=float(background[s]),
                stream_load=float(stream[0][s]) if stream[1] > 0 else 0.0,
                stream_cap=stream[1] if stream[0][s] > 0 else 0,
                shadow_away=shadow[1] if s == shadow[0] else 0.0,
                shadow_along=shadow[2] if s == shadow[0] else 0.0,
            )
            for s in used
        ]
        bound = self._share_bound(demand, used, loads)
        key = (
            k,
            users,
            wps,
            bound,
            think,
            round(arrival, 12),
            delay,
            tuple(
                (
                    st.demand,
                    st.servers,
                    st.copies,
                    st.background,
                    st.stream_load,
                    st.stream_cap,
                    st.shadow_away,
                    st.shadow_along,
                )
                for st in stations
            ),
        )
        if key in self._memo:
            base = self._memo[key]
        else:
            k_max = min(wps, users) if k == DIALOG else wps
            net = self.options.closed_network([*stations, Station(delay, servers=0)], max(k_max, 1))
            fes = net.throughput
            scv = self._holding_scv(i, k, demand_t, used, net, max(k_max, 1))
            if k == DIALOG:
                # Over its share of a saturated station: every state slows alike (the
                # station serves the class slower, as processor sharing does), until
                # the class's throughput is within its share.
                chain, fes = self.options.bounded_chain(users, think, fes, bound, scv)
            else:
                # Updates come at their dialog steps' pace: the dialog classes' bound
                # holds them to the share.
                chain = open_chain(arrival, fes, scv)
            base = ClassSolution(
                instance=i,
                task=k,
                key=key,
                stations=[*used, -1],
                demand=np.append(demand[used], delay),
                fes=fes,
                fes_queue=net.queue,
                users=users,
                think=think,
                arrival_rate=arrival,
                chain=chain,
                scv=scv,
            )
            self._memo[key] = base
        return ClassSolution(**{**vars(base), "instance": i, "stations": [*used, -1]})

    def _holding_scv(
        self, i: int, k: int, demand_t: np.ndarray, used: list[int], net, k_max: int
    ) -> float:
        """Squared coefficient of variation of a work process's holding time (a step of
        instance i's task k, all k_max work processes busy): a sum of stages, each visit to
        a station an exponential residence (its share of the station's residence per step
        from the inner network), the visits a whole number and a coin toss for the
        fraction (as the DES draws them); on a CPU station each burst of the step (ABAP,
        DB, central services) one visit of its own mean, the station's stretch times its
        demand (docs/model.md, "The pool's completions, measured"); the pure delays
        constant but program load (exponential), and the transactions a mixture. Its
        chain's completions are then phase-type with this SCV (phase_type.fit_phase_type)
        instead of exponential."""
        if not self.options.phase_type:
            return 1.0
        nt = self.net
        x = float(net.throughput[k_max])
        if x <= 0.0:
            return 1.0
        w = nt.weights[k]
        demand = demand_t @ w
        visits = np.zeros_like(demand_t)
        # A CPU station's bursts of one step (its ABAP CPU, its DB CPU, the central
        # services' burst where they share a station) are one exponential visit each of
        # its own mean, not equal shares of the station's residence: their squared
        # demands, scaled below by the station's stretch.
        bursts = np.zeros_like(demand_t)
        bursts[nt.inst_cpu_station[i]] += (nt.cpu_s[k] * nt.cpu_stretch[i]) ** 2
        bursts[nt.db_cpu_station] += nt.db_cpu[k] ** 2
        (h_data, _, _), (h_log, _, _) = self._cached
        visits[nt.disk_station] += nt.phys[k] + nt.page_writes_step[k] * self._sync_share * (
            1.0 - h_data
        )
        if nt.log_shared:
            visits[nt.disk_station] += nt.commits[k] * (1.0 - h_data)
        else:
            visits[nt.log_station] += nt.commits[k] * (1.0 - h_log)
        visits[nt.enqueue_station] += nt.enqueues[k]
        if nt.cs_cpu_station >= 0:
            # On a CPU station the enqueue requests and the message server are one burst
            # of their own (as the DES draws it: des_draws R_CS), not enqueue visits.
            bursts[nt.cs_cpu_station] += (nt.enq_demand[k] + nt.msg_cpu[k]) ** 2
        for li, s in enumerate(nt.lock_stations):
            visits[s] += nt.lock_demand[li, k] > 0
        # All used stations at once ([station, tx]; a loop over them was a tenth of a
        # sweep), summed over the stations in their order as the loop added them.
        rows = np.asarray(used, dtype=int)
        stretch = net.queue[: len(used), k_max] / x / demand[rows]
        res = demand_t[rows] * stretch[:, None]  # residence per step
        v = visits[rows]
        frac = v - np.floor(v)
        per = np.divide(
            (v + frac * (1.0 - frac)) * res**2, v**2, out=np.zeros_like(res), where=v > 0
        )
        # A CPU station with bursts: each burst's own square, stretched, not the visits'.
        burst = bursts[rows]
        per = np.where(burst.any(axis=1)[:, None], burst * (stretch**2)[:, None], per)
        mean = np.zeros(demand_t.shape[1])
        var = np.zeros(demand_t.shape[1])
        for r in range(len(used)):
            mean += res[r]
            var += per[r]
        delays = self.delays(i, k)
        mean += sum(delays.values()) + self._ack_s(k)
        var += delays["load_gen"] ** 2
        first = float(mean @ w)
        if first <= 0.0:
            return 1.0
        scv = float((var + mean**2) @ w) / first**2 - 1.0
        return 1.0 if abs(scv - 1.0) <= 1e-9 else scv  # one exponential stage: exactly 1

    def _share_bound(self, demand: np.ndarray, used: list[int], loads: tuple | None) -> float:
        """Each class gets at most its share of a station's servers: its steps/s at most
        its current load's share of the servers over its demand, x m / L (processor sharing
        serves every customer alike, so when the station saturates the classes slow
        together; the utilisation law, Denning & Buzen 1978, then holds at the fixed point:
        L <= m). The background approximation alone lets classes that each fit share a
        saturated station past its capacity (DB CPU 1.002 at 7,000 SD users on SSDs).
        Below saturation m / L > 1 leaves the class room to grow, and the bound is
        continuous in the iterate. A single class has no others: its own network already
        respects m / D. Applied to the class's mean throughput (scaling its flow-equivalent
        server), not to each state: a state with all work processes busy may go faster
        than the mean."""
        if loads is None:
            return math.inf
        own, total = loads
        bound = math.inf
        for s in used:
            servers = float(self.net.station_servers[s] * self.net.station_copies[s])
            if servers <= 0 or demand[s] <= 0 or own[s] <= 0:
                continue
            bound = min(bound, float(own[s]) * servers / (float(total[s]) * float(demand[s])))
        return round(bound, 9) if math.isfinite(bound) else math.inf

    def _shorter_bursts(self) -> np.ndarray:
        """[i, j, s]: does instance i's dialog class meet instance j's as an open stream at
        CPU station s (else as a background of j's mean queue there)? Where j's bursts there
        are shorter on average than i's: they come and go while one of i's bursts is served,
        so i meets their number at random, not its mean, and not the part of it that queues
        behind i's own steps (its mean counts them: the background approximation of Method,
        pessimistic for the class that dominates a core; docs/model.md, seed 004). Bursts
        of equal length (identical instances, a station everyone visits alike) or longer,
        and any instance that is a tenant of s: a background, as before (their number
        hardly changes while one of i's bursts is served, and a burst arriving at random
        meets their time-average number; a tenant's ABAP bursts differ from i's by the
        remote-memory stretch only)."""
        nt = self.net
        n_inst, n_st = len(nt.layout), len(nt.station_names)
        w = nt.weights[DIALOG]
        total = np.zeros((n_inst, n_st))
        count = np.zeros((n_inst, n_st))
        abap, db = float(nt.cpu_s[DIALOG] @ w), float(nt.db_cpu[DIALOG] @ w)
        cs = float((nt.enq_demand[DIALOG] + nt.msg_cpu[DIALOG]) @ w)
        for i in range(n_inst):
            for s, d in (
                (nt.inst_cpu_station[i], abap * nt.cpu_stretch[i]),
                (nt.db_cpu_station, db),
                (nt.cs_cpu_station, cs),
            ):
                if s >= 0 and d > 0:
                    total[i, s] += d
                    count[i, s] += 1
        burst = np.divide(total, count, out=np.zeros_like(total), where=count > 0)
        users = np.array([lay.users > 0 for lay in nt.layout])
        mask = (burst[None, :, :] > 0) & (burst[None, :, :] < burst[:, None, :])
        mask &= users[None, :, None] & users[:, None, None]
        # Not another tenant of the station: its ABAP bursts there differ from i's only by
        # the remote-memory stretch (a few per cent), no separation of time scales; met as
        # a background as before, not by which of two near-equal means is the shorter.
        tenant = np.zeros((n_inst, n_st), dtype=bool)
        tenant[np.arange(n_inst), nt.inst_cpu_station] = True
        return mask & ~tenant[None, :, :]

    def _class_load(self, cs: ClassSolution) -> np.ndarray:
        """Offered load of the class at each global station: throughput x demand."""
        load = np.zeros(len(self.net.station_names))
        for s, d in zip(cs.stations, cs.demand, strict=True):
            if s >= 0:
                load[s] += cs.throughput * d
        return load

    def _class_queues(self, cs: ClassSolution) -> np.ndarray:
        """Mean customers of the class at each global station."""
        q = np.zeros(len(self.net.station_names))
        per = cs.fes_queue @ cs.chain.busy
        for s, v in zip(cs.stations, per, strict=True):
            if s >= 0:
                q[s] += v
        return q

    def _shadows(self, i: int, q: np.ndarray, x: float) -> tuple[float, float, float]:
        """How instance i's updates and its dialog steps meet at its host's CPUs. An update
        is born as its dialog step leaves for the disks (docs/model.md), so its CPU burst
        (exponential, mean its residence r there) first races its parent's time away until
        it is back on a CPU: the disks, log, locks and enqueue (each a sum of exponential
        visits, a gamma of the step's visits there) and the pure delays. The parent wins
        with probability P = E[exp(-D / r)] (the race's Laplace transform), having spent
        r (1 - P) of the update's time away; the rest, r P, the update runs beside the
        parent's next step. Returns the updates present per dialog step away from the CPUs
        and per dialog step on them (Little: present = rate x time), and how many more of
        the instance's dialog steps an update meets than their mean queue: its own parent
        for a share P of its time instead of the parent's mean presence."""
        host = self.net.inst_cpu_station[i]
        present = q[_UPDATE_QUEUE, i, host]
        here = q[DIALOG, i, host] / x if x > 0 else 0.0
        if present <= 0 or here <= 0:
            return 0.0, 0.0, 0.0
        w = self.net.weights[DIALOG]
        delay = self._mean_delay(i, DIALOG) + float(self._ack_s(DIALOG) @ w)
        r = present / (x * self.net.updates_per_step)
        commits = float(self.net.commits[DIALOG] @ w)
        visits = {
            self.net.disk_station: float(self.net.phys[DIALOG] @ w) + commits * self.net.log_shared,
            self.net.log_station: commits * (not self.net.log_shared),
        }
        log_p = -delay / r
        for st, queue in enumerate(q[DIALOG, i]):
            if st in (host, self.net.db_cpu_station) or queue <= 0:
                continue
            v = visits.get(st) or 1.0
            log_p -= v * math.log1p(queue / x / v / r)
        away = (q[DIALOG, i].sum() - q[DIALOG, i, host]) / x + delay
        if away <= 0:
            return 0.0, 0.0, 0.0
        beside = math.exp(log_p)
        u = self.net.updates_per_step
        return (
            min(1.0, u * r * (1.0 - beside) / away),
            u * r * beside / here,
            beside - here / (here + away),
        )

    def _sweep(self, q: np.ndarray, x_dialog: np.ndarray) -> tuple:
        """Every class solved against the others: q[DIALOG] holds each dialog class's mean
        queue per station, q[UPDATE] each update class's offered load there (X x demand),
        q[_UPDATE_QUEUE] its mean queue there.
        Returns the new q, the new dialog throughputs, and the class solutions.

        Dialog classes meet each other as fixed background populations (their mean queue).
        Updates are met as an open stream (their load, at most their work processes present):
        an update is at a station only now and then, and a fixed fraction of a customer
        there, always, slows the others more than updates that come and go (near saturation
        the difference is several per cent of throughput, tests/model/test_des_grid.py).
        An instance's own updates at its host's CPUs are not independent of its dialog
        steps: they are the steps' shadows (`_shadows`)."""
        _, sync_share, async_util = self._writes(float(x_dialog.sum()), step=True)
        dialog_q = q[DIALOG].sum(axis=0)
        update_load = q[UPDATE].sum(axis=0)
        update_wps = sum(lay.update_wps for lay in self.net.layout)
        new_q = np.zeros_like(q)
        # Every instance with users gets its throughput below; one without has none. (A copy
        # of x_dialog kept a warm start's throughput there: a users sweep from the most down
        # carried the larger points' updates into instances without users, issue 34 item 3.)
        new_x = np.zeros_like(x_dialog)
        classes: list[ClassSolution] = []
        # Offered load (busy servers) of every class at every station, from this iterate.
        dialog_load = np.zeros((len(self.net.layout), len(self.net.station_names)))
        demands: dict[tuple[int, int], np.ndarray] = {}  # this sweep's, asked up to 3 times

        # Every instance's demand is the same table but for its own host's CPU row: built
        # once per task and sweep, the host's row written into a copy (0 + x there, as
        # `station_demand` adds it, so the same numbers; 64 tables of a dozen array
        # operations per SD sweep before). A host that is also another row's station (the
        # database's CPUs) gets the whole table.
        shared: dict[int, np.ndarray] = {}

        def demand_of(i: int, k: int) -> np.ndarray:
            if (i, k) not in demands:
                host = int(self.net.inst_cpu_station[i])
                if host in self._shared:
                    demands[i, k] = self.station_demand(i, k, sync_share, async_util)
                else:
                    if k not in shared:
                        shared[k] = self._demand(k, sync_share, async_util)
                    out = shared[k].copy()
                    out[host] = self.net.cpu_s[k] * self.net.cpu_stretch[i]
                    demands[i, k] = out
            return demands[i, k]

        for i, lay in enumerate(self.net.layout):
            if lay.users > 0:
                demand_t = demand_of(i, DIALOG)
                dialog_load[i] = x_dialog[i] * (demand_t @ self.net.weights[DIALOG])
        all_load = dialog_load.sum(axis=0) + update_load
        copies = self._copies(q, x_dialog, (dialog_q, update_load, all_load), demand_of)
        solved: dict[tuple[int, int], ClassSolution] = {}
        for k in (DIALOG, UPDATE):
            if k == UPDATE and self.net.updates_per_step == 0:
                continue
            for i, lay in enumerate(self.net.layout):
                if k == DIALOG and lay.users == 0:
                    continue
                if i in copies:
                    classes.append(self._copy_class(k, i, copies[i], new_q, new_x, solved))
                    continue
                demand_t = demand_of(i, k)
                arrival = new_x[i] * self.net.updates_per_step
                host = self.net.inst_cpu_station[i]
                away, beside, parent = self._shadows(i, q, float(x_dialog[i]))
                shadow = (-1, 0.0, 0.0)
                if k == DIALOG:
                    # The instance's own updates follow its dialog steps (their shadows),
                    # they are not a stream independent of them.
                    background = dialog_q - q[DIALOG, i]
                    stream = update_load.copy()
                    stream[host] -= q[UPDATE, i, host]
                    cap = update_wps
                    streamed = self._streamed[i]  # [j, s]: met as a stream, not a background
                    if streamed.any():
                        background = np.maximum(
                            background - (streamed * q[DIALOG]).sum(axis=0), 0.0
                        )
                        stream += (streamed * dialog_load).sum(axis=0)
                        cap += sum(
                            min(self.net.layout[j].dialog_wps, self.net.layout[j].users)
                            for j in np.flatnonzero(streamed.any(axis=1))
                        )
                    shadow = (host, away, beside)
                    loads = (dialog_load[i], all_load)
                else:
                    loads = (q[UPDATE, i], all_load)
                    background = dialog_q.copy()
                    background[host] += parent
                    stream, cap = update_load - q[UPDATE, i], update_wps - lay.update_wps
                cs = self._solve_class(
                    i, k, demand_t, background, arrival, (stream, cap), shadow, loads
                )
                classes.append(cs)
                solved[i, k] = cs
                if k == DIALOG:
                    new_q[k, i] = self._class_queues(cs)
                    new_x[i] = cs.throughput
                else:
                    new_q[k, i] = self._class_load(cs)
                    new_q[_UPDATE_QUEUE, i] = self._class_queues(cs)
        self._observe_cache(float(new_x.sum()))
        return new_q, new_x, classes

    def _copies(
        self,
        q: np.ndarray,
        x_dialog: np.ndarray,
        totals: tuple,
        demand_of: Callable[[int, int], np.ndarray],
    ) -> dict[int, tuple[int, np.ndarray, np.ndarray]]:
        """Instances whose classes are copies of an earlier instance's in this sweep: instance
        -> (that instance, its stations, these stations). Thirty SD instances are two or
        three kinds; without this every one built its classes' stations and memo keys
        (60 class solves per sweep, a third of a sweep's time). Two instances are copies when
        everything their classes read is equal station by station, in the same order: own
        figures (users, work processes, delays, roll-out), the iterate at the stations they
        use (their queues and throughput, the totals there), and those stations' demands,
        servers and copies, where a station that not every instance uses (its own host's
        CPUs) may differ by name. Then the sweep computes the same numbers for both, so the
        copy is exact (tests/model/test_whatif_speed.py compares with `group_instances`
        off)."""
        n_inst = len(self.net.layout)
        if not self.options.group_instances or n_inst < 2:
            return {}
        demand = np.zeros((2, n_inst, len(self.net.station_names)))
        for i in range(n_inst):
            for k in (DIALOG, UPDATE):
                demand[k, i] = demand_of(i, k) @ self.net.weights[k]
        touched = (demand.sum(axis=0) > 0) | (q.sum(axis=0) > 0)
        width = touched.sum(axis=1)
        if self._own is None:
            self._own = np.array(
                [
                    (
                        lay.users,
                        lay.dialog_wps,
                        lay.update_wps,
                        self.net.roll[i]["roll_out"],
                        self._mean_delay(i, DIALOG),
                        self._mean_delay(i, UPDATE),
                        self.net.inst_cpu_station[i],
                    )
                    for i, lay in enumerate(self.net.layout)
                ]
            )
        # Compared within groups of instances that use as many stations: an instance pinned
        # beside the database (seed 004's central instance) uses one station fewer than the
        # others, which are still copies of each other.
        out: dict[int, tuple[int, np.ndarray, np.ndarray]] = {}
        for w in np.unique(width):
            members = np.flatnonzero(width == w)
            if members.size > 1:
                out |= self._copies_among(members, touched, q, x_dialog, totals, demand)
        # A class that meets some others as a stream reads their queues one by one: solved.
        alone = self._streamed.any(axis=(1, 2))
        return {i: c for i, c in out.items() if not (alone[i] or alone[c[0]])}

    def _copies_among(
        self,
        members: np.ndarray,
        touched: np.ndarray,
        q: np.ndarray,
        x_dialog: np.ndarray,
        totals: tuple,
        demand: np.ndarray,
    ) -> dict[int, tuple[int, np.ndarray, np.ndarray]]:
        """`_copies` among instances that use the same number of stations."""
        mine = touched[members]
        rows = members[:, None]
        support = np.nonzero(mine)[1].reshape(members.size, -1)  # ascending per instance
        own = self._own[members]
        host = own[:, -1:]
        figures = np.hstack(
            (
                own[:, :-1],
                (support == host).argmax(axis=1)[:, None],
                np.where(mine.all(axis=0)[support], support, -1),
                x_dialog[members, None],
                *q[:, rows, support],
                *(t[support] for t in totals),
                *demand[:, rows, support],
                self.net.station_servers[support],
                self.net.station_copies[support],
            )
        )
        seen: dict[bytes, int] = {}
        out = {}
        for j, row in enumerate(figures):
            first = seen.setdefault(row.tobytes(), j)
            if first != j:
                out[int(members[j])] = (int(members[first]), support[first], support[j])
        return out

    def _copy_class(
        self,
        k: int,
        i: int,
        copy: tuple[int, np.ndarray, np.ndarray],
        new_q: np.ndarray,
        new_x: np.ndarray,
        solved: dict[tuple[int, int], ClassSolution],
    ) -> ClassSolution:
        """Instance i's class k as a copy of instance `first`'s, solved earlier in this sweep."""
        first, first_support, support = copy
        where = dict(zip(first_support.tolist(), support.tolist(), strict=True))
        cs = solved[first, k]
        layers = (DIALOG,) if k == DIALOG else (UPDATE, _UPDATE_QUEUE)
        for layer in layers:
            new_q[layer, i, support] = new_q[layer, first, first_support]
        if k == DIALOG:
            new_x[i] = new_x[first]
        stations = [where[s] if s >= 0 else s for s in cs.stations]
        return ClassSolution(**{**vars(cs), "instance": i, "stations": stations})

    def _alike(self, v: np.ndarray) -> np.ndarray:
        """A warm start (a neighbour's state) made the same for instances that are alike
        here: each takes the first such instance's state, its own host's CPUs for that
        one's. A neighbour with other users splits them otherwise (5,858 SD users: 196 on
        some instances, 195 on others; 5,941: 199 and 198), so instances alike here start
        apart and stay a rounding apart, which `_copies` (equal bytes) never copies: the
        search's last solves cost twice the sweeps' classes. The fixed point is the same,
        a cold start is alike already."""
        n_inst = len(self.net.layout)
        q = v[:-n_inst].reshape(3, n_inst, -1).copy()
        x = v[-n_inst:].copy()
        if not self.options.group_instances or n_inst < 2:
            return np.concatenate((q.ravel(), x))
        nt = self.net
        first: dict[tuple, int] = {}
        for i, lay in enumerate(nt.layout):
            host = int(nt.inst_cpu_station[i])
            if host in self._shared:
                continue
            alike = (
                lay.users,
                lay.dialog_wps,
                lay.update_wps,
                nt.roll[i]["roll_out"],
                self._mean_delay(i, DIALOG),
                self._mean_delay(i, UPDATE),
                float(nt.cpu_stretch[i]),
                int(nt.station_servers[host]),
                int(nt.station_copies[host]),
            )
            r = first.setdefault(alike, i)
            if r != i:
                own = q[:, r].copy()
                r_host = int(nt.inst_cpu_station[r])
                own[:, [r_host, host]] = own[:, [host, r_host]]
                q[:, i], x[i] = own, x[r]
        return np.concatenate((q.ravel(), x))

    def solve(self, warm_start: np.ndarray | None = None) -> OperatingPoint:
        """The fixed point of the class backgrounds. Plain iteration creeps near saturation,
        where each class's queue at the bottleneck is a small part of the background it
        reacts to, so it is accelerated; `converged` says whether it was reached, in
        `iterations` sweeps, leaving `residual` (the largest change one more sweep makes).
        `warm_start`: the `state` of a solved neighbour (same landscape), to start from."""
        n_inst, n_st = len(self.net.layout), len(self.net.station_names)
        self._memo: dict[tuple, ClassSolution] = {}
        self._cached = None  # the write caches' terms: set by the first sweep
        self._cache_bracket = [0.0, math.inf]
        shape = (3, n_inst, n_st)
        v = np.zeros(3 * n_inst * n_st + n_inst)
        if warm_start is not None and warm_start.shape == v.shape:
            v = self._alike(warm_start)

        def g(v: np.ndarray) -> tuple[np.ndarray, list[ClassSolution]]:
            q, x = v[:-n_inst].reshape(shape), v[-n_inst:]
            new_q, new_x, classes = self._sweep(q, x)
            return np.concatenate((new_q.ravel(), new_x)), classes

        def converged(v: np.ndarray, gv: np.ndarray) -> bool:
            scale = 1e-8 * max(1.0, float(np.abs(gv).max()))
            # The write caches' terms too: taken at the throughput reached.
            cache = abs(self._cache_x - float(gv[-n_inst:].sum())) if self._caches else 0.0
            return max(float(np.abs(gv - v).max()), cache) <= scale

        # Anderson acceleration (Walker & Ni 2011) first, undamped; where it cycles or
        # stalls (an oscillating map, or the share bound switching on and off at a
        # saturated station's knee), damped iteration with vector extrapolation from the
        # best point it reached. (A second Anderson pass with mixing 0.5 used to come
        # between: it cost 60 sweeps at 6,948 and 7,500 SD users and saved none at
        # 5,936-11,580, docs/model.md, Speed.)
        self.iterations, self.converged = 0, False
        start, best, best_v = v, math.inf, v
        for mixing in self.options.anderson_mixing:
            v, norm, v_best = self._anderson(g, converged, start, mixing)
            if norm < best:
                best, best_v = norm, v_best
            if self.converged:
                break
        if not self.converged:
            v = self._extrapolated(g, converged, best_v, jump=self.options.extrapolate)
        gv, classes = g(v)
        # What is left of the fixed point's equations where it stopped (the largest change
        # one more sweep makes): for a warning that names it where `converged` is False.
        self.residual = float(np.abs(gv - v).max())
        self.state = v
        return self._assemble(classes, float(v[-n_inst:].sum()))

    def _extrapolated(
        self, g, converged, v: np.ndarray, limit: int = 1000, jump: bool = True
    ) -> np.ndarray:
        """Damped iteration (half steps) with vector Aitken extrapolation (Lusternik's
        method; Brezinski & Redivo Zaglia, Extrapolation Methods, 1991, ch. 4). Near the
        knee the damped iteration converges linearly along one direction: successive
        residuals point the same way (cosine > 0.999) and shrink by a steady ratio r (0.93
        per sweep at 6,948 SD users: 240 sweeps). The rest of that geometric series,
        f r / (1 - r), is then added at once. A jump that leaves a larger residual than
        the step before it is undone."""
        prev_f = prev_r = undo = None
        undo_norm = math.inf
        for _ in range(limit):
            gv, _ = g(v)
            self.iterations += 1
            if converged(v, gv):
                self.converged = True
                return gv
            f = 0.5 * (gv - v)
            norm = float(np.linalg.norm(f))
            if undo is not None and norm > undo_norm:
                v, undo, prev_f, prev_r = undo, None, None, None  # the jump overshot
                continue
            undo = None
            if prev_f is not None and norm > 0.0:
                prev_norm = float(np.linalg.norm(prev_f))
                r = norm / prev_norm
                cosine = float(f @ prev_f) / (norm * prev_norm)
                steady = prev_r is not None and abs(r - prev_r) < 0.05 * (1.0 - r)
                if jump and cosine > 0.999 and r < 0.99 and steady:
                    undo, undo_norm = v + f, norm
                    v, prev_f, prev_r = np.maximum(v + f / (1.0 - r), 0.0), None, None
                    continue
                prev_r = r
            prev_f, v = f, v + f
        return v

    def _anderson(self, g, converged, v: np.ndarray, mixing: float) -> tuple:
        """Up to 60 Anderson steps of depth 5 from v: the last iterate, the smallest
        residual seen and the point that had it."""
        depth = 5
        best = math.inf
        d_f: list[np.ndarray] = []
        d_g: list[np.ndarray] = []
        prev_f = prev_g = None
        best_v = v
        for _ in range(60):
            gv, _ = g(v)
            f = gv - v
            self.iterations += 1
            norm = float(np.abs(f).max())
            if converged(v, gv):
                self.converged = True
                return gv, norm, gv
            if norm < best:
                best, best_v = norm, v
            elif norm > 2.0 * best:  # overshot: forget the history
                d_f, d_g, prev_f = [], [], None
            if prev_f is not None:
                d_f.append(f - prev_f)
                d_g.append(gv - prev_g)
                del d_f[:-depth], d_g[:-depth]
            prev_f, prev_g = f, gv
            new = v + mixing * f
            if d_f:
                gamma, *_ = np.linalg.lstsq(np.array(d_f).T, f, rcond=None)
                step = np.array(d_g).T @ gamma
                new = gv - step - (1.0 - mixing) * (f - np.array(d_f).T @ gamma)
            if not np.all(np.isfinite(new)):
                new, d_f, d_g, prev_f = gv, [], [], None
            v = np.maximum(new, 0.0)
        return v, best, best_v

    # ---------------------------------------------------------------- results
    def step_means(self, cs: ClassSolution, wait: float, stretch: np.ndarray) -> np.ndarray:
        """[transaction, component]: mean seconds per step of a class in a given state."""
        i, k = cs.instance, cs.task
        _, sync_share, async_util = self._writes(self._x_total)
        demand_t = self.station_demand(i, k, sync_share, async_util)
        s_global = np.ones(len(self.net.station_names))
        for s, v in zip(cs.stations, stretch, strict=True):
            if s >= 0:
                s_global[s] = v
        res = demand_t * s_global[:, None]  # residence per station and transaction
        host = self.net.inst_cpu_station[i]
        m = np.zeros((len(self.net.tx_names), len(COMPONENTS)))
        d = self.delays(i, k)
        m[:, COMPONENT_INDEX["dispatcher_wait"]] = wait
        m[:, COMPONENT_INDEX["roll_in"]] = d["roll_in"]
        m[:, COMPONENT_INDEX["roll_out"]] = d["roll_out"]
        m[:, COMPONENT_INDEX["load_gen"]] = d["load_gen"]
        m[:, COMPONENT_INDEX["cpu"]] = self.net.cpu_s[k] * self.net.cpu_stretch[i]
        m[:, COMPONENT_INDEX["processing"]] = m[:, COMPONENT_INDEX["cpu"]] * s_global[host]
        db_parts = res[[self.net.disk_station, self.net.log_station, *self.net.lock_stations]].sum(
            axis=0
        )
        m[:, COMPONENT_INDEX["db_request"]] = (
            d["db_request"] + self.net.db_cpu[k] * s_global[self.net.db_cpu_station]
        )
        m[:, COMPONENT_INDEX["db_request"]] += db_parts + self._ack_s(k)
        cs = self.net.cs_cpu_station
        if cs >= 0:
            # At the central services' CPU station the enqueue requests' service is enqueue
            # time; the message server's share of a dialog step is its processing.
            m[:, COMPONENT_INDEX["enqueue"]] = d["enqueue"] + self.net.enq_demand[k] * s_global[cs]
            m[:, COMPONENT_INDEX["processing"]] += self.net.msg_cpu[k] * s_global[cs]
        else:
            m[:, COMPONENT_INDEX["enqueue"]] = d["enqueue"] + res[self.net.enqueue_station]
        m[:, COMPONENT_INDEX["gui"]] = self.net.gui[k]
        m[:, COMPONENT_INDEX["response"]] = m[:, [COMPONENT_INDEX[p] for p in RESPONSE_PARTS]].sum(
            axis=1
        )
        return m

    def rates(self, step_rate: np.ndarray) -> dict:
        """Every quantity proportional to the steps completed: [instance, task, tx] steps/s."""
        land, db = self.land, self.land.database
        net = self.net
        per_task = step_rate.sum(axis=0)  # [task, tx]
        x_dialog = float(per_task[DIALOG].sum())
        stmt_exec = net.st_calls * per_task[net.st_task, net.st_tx]
        pool_n = len(net.pools)
        dl, dp, il, ip = (np.zeros(pool_n) for _ in range(4))
        np.add.at(dl, net.st_dpool, stmt_exec * net.st_dreads)
        np.add.at(dp, net.st_dpool, stmt_exec * net.st_dreads * net.miss[net.st_dpool])
        np.add.at(il, net.st_ipool, stmt_exec * net.st_ireads)
        np.add.at(ip, net.st_ipool, stmt_exec * net.st_ireads * net.miss[net.st_ipool])
        written = stmt_exec * net.st_page_writes
        data_w, index_w = np.zeros(pool_n), np.zeros(pool_n)
        np.add.at(data_w, net.st_dpool, written * (1.0 - db.index_share_of_page_writes))
        np.add.at(index_w, net.st_ipool, written * db.index_share_of_page_writes)
        total_w = float(written.sum())
        capacity = db.io_cleaners * db.io_cleaner_pages_per_s
        async_share = min(1.0, capacity / total_w) if total_w > 0 else 1.0
        x_inst = step_rate.sum(axis=2)  # [instance, task]
        cpu_inst = (step_rate * net.cpu_s[None]).sum(axis=(1, 2)) * net.cpu_stretch
        host_util = np.zeros(len(net.app_hosts))
        for i, lay in enumerate(net.layout):
            host_util[net.app_hosts.index(lay.host)] += cpu_inst[i]
        host_util /= land.app_servers.cpus
        reads = float((stmt_exec * net.st_phys).sum())
        disk_busy = reads * net.read_s + total_w * net.write_s
        commits = float((per_task * net.commits).sum())
        log_busy = commits * net.log_write_s
        if net.log_shared:
            disk_busy += log_busy
        enq = float((per_task * net.enqueues).sum())
        cs = land.central_services
        db_host = land.host(db.host)
        cs_host = land.host(cs.host)
        return {
            "step_rate": step_rate,
            "stmt_exec_rate": stmt_exec,
            "stmt_rows_rate": stmt_exec * net.st_rows,
            "pool_data_logical": dl,
            "pool_data_physical": dp,
            "pool_index_logical": il,
            "pool_index_physical": ip,
            "pool_data_writes": data_w,
            "pool_async_data_writes": data_w * async_share,
            "pool_index_writes": index_w,
            "pool_async_index_writes": index_w * async_share,
            "host_cpu_util": host_util,
            "db_cpu_util": float((per_task * net.db_cpu).sum()) / db_host.cpus,
            "disk_util": min(1.0, disk_busy / db.disks.count),
            "log_util": min(
                1.0,
                disk_busy / db.disks.count if net.log_shared else log_busy / db.log.count,
            ),
            "enqueue_util": min(1.0, enq * cs.enqueue_service_s / cs.enqueue_work_processes),
            # The message server's CPU, and the enqueue work process's where it is CPU
            # demand on a CPU station (placement.py), over the host's CPUs.
            "cs_cpu_util": min(
                1.0,
                (
                    x_dialog * cs.message_server_cpu_s_per_step
                    + (enq * cs.enqueue_service_s if net.cs_cpu_station >= 0 else 0.0)
                )
                / cs_host.cpus,
            ),
            "roll_file_bytes_rate": np.array(
                [
                    2.0 * x_inst[i, DIALOG] * r["to_file"] * r["roll_bytes"]
                    for i, r in enumerate(net.roll)
                ]
            ),
            **sap_buffers(land, x_inst[:, DIALOG]),
        }

    def stmt_time(self, stretch: np.ndarray) -> np.ndarray:
        """Elapsed time of one execution of each statement, given [task, global station]
        stretches (residence over demand)."""
        db = self.land.database
        net = self.net
        _, sync_share, async_util = self._writes(self._x_total)
        (h_data, ack_data, bg_data), _ = self._cached
        inflate = 1.0 / max(1.0 - async_util - bg_data, 1e-3)
        s = stretch[net.st_task]
        sync = net.st_page_writes * sync_share
        t = (
            db.call_rtt_s
            + net.st_cpu * s[:, net.db_cpu_station]
            + (net.st_phys * net.read_s + sync * (1.0 - h_data) * net.write_s)
            * inflate
            * s[:, net.disk_station]
            + sync * h_data * ack_data
        )
        for li, st in enumerate(net.lock_stations):
            t = t + (net.st_lock == li) * db.locks[li].hold_s * s[:, st]
        return t

    def _assemble(self, classes: list[ClassSolution], x_total: float) -> OperatingPoint:
        land = self.land
        self._x_total = x_total
        n_inst, n_tx = len(self.net.layout), len(self.net.tx_names)
        step_rate = np.zeros((n_inst, 2, n_tx))
        means = np.zeros((n_inst, 2, n_tx, len(COMPONENTS)))
        wp_total = np.zeros((n_inst, 2))
        wp_busy = np.zeros((n_inst, 2))
        dqueue = np.zeros((n_inst, 2))
        buckets = np.zeros((n_inst, 2, n_tx, len(BUCKETS) + 1))
        buckets[..., 0] = 1.0
        growth = np.zeros(n_inst)
        stretch_sum = np.zeros((2, len(self.net.station_names)))
        weight = np.zeros(2)
        bucket_memo: dict[tuple, np.ndarray] = {}
        for lay_i, lay in enumerate(self.net.layout):
            wp_total[lay_i] = (lay.dialog_wps, lay.update_wps)
        for cs in classes:
            i, k = cs.instance, cs.task
            st = cs.state(cs.chain)
            x = st["throughput"]
            step_rate[i, k] = x * self.net.weights[k]
            wait = st["wait"]
            if cs.chain.overloaded:
                growth[i] = cs.arrival_rate - x
            means[i, k] = self.step_means(cs, wait, st["stretch"])
            wp_busy[i, k] = st["busy"]
            dqueue[i, k] = st["queue"]
            if cs.key not in bucket_memo:
                bucket_memo[cs.key] = self.buckets(cs, cs.chain, means[i, k])
            buckets[i, k] = bucket_memo[cs.key]
            g = np.ones(len(self.net.station_names))
            for s, v in zip(cs.stations, st["stretch"], strict=True):
                if s >= 0:
                    g[s] = v
            stretch_sum[k] += x * g
            weight[k] += x
        stretch = np.divide(
            stretch_sum, weight[:, None], out=np.ones_like(stretch_sum), where=weight[:, None] > 0
        )
        roll_cfg = land.instance.roll
        rates = self.rates(step_rate)
        return OperatingPoint(
            instances=[lay.name for lay in self.net.layout],
            hosts=list(self.net.app_hosts),
            transactions=list(self.net.tx_names),
            statements=list(self.net.statements),
            statement_sql=list(self.net.statement_sql),
            statement_ids=[statement_hash(text) for text in self.net.statement_sql],
            instance_host=np.array([self.net.app_hosts.index(lay.host) for lay in self.net.layout]),
            bufferpools=list(self.net.pools),
            means=means,
            bucket_probs=buckets,
            wp_total=wp_total,
            wp_busy=wp_busy,
            dispatcher_queue=dqueue,
            roll_buffer_size=np.full(n_inst, float(roll_cfg.roll_buffer_bytes)),
            roll_buffer_used=np.array([r["roll_used"] for r in self.net.roll]),
            em_size=np.full(n_inst, float(roll_cfg.extended_memory_bytes)),
            em_used=np.array([r["em_used"] for r in self.net.roll]),
            stmt_time=self.stmt_time(stretch),
            db_calls_per_step=self.net.db_calls.copy(),
            update_backlog_growth=growth,
            classes=classes,
            **rates,
        )

    def buckets(
        self, cs: ClassSolution, chain: ChainResult, m: np.ndarray, samples: int | None = None
    ) -> np.ndarray:
        """Response distribution per transaction [transaction, bucket]: dispatcher wait (one
        draw shared by every transaction, as they queue together) + the rest of the step
        (gamma, histogram_cv, the transaction's own mean).

        An arrival that finds n >= K in system waits for n - K + 1 departures of the
        flow-equivalent server at full concurrency, a Poisson stream of rate X(K).
        """
        n_tx = m.shape[0]
        if chain.overloaded:
            return np.tile(bucketize(np.full(1, np.inf)), (n_tx, 1))
        n = samples or self.histogram_samples
        rng = np.random.default_rng([self.seed, cs.task])
        wait = np.zeros(n)
        dist = chain.arrival_distribution
        if dist.size > 1:
            seen = rng.choice(dist.size, size=n, p=dist)
            ahead = np.maximum(seen - cs.wps + 1, 0)
            wait = np.where(ahead > 0, rng.gamma(np.maximum(ahead, 1), 1.0 / cs.fes[-1]), 0.0)
            if cs.scv != 1.0 and chain.throughput > 0:
                # Phase-type completions: the first of the departures an arrival waits
                # for is a residual, not a whole holding time, so the draws are scaled
                # to the chain's own mean wait (Little), as the means table has it.
                drawn = float(dist @ np.maximum(np.arange(dist.size) - cs.wps + 1, 0))
                if drawn > 0:
                    wait *= chain.mean_queue / chain.throughput * float(cs.fes[-1]) / drawn
        rest = m[:, COMPONENT_INDEX["response"]] - m[:, COMPONENT_INDEX["dispatcher_wait"]]
        # One unit-mean gamma draw scaled per transaction: every transaction's marginal is
        # its own gamma (only marginals make a histogram), at the cost of one draw.
        return bucketize(wait + np.maximum(rest, 0.0)[:, None] * self._service_samples(1.0, n, rng))

    def _service_samples(self, mean: float, n: int, rng) -> np.ndarray:
        if mean <= 0:
            return np.zeros(n)
        shape = 1.0 / self.sc.histogram_cv**2
        return rng.gamma(shape, mean / shape, size=n)
