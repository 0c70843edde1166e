"""PerfMon CSV import: typeperf (UTF-16) and relog (UTF-8) files become runs; bad files are
a 4xx naming the line and store nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.config import Settings
from api.imports.perfmon import PerfmonError, parse
from api.main import create_app
from api.runs.record import col

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "perfmon"
AUTH = {"Authorization": "Bearer t"}
HEAD = '"(PDH-CSV 4.0) (UTC)(0)","\\\\H\\Memory\\Pages/sec"\n'


@pytest.fixture
def client(tmp_path):
    with TestClient(create_app(Settings(db_path=tmp_path / "db.sqlite", token="t"))) as c:
        yield c


def test_typeperf_utf16_with_blank_sample_and_trailer() -> None:
    data = parse((FIXTURES / "typeperf-utf16.csv").read_bytes())
    assert data.hosts == ["miihost"]
    assert data.times.tolist() == [0.0, 15.0, 30.0, 45.0]
    # The (-60) bias: local 08:00 in W. Europe is 07:00 UTC.
    assert data.start.isoformat() == "2026-11-23T07:00:00+00:00"
    pages = data.values[:, data.columns.index(col("os", "miihost", "pages_per_s"))]
    assert pages[2] != pages[2]  # the blank sample is NaN, not 0


def test_imported_run_reports_average_minimum_maximum_as_seed_003_does(client) -> None:
    raw = (FIXTURES / "typeperf-utf16.csv").read_bytes()
    r = client.post(
        "/imports/perfmon", content=raw, params={"label": "mii 500 users"}, headers=AUTH
    )
    assert r.status_code == 201, r.text
    run = r.json()
    assert run["kind"] == "imported" and run["label"] == "mii 500 users"
    rep = client.get(f"/runs/{run['id']}/report").json()
    rows = {row["counter"]: row for row in rep["os_counters"]}
    pages = rows["Memory\\Pages/sec"]
    # Unrounded (the check compares these): (0 + 151.5 + 0.2) / 3, not 50.567.
    assert pages["avg"] == pytest.approx((0.0 + 151.5 + 0.2) / 3, rel=1e-12)
    assert (pages["min"], pages["max"], pages["samples"]) == (0.0, 151.5, 3)
    cpu = rows["Processor\\% Processor Time"]
    assert (cpu["min"], cpu["max"]) == (11.0, 15.7)
    assert rows["Memory\\Available MBytes"]["min"] == 4892
    assert rows["PhysicalDisk\\Avg. Disk Queue Length"]["avg"] == pytest.approx(0.398)
    assert rep["st03"] == [] and rep["breaches"] == []


def test_relog_utf8_keeps_counters_it_does_not_know_by_name(client) -> None:
    r = client.post(
        "/imports/perfmon", content=(FIXTURES / "relog-utf8.csv").read_bytes(), headers=AUTH
    )
    assert r.status_code == 201, r.text
    rep = client.get(f"/runs/{r.json()['id']}/report").json()
    counters = {row["counter"] for row in rep["os_counters"]}
    assert counters == {"Memory\\Available MBytes", "System\\Processor Queue Length"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '"Time","\\\\H\\Memory\\Pages/sec"\n"11/23/2026 08:00:00.000","1"\n',
            "line 1, column 1: the file starts with text 'Time'",
        ),
        ('"(PDH-CSV 4.0) (UTC)(0)","Memory Pages"\n', "line 1, column 2"),
        (
            '"(PDH-CSV 4.0) (UTC)(0)","\\\\H\\Memory\\Pages/sec"\n"11/23/2026 08:00:00.000","x1"\n',
            "line 2, column 2: 'x1' is not a number",
        ),
        (
            '"(PDH-CSV 4.0) (UTC)(0)","\\\\H\\Memory\\Pages/sec"\n"yesterday","1"\n',
            "line 2, column 1: time stamp",
        ),
        (
            HEAD + '"11/23/2026 08:00:00.000","1","2"\n',
            "line 2: 3 cells",
        ),
        ('"(PDH-CSV 4.0) (UTC)(0)","\\\\H\\Memory\\Pages/sec"\n', "no samples"),
    ],
)
def test_bad_files_name_the_line_and_store_nothing(client, text: str, message: str) -> None:
    with pytest.raises(PerfmonError, match=None) as info:
        parse(text.encode())
    assert message in str(info.value)
    r = client.post("/imports/perfmon", content=text.encode(), headers=AUTH)
    assert r.status_code == 422
    assert message in r.json()["detail"]
    assert client.get("/runs").json() == []


def test_imports_need_the_token(client) -> None:
    raw = (FIXTURES / "relog-utf8.csv").read_bytes()
    assert client.post("/imports/perfmon", content=raw).status_code == 401


def test_an_oversized_import_is_a_413_and_stores_nothing(tmp_path) -> None:
    settings = Settings(db_path=tmp_path / "db.sqlite", token="t", perfmon_max_bytes=100)
    with TestClient(create_app(settings)) as client:
        raw = (FIXTURES / "typeperf-utf16.csv").read_bytes()
        r = client.post("/imports/perfmon", content=raw, headers=AUTH)
        assert r.status_code == 413
        detail = r.json()["detail"]
        assert "over the PerfMon import limit of 100 bytes" in detail
        assert "WLMON_API_PERFMON_MAX_BYTES" in detail
        assert client.get("/runs").json() == []


@pytest.mark.parametrize("route", ["/imports/perfmon", "/imports/st03"])
def test_with_every_worker_busy_an_upload_is_refused_before_its_body_is_spooled(
    tmp_path, monkeypatch, route
) -> None:
    """Issue 17: uploads were spooled to disk (up to hundreds of megabytes each) and only
    then refused because the pool was full; now the slot comes first."""
    spooled = []

    def mkstemp(*args, **kwargs):
        spooled.append(args)
        raise AssertionError("the body was spooled")

    settings = Settings(db_path=tmp_path / "db.sqlite", token="t", workers=1, worker_queue=0)
    with TestClient(create_app(settings)) as c:
        pool = c.app.state.pool
        with pool.slot():  # the only slot: a job running
            monkeypatch.setattr("api.routes.imports.tempfile.mkstemp", mkstemp)
            raw = (FIXTURES / "typeperf-utf16.csv").read_bytes()
            r = c.post(route, content=raw, headers=AUTH)
            assert r.status_code == 503 and "busy" in r.json()["detail"]
            assert r.headers["retry-after"] == "5"
            assert spooled == []
        assert pool.in_flight == 0  # a refused upload holds no slot
        monkeypatch.undo()
        assert c.post("/imports/perfmon", content=raw, headers=AUTH).status_code == 201
        assert pool.in_flight == 0
