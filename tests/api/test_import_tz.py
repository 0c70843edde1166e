"""The `tz` field of every import route (issue 32, item 6): the SAP system's or the machine's
time zone places local stamps in UTC; a zone that contradicts the file is refused naming
both. Expected instants are computed here with zoneinfo from the stamps the files hold."""

from __future__ import annotations

import io
import re
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from fastapi.testclient import TestClient

from api.config import Settings
from api.main import create_app
from tests.fixtures.perfmon import generate

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
AUTH = {"Authorization": "Bearer t"}


@pytest.fixture
def client(tmp_path):
    with TestClient(create_app(Settings(db_path=tmp_path / "db.sqlite", token="t"))) as c:
        yield c


def _utc(local: str, zone: str) -> datetime:
    return datetime.fromisoformat(local).replace(tzinfo=ZoneInfo(zone)).astimezone(UTC)


def _start(run: dict) -> datetime:
    return datetime.fromisoformat(run["start"].replace("Z", "+00:00"))


def _first_stamp(path: Path) -> str:
    return _first_stamp_of(path.read_text(encoding="utf-8"))


def _first_stamp_of(text: str) -> str:
    for line in text.splitlines():
        cell = line.split(",", 1)[0].strip('"')
        if cell[:2].isdigit():
            return datetime.strptime(cell, "%m/%d/%Y %H:%M:%S.%f").isoformat()
    raise AssertionError("no sample in the fixture")


def test_a_console_capture_is_placed_by_the_zone_given(client) -> None:
    path = FIXTURES / "perfmon" / "typeperf-console-cmd.txt"
    first = _first_stamp(path)
    plain = client.post("/imports/perfmon", content=path.read_bytes(), headers=AUTH)
    zoned = client.post(
        "/imports/perfmon",
        content=path.read_bytes(),
        params={"tz": "America/New_York"},
        headers=AUTH,
    )
    assert plain.status_code == zoned.status_code == 201, zoned.text
    assert _start(plain.json()) == datetime.fromisoformat(first).replace(tzinfo=UTC)
    assert _start(zoned.json()) == _utc(first, "America/New_York")


def test_a_zone_that_contradicts_the_typeperf_header_is_refused_naming_both(client) -> None:
    raw = (FIXTURES / "perfmon" / "typeperf-utf16.csv").read_bytes()
    r = client.post("/imports/perfmon", content=raw, params={"tz": "Asia/Tokyo"}, headers=AUTH)
    assert r.status_code == 422
    assert "Asia/Tokyo" in r.json()["detail"] and "W. Europe Standard Time" in r.json()["detail"]
    same = client.post(
        "/imports/perfmon", content=raw, params={"tz": "Europe/Berlin"}, headers=AUTH
    )
    assert same.status_code == 201, same.text
    assert client.get("/runs").json()[0]["id"] == same.json()["id"]


def test_an_st03_export_period_is_stored_in_utc(client) -> None:
    raw = (FIXTURES / "st03" / "per-task-type.csv").read_bytes()
    r = client.post(
        "/imports/st03",
        content=raw,
        params={"from": "2026-07-01T10:00", "to": "2026-07-01T11:00", "tz": "Europe/Berlin"},
        headers=AUTH,
    )
    assert r.status_code == 201, r.text
    assert _start(r.json()) == _utc("2026-07-01T10:00", "Europe/Berlin")  # CEST, UTC+2
    bad = client.post("/imports/st03", content=raw, params={"tz": "Nowhere/City"}, headers=AUTH)
    assert bad.status_code == 422 and "Nowhere/City" in bad.json()["detail"]


def test_every_chart_of_a_capture_with_a_hole_shades_and_names_it_in_clock_time(client) -> None:
    """A console capture missing 12 minutes (48 samples at 15 s) imported with its zone:
    every chart of the HTML report shades the hole, names its length, and reads its time
    axis in UTC with New York's time under it; both computed here from the file."""
    buf = io.BytesIO()
    generate.write(buf, "console", "utf-8", samples=200, interval_s=15.0, cores=2, per_host=8)
    text = buf.getvalue().decode("utf-8")
    lines = text.splitlines()
    samples = [k for k, line in enumerate(lines) if line[1:3].isdigit()]
    assert len(samples) > 120
    cut = samples[40 : 40 + 48]
    kept = [line for k, line in enumerate(lines) if k not in set(cut)]
    before = datetime.strptime(lines[samples[39]].split(",")[0].strip('"'), "%m/%d/%Y %H:%M:%S.%f")
    after = datetime.strptime(lines[samples[88]].split(",")[0].strip('"'), "%m/%d/%Y %H:%M:%S.%f")
    minutes = (after - before).total_seconds() / 60
    r = client.post(
        "/imports/perfmon",
        content="\n".join(kept).encode(),
        params={"tz": "America/New_York"},
        headers=AUTH,
    )
    assert r.status_code == 201, r.text
    page = client.get(f"/runs/{r.json()['id']}/report", params={"format": "html"}).text
    charts = page.split("<figure")[1:]
    assert charts
    first = _utc(_first_stamp_of(text), "America/New_York")
    local = first.astimezone(ZoneInfo("America/New_York"))
    for chart in charts:
        if "<svg" not in chart:
            continue
        assert re.search(r'id="[\w-]*gap-0"', chart), chart[:200]
        assert f"gap {minutes:,.0f} min" in chart
        assert f"clock time, UTC / America/New_York (below), from {first:%Y-%m-%d}" in chart
        assert f"{local:%H}:" in chart  # a local hour on the ticks
