"""The discrete-event engine as the rest of wlmon sees it: the same API and Snapshot as the
analytic engine, seeded and reproducible, the same numbers in fast and real-time mode, and
the interactive response-time law on what it measures."""

from __future__ import annotations

import time

import numpy as np
import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from exporters.config import load_config
from exporters.server import build_registry
from landscape_model import des
from landscape_model.catalog import ConfigError
from landscape_model.des import DiscreteEventSimulation
from landscape_model.engine import RealTimeRunner, Simulation
from landscape_model.engines import make_simulation
from landscape_model.summary import run_figures, st03_summary

SD = "sd-benchmark-2003"


def _equal(a, b) -> None:
    for name, value in vars(a).items():
        other = getattr(b, name)
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(value, other, err_msg=name)
        else:
            assert value == other, name


def test_same_seed_same_numbers_and_other_seed_other_numbers() -> None:
    a, b, c = (DiscreteEventSimulation(SD, seed=s) for s in (4, 4, 5))
    for sim in (a, b, c):
        sim.run(40)
    _equal(a.snapshot().totals, b.snapshot().totals)
    assert not np.array_equal(a.snapshot().totals.steps, c.snapshot().totals.steps)


def test_the_loops_starting_room_changes_no_number(monkeypatch) -> None:
    """The compiled loop returns to Python to grow its arrays (events, step slots, step
    records) and to refill blocks and streams; each return falls between two events, so
    starting with almost no room gives the same numbers bit for bit, faults switched
    on and off included."""
    normal = DiscreteEventSimulation(SD, seed=6)
    normal.run(30, schedule={10: ("db-bottleneck",), 20: ()})
    monkeypatch.setattr(des, "START_HEAP_PER_ENTITY", 0)
    monkeypatch.setattr(des, "START_JOB_SLOTS", 2)
    monkeypatch.setattr(des, "START_JOB_SLOTS_PER_USER", 0)
    monkeypatch.setattr(des, "START_RECORDS", 1)
    tight = DiscreteEventSimulation(SD, seed=6)
    room = tight.ht.size
    assert room < normal.ht.size and tight.jarr.size == 2 and tight.rec.shape[0] == 1
    tight.run(30, schedule={10: ("db-bottleneck",), 20: ()})
    assert tight.ht.size > room and tight.jarr.size > 100 and tight.rec.shape[0] > 100
    _equal(normal.snapshot().totals, tight.snapshot().totals)
    assert normal.snapshot().totals.steps.sum() > 10_000


def test_real_time_mode_gives_the_fast_mode_numbers() -> None:
    live = DiscreteEventSimulation(SD, seed=9)
    runner = RealTimeRunner(live, speed=40.0)
    runner.start()
    deadline = time.monotonic() + 60
    while live.tick < 25 and time.monotonic() < deadline:
        live.snapshot()  # scrapes in between change nothing
        time.sleep(0.05)
    runner.stop()
    ticks = live.tick
    assert ticks >= 25
    fast = DiscreteEventSimulation(SD, seed=9)
    fast.run(ticks * fast.dt)
    _equal(live.snapshot().totals, fast.snapshot().totals)


def test_fault_schedule_in_fast_mode_matches_switching_by_hand() -> None:
    scheduled = DiscreteEventSimulation(SD, seed=3)
    scheduled.run(60, schedule={20: ("slow-enqueue-link",), 40: ()})
    by_hand = DiscreteEventSimulation(SD, seed=3)
    by_hand.run(20)
    by_hand.set_faults(["slow-enqueue-link"])
    by_hand.run(20)
    by_hand.set_faults([])
    by_hand.run(20)
    _equal(scheduled.snapshot().totals, by_hand.snapshot().totals)


def test_response_time_law_on_measured_throughput_and_response() -> None:
    """X counted from completed steps, R from each step's own timestamps (dispatcher entry
    to the end of its GUI time), N and Z from the scenario: X = N / (R + Z) within 1 %
    (the think times' sample mean alone moves it by about 0.2 % over this window)."""
    sim = DiscreteEventSimulation(SD, seed=21)
    sim.run(60)
    before = sim.snapshot()
    sim.run(240)
    after = sim.snapshot()
    n0, n1 = (st03_summary(s)[0]["steps"] for s in (before, after))
    r0, r1 = (st03_summary(s)[0]["response_ms"] / 1000 for s in (before, after))
    x = (n1 - n0) / 240.0
    r = (r1 * n1 - r0 * n0) / (n1 - n0)
    users, think = after.users, after.think_time_s
    assert (users, think) == (5790, 10.0)  # from the scenario, not from the run
    assert x == pytest.approx(users / (r + think), rel=0.01)


def test_the_answer_parts_add_up_to_the_response() -> None:
    sim = DiscreteEventSimulation(SD, seed=2)
    sim.run(30)
    for row in st03_summary(sim.snapshot()):
        parts = ("dispatcher_wait", "roll_in", "load_gen", "processing", "db_request", "enqueue")
        total = sum(row[f"{p}_ms"] for p in parts) + row["gui_ms"]
        assert row["response_ms"] == pytest.approx(total, abs=0.01)  # rounded to 1 µs
        assert row["cpu_ms"] <= row["processing_ms"]


def test_collectors_see_the_same_metrics_from_either_engine() -> None:
    def samples(sim) -> set[tuple[str, tuple]]:
        sim.run(5)
        text = generate_latest(build_registry(sim, load_config())).decode()
        return {
            (s.name, tuple(sorted((k, v) for k, v in s.labels.items() if k != "le")))
            for fam in text_string_to_metric_families(text)
            for s in fam.samples
            if not s.name.startswith("sap_scrape_collector_duration")
        }

    des, analytic = samples(make_simulation("des", SD)), samples(make_simulation("analytic", SD))
    assert des == analytic


def test_users_log_on_and_off_while_running() -> None:
    sim = DiscreteEventSimulation(SD, seed=8)
    sim.run(30)
    sim.set_users(2000)
    sim.run(60)
    mid = sim.snapshot()
    sim.run(60)
    after = sim.snapshot()
    rate = (after.totals.steps[:, 0].sum() - mid.totals.steps[:, 0].sum()) / 60
    assert after.users == 2000
    # At 2,000 users nothing queues: X = N / (R + Z) with R about 1.7 s.
    assert rate == pytest.approx(2000 / (1.7 + 10.0), rel=0.05)


def test_unknown_engine_and_unknown_fault_are_clear_errors() -> None:
    with pytest.raises(ValueError, match=r"unknown engine 'fast'.*des, analytic"):
        make_simulation("fast", SD)
    with pytest.raises(ConfigError, match=r"unknown fault 'no-such-fault'"):
        DiscreteEventSimulation(SD, faults=["no-such-fault"])


def test_the_factory_builds_either_engine() -> None:
    assert isinstance(make_simulation("des", SD), DiscreteEventSimulation)
    assert isinstance(make_simulation("analytic", SD), Simulation)
    f = run_figures(make_simulation("des", SD, seed=1).snapshot())
    assert f["dialog_steps_per_s"] == 0.0  # nothing has run yet
