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
"""

from __future__ import annotations

import math

import pytest

from exporters.model.des import DiscreteEventSimulation
from exporters.model.solver import Solver
from exporters.vocabulary import COMPONENTS
from tests.model import des_support as case

pytestmark = pytest.mark.slow

RESPONSE = COMPONENTS.index("response")
THINK, GUI, CPU, DB_CALL, READ, LOG = 5.0, 0.5, 0.08, 0.006, 0.01, 0.004
UPD_CPU, DISKS = 0.03, 4
STEPS = {0.2: 40_000, 0.5: 60_000, 0.8: 100_000, 1.1: 300_000}


def _cell(cpus: int, wps: int, load: float, tiers: int, tmp_path):
    two = tiers == 2
    db_cpus = cpus if two else max(1, cpus // 2)
    land = case.landscape(
        cpus=cpus,
        dialog_wps=wps,
        update_wps=4,
        db_cpus=db_cpus,
        two_tier=two,
        cpu_s_per_call=DB_CALL,
        disks=DISKS,
        read_s=READ,
        log_write_s=LOG,
    )
    land["database"]["bufferpools"][0]["miss_floor"] = 1.0  # every logical read is physical
    upd = 0.5  # updates per dialog step
    host = CPU + upd * UPD_CPU + (2 * DB_CALL + upd * DB_CALL if two else 0.0)
    bounds = [cpus / host, DISKS / ((2 + upd) * READ), 1.0 / ((0.5 + upd) * LOG)]
    if not two:
        bounds.append(db_cpus / ((2 + upd) * DB_CALL))
    service = CPU + 2 * DB_CALL + 2 * READ + 0.5 * LOG
    bounds.append(wps / service)
    users = max(1, round(load * min(bounds) * (THINK + GUI + service)))
    doc = case.scenario(
        land,
        users=users,
        think_s=THINK,
        cpu_s=CPU,
        gui_s=GUI,
        dialog_steps=2,
        statements=[case.statement(calls=2, data_reads=1)],
        commits=0.5,
        update={
            "cpu_s": UPD_CPU,
            "commits": 1,
            "statements": [case.statement(calls=1, data_reads=1)],
        },
    )
    return case.catalog(tmp_path, doc), db_cpus, users


def _des(catalog, steps: int, x_guess: float):
    sim = DiscreteEventSimulation("case", seed=1, dt=10.0, catalog=catalog)
    sim.run(200.0)
    before = sim.snapshot().totals.copy()
    span = math.ceil(max(1000.0, steps / x_guess) / 10.0) * 10.0
    sim.run(span)
    after = sim.snapshot().totals
    n = after.steps[:, 0].sum() - before.steps[:, 0].sum()
    r = (after.seconds[:, 0, :, RESPONSE].sum() - before.seconds[:, 0, :, RESPONSE].sum()) / n
    busy = {
        "host": after.host_cpu_seconds.sum() - before.host_cpu_seconds.sum(),
        "db": after.db_cpu_seconds - before.db_cpu_seconds,
        "disk": after.disk_busy_seconds - before.disk_busy_seconds,
    }
    updates = after.steps[:, 1].sum() - before.steps[:, 1].sum()
    return n / span, r, busy, span, updates / span


CELLS = [
    (1, 2, 0.2, 3),
    (1, 6, 0.5, 2),
    (1, 12, 0.8, 3),
    (1, 24, 1.1, 2),
    (2, 6, 0.2, 2),
    (2, 12, 0.5, 3),
    (2, 24, 0.8, 2),
    (4, 12, 0.2, 3),
    (4, 24, 0.5, 2),
    (4, 2, 0.8, 3),
    (4, 6, 1.1, 2),
    (8, 24, 0.2, 2),
    (8, 2, 0.5, 3),
    (8, 6, 0.8, 2),
    (8, 12, 1.1, 3),
    # Both work processes nearly always busy: the updates' CPU bursts meet the other work
    # process alone while their own dialog step is at the disks (the solver's shadow).
    (2, 2, 1.1, 3),
]


def _compare(tmp_path, cpus: int, wps: int, load: float, tiers: int) -> dict:
    """The solver's and the DES's figures of one cell and the solver's errors: X and R in
    per cent of the DES's, utilisations in points. Printed (pytest -s) for the docs table."""
    catalog, db_cpus, users = _cell(cpus, wps, load, tiers, tmp_path)
    op = Solver(catalog.scenario("case")).solve()
    x_a = float(op.step_rate[:, 0].sum())
    r_a = float((op.means[:, 0, :, RESPONSE] * op.step_rate[:, 0]).sum() / x_a)
    x_d, r_d, busy, span, x_u = _des(catalog, STEPS[load], x_a)
    # The DES's own books balance: its CPUs were busy X times the demand (utilisation law).
    assert x_u == pytest.approx(0.5 * x_d, rel=0.02)  # every other step saves
    assert busy["host"] / span == pytest.approx(x_d * CPU + x_u * UPD_CPU, rel=0.02)
    util = {
        "host": (busy["host"] / (cpus * span), float(op.host_cpu_util[0])),
        "db": (busy["db"] / (db_cpus * span), float(op.db_cpu_util)),
        "disk": (busy["disk"] / (DISKS * span), float(op.disk_util)),
    }
    where = f"{cpus} CPUs, {wps} WPs, {load:.0%} load, {tiers}-tier, {users} users"
    errors = {
        "x_pct": 100.0 * (x_a / x_d - 1.0),
        "r_pct": 100.0 * (r_a / r_d - 1.0),
        **{f"{name}_points": 100.0 * (solver - des) for name, (des, solver) in util.items()},
    }
    print(
        f"\ngrid {where}: X des {x_d:.3f} solver {x_a:.3f} ({errors['x_pct']:+.2f} %), "
        f"R des {r_d:.4f} solver {r_a:.4f} ({errors['r_pct']:+.2f} %), "
        + ", ".join(f"{n} {100 * d:.1f} % vs {100 * s:.1f} %" for n, (d, s) in util.items())
    )
    return {"where": where, "x": (x_d, x_a), "r": (r_d, r_a), "util": util, "errors": errors}


@pytest.mark.parametrize(("cpus", "wps", "load", "tiers"), CELLS)
def test_solver_agrees_with_the_des(tmp_path, cpus: int, wps: int, load: float, tiers: int):
    c = _compare(tmp_path, cpus, wps, load, tiers)
    where, (x_d, x_a), (r_d, r_a) = c["where"], c["x"], c["r"]
    assert x_d == pytest.approx(x_a, rel=0.05), f"{where}: X des {x_d:.3f} solver {x_a:.3f}"
    assert r_d == pytest.approx(r_a, rel=0.05), f"{where}: R des {r_d:.4f} solver {r_a:.4f}"
    for name, (des, solver) in c["util"].items():
        assert des == pytest.approx(solver, abs=0.02), f"{where}: {name} {des:.3f} vs {solver:.3f}"
