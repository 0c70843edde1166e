"""The analytic solver against the discrete-event engine on a grid of landscapes.

Grid: application hosts with 1, 2, 4, 8 CPUs; 2 to 24 dialog work processes; load from 20 %
to 110 % of capacity; two-tier (the database on the application server, sharing its CPUs)
and three-tier (a database host of its own). The 16 cells are a Latin square: every CPU
count meets every load once, every work-process count meets every CPU count and every load
once, tiers alternate.

Every cell: one instance, one transaction of two dialog steps, the second of which saves
and sends a V1 update to one of four update work processes (two classes). A dialog step:
ABAP CPU 0.08 s, two DB calls of 6 ms DB CPU, each a physical read (10 ms) on one of four
disks, half a commit (log write 4 ms); an update: 0.03 s CPU, one call, one read, one
commit. Think time 5 s, GUI time 0.5 s. Users N = load x capacity x (Z + GUI + service),
where capacity is the smallest of the bottleneck bounds (CPUs, DB CPUs, disks, log, work
processes).

Pass, in every cell: dialog throughput and response within 5 %, utilisations (application
CPUs, database CPUs, disks) within 2 points. The DES runs long enough for its own error to
stay well below that: 40,000 to 300,000 steps, more near saturation, where the queues have
long memory (standard error of R about 0.3 % at 300,000 steps at 110 % load).

Off the grid (`OFF_GRID`): one work process near saturation, the DB on the single core,
two faults at once, saturated update work processes and a batch with 10 calls per
statement. The solver's dispatcher and update chains take the work process's holding time
phase-type with its own SCV (a sum of stages, about 0.3-0.7 here, where the exponential
chains before were 1.4-2.6x the DES's wait); where a two-moment fit leaves more than 5 %
the cell names its tolerance, and the cell whose error is its throughput (two faults:
one disk, the inner network's) keeps the holding-time bound (docs/model.md, "Off the grid").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest

from landscape_model.des import DiscreteEventSimulation
from landscape_model.network import compile_network
from landscape_model.solver import Solver
from landscape_model.terms import COMPONENTS
from tests.model import des_support as case

pytestmark = pytest.mark.slow

RESPONSE = COMPONENTS.index("response")
WAIT = COMPONENTS.index("dispatcher_wait")
THINK, GUI, CPU, DB_CALL, READ, LOG = 5.0, 0.5, 0.08, 0.006, 0.01, 0.004
UPD_CPU, DISKS = 0.03, 4
STEPS = {0.2: 40_000, 0.5: 60_000, 0.8: 100_000, 1.1: 300_000}


@dataclass(frozen=True)
class Cell:
    """One cell: the grid's landscape and workload, and what an off-grid cell changes."""

    cpus: int
    wps: int
    load: float
    tiers: int
    update_wps: int = 4
    upd_cpu: float = UPD_CPU
    calls: int = 2  # DB calls per dialog step (one statement), each one physical read
    think: float = THINK
    gui: float = GUI
    rtt: float = 0.0  # DB call round trip
    disks: int = DISKS
    faults: tuple[str, ...] = ()
    steps: int = 0  # DES steps (0: by load, STEPS)
    # The dialog response within the holding-time bound instead of a tolerance ("dialog").
    bounded: str = ""
    r_tol: float = 0.05  # dialog response, relative
    # The update work processes' wait, relative (0: not compared; elsewhere they hardly
    # queue: with 4 update work processes on a shared CPU it is a few ms either way).
    wu_tol: float = 0.0
    name: str = ""

    def where(self, users: int) -> str:
        tag = f"{self.name}: " if self.name else ""
        return (
            f"{tag}{self.cpus} CPUs, {self.wps} WPs, {self.load:.0%} load, "
            f"{self.tiers}-tier, {users} users"
        )


# Faults for the off-grid cell with two at once, as patches of the cell's landscape: the
# dispatcher's (too few dialog work processes) and the database's (the pool loses pages:
# 50 -> 20 of a 100-page working set, the miss ratio 0.5 -> 0.8, 2 -> 3.2 physical reads).
FAULTS = {
    "too-few-wps": {"landscape": {"instance": {"dialog_work_processes": 3}}},
    "db-bottleneck": {"landscape": {"database": {"bufferpools": [{"name": "POOL", "pages": 20}]}}},
}


def _cell(c: Cell, tmp_path):
    two = c.tiers == 2
    db_cpus = c.cpus if two else max(1, c.cpus // 2)
    land = case.landscape(
        cpus=c.cpus,
        dialog_wps=c.wps,
        update_wps=c.update_wps,
        db_cpus=db_cpus,
        two_tier=two,
        cpu_s_per_call=DB_CALL,
        disks=c.disks,
        read_s=READ,
        log_write_s=LOG,
    )
    pool = land["database"]["bufferpools"][0]
    reads = 1.0  # physical reads per call
    if c.faults:
        # Half the logical reads miss (two per call): the same physical reads as the grid's.
        pool |= {"pages": 50, "working_set_pages": 100, "miss_floor": 0.0}
        data_reads = 2
    else:
        pool["miss_floor"] = 1.0  # every logical read is physical
        data_reads = 1
    land["database"]["call_rtt_s"] = c.rtt
    upd = 0.5  # updates per dialog step
    calls = c.calls
    host = CPU + upd * c.upd_cpu + ((calls + upd) * DB_CALL if two else 0.0)
    bounds = [
        c.cpus / host,
        c.disks / ((calls + upd) * reads * READ),
        1.0 / ((0.5 + upd) * LOG),
        c.update_wps / upd / (c.upd_cpu + DB_CALL + READ + LOG),
    ]
    if not two:
        bounds.append(db_cpus / ((calls + upd) * DB_CALL))
    service = CPU + calls * (DB_CALL + READ + c.rtt) + 0.5 * LOG
    bounds.append(c.wps / service)
    users = max(1, round(c.load * min(bounds) * (c.think + c.gui + service)))
    doc = case.scenario(
        land,
        users=users,
        think_s=c.think,
        cpu_s=CPU,
        gui_s=c.gui,
        dialog_steps=2,
        statements=[case.statement(calls=calls, data_reads=data_reads)],
        commits=0.5,
        update={
            "cpu_s": c.upd_cpu,
            "commits": 1,
            "statements": [case.statement(calls=1, data_reads=data_reads)],
        },
    )
    faults = {f: FAULTS[f] for f in c.faults}
    return case.catalog(tmp_path, doc, faults), db_cpus, users


def _des(catalog, faults: tuple[str, ...], steps: int, x_guess: float):
    sim = DiscreteEventSimulation("case", faults=faults, seed=1, dt=10.0, catalog=catalog)
    sim.run(200.0)
    before = sim.snapshot().totals.copy()
    span = math.ceil(max(1000.0, steps / x_guess) / 10.0) * 10.0
    sim.run(span)
    after = sim.snapshot().totals

    def mean(task: int, component: int) -> float:
        n = after.steps[:, task].sum() - before.steps[:, task].sum()
        s = after.seconds[:, task, :, component].sum()
        return float((s - before.seconds[:, task, :, component].sum()) / n)

    n = after.steps[:, 0].sum() - before.steps[:, 0].sum()
    busy = {
        "host": after.host_cpu_seconds.sum() - before.host_cpu_seconds.sum(),
        "db": after.db_cpu_seconds - before.db_cpu_seconds,
        "disk": after.disk_busy_seconds - before.disk_busy_seconds,
    }
    updates = after.steps[:, 1].sum() - before.steps[:, 1].sum()
    r_u = (mean(1, RESPONSE), mean(1, WAIT))
    return n / span, mean(0, RESPONSE), busy, span, updates / span, r_u


GRID = [
    Cell(1, 2, 0.2, 3),
    Cell(1, 6, 0.5, 2),
    Cell(1, 12, 0.8, 3),
    Cell(1, 24, 1.1, 2),
    Cell(2, 6, 0.2, 2),
    Cell(2, 12, 0.5, 3),
    Cell(2, 24, 0.8, 2),
    Cell(4, 12, 0.2, 3),
    Cell(4, 24, 0.5, 2),
    Cell(4, 2, 0.8, 3),
    Cell(4, 6, 1.1, 2),
    Cell(8, 24, 0.2, 2),
    Cell(8, 2, 0.5, 3),
    Cell(8, 6, 0.8, 2),
    Cell(8, 12, 1.1, 3),
    # Both work processes nearly always busy: the updates' CPU bursts meet the other work
    # process alone while their own dialog step is at the disks (the solver's shadow).
    Cell(2, 2, 1.1, 3),
]

# Off the grid: the cases issue 24 found the engines disagreeing on, and a batch whose
# statements make more calls (and physical reads) than there are disks. Queues in front of
# few work processes (`bounded`): the solver's dispatcher and update chains are
# birth-death chains, i.e. an exponential holding time; the DES's is a sum of stages (ABAP
# burst, DB burst, reads, log), less variable, so its queues are shorter (docs/model.md).
OFF_GRID = [
    # Phase-type chains (docs/model.md): +6.7 % and +7.3 % (the exponential chain's +13.3 %
    # and +10.1 %). The first: the two-moment fit and the holding time's mean; the second:
    # its SCV now the DES's (0.63 against 0.60; 0.41 while the ABAP and DB bursts on the one
    # core were taken as equal visits, +5.4 %), what is left is the solver's pool rate X(K)
    # 1.7 % below the DES's (the updates' CPU on the same core, Method's shadows).
    Cell(1, 1, 0.9, 3, steps=100_000, r_tol=0.08, name="one work process near saturation"),
    Cell(1, 2, 1.1, 2, steps=100_000, r_tol=0.07, name="the DB on the single core"),
    Cell(
        4,
        12,
        0.8,
        3,
        disks=1,
        faults=("too-few-wps", "db-bottleneck"),
        steps=100_000,
        bounded="dialog",
        name="two faults at once",
    ),
    Cell(
        2,
        12,
        0.7,
        3,
        update_wps=1,
        upd_cpu=0.1,
        steps=100_000,
        wu_tol=0.12,  # +8.7 % (the exponential chain's +25 %)
        name="saturated updates",
    ),
    Cell(2, 8, 2.0, 3, calls=10, think=0.0, gui=0.0, rtt=0.0004, steps=40_000, name="batch"),
]


def _compare(tmp_path, c: Cell) -> dict:
    """The solver's and the DES's figures of one cell and the solver's errors: X and R in
    per cent of the DES's, utilisations in points. Printed (pytest -s) for the docs table."""
    catalog, db_cpus, users = _cell(c, tmp_path)
    op = Solver(compile_network(catalog.scenario("case", faults=c.faults))).solve()
    x_a = float(op.step_rate[:, 0].sum())
    r_a = float((op.means[:, 0, :, RESPONSE] * op.step_rate[:, 0]).sum() / x_a)
    w_a = float((op.means[:, 0, :, WAIT] * op.step_rate[:, 0]).sum() / x_a)
    xu_a = float(op.step_rate[:, 1].sum())
    ru_a = tuple(
        float((op.means[:, 1, :, comp] * op.step_rate[:, 1]).sum() / xu_a)
        for comp in (RESPONSE, WAIT)
    )
    x_d, r_d, busy, span, x_u, ru_d = _des(catalog, c.faults, c.steps or STEPS[c.load], x_a)
    # The DES's own books balance: its CPUs were busy X times the demand (utilisation law).
    assert x_u == pytest.approx(0.5 * x_d, rel=0.02)  # every other step saves
    assert busy["host"] / span == pytest.approx(x_d * CPU + x_u * c.upd_cpu, rel=0.02)
    util = {
        "host": (busy["host"] / (c.cpus * span), float(op.host_cpu_util[0])),
        "db": (busy["db"] / (db_cpus * span), float(op.db_cpu_util)),
        "disk": (busy["disk"] / (c.disks * span), float(op.disk_util)),
    }
    where = c.where(users)
    errors = {
        "x_pct": 100.0 * (x_a / x_d - 1.0),
        "r_pct": 100.0 * (r_a / r_d - 1.0),
        **{f"{name}_points": 100.0 * (solver - des) for name, (des, solver) in util.items()},
    }
    print(
        f"\ngrid {where}: X des {x_d:.3f} solver {x_a:.3f} ({errors['x_pct']:+.2f} %), "
        f"R des {r_d:.4f} solver {r_a:.4f} ({errors['r_pct']:+.2f} %), "
        + ", ".join(f"{n} {100 * d:.1f} % vs {100 * s:.1f} %" for n, (d, s) in util.items())
        + f", update R des {ru_d[0]:.4f} solver {ru_a[0]:.4f}"
        + f", update wait des {ru_d[1]:.4f} solver {ru_a[1]:.4f}"
    )
    return {
        "where": where,
        "x": (x_d, x_a),
        "r": (r_d, r_a),
        "util": util,
        "errors": errors,
        "update": (ru_d, ru_a),
        "wait": w_a,
    }


def _id(c: Cell) -> str:
    return c.name.replace(" ", "-") or f"{c.cpus}cpu-{c.wps}wp-{c.load:.0%}-{c.tiers}tier"


@pytest.mark.parametrize("cell", GRID + OFF_GRID, ids=_id)
def test_solver_agrees_with_the_des(tmp_path, cell: Cell):
    c = _compare(tmp_path, cell)
    where, (x_d, x_a), (r_d, r_a) = c["where"], c["x"], c["r"]
    assert x_d == pytest.approx(x_a, rel=0.05), f"{where}: X des {x_d:.3f} solver {x_a:.3f}"
    # An exponential holding time is the most variable the DES's stages can give (their
    # SCV is below 1) and a constant one the least (SCV 0): Pollaczek-Khinchine's
    # (1 + SCV) / 2 puts the DES's queue wait between half the solver's and the solver's
    # (2 % for sampling).
    if cell.bounded == "dialog":
        low, high = r_a - c["wait"] / 2.0, r_a
        assert low * 0.98 <= r_d <= high * 1.02, (
            f"{where}: R des {r_d:.4f} outside [{low:.4f}, {high:.4f}]"
        )
    else:
        assert r_d == pytest.approx(r_a, rel=cell.r_tol), (
            f"{where}: R des {r_d:.4f} solver {r_a:.4f}"
        )
    if cell.wu_tol:
        (_, wu_d), (_, wu_a) = c["update"]
        assert wu_d == pytest.approx(wu_a, rel=cell.wu_tol), (
            f"{where}: update wait des {wu_d:.4f} solver {wu_a:.4f}"
        )
    # Utilisations: U = X D, so where X may differ (bounded cells) the demands are compared.
    scale = x_a / x_d if cell.bounded == "dialog" else 1.0
    for name, (des, solver) in c["util"].items():
        assert des * scale == pytest.approx(solver, abs=0.02), (
            f"{where}: {name} {des:.3f} vs {solver:.3f}"
        )
