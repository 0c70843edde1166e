"""GET /runs/{id}/report: computed once per revision of the run and answered from memory,
with an ETag (If-None-Match: 304); a change of the run, or for runs of the monitored system
a new firing notification, computes it again."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient

from api.config import Settings
from api.main import create_app
from api.runs.recorder import record_fast_run
from api.runs.spec import RunSpec
from tests.api.test_alerts_webhook import PAYLOAD

AUTH = {"Authorization": "Bearer t"}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    settings = Settings(db_path=tmp_path_factory.mktemp("cache") / "db.sqlite", token="t")
    with TestClient(create_app(settings)) as c:
        yield c


@pytest.fixture(scope="module")
def run_id(client) -> str:
    r = client.post("/runs", json={"duration_s": 300, "label": "cached"}, headers=AUTH)
    assert r.status_code == 201, r.text
    return r.json()["id"]


def test_a_report_is_computed_once_and_revalidated_with_its_etag(client, run_id) -> None:
    cache = client.app.state.report_cache
    first = client.get(f"/runs/{run_id}/report")
    assert first.status_code == 200
    assert first.json()["run"]["label"] == "cached"
    etag = first.headers["etag"]
    assert first.headers["cache-control"] == "no-cache"
    misses = cache.misses
    again = client.get(f"/runs/{run_id}/report")
    assert again.content == first.content and again.headers["etag"] == etag
    assert cache.misses == misses, "the second request computed the report again"
    unchanged = client.get(f"/runs/{run_id}/report", headers={"If-None-Match": etag})
    assert unchanged.status_code == 304 and unchanged.content == b""
    other = client.get(f"/runs/{run_id}/report", headers={"If-None-Match": '"other"'})
    assert other.status_code == 200
    html = client.get(f"/runs/{run_id}/report", params={"format": "html"})
    assert html.headers["content-type"].startswith("text/html")
    assert html.headers["etag"] != etag


def test_a_change_of_the_run_computes_the_report_again(client, run_id) -> None:
    store = client.app.state.store
    before = client.get(f"/runs/{run_id}/report")
    run = store.runs.get(run_id)
    # A run row changing after its report was served (here its message).
    store.runs.finish(run_id, "finished", datetime.fromisoformat(run["end"]), None, "checked again")
    after = client.get(f"/runs/{run_id}/report")
    assert after.json()["run"]["message"] == "checked again"
    assert after.headers["etag"] != before.headers["etag"]


def test_a_late_alert_reaches_the_cached_report_of_a_monitored_run(client) -> None:
    store = client.app.state.store
    start = datetime(2026, 11, 23, 6, 30, tzinfo=UTC)
    data = record_fast_run(RunSpec(duration_s=300, start=start))
    data.meta["sid"] = "BMK"
    run_id = store.runs.add(
        kind="external",
        scenario="BMK",
        label="window",
        start=start,
        duration_s=3600,
        ramp_up_s=0.0,
        spec={},
        data=data,
    )
    assert client.get(f"/runs/{run_id}/report").json()["alerts_fired"] == []
    # PAYLOAD's alert started at 07:00, inside the window, and reaches the API only now.
    assert client.post("/alerts/webhook", json=copy.deepcopy(PAYLOAD), headers=AUTH).is_success
    fired = client.get(f"/runs/{run_id}/report").json()["alerts_fired"]
    assert [a["alertname"] for a in fired] == ["SAPEnqueueTimeHigh"]


def test_unknown_and_running_runs_are_refused_and_not_cached(client) -> None:
    assert client.get("/runs/nope/report").status_code == 404
    store = client.app.state.store
    running = store.runs.begin(
        kind="realtime",
        scenario="sd-benchmark-2003",
        label="",
        start=datetime.now(UTC),
        duration_s=600,
        ramp_up_s=0.0,
        spec={},
    )
    r = client.get(f"/runs/{running}/report")
    assert r.status_code == 409 and "still running" in r.json()["detail"]
    store.runs.finish(running, "failed", datetime.now(UTC) + timedelta(seconds=1), None, "x")
    r = client.get(f"/runs/{running}/report")
    assert r.status_code == 409 and "has no data" in r.json()["detail"]
