"""Transients of the discrete-event engine: a fault switched on and off, the queue it
builds and how it drains, against bounds derived here.

Case 1 (derived exactly): 8 instances, each 100 users thinking Z = 10 s, steps of
exponential S = 0.5 s on uncontended CPUs, 20 dialog work processes; the fault cuts them to
2. Healthy, 4.8 work processes are busy on average and nobody queues. With 2, the
capacity c/S = 4 steps/s is below the arrival rate, and while the 2 are always busy the
dispatcher queue q follows the fluid balance

    dq/dt = (N - c - q) / Z - c / S   =>   q(t) = q* (1 - exp(-t / Z)),
    q* = N - c - Z c / S = 58,

so it reaches half its plateau after Z ln 2 = 6.9 s and 95 % after 3 Z = 30 s; the plateau
is the M/M/2//100 mean queue, 58.0 from its birth-death chain. Switched back, 18 work
processes start at once and the other ~40 waiting steps are served at c/S = 40 per second
against arrivals of at most 8 per second: the queue is empty after about 40 / 32 = 1.3 s.
Bounds asserted (each a mean over 8 instances and 3 on/off cycles): half plateau after
5-10 s, plateau (40-60 s after the switch) within 8 % of 58.0, empty (< 1) within 3 s.

Case 2 (the SD benchmark): `too-few-work-processes` (24 -> 4 dialog work processes per
instance) for 90 s. The same balance with the benchmark's numbers (throughput under the
fault X = 4 WPs / 0.30 s held x 30 instances = 400 steps/s; users in think or GUI time
X (Z + GUI)) gives a plateau q* = N - busy - X (Z + GUI) of about 1,100 waiting steps,
reached with time constant Z = 10 s; switched back, 720 work processes serve it at
~1,600 steps/s (at most 500 arriving): gone in about a second, a few with the database
briefly saturated by the backlog. Bounds: half of the plateau within 15 s, the plateau
between 700 and 1,500, fewer than 1 % of it left 10 s after the switch; meanwhile the
throughput spikes above the healthy rate while the backlog is flushed.
"""

from __future__ import annotations

import numpy as np
import pytest

from landscape_model.des import STATE_WINDOW_S, DiscreteEventSimulation
from landscape_model.terms import COMPONENTS
from tests.model import des_support as case


def _mm2_queue(users: int, servers: int, think: float, service: float) -> float:
    p = [1.0]
    for k in range(1, users + 1):
        p.append(p[-1] * (users - k + 1) / think * service / min(k, servers))
    total = sum(p)
    return sum(max(k - servers, 0) * pk / total for k, pk in enumerate(p))


def test_dispatcher_queue_builds_and_drains_as_the_fluid_balance_says(tmp_path) -> None:
    land = case.landscape(cpus=100_000, instances_per_host=8, dialog_wps=20)
    doc = case.scenario(land, users=800, think_s=10.0, cpu_s=0.5)
    cut = {"landscape": {"instance": {"dialog_work_processes": 2}}}
    catalog = case.catalog(tmp_path, doc, faults={"few-wps": cut})
    dt = 0.1
    sim = DiscreteEventSimulation("case", seed=1, dt=dt, catalog=catalog)
    sim.run(60)

    def trace(seconds: float) -> np.ndarray:
        out = []
        for _ in range(round(seconds / dt)):
            sim.step()
            out.append(sim.queue_lengths()["dispatcher_queue"][:, 0].mean())
        return np.array(out)

    t = dt * np.arange(1, round(60 / dt) + 1)
    on, off = np.zeros(t.size), np.zeros(t.size)
    before = []
    for _ in range(3):
        before.append(trace(10).mean())
        sim.set_faults(["few-wps"])
        on += trace(60) / 3
        sim.set_faults([])
        off += trace(60) / 3
    plateau = _mm2_queue(100, 2, 10.0, 0.5)
    assert plateau == pytest.approx(58.0, abs=0.1)
    assert max(before) < 0.5  # healthy: nobody waits
    half = t[np.argmax(on >= plateau / 2)]
    assert 5.0 <= half <= 10.0, f"half plateau after {half:.1f} s (fluid: 6.9 s)"
    level = on[(t > 40) & (t <= 60)].mean()
    assert level == pytest.approx(plateau, rel=0.08)
    drained = t[np.argmax(off < 1.0)]
    assert 0.3 <= drained <= 3.0, f"drained after {drained:.1f} s (fluid: 1.3 s)"


def test_sd_benchmark_queue_spikes_under_too_few_work_processes_and_drains() -> None:
    sim = DiscreteEventSimulation("sd-benchmark-2003", seed=1)
    sim.run(40)

    def trace(seconds: int) -> tuple[np.ndarray, np.ndarray]:
        queue, steps = [], []
        for _ in range(seconds):
            before = sim.totals.steps[:, 0].sum()
            sim.step()
            steps.append(sim.totals.steps[:, 0].sum() - before)
            queue.append(sim.queue_lengths()["dispatcher_queue"][:, 0].sum())
        return np.array(queue), np.array(steps)

    q0, x0 = trace(20)
    sim.set_faults(["too-few-work-processes"])
    q1, x1 = trace(90)
    sim.set_faults([])
    q2, x2 = trace(20)
    assert q0.max() == 0  # healthy: 24 work processes, nobody waits
    plateau = q1[60:].mean()
    assert 700 < plateau < 1500, plateau
    assert np.argmax(q1 >= plateau / 2) + 1 <= 15
    assert x1[60:].mean() < 0.9 * x0.mean()  # fewer steps get through
    assert q2[9] < 0.01 * plateau  # drained within 10 s
    assert x2[:5].max() > 1.15 * x0.mean()  # the backlog flushes out


def _roll_in_busy(sim: DiscreteEventSimulation) -> float:
    """Dialog work processes rolling in (Little's law on the snapshot's state, what the
    model's SM50 shows): Σ instances, transactions of step rate x mean roll-in time."""
    st = sim.snapshot().state
    k = COMPONENTS.index("roll_in")
    return float(np.einsum("it,it->", st.step_rate[:, 0], st.means[:, 0, :, k]))


def test_the_state_leaves_a_fault_within_its_window_after_it_is_removed() -> None:
    """The live exporter's SM50 and gauges read the snapshot's state. It was the run so far:
    after 400 s of roll-area-too-small, 600 s after its removal the model's SM50 still
    showed 20 work processes rolling in where 0.35 do (test_sapcontrol_e2e's roll alerts
    did not resolve). Now it covers the last STATE_WINDOW_S."""
    sim = DiscreteEventSimulation("sd-benchmark-2003", seed=1)
    sim.run(120)
    healthy = _roll_in_busy(sim)
    sim.set_faults(["roll-area-too-small"])
    sim.run(400)
    faulted = _roll_in_busy(sim)
    assert faulted > 20 * healthy  # the fault shows (about 53 against 0.35)
    sim.set_faults([])
    sim.run(STATE_WINDOW_S + 10)
    assert _roll_in_busy(sim) < 2 * healthy
