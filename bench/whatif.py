"""What-if speed: `wlmon whatif`'s default question (a users sweep of 8 points, 20-160 % of
the scenario's users, and the most users under 2 s) through the fast path and through the
reference path, in the same run, and the ratio.

Fast path (the shipped one): each population of a class's network convolves the stations
without a shadow once (`convolution._one_shadowed`), identical copies by repeated squaring;
after one Anderson pass the fixed point's damped fallback adds vector extrapolation
(`Solver._extrapolated`); identical instances' classes are copied within a sweep
(`Solver._copies`); a class over its share of a saturated station is slowed by the secant
method (`chains.bounded_chain`); sweep points start warm from their neighbour; the most-users
search starts from the sweep's bracket and closes it by regula falsi (Anderson-Bjoerck).
Since the phase-type chains (this turn): convolutions in linear space (`convolution.log_convolve`,
the log-space sum where a bin would underflow), a stream's sums as products of ratios in
linear space (`convolution._log_stream_sums`), every stream station of a network in one table
(`convolution.log_station_functions`), the open phase chain's arrival tail only when the
histograms ask (`ChainResult.arrival_distribution`), one demand table per task and sweep
(the host's CPU row per instance), the holding time's SCV in one array operation, a warm
start made alike for alike instances (`Solver._alike`: copies from the first sweep), YAML
through libyaml (`catalog._read_yaml`).
Reference path: every population solved as its own network
(`convolution.closed_network_by_population`), a disk array's copies convolved one by one,
every instance's classes built (identical ones found by the memo only), proportional
steps to a class's share (`chains.bounded_chain_by_scaling`),
two Anderson passes then plain damped iteration, cold points, bisection from the
scenario's users, convolutions and stream sums in log space (the code before issue 24
item 6, same stopping rules).

Also the fast path with exponential holding times (`SolverOptions(phase_type=False)`, the
birth-death chains before the phase-type ones), to show what those cost.
Both print every solve (users, sweeps, CPU seconds) and the answers, which must agree:
the same points to 1e-4 and most users within the searches' 0.2 %.
Usage: python bench/whatif.py [--scenario sd-benchmark-2003] [--set path=value ...]
"""

from __future__ import annotations

import argparse
import math
import time
from contextlib import contextmanager

import landscape_model.solver as solver_module
from landscape_model import chains, convolution
from landscape_model.solver import SolverOptions
from landscape_model.whatif import Configuration, WhatIf

TARGET_S = 2.0  # issue 24 item 6: at most 2 s per configuration


# The slow path: networks population by population, no extrapolation, every class solved.
REFERENCE = SolverOptions(
    extrapolate=False,
    anderson_mixing=(1.0, 0.5),
    group_instances=False,
    closed_network=convolution.closed_network_by_population,
    bounded_chain=chains.bounded_chain_by_scaling,
)


@contextmanager
def reference_kernels():
    """The convolution's slower kernels (its module functions: log-space convolutions, copies
    one by one), which no solver option reaches; restored on leaving."""
    power = convolution._log_power
    kernels = convolution.log_convolve, convolution._log_mixed_function
    convolution.log_convolve = convolution._log_convolve_logs
    convolution._log_mixed_function = convolution._log_mixed_by_logs
    convolution._log_power = _one_by_one
    try:
        yield
    finally:
        convolution._log_power = power
        convolution.log_convolve, convolution._log_mixed_function = kernels


def _one_by_one(one, copies: int):
    """Identical copies convolved one after the other (before: copies - 1 convolutions)."""
    out = one
    for _ in range(copies - 1):
        out = convolution.log_convolve(out, one)
    return out


@contextmanager
def solves_logged(log: list):
    solve = solver_module.Solver.solve

    def logged(self, warm_start=None):
        cpu = time.process_time()
        op = solve(self, warm_start=warm_start)
        log.append((self.sc.users, self.iterations, time.process_time() - cpu))
        return op

    solver_module.Solver.solve = logged
    try:
        yield
    finally:
        solver_module.Solver.solve = solve


def question(model: WhatIf, fast: bool) -> tuple[float, list, object, list]:
    config = Configuration("bench")
    users = model.scenario(config).users
    values = sorted({max(1, round(users * f)) for f in (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6)})
    log: list = []
    cpu = time.process_time()
    with solves_logged(log):
        points = model.sweep(config, "users", values, warm_start=fast)
        if fast:
            best = model.max_users(config, known=points)
        else:
            best = model.max_users(config, method="bisection")
    return time.process_time() - cpu, points, best, log


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="sd-benchmark-2003")
    parser.add_argument("--set", action="append", default=[], dest="settings")
    args = parser.parse_args()
    model = WhatIf(args.scenario, settings=args.settings)
    fast_s, fast_points, fast_best, fast_log = question(model, fast=True)
    # The phase-type chains' cost: the fast path again with exponential holding times
    # (the birth-death chains before them), on a fresh model so neither warms the other.
    exponential = WhatIf(
        args.scenario, settings=args.settings, options=SolverOptions(phase_type=False)
    )
    exp_s, _, exp_best, _ = question(exponential, True)
    reference = WhatIf(args.scenario, settings=args.settings, options=REFERENCE)
    with reference_kernels():
        slow_s, slow_points, slow_best, slow_log = question(reference, fast=False)
    for name, log in (("fast", fast_log), ("reference", slow_log)):
        print(f"{name}: " + ", ".join(f"{u} users {n} sweeps {s:.2f} s" for u, n, s in log))
    worst = max(
        abs(a.response_s - b.response_s) / b.response_s
        for a, b in zip(fast_points, slow_points, strict=True)
    )
    print(f"sweep points: response differs by at most {100 * worst:.4f} %")
    print(
        f"most users under 2 s: fast {fast_best.users:,} ({fast_best.response_s:.4f} s), "
        f"reference {slow_best.users:,} ({slow_best.response_s:.4f} s)"
    )
    print(f"fast path:      {fast_s:6.2f} s CPU ({len(fast_log)} solves)")
    print(f"reference path: {slow_s:6.2f} s CPU ({len(slow_log)} solves)")
    print(
        f"fast path with exponential holding times: {exp_s:6.2f} s CPU (phase-type chains "
        f"{fast_s / exp_s:.2f}x that; most users {exp_best.users:,} vs {fast_best.users:,})"
    )
    print(f"ratio: {slow_s / fast_s:.1f}x faster; target <= {TARGET_S:g} s per configuration")
    tolerance = math.ceil(0.002 * slow_best.users) + 1
    if worst > 1e-4 or abs(fast_best.users - slow_best.users) > tolerance:
        raise SystemExit("the fast path's answers differ from the reference path's")


if __name__ == "__main__":
    main()
