"""What-if questions to the analytic solver: sweeps and the most users under a response bound.

The command line (`wlmon whatif`) and, later, the API call these; both pass a scenario name
and the same --set settings `wlmon simulate` takes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from landscape_model.catalog import Catalog, ConfigError, parse_setting
from landscape_model.config import MAX_USERS, Scenario
from landscape_model.cpu_stations import CpuStationFigures, cpu_station_figures, station_busy
from landscape_model.network import compile_network, instance_layout
from landscape_model.results import OperatingPoint
from landscape_model.solver import Solver, SolverOptions
from landscape_model.summary import point_figures
from landscape_model.terms import COMPONENTS, RESPONSE_PARTS

# Each point is a solve (tens of ms to a second): more would be a typo, not a question.
MAX_SWEEP_POINTS = 1_000

# The parts of a dialog step's response, in the order charts stack them (the vocabulary's).
PARTS = RESPONSE_PARTS


@dataclass(frozen=True)
class Configuration:
    """A named set of --set settings on top of the common ones."""

    label: str
    settings: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> Configuration:
        """`label: path=value; path=value` (the label alone: the scenario as it is)."""
        label, _, rest = text.partition(":")
        if not label.strip():
            raise ConfigError(f"--config {text!r}: expected label: path=value; path=value")
        settings = tuple(s.strip() for s in rest.split(";") if s.strip())
        for s in settings:
            parse_setting(s)
        return cls(label.strip(), settings)


@dataclass(frozen=True)
class InstanceFigures:
    """One instance at a solved point: where the instances of a landscape differ (the
    central instance of a two-tier host has fewer work processes than the others)."""

    instance: str
    host: str
    users: int
    dialog_steps_per_s: float
    response_s: float
    dispatcher_wait_s: float
    db_request_s: float
    busy_dialog_work_processes: float


@dataclass(frozen=True)
class Point:
    """One solved configuration: throughput, response and its parts, utilisations."""

    value: Any
    users: int
    dialog_steps_per_hour: float
    saps: float
    response_s: float
    parts_s: dict[str, float]
    db_request_update_s: float
    utilisation: dict[str, float]
    update_backlog_growth_per_s: float
    instances: list[InstanceFigures] = field(default_factory=list)
    host_cpu: dict[str, float] = field(default_factory=dict)  # every tenant of each host
    # Every CPU station (a host's cores, or a set of cores tenants are pinned to): the
    # instances' and the database's CPU there over its cores.
    cpu_stations: list[CpuStationFigures] = field(default_factory=list)
    # Whether the solver's fixed point was reached (Solver.solve), in how many sweeps, and
    # the largest change one more sweep makes: figures of an unconverged point are not a
    # steady state, and the commands say so.
    converged: bool = True
    iterations: int = 0
    residual: float = 0.0


@dataclass(frozen=True)
class UnconvergedPoint:
    """A point whose solve did not reach its fixed point, and who solved it: the sweep (its
    `value` that of the swept parameter) or the most-users search (`search`: its `value`
    is its users, the swept parameter at the configuration's own value)."""

    point: Point
    search: bool = False


@dataclass
class Answer:
    label: str
    settings: tuple[str, ...]
    points: list[Point] = field(default_factory=list)
    max_users: Point | None = None
    # Every point solved for this configuration whose fixed point was not reached: the
    # sweep's and the search's (the search's decide the answer without being shown).
    unconverged: list[UnconvergedPoint] = field(default_factory=list)


# The solver's classes are closed networks of an instance's users: a solve's time grows with
# them (sd-two-tier, 8 instances: 2,000 users each 0.16 s, 32,000 3.9 s, 125,000 18.8 s on a
# loaded core). Past this a sweep or a most-users search (a dozen solves) would not answer in
# about a minute (users=10,000,000 on the SD landscape ran for more than 7 minutes).
MAX_USERS_PER_INSTANCE = 20_000


def check_solvable(scenario: Scenario) -> None:
    """A ConfigError naming the limit where a solve of `scenario` would take minutes."""
    most = max(lay.users for lay in instance_layout(scenario))
    if most > MAX_USERS_PER_INSTANCE:
        raise ConfigError(
            f"users={scenario.users:,}: {most:,} users on one instance, the analytic solver "
            f"answers at most {MAX_USERS_PER_INSTANCE:,} per instance (a solve would take "
            "minutes)"
        )


def solve_point(
    scenario: Scenario,
    value: Any = None,
    warm: dict[str, np.ndarray] | None = None,
    options: SolverOptions | None = None,
) -> Point:
    """Solve one scenario; `warm` carries the last solution's state to the next point."""
    solver = Solver(compile_network(scenario), options, histogram_samples=10)
    op = solver.solve(warm_start=warm.get("state") if warm is not None else None)
    if warm is not None:
        warm["state"] = solver.state
    f = point_figures(op, scenario)
    stations = cpu_station_figures(
        scenario.landscape, solver.net.placement, station_busy(solver.net, op)
    )
    rate = op.step_rate[:, 0]
    total = float(rate.sum())

    def mean(comp: str) -> float:
        k = COMPONENTS.index(comp)
        return float((op.means[:, 0, :, k] * rate).sum() / total) if total else 0.0

    utilisation = {
        "host_cpu": _busiest_host(op, scenario),
        "app_server_cpu": float(np.max(op.host_cpu_util)) if op.host_cpu_util.size else 0.0,
        "db_cpu": op.db_cpu_util,
        "disks": op.disk_util,
        "log": op.log_util,
        "enqueue": op.enqueue_util,
    }
    # Pinned tenants: the busiest set of cores, by its name (cpu:host/0), can be the
    # bottleneck while the host as a whole is not (seed 004: core 0 runs the database).
    pinned = [st for st in stations if st.cores is not None]
    if pinned:
        busiest = max(pinned, key=lambda st: st.cpu_util)
        utilisation[busiest.station] = busiest.cpu_util
    return Point(
        value=value,
        users=scenario.users,
        dialog_steps_per_hour=f["dialog_steps_per_hour"],
        saps=f["saps"],
        response_s=f["avg_dialog_response_s"],
        parts_s={p: mean(p) for p in PARTS},
        db_request_update_s=f["db_request_update_s"],
        utilisation=utilisation,
        update_backlog_growth_per_s=f["update_backlog_growth_per_s"],
        instances=_instances(op, scenario),
        host_cpu=_host_cpu(op, scenario),
        cpu_stations=stations,
        converged=solver.converged,
        iterations=solver.iterations,
        residual=solver.residual,
    )


def _instances(op: OperatingPoint, scenario: Scenario) -> list[InstanceFigures]:
    """Per instance: dialog throughput and the step-weighted means of its transactions."""
    layout = instance_layout(scenario)
    out = []
    for i, name in enumerate(op.instances):
        rate = op.step_rate[i, 0]
        x = float(rate.sum())

        def mean(comp: str, i: int = i, rate: np.ndarray = rate, x: float = x) -> float:
            k = COMPONENTS.index(comp)
            return float((op.means[i, 0, :, k] * rate).sum() / x) if x else 0.0

        out.append(
            InstanceFigures(
                instance=name,
                host=op.hosts[int(op.instance_host[i])],
                users=layout[i].users,
                dialog_steps_per_s=x,
                response_s=mean("response"),
                dispatcher_wait_s=mean("dispatcher_wait"),
                db_request_s=mean("db_request"),
                busy_dialog_work_processes=float(op.wp_busy[i, 0]),
            )
        )
    return out


def _host_cpu(op: OperatingPoint, scenario: Scenario) -> dict[str, float]:
    """CPU utilisation of every host, all its tenants (instances, database, enqueue)."""
    land = scenario.landscape
    names = [h.name for h in land.hosts]
    busy = np.zeros(len(names))
    for h, util in zip(op.hosts, op.host_cpu_util, strict=True):
        busy[names.index(h)] += util * land.app_servers.cpus
    busy[names.index(land.database.host)] += op.db_cpu_util * land.host(land.database.host).cpus
    cs = land.central_services.host
    busy[names.index(cs)] += op.cs_cpu_util * land.host(cs).cpus
    util = busy / np.array([h.cpus for h in land.hosts])
    return {name: float(u) for name, u in zip(names, util, strict=True)}


def _busiest_host(op: OperatingPoint, scenario: Scenario) -> float:
    """CPU utilisation of the busiest host, all its tenants (instances, database, enqueue)."""
    return max(_host_cpu(op, scenario).values())


def parse_sweep(text: str) -> tuple[str, list[Any]]:
    """`path=start:stop:step` (inclusive) or `path=a,b,c`."""
    path, value = parse_setting(text)
    raw = text.partition("=")[2].strip()
    if ":" in raw and "," not in raw:
        try:
            start, stop, step = (float(x) for x in raw.split(":"))
        except ValueError:
            raise ConfigError(f"--sweep {path}: expected start:stop:step, got {raw!r}") from None
        if step <= 0 or stop < start:
            raise ConfigError(f"--sweep {path}: needs start <= stop and a positive step")
        points = math.floor((stop - start) / step) + 1
        if points > MAX_SWEEP_POINTS:
            raise ConfigError(
                f"--sweep {path}: {points:,} points, at most {MAX_SWEEP_POINTS:,}; "
                "take a larger step"
            )
        values = list(np.arange(start, stop + step / 2, step))
        as_int = all(float(v).is_integer() for v in (start, stop, step))
        return path, [int(np.rint(v)) if as_int else float(v) for v in values]
    if isinstance(value, list):
        return path, value
    return path, [parse_setting(f"{path}={item}")[1] for item in raw.split(",")]


class WhatIf:
    """Solves one scenario under configurations, settings and faults."""

    def __init__(
        self,
        scenario: str,
        catalog: Catalog | None = None,
        landscape: Path | None = None,
        settings: Sequence[str] = (),
        faults: Sequence[str] = (),
        options: SolverOptions | None = None,
    ) -> None:
        self.name = scenario
        self.options = options  # how each point is solved (None: the solver's defaults)
        self.catalog = catalog or Catalog()
        self.landscape = landscape
        self.settings = tuple(settings)
        self.faults = tuple(faults)
        # Per configuration: its scenario (a users point is a copy of it with other users)
        # and the solved fixed point of each number of users (warm starts for the search).
        self._base: dict[Configuration, Scenario] = {}
        self._states: dict[tuple[Configuration, int], np.ndarray] = {}
        # Per configuration, the points solved whose fixed point was not reached.
        self.unconverged: dict[Configuration, list[UnconvergedPoint]] = {}

    def _solved(self, config: Configuration, point: Point, search: bool = False) -> Point:
        if not point.converged:
            self.unconverged.setdefault(config, []).append(UnconvergedPoint(point, search))
        return point

    def scenario(self, config: Configuration, extra: Sequence[str] = ()) -> Scenario:
        """The scenario under the configuration's settings, then `extra`. A point that only
        changes the users is the configuration's scenario with other users (no validator
        reads them): building each from the documents again took 20-30 ms, most of it deep
        copies, 13 times per question."""
        users = _users_only(extra)
        if users is not None:
            if config not in self._base:
                self._base[config] = self.scenario(config)
            return self._base[config].model_copy(update={"users": users})
        return self.catalog.scenario(
            self.name,
            self.faults,
            landscape=self.landscape,
            settings=(*self.settings, *config.settings, *extra),
        )

    def sweep(
        self, config: Configuration, path: str, values: Sequence[Any], warm_start: bool = True
    ) -> list[Point]:
        """Each point starts from its neighbour's solution (a warm start: the fixed point
        moves little from one point to the next); `warm_start=False` solves each cold.
        Users are solved from the most down: past the knee a start from the saturated side
        converges in a tenth of the sweeps of a start from below (6,948 SD users: 12 from
        8,106's solution, 103 from 5,790's). Points come back in the order asked."""
        warm: dict[str, np.ndarray] | None = {} if warm_start else None
        # Every point's scenario first: a value the configuration refuses (users=abc) is
        # an error naming it before any solve, and the order below sorts valid users only.
        # The configuration itself first, so that a refused --set or --config is named as
        # such, not blamed on the swept value.
        self.scenario(config)
        scenarios = []
        for v in values:
            try:
                scenarios.append(self.scenario(config, [f"{path}={_yaml(v)}"]))
                check_solvable(scenarios[-1])
            except ConfigError as exc:
                raise ConfigError(f"--sweep {path}={_yaml(v)}: {exc}") from None
        order = list(range(len(values)))
        if path == "users" and warm_start:
            order.sort(key=lambda j: -scenarios[j].users)
        points: list[Point | None] = [None] * len(values)
        for j in order:
            v = values[j]
            points[j] = self._solved(
                config,
                solve_point(scenarios[j], value=v, warm=warm, options=self.options),
            )
            if path == "users" and warm is not None:
                self._states[config, points[j].users] = warm["state"]
        return [p for p in points if p is not None]

    def max_users(
        self,
        config: Configuration,
        limit_s: float = 2.0,
        progress: Callable[[int], None] | None = None,
        known: Sequence[Point] = (),
        method: str = "regula-falsi",
    ) -> Point | None:
        """The most users whose average dialog response stays below limit_s (the SD
        benchmark's question). Response grows with the users, so the answer is bracketed
        (by `known` points of a users sweep of this configuration, else by doubling from
        the scenario's users) and the bracket closed to 0.2 % of the answer.
        `regula-falsi`: with the Anderson-Bjoerck modification (Illinois' halving where
        it does not apply), a few solves below the knee where response is smooth in the
        users; `bisection` halves the bracket (the reference the fast search is tested
        against: same stopping rule)."""
        warm: dict[str, np.ndarray] = {}

        def at(users: int) -> Point:
            if progress:
                progress(users)
            point = solve_point(
                self.scenario(config, [f"users={users}"]),
                value=users,
                warm=warm,
                options=self.options,
            )
            self._solved(config, point, search=True)
            if not point.converged:
                # Its response is no steady state: it says neither which side of the bound
                # the users are nor what the answer is.
                raise _NotConverged(point)
            return point

        try:
            return self._search(config, limit_s, at, known, method, warm)
        except _NotConverged:
            return None

    def _search(
        self,
        config: Configuration,
        limit_s: float,
        at: Callable[[int], Point],
        known: Sequence[Point],
        method: str,
        warm: dict[str, np.ndarray],
    ) -> Point | None:
        """`max_users` with `at` solving a point; an unconverged known point brackets
        nothing."""
        known = [p for p in known if p.converged]
        below = [p for p in known if p.response_s < limit_s]
        best = max(below, key=lambda p: p.users) if below else None
        if best is not None and (config, best.users) in self._states:
            # The search's points lie below the knee, where a start from below converges
            # fastest (5,828 SD users: 9 sweeps from 5,790's solution, 15 from 6,948's).
            warm["state"] = self._states[config, best.users]
        above = [
            p for p in known if p.response_s >= limit_s and p.users > (best.users if best else 0)
        ]
        high = min(above, key=lambda p: p.users) if above else None
        if best is None and high is None:
            point = at(max(1, self.scenario(config).users))
            best, high = (point, None) if point.response_s < limit_s else (None, point)
        most = _most_solvable(self.scenario(config))
        while high is None:  # grow until the bound is crossed
            if best.users >= most:
                raise ConfigError(
                    f"--limit {limit_s:g}: the response stays below it up to {best.users:,} "
                    f"users, the most the analytic solver answers here "
                    f"({MAX_USERS_PER_INSTANCE:,} per instance)"
                )
            users = min(best.users * 2, most)
            point = at(users)
            best, high = (point, None) if point.response_s < limit_s else (best, point)
        lo, f_lo = (best.users, best.response_s - limit_s) if best else (0, -limit_s)
        hi, f_hi = high.users, high.response_s - limit_s
        side = 0
        while hi - lo > (tol := max(1, math.ceil(lo * 0.002))):
            if method == "bisection":
                users = (lo + hi) // 2
            else:
                users = round(lo + (hi - lo) * -f_lo / (f_hi - f_lo))
                # Close the bracket from the side the guess is nearest to.
                users = min(max(users, lo + tol), hi - tol) if hi - lo > 2 * tol else lo + tol
            point = at(users)
            f = point.response_s - limit_s
            # An end kept twice counts less (Anderson & Bjoerck 1973): by how much the
            # moved end's residual shrank, or half (Illinois) where it did not shrink.
            if f < 0:
                if side == -1:
                    f_hi *= _kept_weight(f, f_lo)
                lo, f_lo, best, side = users, f, point, -1
            else:
                if side == 1:
                    f_lo *= _kept_weight(f, f_hi)
                hi, f_hi, side = users, f, 1
        return best


class _NotConverged(Exception):
    def __init__(self, point: Point) -> None:
        self.point = point


def _most_solvable(scenario: Scenario) -> int:
    """The most users `check_solvable` lets through on this landscape (instances share the
    users about evenly: the bound per instance times the instances, less where it splits
    unevenly)."""
    users = MAX_USERS_PER_INSTANCE * len(instance_layout(scenario))
    while users > 1:
        most = max(
            lay.users for lay in instance_layout(scenario.model_copy(update={"users": users}))
        )
        if most <= MAX_USERS_PER_INSTANCE:
            return min(users, MAX_USERS)
        users -= most - MAX_USERS_PER_INSTANCE
    return 1


def _kept_weight(new: float, old: float) -> float:
    shrink = 1.0 - new / old if old else 0.0
    return shrink if 0.0 < shrink < 1.0 else 0.5


def _users_only(extra: Sequence[str]) -> int | None:
    """The users of settings that set nothing else (and valid users), else None."""
    if len(extra) != 1:
        return None
    path, value = parse_setting(extra[0])
    if path != "users" or isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 0 < value <= MAX_USERS else None


def _yaml(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def to_json(parameter: str | None, limit_s: float, answers: list[Answer]) -> dict:
    return {
        "parameter": parameter,
        "response_limit_s": limit_s,
        "configurations": [
            {
                "label": a.label,
                "settings": list(a.settings),
                "points": [asdict(p) for p in a.points],
                "max_users": asdict(a.max_users) if a.max_users else None,
                "unconverged": [
                    {
                        # A search point of another parameter's sweep has none of its values.
                        "value": (None if u.search and parameter != "users" else u.point.value),
                        "users": u.point.users,
                        "search": u.search,
                        "iterations": u.point.iterations,
                        "residual": u.point.residual,
                    }
                    for u in a.unconverged
                ],
            }
            for a in answers
        ],
    }
