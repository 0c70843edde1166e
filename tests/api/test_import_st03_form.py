"""POST /imports/st03 as a multipart form (issue 32, item 4): the ST03N export and the
PerfMon capture of the same hours joined into one run over the API, as `wlmon import st03
--perfmon` does; the raw body still read as before.

The files are the real-format fixtures (an ST03N overview as SAP GUI's spreadsheet export
writes it, a relog capture of two hosts with its PDH-CSV zone header); the expected CPU
means and both windows are computed here from the capture's cells with the csv module."""

from __future__ import annotations

import csv
from datetime import datetime, timedelta
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
EXPORT = (FIXTURES / "st03" / "per-task-type.csv").read_bytes()
CAPTURE = FIXTURES / "perfmon" / "relog-two-hosts.csv"
AUTH = {"Authorization": "Bearer t"}


@pytest.fixture
def api(tmp_path):
    from fastapi.testclient import TestClient

    from api.config import Settings
    from api.main import create_app

    settings = Settings(db_path=tmp_path / "db.sqlite", token="t")
    with TestClient(create_app(settings)) as client:
        yield client


def _capture() -> tuple[datetime, datetime, dict[str, float]]:
    """The capture's first and last sample in UTC (its header says UTC+1: offset -60) and
    each host's mean `% Processor Time` of `_Total` over its non-blank cells."""
    with CAPTURE.open(encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    head, data = rows[0], rows[1:]
    assert "(-60)" in head[0]
    stamp = [datetime.strptime(r[0], "%m/%d/%Y %H:%M:%S.%f") - timedelta(hours=1) for r in data]
    means = {}
    for k, name in enumerate(head):
        if name.endswith("\\Processor(_Total)\\% Processor Time"):
            cells = [float(r[k]) for r in data if r[k].strip()]
            means[name.split("\\")[2].lower()] = sum(cells) / len(cells)
    return stamp[0], stamp[-1], means


def _post(api, data: dict, perfmon: bool = True):
    files = {"file": ("st03.csv", EXPORT, "text/csv")}
    if perfmon:
        files["perfmon"] = ("os.csv", CAPTURE.read_bytes(), "text/csv")
    return api.post("/imports/st03", files=files, data=data, headers=AUTH)


def test_an_st03_export_and_a_capture_of_its_hours_are_one_run(api) -> None:
    first, last, cpu = _capture()
    # 08:00-09:00 in Berlin on 23 November (CET) is the capture's 07:00 UTC hour.
    r = _post(
        api,
        {"from": "2026-11-23T08:00", "to": "2026-11-23T09:00", "tz": "Europe/Berlin", "label": "x"},
    )
    assert r.status_code == 201, r.text
    run = r.json()
    assert run["label"] == "x" and run["scenario"] == "st03"
    assert run["start"].startswith("2026-11-23T07:00:00")
    rep = api.get(f"/runs/{run['id']}/report").json()
    rows = [row for row in rep["os_counters"] if row["key"] == "cpu_pct"]
    assert rows, rep["os_counters"]
    got = {str(row.get("host", "")).lower(): row["avg"] for row in rows}
    for host, mean in cpu.items():
        assert got[host] == pytest.approx(mean, abs=1e-6)
    dialog = next(row for row in rep["st03"] if row["task_type"] == "dialog")
    assert dialog["steps"] == 1_743_000
    joined = [w for w in rep["warnings"] if "PerfMon capture joined" in w]
    assert joined and f"{first:%Y-%m-%d %H:%M:%S} to {last:%Y-%m-%d %H:%M:%S} UTC" in joined[0]


def test_a_capture_of_other_hours_is_refused_naming_both_windows(api) -> None:
    first, last, _ = _capture()
    r = _post(api, {"from": "2026-11-24T08:00", "to": "2026-11-24T09:00", "tz": "Europe/Berlin"})
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert f"{first:%Y-%m-%d %H:%M:%S} to {last:%Y-%m-%d %H:%M:%S} UTC" in detail
    assert "the ST03 export 2026-11-24 07:00:00 to 2026-11-24 08:00:00 UTC" in detail
    assert "do not overlap" in detail
    assert api.get("/runs").json() == []  # a refused import stores nothing


@pytest.mark.parametrize(
    ("data", "perfmon", "status", "message"),
    [
        (
            {"tz": "Nowhere/City", "from": "2026-11-23T08:00", "to": "2026-11-23T09:00"},
            True,
            422,
            "not a time zone",
        ),
        ({"colour": "red"}, True, 422, "field 'colour' is not read"),
        ({}, True, 422, "no period"),
        ({"decimal": "dot"}, False, 422, "give point or comma"),
    ],
)
def test_a_bad_form_is_refused_with_a_message(api, data, perfmon, status, message) -> None:
    r = _post(api, data, perfmon)
    assert r.status_code == status, r.text
    assert message in r.json()["detail"]


def test_a_form_without_the_export_is_refused(api) -> None:
    r = api.post(
        "/imports/st03",
        files={"perfmon": ("os.csv", CAPTURE.read_bytes(), "text/csv")},
        headers=AUTH,
    )
    assert r.status_code == 422
    assert "no part 'file'" in r.json()["detail"]


def test_the_raw_body_is_still_read_and_a_form_without_perfmon_too(api) -> None:
    raw = api.post(
        "/imports/st03",
        content=EXPORT,
        params={"from": "2026-11-23T08:00", "to": "2026-11-23T09:00"},
        headers={**AUTH, "Content-Type": "text/csv"},
    )
    form = _post(api, {"from": "2026-11-23T08:00", "to": "2026-11-23T09:00"}, perfmon=False)
    assert raw.status_code == 201 and form.status_code == 201, (raw.text, form.text)
    a = api.get(f"/runs/{raw.json()['id']}/report").json()
    b = api.get(f"/runs/{form.json()['id']}/report").json()
    assert a["st03"] == b["st03"]
    assert raw.json()["start"] == form.json()["start"]
