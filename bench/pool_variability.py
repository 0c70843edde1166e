"""How variable a work-process pool's completions are, the DES against the solver (issue 24
items 2 and 8). Per work-process pool (instance x dialog/update): one work process's holding
time (dispatch to release after roll-out), its mean and SCV; the pool's inter-completion
times while all K of its work processes stay busy (mean, SCV, lag-1 correlation); the
dispatcher wait. Beside them the solver's K / X(K), `_holding_scv` and wait, and the
solver's chain (its own FES) rerun with the DES's holding SCV and with the DES's
inter-completion SCV in place of its own: which variability the wait needs.

The DES is read through a wrapper of its record counter (`des_loop.count_records`), which
sees every step's record before it is summed: no change to the engine.
Usage: python bench/pool_variability.py [--scenario sd-two-tier-1core] [--users 79]
  [--set landscape.x=y ...] [--grid-cell the-DB-on-the-single-core] [--warmup 300]
  [--window 3000] [--seed 3]
(`--grid-cell`: a cell of tests/model/test_des_grid.py by its test id, DES seed 1 as there.)
"""

from __future__ import annotations

import argparse
import itertools
import math
import tempfile
import types
from pathlib import Path

import numpy as np

from landscape_model import des_loop
from landscape_model.chains import closed_chain, open_chain
from landscape_model.des import DiscreteEventSimulation
from landscape_model.network import DIALOG, compile_network
from landscape_model.phase_type import fit_phase_type
from landscape_model.solver import Solver


class _Recorder:
    """des_loop with count_records wrapped: keeps (pool, start, release, wait) of each step."""

    def __init__(self) -> None:
        self.rows: list[np.ndarray] = []
        self.on = False

    def module(self) -> types.SimpleNamespace:
        ns = types.SimpleNamespace(**{k: getattr(des_loop, k) for k in dir(des_loop)})
        ns.count_records = self.count_records
        return ns

    def count_records(self, t, rec, nrec, comp_src, n_tx, uroll, rmem, rfile, cgui, *rest):
        r = rec[:nrec]
        r = r[r[:, des_loop.REC_DONE] <= t]
        if self.on and len(r):
            cls = r[:, des_loop.REC_CLS].astype(int)
            pool = cls // n_tx
            inst, upd = pool >> 1, pool & 1
            roll = np.where(upd == 1, uroll, rmem[inst] + r[:, des_loop.REC_FILE] * rfile[inst])
            gui = np.where(upd == 1, 0.0, cgui[cls])
            done = r[:, des_loop.REC_DONE]
            start = done - r[:, des_loop.REC_RESPONSE] + r[:, des_loop.REC_WAIT]
            release = done - gui + roll  # the work process frees after its roll-out
            self.rows.append(np.column_stack((pool, start, release, r[:, des_loop.REC_WAIT])))
        return des_loop.count_records(t, rec, nrec, comp_src, n_tx, uroll, rmem, rfile, cgui, *rest)


def scv(x: np.ndarray) -> float:
    return float(x.var() / x.mean() ** 2) if len(x) > 1 and x.mean() > 0 else float("nan")


def lag1(x: np.ndarray) -> float:
    return float(np.corrcoef(x[:-1], x[1:])[0, 1]) if len(x) > 2 else float("nan")


def all_busy_gaps(start: np.ndarray, release: np.ndarray, k: int) -> np.ndarray:
    """Times between consecutive releases of a pool of k while all k stay busy (k busy once
    the events at a release are done: a waiting step took the freed work process at once)."""
    times = np.round(np.concatenate((start, release)), 9)
    delta = np.concatenate((np.ones(len(start)), -np.ones(len(release))))
    order = np.lexsort((-delta, times))  # at one instant: releases first, then starts
    times, delta = times[order], delta[order]
    busy = np.cumsum(delta)
    t_rel = times[delta < 0]
    after = busy[np.searchsorted(times, t_rel, side="right") - 1]
    gaps = np.diff(t_rel)
    return gaps[(after[:-1] >= k) & (gaps > 1e-12)]


def _multisets(r: int, m: int) -> list[tuple[int, ...]]:
    return [c for c in itertools.product(range(m + 1), repeat=r) if sum(c) == m]


def mphk_wait(users: int, think: float, rate: np.ndarray, c2: float) -> float:
    """Mean dispatcher wait of the exact chain over (users, phases of each busy work
    process): K work processes, each its own clock through the fitted phase-type holding
    time (phase_type.fit_phase_type) at speed X(n) / min(n, K), a freed one taking the next
    waiting step from alpha; solved by linear level reduction over the levels (Latouche &
    Ramaswami 1999, ch. 10), built here, not by the solver's chain. SCV 1: the birth-death
    chain; K = 1: the solver's chain."""
    k_max = len(rate) - 1
    ph = fit_phase_type(c2)
    r, t, out, alpha = len(ph.alpha), ph.t, ph.exit, ph.alpha
    states = [_multisets(r, min(n, k_max)) for n in range(users + 1)]
    pos = [{c: i for i, c in enumerate(level)} for level in states]
    up, down, local = [], [], []
    for n, level in enumerate(states):
        m = min(n, k_max)
        size = len(level)
        u = np.zeros((size, len(states[n + 1]))) if n < users else None
        d = np.zeros((size, len(states[n - 1]))) if n > 0 else None
        a = np.zeros((size, size))
        lam = (users - n) / think
        speed = rate[min(n, k_max)] / m if m else 0.0
        for i, c in enumerate(level):
            if u is not None:
                if n < k_max:  # a free work process takes the step, its clock from alpha
                    for j in np.nonzero(alpha)[0]:
                        c2_ = list(c)
                        c2_[j] += 1
                        u[i, pos[n + 1][tuple(c2_)]] += lam * alpha[j]
                else:
                    u[i, pos[n + 1][c]] += lam
            for p in np.nonzero(c)[0]:
                for q in range(r):
                    if q != p and t[p, q] > 0:
                        c2_ = list(c)
                        c2_[p] -= 1
                        c2_[q] += 1
                        a[i, pos[n][tuple(c2_)]] += c[p] * speed * t[p, q]
                if out[p] > 0:
                    c2_ = list(c)
                    c2_[p] -= 1
                    if n > k_max:  # the freed work process takes a waiting step
                        for j in np.nonzero(alpha)[0]:
                            c3 = list(c2_)
                            c3[j] += 1
                            d[i, pos[n - 1][tuple(c3)]] += c[p] * speed * out[p] * alpha[j]
                    else:
                        d[i, pos[n - 1][tuple(c2_)]] += c[p] * speed * out[p]
        rows = a.sum(axis=1) + (u.sum(axis=1) if u is not None else 0.0)
        rows = rows + (d.sum(axis=1) if d is not None else 0.0)
        a[np.diag_indices(size)] -= rows
        up.append(u)
        down.append(d)
        local.append(a)
    # Censored from the top: S_n = A_n + U_n (-S_{n+1})^-1 D_{n+1}.
    inv: list[np.ndarray] = [np.zeros(0)] * (users + 1)
    s_next = local[users]
    inv[users] = np.linalg.inv(-s_next)
    for n in range(users - 1, 0, -1):
        s_n = local[n] + up[n] @ inv[n + 1] @ down[n + 1]
        inv[n] = np.linalg.inv(-s_n)
    pi = [np.ones(1)]
    for n in range(users):
        v = pi[n] @ up[n] @ inv[n + 1]
        pi.append(v)
    mass = np.array([v.sum() for v in pi])
    mass /= mass.sum()
    n = np.arange(users + 1)
    x = float(((users - n) / think) @ mass)
    return float(np.maximum(n - k_max, 0) @ mass) / x


def _wait(cs, c2: float) -> float:
    if cs.task == DIALOG:
        chain = closed_chain(cs.users, cs.think, cs.fes, c2)
    else:
        chain = open_chain(cs.arrival_rate, cs.fes, c2)
    return chain.mean_queue / chain.throughput if chain.throughput > 0 else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", default="sd-two-tier-1core")
    ap.add_argument("--users", type=int, default=79)
    ap.add_argument("--set", action="append", default=[], dest="settings")
    ap.add_argument("--grid-cell", help="a cell of tests/model/test_des_grid.py instead")
    ap.add_argument("--warmup", type=float, default=300.0)
    ap.add_argument("--window", type=float, default=3000.0)
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()
    if args.grid_cell:
        from tests.model import test_des_grid as grid

        cell = {grid._id(c): c for c in grid.GRID + grid.OFF_GRID}[args.grid_cell]
        catalog, _, users = grid._cell(cell, Path(tempfile.mkdtemp()))
        scenario = catalog.scenario("case", faults=cell.faults)
        des_args = ("case",)
        des_kw = {"faults": cell.faults, "seed": 1, "dt": 10.0, "catalog": catalog}
        title = f"grid cell {args.grid_cell}, {users} users, DES seed 1"
    else:
        from landscape_model.engine import Simulation

        over = {"users": args.users}
        scenario = Simulation(args.scenario, settings=args.settings, overrides=over).scenario
        des_args = (args.scenario,)
        des_kw = {"seed": args.seed, "settings": args.settings, "overrides": over}
        title = (
            f"{args.scenario} {' '.join(args.settings)} {args.users} users, DES seed {args.seed}"
        )
    solver = Solver(compile_network(scenario))
    op = solver.solve()
    rec = _Recorder()
    sim = DiscreteEventSimulation(*des_args, **des_kw)
    sim._k = rec.module()
    sim.run(args.warmup)
    rec.on = True
    sim.run(args.window)  # run(duration): simulated seconds from now
    rows = np.concatenate(rec.rows)
    print(f"{title}, {args.window:.0f} s after {args.warmup:.0f} s")
    print(
        "pool            K  steps | hold ms DES / solver  SCV DES / solver | all-busy gaps: "
        "n, mean ms DES / 1/X(K), SCV, lag-1 | wait ms: DES, solver, "
        "solver's chain at the DES's hold SCV, at its gap SCV; dialog: the exact M/PH/K chain "
        "over every work process's phase at the solver's SCV"
    )
    for cs in op.classes:
        lay = solver.net.layout[cs.instance]
        k = min(lay.dialog_wps, lay.users) if cs.task == DIALOG else lay.update_wps
        sel = rows[rows[:, 0] == cs.instance * 2 + (cs.task != DIALOG)]
        if not len(sel) or cs.fes[k] <= 0:
            continue
        start, release, wait = sel[:, 1], sel[:, 2], sel[:, 3]
        mph = cs.task == DIALOG and cs.users * math.comb(k + 3, k) <= 20_000
        hold = release - start
        gaps = all_busy_gaps(start, release, k)
        x_k = float(cs.fes[k])
        gap_mean = gaps.mean() * 1e3 if len(gaps) else float("nan")
        print(
            f"{lay.name}/{'dialog' if cs.task == DIALOG else 'update'} {k:3d} {len(sel):6d} | "
            f"{hold.mean() * 1e3:7.1f} / {k / x_k * 1e3:7.1f}  {scv(hold):4.2f} / {cs.scv:4.2f} | "
            f"{len(gaps):6d}, {gap_mean:6.1f} / {1e3 / x_k:6.1f}, {scv(gaps):4.2f}, "
            f"{lag1(gaps):+5.2f} | {wait.mean() * 1e3:7.1f}, {_wait(cs, cs.scv) * 1e3:7.1f}, "
            f"{_wait(cs, scv(hold)) * 1e3:7.1f}, "
            f"{_wait(cs, scv(gaps)) * 1e3 if len(gaps) > 1 else float('nan'):7.1f}"
            + (f"; {mphk_wait(cs.users, cs.think, cs.fes, cs.scv) * 1e3:7.1f}" if mph else "")
        )


if __name__ == "__main__":
    main()
