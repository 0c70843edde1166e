"""Seed 004's scale-up question on the shipped landscapes, both engines: the most SD users
with an average dialog response below 2 s on 1, 2, 4 and 8 cores with the paper's placement
(`sd-two-tier-Ncore`: one instance pinned per core, the database on the central instance's
core, the 8-core host on two sockets), and with `--shared` also sd-two-tier as before
(every tenant on every core).

Analytic: `WhatIf.max_users` (regula falsi to 0.2 %). DES: bisection on the users between
0.8x and 1.25x the analytic answer to 1 %, each point a run of `--warmup` + `--window`
simulated seconds (seed `--seed`), its response the mean over the window's steps.
Prints the table and the ratios the held-out check names (2/1, 4/1, 8/4).
Usage: python bench/seed004.py [--shared] [--window 1200] [--warmup 300] [--seed 3]
"""

from __future__ import annotations

import argparse
import time

from landscape_model.des import DiscreteEventSimulation
from landscape_model.summary import st03_summary
from landscape_model.whatif import Configuration, WhatIf

CORES = (1, 2, 4, 8)
LIMIT_S = 2.0


def des_response(scenario: str, settings: list[str], users: int, args) -> float:
    sim = DiscreteEventSimulation(
        scenario, seed=args.seed, settings=settings, overrides={"users": users}
    )
    sim.run(args.warmup)
    a = st03_summary(sim.snapshot())[0]
    sim.run(args.warmup + args.window)
    b = st03_summary(sim.snapshot())[0]
    done = b["steps"] - a["steps"]
    return (b["response_ms"] * b["steps"] - a["response_ms"] * a["steps"]) / 1000.0 / done


def des_max_users(scenario: str, settings: list[str], guess: int, args) -> int:
    lo, hi = int(guess * 0.8), int(guess * 1.25) + 1
    if des_response(scenario, settings, lo, args) >= LIMIT_S:
        raise SystemExit(f"{scenario}: the DES is above {LIMIT_S} s at {lo} users already")
    if des_response(scenario, settings, hi, args) < LIMIT_S:
        raise SystemExit(f"{scenario}: the DES is below {LIMIT_S} s at {hi} users still")
    while hi - lo > max(1, round(lo * 0.01)):
        mid = (lo + hi) // 2
        if des_response(scenario, settings, mid, args) < LIMIT_S:
            lo = mid
        else:
            hi = mid
    return lo


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", action="store_true", help="also sd-two-tier, all cores shared")
    ap.add_argument("--window", type=float, default=1200.0)
    ap.add_argument("--warmup", type=float, default=300.0)
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()
    rows = [("pinned", lambda n: (f"sd-two-tier-{n}core", []))]
    if args.shared:
        rows.append(("shared", lambda n: ("sd-two-tier", [f"landscape.app_servers.cpus={n}"])))
    for label, which in rows:
        found: dict[str, dict[int, int]] = {"analytic": {}, "des": {}}
        for n in CORES:
            scenario, settings = which(n)
            t0 = time.process_time()
            point = WhatIf(scenario, settings=settings).max_users(Configuration(label=label))
            t1 = time.process_time()
            found["analytic"][n] = point.users
            found["des"][n] = des_max_users(scenario, settings, point.users, args)
            t2 = time.process_time()
            print(
                f"{label} {n} core(s): analytic {point.users} ({t1 - t0:.1f} s CPU), "
                f"DES {found['des'][n]} ({t2 - t1:.1f} s CPU)",
                flush=True,
            )
        for engine, users in found.items():
            u = [users[n] for n in CORES]
            print(
                f"{label:7s} {engine:8s} "
                + " / ".join(str(x) for x in u)
                + f"   2/1 {u[1] / u[0]:.2f}  4/1 {u[2] / u[0]:.2f}  8/4 {u[3] / u[2]:.2f}"
            )


if __name__ == "__main__":
    main()
