"""A class on a shared core, the DES against the solver (seed 004's central instance D00 on
core 0 beside the database and the central services). For one instance's dialog class:
the solver's inner network at each number of busy work processes (X(n), the residence per
step at each station, the background and stream it meets there, the share bound and
whether it binds) beside the DES's pool (completions while all K are busy, the holding
time and its parts per step), and the shared station's busy time split by tenant in both
engines. Reuses bench/pool_variability.py's record hook (no change to the engine).
`--others`: how a dialog class meets the other dialog classes at a CPU station: `shorter`
(the model: as an open stream where their bursts are shorter, `Solver._shorter_bursts`),
`background` (the model before 2026-11-26: their mean queue, always present), `streams`
(every other one as a stream; docs/model.md, seed 004's section).
Usage: python bench/shared_core.py [--scenario sd-two-tier-8core] [--users 520]
  [--instance 0] [--warmup 300] [--window 1200] [--seed 3] [--others shorter]
"""

from __future__ import annotations

import argparse

import numpy as np
from pool_variability import _Recorder, all_busy_gaps, scv  # bench/, the script's directory

from landscape_model import des_loop
from landscape_model.des import DiscreteEventSimulation
from landscape_model.engine import Simulation
from landscape_model.network import DIALOG, UPDATE
from landscape_model.results import COMPONENT_INDEX
from landscape_model.solver import Solver


class BackgroundSolver(Solver):
    """The solver before 2026-11-26: every other dialog class met as a background."""

    def _shorter_bursts(self) -> np.ndarray:
        return np.zeros_like(super()._shorter_bursts())


class StreamsSolver(Solver):
    """Every other dialog class met as an open stream, not a background (the experiment)."""

    def _shorter_bursts(self) -> np.ndarray:
        mask = super()._shorter_bursts()
        n = mask.shape[0]
        cpu = mask.any(axis=(0, 1))  # the CPU stations where some class streams another
        users = np.array([lay.users > 0 for lay in self.net.layout])
        out = (users[:, None] & users[None, :] & ~np.eye(n, dtype=bool))[:, :, None] & cpu
        return out


class _PartsRecorder(_Recorder):
    """Also keeps each step's processing, DB request, enqueue and load time."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[np.ndarray] = []

    def count_records(self, t, rec, nrec, *rest):
        r = rec[:nrec]
        r = r[r[:, des_loop.REC_DONE] <= t]
        if self.on and len(r):
            cols = [
                des_loop.REC_PROCESSING,
                des_loop.REC_DB,
                des_loop.REC_ENQUEUE,
                des_loop.REC_LOAD,
                des_loop.REC_CPU,
            ]
            self.parts.append(r[:, cols].copy())
        return super().count_records(t, rec, nrec, *rest)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", default="sd-two-tier-8core")
    ap.add_argument("--users", type=int, default=520)
    ap.add_argument("--instance", type=int, default=0)
    ap.add_argument("--warmup", type=float, default=300.0)
    ap.add_argument("--window", type=float, default=1200.0)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--others", choices=("shorter", "background", "streams"), default="shorter")
    args = ap.parse_args()
    over = {"users": args.users}
    scenario = Simulation(args.scenario, overrides=over).scenario
    kinds = {"shorter": Solver, "background": BackgroundSolver, "streams": StreamsSolver}
    solver = kinds[args.others](scenario)
    op = solver.solve()
    net = solver.net
    i = args.instance
    host = net.inst_cpu_station[i]
    names = net.station_names
    print(
        f"{args.scenario}, {args.users} users, instance {net.layout[i].name}, its CPU station "
        f"{names[host]} (DB CPU station {names[net.db_cpu_station]}, central services "
        f"{names[net.cs_cpu_station] if net.cs_cpu_station >= 0 else '-'})"
    )
    cs = next(c for c in op.classes if c.instance == i and c.task == DIALOG)
    k_max = cs.wps
    key = dict(
        zip(("k", "users", "wps", "bound", "think", "arrival", "delay"), cs.key[:7], strict=True)
    )
    print(
        f"solver: bound {key['bound']}, X {cs.throughput:.4f}/s, think {cs.think:.3f} s, "
        f"SCV {cs.scv:.3f}, wait {cs.chain.mean_queue / cs.throughput * 1e3:.1f} ms"
    )
    print("  station       demand ms  background  stream load/cap  shadow away/along")
    for s, st in zip(cs.stations, cs.key[7], strict=False):
        print(
            f"  {names[s]:12s} {st[0] * 1e3:9.2f}  {st[3]:10.4f}  {st[4]:8.4f}/{st[5]:<4d} "
            f"{st[6]:.4f}/{st[7]:.4f}"
        )
    print("  n   X(n)/s   hold ms  residence per step ms at each station (delay last)")
    for n in range(1, k_max + 1):
        res = cs.fes_queue[:, n] / cs.fes[n] * 1e3
        print(
            f"  {n}  {cs.fes[n]:7.4f}  {n / cs.fes[n] * 1e3:7.1f}  "
            + "  ".join(
                f"{names[s] if s >= 0 else 'delay'} {v:.1f}"
                for s, v in zip(cs.stations, res, strict=True)
            )
        )
    m = op.means[i, DIALOG]  # [tx, component]
    w = net.weights[DIALOG]
    parts = (
        "dispatcher_wait",
        "processing",
        "db_request",
        "enqueue",
        "load_gen",
        "cpu",
        "response",
    )
    print(
        "  per-step means ms (chain-averaged): "
        + ", ".join(f"{p} {float(m[:, COMPONENT_INDEX[p]] @ w) * 1e3:.1f}" for p in parts)
    )
    # Load per tenant at the shared station, solver: X x demand.
    loads = {}
    for c in op.classes:
        for s, d in zip(c.stations, c.demand, strict=True):
            if s == host:
                loads[(net.layout[c.instance].name, c.task)] = c.throughput * d
    total = sum(loads.values())
    print(
        f"  {names[host]} busy {total * 100:.2f} % (per server: servers "
        f"{net.station_servers[host]}): "
        + ", ".join(
            f"{n}/{'d' if t == DIALOG else 'u'} {v * 100:.2f}"
            for (n, t), v in loads.items()
            if v > 1e-4
        )
    )
    ab = sum(op.step_rate[i, k] @ (net.cpu_s[k] * net.cpu_stretch[i]) for k in (DIALOG, UPDATE))
    dbw = sum(
        op.step_rate[j, k] @ net.db_cpu[k] for j in range(len(net.layout)) for k in (DIALOG, UPDATE)
    )
    print(
        f"  solver split: ABAP of the instance {ab * 100:.2f} %, DB CPU (all) {dbw * 100:.2f} %"
        f", X per instance: "
        + " ".join(f"{op.step_rate[j, DIALOG].sum():.3f}" for j in range(len(net.layout)))
    )

    rec = _PartsRecorder()
    sim = DiscreteEventSimulation(args.scenario, seed=args.seed, overrides=over)
    sim._k = rec.module()
    sim.run(args.warmup)  # run(duration): simulated seconds from now
    t0 = sim.totals.cpu_station_busy_seconds.copy()
    rec.on = True
    sim.run(args.window)
    span = args.window
    st_busy = (sim.totals.cpu_station_busy_seconds - t0) / span
    rows, prt = np.concatenate(rec.rows), np.concatenate(rec.parts)
    sel = rows[:, 0] == i * 2
    start, release, wait = rows[sel, 1], rows[sel, 2], rows[sel, 3]
    gaps = all_busy_gaps(start, release, k_max)
    p = prt[sel]
    print(
        f"DES seed {args.seed}, {span:.0f} s after {args.warmup:.0f} s: {sel.sum()} steps, "
        f"X {sel.sum() / span:.4f}/s, wait {wait.mean() * 1e3:.1f} ms, holding "
        f"{(release - start).mean() * 1e3:.1f} ms SCV {scv(release - start):.3f}; all-busy "
        f"gaps {len(gaps)} mean {gaps.mean() * 1e3:.1f} ms (X(K) {1 / gaps.mean():.4f}/s) "
        f"SCV {scv(gaps):.3f}"
    )
    for label, mask in (
        ("all steps", np.ones(len(p), bool)),
        ("waited (pool full)", wait > 0),
        ("did not wait", wait <= 0),
    ):
        q = p[mask]
        print(
            f"  {label:18s} n {len(q):5d}: processing {q[:, 0].mean() * 1e3:.1f}, DB request "
            f"{q[:, 1].mean() * 1e3:.1f}, enqueue {q[:, 2].mean() * 1e3:.1f}, load "
            f"{q[:, 3].mean() * 1e3:.1f}, ABAP CPU {q[:, 4].mean() * 1e3:.1f} ms; holding "
            f"{(release - start)[mask].mean() * 1e3:.1f} ms"
        )
    print(
        "  DES stations busy: "
        + ", ".join(
            f"{names[s] if s < len(names) else s} {v * 100:.2f} %" for s, v in enumerate(st_busy)
        )
    )
    xs = [(rows[:, 0] == j * 2).sum() / span for j in range(len(net.layout))]
    print("  DES X per instance: " + " ".join(f"{x:.3f}" for x in xs))


if __name__ == "__main__":
    main()
