"""Queues through time: backlogs grow while a station is overloaded and drain at the rate
it frees, each at its own pace (no common time constant)."""

from __future__ import annotations

import pytest

from landscape_model.engine import Simulation
from landscape_model.terms import COMPONENTS

WAIT = COMPONENTS.index("dispatcher_wait")


def _dialog_wait_ms(sim: Simulation) -> float:
    op = sim.current
    rate = op.step_rate[:, 0]
    return 1000.0 * float((op.means[:, 0, :, WAIT] * rate).sum() / rate.sum())


def test_dispatcher_queue_of_24_work_processes_clears_within_two_seconds() -> None:
    """Issue 14: after the too-few-work-processes fault goes, an instance with 24 work
    processes clears its queue in about a second (it was 50 s with one 15 s constant)."""
    sim = Simulation("sd-benchmark-2003", faults=["too-few-work-processes"], seed=1)
    sim.run(120)
    assert _dialog_wait_ms(sim) > 1000.0
    assert sim.current.dispatcher_queue[:, 0].mean() > 20.0  # users queued per instance
    sim.set_faults([])
    sim.step()
    sim.step()
    assert sim.current.dispatcher_queue[:, 0].mean() < 0.01
    # The steps completed in those ticks queued under the fault and keep their wait
    # (tests/model/test_model_consistency.py); the wait of what completes falls off as they go.
    for _ in range(4):
        sim.step()
    assert _dialog_wait_ms(sim) < 50.0


def test_dispatcher_queue_builds_up_over_tens_of_seconds_when_work_processes_go() -> None:
    """The other way round the queue fills at the excess of arrivals over what 4 work
    processes serve: it takes tens of seconds, not one tick, and then holds."""
    sim = Simulation("sd-benchmark-2003", seed=1)
    sim.run(10)
    sim.set_faults(["too-few-work-processes"])
    sim.run(5)
    early = _dialog_wait_ms(sim)
    sim.run(115)
    settled = _dialog_wait_ms(sim)
    sim.run(60)
    assert early < 0.7 * settled
    assert _dialog_wait_ms(sim) == pytest.approx(settled, rel=0.01)


def _slow_updates() -> dict:
    """Every V1 update takes 0.3 s of CPU: more than one update process per instance can do."""
    return {
        "transactions": {
            tx: {"update": {"cpu_s": 0.3}} for tx in ("VA01", "VL01N", "VL02N", "VF01")
        }
    }


def test_update_backlog_grows_while_overloaded_and_drains_when_the_load_falls() -> None:
    sim = Simulation("sd-benchmark-2003", seed=1, overrides=_slow_updates())
    growth = float(sim.target.update_backlog_growth[0])
    assert growth > 0.5  # steps/s the backlog of one instance grows by
    sim.run(60)
    q60, w60 = float(sim.current.dispatcher_queue[0, 1]), sim.current.means[0, 1, 0, WAIT]
    sim.run(60)
    q120, w120 = float(sim.current.dispatcher_queue[0, 1]), sim.current.means[0, 1, 0, WAIT]
    assert q120 - q60 == pytest.approx(60 * growth, rel=0.02)  # linear, at the excess rate
    # The wait an update sees grows with the backlog (it was stuck at 15 s).
    assert w120 == pytest.approx(2 * w60, rel=0.1)
    # A third of the users: the offered updates fall below capacity and the backlog drains
    # at the difference, tick by tick.
    sim.set_users(1930)
    update = next(c for c in sim.target.classes if c.task == 1 and c.instance == 0)
    cap = float(update.fes[-1])  # all update work processes busy
    offered = float(sim.target.step_rate[0, 0].sum()) * sim.dynamics.solver.updates_per_step
    sim.run(10)
    q_a = float(sim.current.dispatcher_queue[0, 1])
    sim.run(10)
    q_b = float(sim.current.dispatcher_queue[0, 1])
    assert q_a - q_b == pytest.approx(10 * (cap - offered), rel=0.05)
