"""The lock table (EnqGetLockTable, SM12; issue 31 item 2d): each lock's age tracked across
readings (an entry carries no time), tables allow-listed, users counted; the twin's
lock-held fault keeps one entry in every answer."""

from __future__ import annotations

import pytest

from alerts.thresholds import load_thresholds
from exporters.sapcontrol.settings import SAPControlSettings
from exporters.sapstartsrv.landscape import ModelLandscape
from exporters.sources.sapcontrol_locks import LockAges
from landscape_model.engine import Simulation


def _lock(table: str, arg: str, user: str, owner: str = "o1", client: str = "100") -> dict:
    return {
        "lock-name": table,
        "lock-arg": arg,
        "lock-mode": "E",
        "owner": owner,
        "client": client,
        "user": user,
    }


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_oldest_lock_age_grows_across_readings_and_drops_when_released() -> None:
    clock = Clock()
    ages = LockAges(["vbak"], clock)
    assert ages.summary("PRD/ascs") is None
    stuck = _lock("VBAK", "1000000004711", "JDOE")
    ages.read("PRD/ascs", [stuck, _lock("EKKO", "1", "MM")])
    assert ages.summary("PRD/ascs").oldest_age_s == 0.0  # first seen now: a lower bound
    clock.t += 30
    ages.read("PRD/ascs", [stuck, _lock("EKKO", "2", "MM")])  # EKKO 1 released, 2 new
    clock.t += 15  # between readings the age goes on growing
    summary = ages.summary("PRD/ascs")
    assert summary.oldest_age_s == 45.0
    assert summary.by_table == {"VBAK": 1, "other": 1}
    clock.t += 15
    ages.read("PRD/ascs", [_lock("EKKO", "2", "MM")])  # the stuck one released
    assert ages.summary("PRD/ascs").oldest_age_s == 30.0  # EKKO 2, seen since +30
    ages.read("PRD/ascs", [])
    assert ages.summary("PRD/ascs").oldest_age_s is None


def test_users_are_counted_not_labelled() -> None:
    ages = LockAges([], Clock())
    rows = [
        _lock("VBAK", "1", "JDOE"),
        _lock("VBAP", "1", "JDOE"),
        _lock("VBAK", "2", "JDOE", client="200"),  # another client: another user
        _lock("EKKO", "3", "MM"),
    ]
    ages.read("PRD/ascs", rows)
    summary = ages.summary("PRD/ascs")
    assert summary.users == 3 and summary.most_by_one_user == 2
    assert summary.by_table == {"other": 4}  # no table allow-listed


@pytest.mark.parametrize("tables", ["VBAK,9X", "VBAK;EKKO", "A" * 31])
def test_bad_lock_tables_are_refused_naming_the_setting(monkeypatch, tables: str) -> None:
    monkeypatch.setenv("WLMON_SAPCONTROL_LOCK_TABLES", tables)
    with pytest.raises(ValueError, match="WLMON_SAPCONTROL_LOCK_TABLES"):
        SAPControlSettings()


def test_lock_tables_setting_reads_namespaced_tables(monkeypatch) -> None:
    monkeypatch.setenv("WLMON_SAPCONTROL_LOCK_TABLES", "vbak, /SAPAPO/MATKEY")
    assert SAPControlSettings().lock_tables == ["VBAK", "/SAPAPO/MATKEY"]


def _land(faults: tuple[str, ...]) -> ModelLandscape:
    sim = Simulation("sd-benchmark-2003", faults=faults, seed=4)
    sim.run(120)
    return ModelLandscape(sim.snapshot, lambda: sim.scenario, load_thresholds(), 120)


def test_twin_lock_held_keeps_one_entry_whose_age_grows() -> None:
    clock = Clock()
    ages = LockAges([], clock)
    land = _land(("lock-held",))
    for _ in range(5):
        ages.read("BMK/ascs", land.enq_lock_table())
        clock.t += 60
    stuck = [r for r in land.enq_lock_table() if r["user"] == "SDSTUCK"]
    assert len(stuck) == 1 and stuck[0]["lock-name"] == "VBAK"
    assert ages.summary("BMK/ascs").oldest_age_s == 300.0  # 4 readings 60 s apart, +60


def test_twin_healthy_locks_are_short_lived() -> None:
    clock = Clock()
    ages = LockAges([], clock)
    land = _land(())
    for _ in range(5):
        ages.read("BMK/ascs", land.enq_lock_table())
        clock.t += 60
    summary = ages.summary("BMK/ascs")
    assert summary.oldest_age_s is None or summary.oldest_age_s <= 60.0
