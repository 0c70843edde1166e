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
from api.services import checks as services_checks
from api.services import reports as services_reports
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
    store.runs.finish(run_id, "finished", run.end, None, "checked again")
    after = client.get(f"/runs/{run_id}/report")
    assert after.json()["run"]["message"] == "checked again"
    assert after.headers["etag"] != before.headers["etag"]


def test_a_late_alert_reaches_the_cached_report_of_a_monitored_run(client) -> None:
    store = client.app.state.store
    start = datetime(2026, 11, 23, 6, 30, tzinfo=UTC)
    data = record_fast_run(RunSpec(duration_s=300, start=start))
    data.meta.sid = "BMK"
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


def _off_the_api_process(monkeypatch) -> None:
    """The services the routes once called on the API's threads fail in this process; a
    worker (a spawned process) has its own, unpatched copies."""

    def here(*args, **kwargs):
        raise AssertionError("computed on the API's own threads")

    monkeypatch.setattr(services_reports, "compare_runs", here)
    monkeypatch.setattr(services_checks, "check", here)


def test_a_comparison_is_computed_once_in_a_worker_per_revision(
    client, run_id, monkeypatch
) -> None:
    """Issue 17: four concurrent compares of a 1-hour run pushed /healthz p99 from 19 to
    94 ms: they ran on the API's threads, every time."""
    other = client.post("/runs", json={"duration_s": 300, "seed": 2}, headers=AUTH).json()["id"]
    _off_the_api_process(monkeypatch)
    cache = client.app.state.report_cache
    params = {"base": run_id, "new": other, "tolerance": "dialog_p95_s=10"}
    first = client.get("/runs/compare", params=params)
    assert first.status_code == 200, first.text
    assert first.json()["base"] == run_id and first.json()["new"] == other
    misses = cache.misses
    again = client.get("/runs/compare", params=params)
    assert again.content == first.content and cache.misses == misses
    etag = first.headers["etag"]
    assert (
        client.get("/runs/compare", params=params, headers={"If-None-Match": etag}).status_code
        == 304
    )
    # Another tolerance is another answer.
    looser = client.get("/runs/compare", params=params | {"tolerance": "dialog_p95_s=50"})
    assert looser.status_code == 200 and cache.misses == misses + 1
    # A change of either run computes it again.
    store = client.app.state.store
    row = store.runs.get(other)
    store.runs.finish(other, "finished", row.end, None, "renamed")
    client.get("/runs/compare", params=params)
    assert cache.misses == misses + 2
    assert client.get("/runs/compare", params=params | {"new": "nope"}).status_code == 404
    bad = client.get("/runs/compare", params=params | {"tolerance": "x"})
    assert bad.status_code == 422


def test_a_check_is_computed_once_in_a_worker_per_revision(client, run_id, monkeypatch) -> None:
    _off_the_api_process(monkeypatch)
    cache = client.app.state.report_cache
    first = client.get(f"/runs/{run_id}/check")
    assert first.status_code == 200, first.text
    assert first.json()["run"] == run_id and first.json()["criteria"]
    misses = cache.misses
    assert client.get(f"/runs/{run_id}/check").content == first.content
    assert cache.misses == misses
    sla = "criteria:\n  - figure: dialog_p95_s\n    max: 0.000001\n"
    posted = client.post(f"/runs/{run_id}/check", json={"sla": sla}, headers=AUTH)
    assert posted.status_code == 200, posted.text
    assert not posted.json()["passed"] and cache.misses == misses + 1
    assert (
        client.post(f"/runs/{run_id}/check", json={"sla": sla}, headers=AUTH).content
        == posted.content
    )
    assert cache.misses == misses + 1
    wrong = client.post(f"/runs/{run_id}/check", json={"sla": "nonsense: [\n"}, headers=AUTH)
    assert wrong.status_code == 422 and "SLA" in wrong.json()["detail"]
    assert client.get("/runs/nope/check").status_code == 404
