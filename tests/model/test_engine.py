"""Seeded, reproducible, and the same numbers in fast and real-time mode."""

from __future__ import annotations

import time

import numpy as np
import pytest

from landscape_model.catalog import Catalog, ConfigError
from landscape_model.engine import RealTimeRunner, Simulation


def _equal(a, b) -> None:
    for name, value in vars(a).items():
        other = getattr(b, name)
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(value, other, err_msg=name)
        else:
            assert value == other, name


def test_same_seed_same_numbers_and_other_seed_other_numbers() -> None:
    a, b, c = (Simulation("sd-benchmark-2003", seed=s) for s in (4, 4, 5))
    for sim in (a, b, c):
        sim.run(120)
    _equal(a.snapshot().totals, b.snapshot().totals)
    assert not np.array_equal(a.snapshot().totals.steps, c.snapshot().totals.steps)


def test_real_time_mode_gives_the_fast_mode_numbers() -> None:
    live = Simulation("sd-benchmark-2003", seed=9)
    runner = RealTimeRunner(live, speed=400.0)
    runner.start()
    deadline = time.monotonic() + 30
    while live.tick < 40 and time.monotonic() < deadline:
        time.sleep(0.01)
    runner.stop()
    ticks = live.tick
    assert ticks >= 40
    fast = Simulation("sd-benchmark-2003", seed=9)
    fast.run(ticks * fast.dt)
    _equal(live.snapshot().totals, fast.snapshot().totals)


def test_real_time_mode_keeps_pace_with_the_clock() -> None:
    sim = Simulation("sd-benchmark-2003", seed=1)
    runner = RealTimeRunner(sim, speed=20.0)
    start = time.monotonic()
    runner.start()
    time.sleep(1.0)
    runner.stop()
    elapsed = time.monotonic() - start
    assert sim.tick == pytest.approx(20 * elapsed, abs=3)


def test_fault_schedule_in_fast_mode_matches_switching_by_hand() -> None:
    scheduled = Simulation("sd-benchmark-2003", seed=3)
    scheduled.run(90, schedule={30: ("slow-enqueue-link",), 60: ()})
    by_hand = Simulation("sd-benchmark-2003", seed=3)
    by_hand.run(30)
    by_hand.set_faults(["slow-enqueue-link"])
    by_hand.run(30)
    by_hand.set_faults([])
    by_hand.run(30)
    _equal(scheduled.snapshot().totals, by_hand.snapshot().totals)


def test_unknown_fault_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match=r"unknown fault 'no-such-fault'.*known: .*db-bottleneck"):
        Simulation("sd-benchmark-2003", faults=["no-such-fault"])


def test_invalid_field_names_the_file_and_the_field(tmp_path) -> None:
    for kind in ("landscapes", "scenarios", "faults"):
        (tmp_path / kind).mkdir()
    src = Catalog()
    (tmp_path / "landscapes" / "sd-benchmark-2003.yml").write_text(
        (src.data_dir / "landscapes" / "sd-benchmark-2003.yml").read_text()
    )
    text = (src.data_dir / "scenarios" / "sd-benchmark-2003.yml").read_text()
    (tmp_path / "scenarios" / "broken.yml").write_text(text.replace("users: 5790", "users: -3"))
    with pytest.raises(ConfigError) as info:
        Catalog(tmp_path).scenario("broken")
    message = str(info.value)
    assert "broken.yml" in message
    assert "users: Input should be greater than 0" in message


def test_fault_overlay_merges_buffer_pools_by_name() -> None:
    sc = Catalog().scenario("sd-benchmark-2003", ["db-bottleneck"])
    pools = {p.name: p.pages for p in sc.landscape.database.bufferpools}
    assert pools["MIX4K"] == 84000 and pools["MIX4KIX"] == 39000
    assert pools["IBMDEFAULTBP"] == 24900  # seed 000 Table 4, untouched
    assert len(pools) == 7


def test_a_preloaded_catalog_ignores_later_edits_on_disk(tmp_path) -> None:
    src = Catalog()
    for kind in ("landscapes", "scenarios", "faults"):
        (tmp_path / kind).mkdir()
        for path in (src.data_dir / kind).glob("*.yml"):
            (tmp_path / kind / path.name).write_text(path.read_text())
    catalog = Catalog(tmp_path)
    catalog.preload()
    (tmp_path / "faults" / "slow-enqueue-link.yml").write_text("not: [valid")
    assert catalog.fault("slow-enqueue-link").indicator == "enqueue"


def test_a_snapshot_does_not_wait_for_the_tick_after_a_change(
    fixture_catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first tick after a change computes the new classes' families (seconds on the SD
    benchmark); a scrape or a control call asking for a snapshot meanwhile must not wait on
    it (it did: a PUT /control/faults answered after the runner's tick, 11 s on a busy host).
    The family is held here until the snapshot has answered."""
    import threading

    from landscape_model import dynamics

    sim = Simulation("mmc", seed=1, catalog=fixture_catalog)
    sim.step()
    sim.configure(("busier",), sim.scenario.users)
    computing, release = threading.Event(), threading.Event()
    real = dynamics.family

    def held(solver, cs):
        computing.set()
        assert release.wait(30), "the test never released the family"
        return real(solver, cs)

    monkeypatch.setattr(dynamics, "family", held)
    tick = threading.Thread(target=sim.step)
    tick.start()
    try:
        assert computing.wait(30), "the tick after the change computed no family"
        answered: list = []
        asker = threading.Thread(target=lambda: answered.append(sim.snapshot()))
        asker.start()
        asker.join(10)
        assert answered, "snapshot() waited for the tick's family"
        assert answered[0].faults == ("busier",)
    finally:
        release.set()
        tick.join(30)
    assert sim.tick == 2
