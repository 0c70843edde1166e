"""The `tz` field of every import route (issue 32, item 6): the SAP system's or the machine's
time zone places local stamps in UTC; a zone that contradicts the file is refused naming
both. Expected instants are computed here with zoneinfo from the stamps the files hold."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from fastapi.testclient import TestClient

from api.config import Settings
from api.main import create_app

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
    for line in path.read_text(encoding="utf-8").splitlines():
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
