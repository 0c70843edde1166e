"""Imports keep a capture whose time stamps are implausible (before 1990, after the import)
and store a warning naming the first such line; plausible stamps get no warning."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from alerts.thresholds import load_thresholds
from api.config import Settings
from api.imports.perfmon import parse
from api.main import create_app
from api.services import reports
from api.store import Store

AUTH = {"Authorization": "Bearer t"}
HEAD = '"(PDH-CSV 4.0) (UTC)(0)","\\\\H\\Memory\\Pages/sec"\n'
NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


def _capture(*stamps: str) -> bytes:
    return (HEAD + "".join(f'"{s}","{k}"\n' for k, s in enumerate(stamps))).encode()


def _clock_warnings(data) -> list[str]:
    return [n for n in data.notes if "clock" in n]


@pytest.mark.parametrize(
    ("stamps", "line", "shown", "why"),
    [
        (
            ["01/01/3000 00:00:00.000", "01/01/3000 00:00:15.000"],
            2,
            "3000-01-01 00:00:00",
            "after the import's own time (2026-11-25 12:00 UTC) (and 1 more",
        ),
        (
            ["06/01/1985 10:00:00.000", "06/01/1985 10:00:15.000"],
            2,
            "1985-06-01 10:00:00",
            "before 1990-01-01 (and 1 more",
        ),
        # Only the last sample: the warning names its line, not the first.
        (
            ["11/25/2026 10:00:00.000", "11/25/2026 10:00:15.000", "01/01/3000 00:00:00.000"],
            4,
            "3000-01-01",
            "after the import's own time",
        ),
        (
            ["11/26/2026 20:00:00.000", "11/26/2026 20:00:15.000"],
            2,
            "2026-11-26 20:00:00",
            "after the import's own time (2026-11-25 12:00 UTC) (and 1 more",
        ),
    ],
)
def test_an_implausible_stamp_is_kept_with_a_warning_naming_its_line(
    stamps, line, shown, why
) -> None:
    data = parse(_capture(*stamps), now=NOW)
    assert data.times.size == len(stamps)  # kept, every sample
    (warning,) = _clock_warnings(data)
    assert warning.startswith(f"line {line}: time stamp {shown}")
    assert why in warning


@pytest.mark.parametrize(
    "stamps",
    [
        ["11/25/2026 10:00:00.000", "11/25/2026 10:00:15.000"],
        ["11/26/2026 10:00:00.000"],  # 22 h ahead: a clock a little fast, a far zone
        ["01/01/1990 00:00:00.000"],
    ],
)
def test_plausible_stamps_get_no_warning(stamps) -> None:
    assert _clock_warnings(parse(_capture(*stamps), now=NOW)) == []


def _audit(tmp_path, run_id: str) -> dict:
    # Read back from the database the API stored the run in: what every report shows.
    return reports.report(Store(tmp_path / "db.sqlite"), run_id, load_thresholds())["import"]


def test_the_warning_is_stored_with_the_run(tmp_path) -> None:
    with TestClient(create_app(Settings(db_path=tmp_path / "db.sqlite", token="t"))) as c:
        raw = _capture("01/01/3000 00:00:00.000", "01/01/3000 00:00:15.000")
        run = c.post("/imports/perfmon", content=raw, headers=AUTH)
        assert run.status_code == 201, run.text
        audit = _audit(tmp_path, run.json()["id"])
        assert any(w.startswith("line 2: time stamp 3000-01-01") for w in audit["warnings"])

        body = (
            Path(__file__).resolve().parents[1] / "fixtures" / "st03" / "per-task-type.csv"
        ).read_bytes()
        far = {"from": "3000-01-01T10:00", "to": "3000-01-01T11:00"}
        st03 = c.post("/imports/st03", content=body, headers=AUTH, params=far)
        assert st03.status_code == 201, st03.text
        audit = _audit(tmp_path, st03.json()["id"])
        assert any(
            w.startswith("the period (the import's from/to): time stamp 3000-01-01 10:00:00")
            for w in audit["warnings"]
        )
        ok = c.post("/imports/st03", content=body, headers=AUTH, params={"period": "1h"})
        audit = _audit(tmp_path, ok.json()["id"])
        assert not any("clock" in w for w in audit["warnings"])
