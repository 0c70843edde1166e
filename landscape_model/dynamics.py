"""Queues through time: how the dispatcher queues and the update backlogs grow and drain.

The operating point (solver.py) is a steady state. Between steady states each class's
population x (dialog: its users at the instance, waiting or in a work process; updates: the
update requests queued or in process) moves by conservation, one tick dt at a time:

    dialog:  dx/dt = (N - x) / Z  -  T(x)      (thinking users arrive, served ones leave)
    update:  dx/dt = lambda(t)    -  T(x)      (lambda: this tick's saving dialog steps)

T(x) is the rate at which a class in state x completes steps: along the stationary chain of
the class's flow-equivalent server (the same one the operating point is solved with), the
throughput of the state whose mean population is x (pointwise-stationary fluid flow,
Wang & Tipper). It rises with x up to the capacity X(K) of all K work processes busy, so:
an overloaded class's queue grows by (offered - X(K)) dt per tick, for as long as it is
overloaded, and drains at the rate the work processes free once the cause goes; near the
steady state a queue relaxes at its own rate, fast where there is headroom (a second for an
instance with 24 work processes), slowly near saturation. The equation is integrated
implicitly (stable for any dt) and its fixed point is exactly the solver's operating point.

Everything a work process visits (CPUs, database, disks) reacts within a step's time, less
than a tick: it is taken at its operating point for the current configuration.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from landscape_model.chains import closed_chain, open_chain
from landscape_model.results import COMPONENT_INDEX, ClassSolution, OperatingPoint, bucketize
from landscape_model.solver import DIALOG, Solver

_TABLE_SAMPLES = 4000


@dataclass(frozen=True)
class Family:
    """Stationary states of one class, by mean population x (ascending)."""

    x: np.ndarray  # [j]
    rate: np.ndarray  # [j] steps/s completed
    queue: np.ndarray  # [j] waiting for a work process
    busy: np.ndarray  # [j] busy work processes
    means: np.ndarray  # [j, transaction, component]
    buckets: np.ndarray  # [j, transaction, bucket]
    capacity: float  # X(K): all work processes busy
    full_means: np.ndarray  # [transaction, component] at full concurrency, no wait


def family(solver: Solver, cs: ClassSolution) -> Family:
    """Tabulate the class's stationary states along its chain (think time or arrival rate)."""
    chains = []
    if cs.task == DIALOG:
        for z in np.unique(np.append(cs.think * 10.0 ** np.linspace(-4, 4, 161), cs.think)):
            chains.append(closed_chain(cs.users, float(z), cs.fes, cs.scv))
    else:
        cap = float(cs.fes[-1])
        share = np.concatenate((np.linspace(0.0, 0.9, 46), 1.0 - 10.0 ** -np.linspace(1, 5, 61)))
        rates = np.unique(np.append(cap * share, min(cs.arrival_rate, cap * share[-1])))
        chains = [open_chain(float(lam), cs.fes, cs.scv) for lam in rates]
    rows = []
    for chain in chains:
        st = cs.state(chain)
        means = solver.step_means(cs, st["wait"], st["stretch"])
        buckets = solver.buckets(cs, chain, means, samples=_TABLE_SAMPLES)
        rows.append(
            (chain.mean_in_system, st["throughput"], st["queue"], st["busy"], means, buckets)
        )
    rows.sort(key=lambda r: r[0])
    x, rate, queue, busy, means, buckets = (np.array(col) for col in zip(*rows, strict=True))
    full = open_chain(float(cs.fes[-1]) * 2.0, cs.fes, cs.scv)  # overloaded: all K busy
    full_state = cs.state(full)
    return Family(
        x=x,
        rate=rate,
        queue=queue,
        busy=busy,
        means=means,
        buckets=buckets,
        capacity=float(cs.fes[-1]),
        full_means=solver.step_means(cs, 0.0, full_state["stretch"]),
    )


def _implicit_step(fam: Family, x0: float, inflow: float, outflow_per_x: float, dt: float) -> float:
    """x' with x' = x0 + dt (inflow - outflow_per_x x' - T(x')); T piecewise linear in x,
    constant (the capacity) beyond the table."""
    f = fam.x * (1.0 + dt * outflow_per_x) + dt * fam.rate - x0 - dt * inflow
    if f[0] >= 0.0:
        return float(fam.x[0])
    j = int(np.searchsorted(f, 0.0))
    if j >= len(f):  # beyond the table: every work process busy, T = capacity
        return (x0 + dt * (inflow - fam.capacity)) / (1.0 + dt * outflow_per_x)
    w = -f[j - 1] / (f[j] - f[j - 1])
    return float(fam.x[j - 1] + w * (fam.x[j] - fam.x[j - 1]))


class _Fifo:
    """Cumulative arrivals A(t) and departures D of one class, served first come first
    served as a fluid (Newell's cumulative curves): the fluid leaving at D arrived when A
    was D, so its time in the instance is now minus A's inverse at D. This keeps the wait a
    step has already spent in a queue when the queue's cause goes: a tick after too few
    work processes are restored, the steps it completes are the ones that queued under the
    fault (the stationary state of the new configuration would say they never waited)."""

    def __init__(self, x: float, rate: float) -> None:
        # Started settled: a past of constant rate with x inside, so the first steps out
        # spend x / rate inside (Little), as in the stationary state.
        self.now = 0.0
        self.done = 0.0
        lead = x / rate + 1.0 if rate > 0 else 1.0
        self.t = [-lead, 0.0]
        self.a = [x - rate * lead, x]

    def advance(self, dt: float, arrived: float, departed: float) -> float | None:
        """Book a tick; the mean time inside of the fluid that left in it (None: none left)."""
        t0, d0 = self.now, self.done
        self.now += dt
        self.t.append(self.now)
        self.a.append(self.a[-1] + max(arrived, 0.0))
        self.done += max(departed, 0.0)
        # Forget the past no departure can reach any more.
        keep = max(0, int(np.searchsorted(self.a, d0, side="right")) - 2)
        if keep:
            del self.t[:keep], self.a[:keep]
        if departed <= 1e-12 or dt <= 0.0:
            return None
        u = np.linspace(0.0, 1.0, 9)
        out_at = t0 + u * dt  # departures spread evenly over the tick
        came_at = np.interp(d0 + u * (self.done - d0), self.a, self.t)
        inside = np.maximum(out_at - came_at, 0.0)
        return float(np.mean((inside[:-1] + inside[1:]) / 2.0))


class Dynamics:
    """The populations of every class of one landscape, advanced tick by tick."""

    def __init__(self, target: OperatingPoint, solver: Solver) -> None:
        n = len(target.instances)
        self.x = np.zeros((n, 2))
        # Per operating point (its id, kept alive by holding it) and class key.
        self._families: dict[tuple, tuple[OperatingPoint, Family]] = {}
        self._seeded = False
        self._last: tuple | None = None
        self._fifo: dict[tuple[int, int], _Fifo] = {}
        self.retarget(target, solver)

    def retarget(self, target: OperatingPoint, solver: Solver) -> None:
        """A new configuration: same populations, new stations (a fault, a user count)."""
        self.target = target
        self.solver = solver
        if not self._seeded:
            # A run starts from the steady state of its configuration (no backlog).
            for cs in target.classes:
                m = cs.chain.mean_in_system
                self.x[cs.instance, cs.task] = m if math.isfinite(m) else 0.0
                self._fifo[cs.instance, cs.task] = _Fifo(
                    self.x[cs.instance, cs.task], cs.throughput if math.isfinite(m) else 0.0
                )
            self._seeded = True
        groups: dict[tuple, list] = {}
        for cs in target.classes:
            if cs.task == DIALOG:
                self.x[cs.instance, DIALOG] = min(self.x[cs.instance, DIALOG], cs.users)
            groups.setdefault((cs.task, cs.key), [cs.task, cs, []])[2].append(cs.instance)
        self._groups = [(k, cs, np.array(m)) for k, cs, m in groups.values()]
        self._groups.sort(key=lambda g: g[0])
        self._last = None

    def configuration(self) -> tuple[OperatingPoint, Solver, list]:
        """What `prepare` needs, read together (under the run's lock) so that a retarget
        between the reads cannot mix two configurations."""
        return self.target, self.solver, self._groups

    def prepare(self, configuration: tuple[OperatingPoint, Solver, list]) -> None:
        """The families of a configuration's classes, ahead of `advance`. After a change
        they take seconds (161 chains a dialog class), which a tick must not spend holding
        the run's lock: a scrape and a control call wait on that lock. Only the thread that
        advances calls this, so the cache has one writer."""
        target, solver, groups = configuration
        for _, cs, _ in groups:
            key = (id(target), cs.key)
            if key not in self._families:
                self._families[key] = (target, family(solver, cs))

    def _family(self, cs: ClassSolution) -> Family:
        key = (id(self.target), cs.key)
        if key not in self._families:
            self._families[key] = (self.target, family(self.solver, cs))
        return self._families[key][1]

    def _state(self, fam: Family, x: float, cs: ClassSolution) -> tuple:
        """rate, queue, busy, means, buckets of the class at population x."""
        if x <= fam.x[-1]:
            j = int(np.clip(np.searchsorted(fam.x, x), 1, len(fam.x) - 1))
            w = float(np.clip((x - fam.x[j - 1]) / (fam.x[j] - fam.x[j - 1]), 0.0, 1.0))

            def at(a: np.ndarray):
                return a[j - 1] + w * (a[j] - a[j - 1])

            return at(fam.rate), at(fam.queue), at(fam.busy), at(fam.means), at(fam.buckets)
        # A backlog beyond any stationary state: all K busy, the rest waits its turn.
        wait = (x - cs.wps) / fam.capacity
        means = fam.full_means.copy()
        means[:, COMPONENT_INDEX["dispatcher_wait"]] = wait
        means[:, COMPONENT_INDEX["response"]] += wait
        rest = fam.full_means[:, COMPONENT_INDEX["response"]]
        return fam.capacity, x - cs.wps, float(cs.wps), means, bucketize((wait + rest)[:, None])

    def _carry_wait(
        self,
        means: np.ndarray,
        i: int,
        k: int,
        dt: float,
        arrived: float,
        departed: float,
        rate: float,
        busy: float,
    ) -> None:
        """The wait of the steps the tick completed, from the class's FIFO: their time
        inside less the time in a work process (busy / rate, Little), in place of the
        stationary wait. Settled, both are the same (queue / rate)."""
        fifo = self._fifo.setdefault((i, k), _Fifo(float(self.x[i, k]), rate))
        inside = fifo.advance(dt, arrived, departed)
        if inside is None or rate <= 0.0:
            return
        wait = max(inside - busy / rate, 0.0)
        col = means[i, k, :, COMPONENT_INDEX["dispatcher_wait"]]
        means[i, k, :, COMPONENT_INDEX["response"]] += wait - col
        means[i, k, :, COMPONENT_INDEX["dispatcher_wait"]] = wait

    def advance(self, dt: float) -> OperatingPoint:
        """Move every class one tick; the operating point of the tick's end."""
        target, solver = self.target, self.solver
        step_rate = np.zeros_like(target.step_rate)
        means = target.means.copy()
        busy = target.wp_busy.copy()
        queue = target.dispatcher_queue.copy()
        buckets = target.bucket_probs.copy()
        growth = np.zeros(len(target.instances))
        for k, cs, members in self._groups:  # dialog groups come first: updates follow them
            fam = self._family(cs)
            if k == DIALOG:
                inflow = np.full(len(members), cs.users / cs.think)
                per_x = 1.0 / cs.think
            else:
                inflow = step_rate[members, DIALOG].sum(axis=1) * solver.updates_per_step
                per_x = 0.0
            x = self.x[members, k]
            # Identical classes in identical states move alike: compute once.
            same = bool(np.all(x == x[0]) and np.all(inflow == inflow[0]))
            for idx in [slice(None)] if same else [[j] for j in range(len(members))]:
                j0 = 0 if same else idx[0]
                x_new = max(0.0, _implicit_step(fam, float(x[j0]), float(inflow[j0]), per_x, dt))
                rate, q, b, m, bk = self._state(fam, x_new, cs)
                rows = members[idx]
                self.x[rows, k] = x_new
                step_rate[rows, k] = rate * solver.net.weights[k]
                means[rows, k], busy[rows, k], queue[rows, k], buckets[rows, k] = m, b, q, bk
                arrived = dt * (float(inflow[j0]) - per_x * x_new)
                departed = float(x[j0]) + arrived - x_new
                for r in np.atleast_1d(rows):
                    self._carry_wait(means, int(r), k, dt, arrived, departed, rate, b)
                if k != DIALOG:
                    growth[rows] = max(0.0, float(inflow[j0]) - fam.capacity)
        if self._last is not None and np.array_equal(step_rate, self._last[0]):
            rates = self._last[1]
        else:
            rates = solver.rates(step_rate)
            self._last = (step_rate, rates)
        return dataclasses.replace(
            target,
            means=means,
            wp_busy=busy,
            dispatcher_queue=queue,
            bucket_probs=buckets,
            update_backlog_growth=growth,
            **rates,
        )
