"""Fast mode against a plain SimPy model of the same network, same simulated window.

Prints seconds for each, seconds per simulated dialog step and their ratio. Targets
(issue 4): the SD benchmark hour in <= 20 s, and >= 20x faster per simulated step than
SimPy. Usage: python bench/simulate.py [--window 3600] [--seed 1]; the SimPy hour
takes about ten minutes on 2 cores, --window shortens both runs for a quick look.
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np
import simpy

from exporters.model.engine import Simulation
from exporters.model.solver import Solver
from exporters.model.summary import run_figures


def fast_mode(window: float, seed: int) -> tuple[float, float, float]:
    start = time.perf_counter()
    sim = Simulation("sd-benchmark-2003", seed=seed)
    sim.run(window)
    elapsed = time.perf_counter() - start
    f = run_figures(sim.snapshot())
    return elapsed, f["dialog_steps_per_s"] * window, f["avg_dialog_response_s"]


def simpy_model(window: float, seed: int) -> tuple[float, float, float]:
    """The same closed network as a textbook discrete-event model, step by step."""
    sim = Simulation("sd-benchmark-2003", seed=seed)
    sv = Solver(sim.scenario)
    sc, land = sim.scenario, sim.scenario.landscape
    op = sim.target
    rng = random.Random(seed)
    env = simpy.Environment()
    db = land.database
    hosts = {h: simpy.Resource(env, capacity=land.app_servers.cpus) for h in land.app_servers.hosts}
    db_cpu = simpy.Resource(env, capacity=db.cpus)
    disks = [simpy.Resource(env, capacity=1) for _ in range(db.disks.count)]
    enq = simpy.Resource(env, capacity=land.central_services.enqueue_work_processes)
    layout = sv.layout
    dia = [simpy.Resource(env, capacity=lay.dialog_wps) for lay in layout]
    upd = [simpy.Resource(env, capacity=lay.update_wps) for lay in layout]
    tx = list(range(len(sv.tx_names)))
    weights = list(sv.mix)
    # Per (task type, transaction): DB CPU and physical reads per step.
    db_cpu_step = np.zeros((2, len(tx)))
    phys_step = np.zeros((2, len(tx)))
    np.add.at(db_cpu_step, (sv.st_task, sv.st_tx), sv.st_calls * sv.st_cpu)
    np.add.at(phys_step, (sv.st_task, sv.st_tx), sv.st_calls * sv.st_phys)
    roll = op.means[0, 0, 0, 2]
    stats = {"steps": 0, "response": 0.0}

    def work(i: int, k: int, t: int):
        host = hosts[layout[i].host]
        yield env.timeout(roll + land.instance.load_gen_s)
        with host.request() as r:
            yield r
            yield env.timeout(rng.expovariate(1.0 / sv.cpu_s[k, t]))
        with db_cpu.request() as r:
            yield r
            yield env.timeout(rng.expovariate(1.0 / max(db_cpu_step[k, t], 1e-9)))
        for _ in range(np.random.poisson(phys_step[k, t])):
            disk = disks[rng.randrange(len(disks))]
            with disk.request() as r:
                yield r
                yield env.timeout(rng.expovariate(1.0 / db.disks.service_s))
        for _ in range(round(sv.enqueues[k, t])):
            yield env.timeout(land.central_services.link_rtt_s)
            with enq.request() as r:
                yield r
                yield env.timeout(land.central_services.enqueue_service_s)
        yield env.timeout(roll)

    def update(i: int, t: int):
        with upd[i].request() as r:
            yield r
            yield from work(i, 1, t)

    def user(i: int):
        while True:
            yield env.timeout(rng.expovariate(1.0 / sc.think_time_s))
            t = rng.choices(tx, weights)[0]
            start = env.now
            with dia[i].request() as r:
                yield r
                yield from work(i, 0, t)
            if rng.random() < sv.upd_per_step[t]:
                env.process(update(i, t))
            yield env.timeout(sv.gui[0, t])
            stats["steps"] += 1
            stats["response"] += env.now - start

    for i, lay in enumerate(layout):
        for _ in range(lay.users):
            env.process(user(i))
    start = time.perf_counter()
    env.run(until=window)
    elapsed = time.perf_counter() - start
    return elapsed, float(stats["steps"]), stats["response"] / max(stats["steps"], 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=float, default=3600.0, help="simulated seconds")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    np.random.seed(args.seed)
    f_sec, f_steps, f_resp = fast_mode(args.window, args.seed)
    s_sec, s_steps, s_resp = simpy_model(args.window, args.seed)
    f_per, s_per = f_sec / f_steps, s_sec / s_steps
    print(f"window: {args.window:.0f} simulated s of sd-benchmark-2003")
    print(
        f"wlmon fast mode: {f_sec:8.2f} s  {f_steps:12,.0f} dialog steps  "
        f"{f_per * 1e6:8.3f} us/step  avg response {f_resp:.3f} s"
    )
    print(
        f"SimPy baseline:  {s_sec:8.2f} s  {s_steps:12,.0f} dialog steps  "
        f"{s_per * 1e6:8.3f} us/step  avg response {s_resp:.3f} s"
    )
    print(f"ratio (SimPy / wlmon, per simulated dialog step): {s_per / f_per:.1f}x")
    hour = f_sec if args.window == 3600 else fast_mode(3600.0, args.seed)[0]
    print(f"wlmon fast mode for the whole hour: {hour:.2f} s (target <= 20 s)")


if __name__ == "__main__":
    main()
