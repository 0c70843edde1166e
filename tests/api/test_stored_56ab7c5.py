"""Runs stored by the code before issue 32 item 0 (commit 56ab7c5) still load, and their
reports give the figures that code gave (tests/fixtures/runs/generate_56ab7c5.py made both)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from alerts.thresholds import load_thresholds
from api.runs.report import figures
from api.services import reports
from api.store import Store

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "runs"


@pytest.mark.parametrize("kind", ["st03", "perfmon"])
def test_a_run_stored_at_56ab7c5_gives_the_same_figures(tmp_path, kind: str) -> None:
    shutil.copy(RUNS / "stored-56ab7c5.sqlite", tmp_path / "db.sqlite")
    before = json.loads((RUNS / "stored-56ab7c5.reports.json").read_text())[kind]
    store = Store(tmp_path / "db.sqlite")
    now = reports.report(store, before["run"]["id"], load_thresholds())
    old, new = figures(before), figures(now)
    assert old, "the stored report has figures to compare"
    assert set(new) == set(old)
    for name, (value, _) in old.items():
        assert new[name][0] == pytest.approx(value, rel=1e-9, abs=1e-12), name
    for row_old, row_new in zip(before["st03"], now["st03"], strict=True):
        for key, value in row_old.items():
            if isinstance(value, float):
                assert row_new[key] == pytest.approx(value, rel=1e-9), key
            else:
                assert row_new[key] == value, key
