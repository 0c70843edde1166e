"""The discrete-event engine against a plain SimPy model of the same network.

Both simulate every dialog step and every V1 update of the SD benchmark (5,790 users) on
the same YAML; the bench prints what each side simulates, seconds and microseconds per
simulated dialog step (wall clock and CPU time) and their ratio, all from one run: the
engine over the whole simulated hour, SimPy over a shorter window (--simpy-window, 300 s
by default: the SimPy hour takes ten minutes or more; per simulated dialog step, and the
engine's steady rate is the same over any window past its first seconds). Target
(issue 24): the hour in <= 5 s of CPU on one core. The engine's event loop is compiled by
numba at its first call in a fresh checkout, or loaded from numba's cache: that cost is
timed and printed on its own line, before the hour, and not counted in it. Usage:
python bench/simulate.py [--window 3600] [--simpy-window 300] [--seed 1] [--profile 15];
--profile prints the top entries of a cProfile of the engine over the window (a run of
its own, so the timings above carry no profiler). Compare the CPU columns on a shared
machine: wall-clock time includes the other processes' share of the cores.
"""

from __future__ import annotations

import argparse
import cProfile
import heapq
import pstats
import random
import time
from dataclasses import dataclass

import numpy as np
import simpy

from landscape_model import des_loop
from landscape_model.catalog import Catalog
from landscape_model.des import DiscreteEventSimulation
from landscape_model.network import compile_network
from landscape_model.summary import run_figures

SCENARIO = "sd-benchmark-2003"

DES_SIDE = (
    "wlmon DES: every dialog step and V1 update as events on one heap (think end; ABAP burst "
    "on the host's cores, processor sharing; DB burst on the DB host's cores, processor "
    "sharing); dispatcher and work-process queues, roll-in/out, load, DB round trips; "
    "buffer-pool hits and misses drawn per DB call; each physical read and page write on "
    "one of 56 disks (FCFS), I/O cleaners, commits on the log device, enqueue requests; "
    "every counter the collectors export (ST03 parts and histogram, ST05, buffer pools, OS)"
)
SIMPY_SIDE = (
    "SimPy baseline: the same network, every dialog step and V1 update as a generator "
    "process (think; dialog or update work process as a Resource, held from dispatch to "
    "roll-out, GUI time with the user off it, as in the DES; ABAP and DB CPU bursts on "
    "the host's cores, processor sharing (a server process with a virtual clock); each "
    "physical read on a random disk, the log write and each enqueue request as Resource "
    "requests, FCFS, exponential; each page write an asynchronous disk request where the "
    "DES has token-bucket I/O cleaners); counts steps and response time only"
)


class ProcessorSharing:
    """c cores shared by n jobs, each served at rate min(1, c/n): SimPy has no such
    resource, so one process keeps a virtual clock (service each job present has received)
    and wakes at the next departure or when a job arrives."""

    def __init__(self, env: simpy.Environment, cores: int) -> None:
        self.env, self.cores = env, cores
        self.virtual, self.since = 0.0, env.now
        self.jobs: list[tuple[float, int, simpy.Event]] = []
        self.arrival = env.event()
        env.process(self._serve())

    def _advance(self) -> None:
        if self.jobs:
            share = min(1.0, self.cores / len(self.jobs))
            self.virtual += (self.env.now - self.since) * share
        self.since = self.env.now

    def burst(self, work: float) -> simpy.Event:
        """An event that fires when `work` seconds of service have been received."""
        self._advance()
        done = self.env.event()
        heapq.heappush(self.jobs, (self.virtual + work, id(done), done))
        if not self.arrival.triggered:
            self.arrival.succeed()
        return done

    def _serve(self):
        while True:
            if self.jobs:
                share = min(1.0, self.cores / len(self.jobs))
                wait = max(0.0, (self.jobs[0][0] - self.virtual) / share)
                yield self.env.timeout(wait) | self.arrival
            else:
                yield self.arrival
            if self.arrival.triggered:
                self.arrival = self.env.event()
            self._advance()
            while self.jobs and self.jobs[0][0] <= self.virtual + 1e-12:
                heapq.heappop(self.jobs)[2].succeed()


@dataclass
class Result:
    wall: float
    cpu: float
    steps: float
    response: float


def des(window: float, seed: int) -> Result:
    wall, cpu = time.perf_counter(), time.process_time()
    sim = DiscreteEventSimulation(SCENARIO, seed=seed)
    sim.run(window)
    f = run_figures(sim.snapshot())
    return Result(
        time.perf_counter() - wall,
        time.process_time() - cpu,
        f["dialog_steps_per_s"] * window,
        f["avg_dialog_response_s"],
    )


def simpy_model(window: float, seed: int) -> Result:
    """The same closed network as a textbook SimPy model, step by step."""
    sc = Catalog().scenario(SCENARIO)
    sv = compile_network(sc)  # the demands per step both engines use
    land, db = sc.landscape, sc.landscape.database
    dev = land.devices
    read_s, write_s = dev[db.disks.kind].read_s, dev[db.disks.kind].write_s
    log_s = land.log_write_s
    cs = land.central_services
    rng = random.Random(seed)
    env = simpy.Environment()
    cpus = {h.name: ProcessorSharing(env, h.cpus) for h in land.hosts}
    db_cpu = cpus[db.host]
    disks = [simpy.Resource(env, capacity=1) for _ in range(db.disks.count)]
    logs = [simpy.Resource(env, capacity=1) for _ in range(db.log.count)]
    enq = simpy.Resource(env, capacity=cs.enqueue_work_processes)
    layout = sv.layout
    dia = [simpy.Resource(env, capacity=lay.dialog_wps) for lay in layout]
    upd = [simpy.Resource(env, capacity=lay.update_wps) for lay in layout]
    tx = list(range(len(sv.tx_names)))
    weights = list(sv.mix)
    db_cpu_step = sv.per_step(sv.st_cpu)
    phys_step = sv.per_step(sv.st_phys)
    writes_step = sv.per_step(sv.st_page_writes)
    stats = {"steps": 0, "response": 0.0}

    def exp(mean: float) -> float:
        return rng.expovariate(1.0 / mean) if mean > 0 else 0.0

    def count(mean: float) -> int:
        whole = int(mean)
        return whole + (rng.random() < mean - whole)

    def write(disk: simpy.Resource):
        with disk.request() as r:
            yield r
            yield env.timeout(exp(write_s))

    def work(i: int, k: int, t: int):
        lay = layout[i]
        roll = sv.roll[i]["roll_in"] if k == 0 else sv.update_roll_s
        yield env.timeout(roll + exp(land.instance.load_gen_s) + sv.rtt[k, t])
        yield cpus[lay.host].burst(exp(sv.cpu_s[k, t]))
        yield db_cpu.burst(exp(db_cpu_step[k, t]))
        for _ in range(np.random.poisson(phys_step[k, t])):
            with disks[rng.randrange(len(disks))].request() as r:
                yield r
                yield env.timeout(exp(read_s))
        for _ in range(np.random.poisson(writes_step[k, t])):
            env.process(write(disks[rng.randrange(len(disks))]))  # the I/O cleaners
        for _ in range(count(sv.commits[k, t])):
            with logs[rng.randrange(len(logs))].request() as r:
                yield r
                yield env.timeout(exp(log_s))
        for _ in range(count(sv.enqueues[k, t])):
            yield env.timeout(cs.link_rtt_s)
            with enq.request() as r:
                yield r
                yield env.timeout(exp(cs.enqueue_service_s))

    def update(i: int, t: int):
        with upd[i].request() as r:
            yield r
            yield from work(i, 1, t)
            yield env.timeout(sv.update_roll_s)

    def roll_out(i: int, wp: simpy.Resource, r):
        yield env.timeout(sv.roll[i]["roll_out"])
        wp.release(r)

    def user(i: int):
        while True:
            yield env.timeout(exp(sc.think_time_s))
            t = rng.choices(tx, weights)[0]
            start = env.now
            r = dia[i].request()
            yield r
            yield from work(i, 0, t)
            if rng.random() < sv.upd_per_step[t]:
                env.process(update(i, t))
            # The answer is sent: the work process rolls the context out and is free,
            # while the user spends the GUI time (off the work process, as in the DES).
            env.process(roll_out(i, dia[i], r))
            yield env.timeout(sv.gui[0, t])
            stats["steps"] += 1
            stats["response"] += env.now - start

    wall, cpu = time.perf_counter(), time.process_time()
    for i, lay in enumerate(layout):
        for _ in range(lay.users):
            env.process(user(i))
    env.run(until=window)
    steps = float(stats["steps"])
    return Result(
        time.perf_counter() - wall,
        time.process_time() - cpu,
        steps,
        stats["response"] / max(steps, 1.0),
    )


def warm_up(seed: int) -> Result:
    """numba's first call: compile the loop (a fresh checkout) or load it from its cache,
    with the construction of a simulation and one simulated second."""
    wall, cpu = time.perf_counter(), time.process_time()
    des_loop.compile_kernels()
    sim = DiscreteEventSimulation(SCENARIO, seed=seed)
    sim.run(1.0)
    return Result(time.perf_counter() - wall, time.process_time() - cpu, 0.0, 0.0)


def profile(window: float, seed: int, top: int) -> None:
    """Where the engine's time goes over the window, by own time (cProfile)."""
    sim = DiscreteEventSimulation(SCENARIO, seed=seed)
    prof = cProfile.Profile()
    prof.enable()
    sim.run(window)
    prof.disable()
    print(f"cProfile of the wlmon DES over {window:.0f} simulated s, top {top} by own time:")
    pstats.Stats(prof).sort_stats("tottime").print_stats(top)


def _line(name: str, r: Result) -> str:
    return (
        f"{name:<15} {r.wall:8.2f} s wall {r.cpu:8.2f} s CPU {r.steps:12,.0f} dialog steps  "
        f"{r.wall / r.steps * 1e6:7.2f} us/step wall {r.cpu / r.steps * 1e6:7.2f} us/step CPU  "
        f"avg response {r.response:.3f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=float, default=3600.0, help="simulated seconds")
    parser.add_argument(
        "--simpy-window", type=float, default=300.0, help="simulated seconds of the SimPy side"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--profile", type=int, default=0, metavar="N", help="print the top N of a cProfile"
    )
    args = parser.parse_args()
    if args.window <= 0 or args.simpy_window <= 0:
        parser.error("--window and --simpy-window must be positive")
    np.random.seed(args.seed)
    print(
        f"{SCENARIO}, seed {args.seed}: wlmon DES over {args.window:.0f} simulated s, "
        f"SimPy over {args.simpy_window:.0f} s"
    )
    print(DES_SIDE)
    print(SIMPY_SIDE)
    w = warm_up(args.seed)
    print(
        f"numba's first call (compile, or load from its cache), with one simulated second: "
        f"{w.wall:.2f} s wall, {w.cpu:.2f} s CPU"
    )
    d = des(args.window, args.seed)
    print(_line("wlmon DES:", d))
    s = simpy_model(args.simpy_window, args.seed)
    print(_line("SimPy baseline:", s))
    ratio_wall = (s.wall / s.steps) / (d.wall / d.steps)
    ratio_cpu = (s.cpu / s.steps) / (d.cpu / d.steps)
    print(
        f"ratio (SimPy / wlmon DES, per simulated dialog step): {ratio_wall:.1f}x wall, "
        f"{ratio_cpu:.1f}x CPU"
    )
    hour = d.cpu * 3600.0 / args.window
    print(
        f"wlmon DES, the simulated hour: {hour:.2f} s CPU "
        f"({'measured' if args.window == 3600 else 'scaled from the window'}; "
        f"target <= 5 s on one core), {d.steps * 3600.0 / args.window:,.0f} dialog steps"
    )
    if args.profile > 0:
        profile(args.window, args.seed, args.profile)


if __name__ == "__main__":
    main()
