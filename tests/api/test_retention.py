"""Bounded: paged GET /runs, DELETE /runs/{id} and `wlmon delete`, the API's retention of
runs and notifications (issue 26: 637 MB of database after the tests, nothing to trim it)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from api.config import Settings, get_settings
from api.main import create_app
from api.services import retention
from api.store import Store
from tests.api.test_alerts_webhook import PAYLOAD
from wlmon.cli import app as cli

AUTH = {"Authorization": "Bearer t"}


def _begin(store: Store, label: str, status: str = "running") -> str:
    run_id = store.runs.begin(
        kind="realtime",
        scenario="sd-benchmark-2003",
        label=label,
        start=datetime.now(UTC),
        duration_s=600,
        ramp_up_s=0,
        spec={},
    )
    if status != "running":
        store.runs.finish(run_id, status, datetime.now(UTC), None, "ended")
    return run_id


@pytest.fixture
def client(tmp_path):
    settings = Settings(db_path=tmp_path / "db.sqlite", token="t")
    with TestClient(create_app(settings)) as c:
        yield c


def test_runs_are_listed_a_page_at_a_time(client) -> None:
    store = client.app.state.store
    ids = [_begin(store, f"run {k}", "finished") for k in range(7)]
    page = client.get("/runs", params={"limit": 3, "offset": 2})
    assert page.status_code == 200
    assert page.headers["X-Total-Count"] == "7"
    everything = [r["id"] for r in client.get("/runs").json()]
    assert sorted(everything) == sorted(ids)
    assert [r["id"] for r in page.json()] == everything[2:5]
    assert client.get("/runs", params={"limit": 0}).status_code == 422
    assert client.get("/runs", params={"offset": -1}).status_code == 422


def test_a_run_is_deleted_with_its_data_but_not_while_in_progress(client) -> None:
    store = client.app.state.store
    ended, running = _begin(store, "ended", "finished"), _begin(store, "running")
    assert client.delete(f"/runs/{ended}").status_code == 401
    deleted = client.delete(f"/runs/{ended}", headers=AUTH)
    assert (deleted.status_code, deleted.json()) == (200, {"id": ended})
    assert client.get(f"/runs/{ended}").status_code == 404
    assert client.delete(f"/runs/{ended}", headers=AUTH).status_code == 404
    refused = client.delete(f"/runs/{running}", headers=AUTH)
    assert refused.status_code == 409 and "cancel it first" in refused.json()["detail"]
    assert client.get(f"/runs/{running}").status_code == 200


def test_retention_prunes_old_ended_runs_and_forwarded_notifications(tmp_path) -> None:
    store = Store(tmp_path / "db.sqlite")
    old_ended, old_running = _begin(store, "old", "finished"), _begin(store, "old running")
    alerts = [{**a, "starts_at": a["startsAt"]} for a in PAYLOAD["alerts"]]
    forwarded = store.add_notifications("noc", "g", alerts)
    waiting = store.add_notifications("noc", "g", alerts)
    store.mark_forwarded(forwarded)
    settings = Settings(db_path=tmp_path / "db.sqlite", run_retention_days=30)
    # Everything was made "now": seen from 31 days on, all of it is past retention.
    later = datetime.now(UTC) + timedelta(days=31)
    assert retention.prune(store, settings, now=later) == {"runs": 1, "notifications": 1}
    assert store.runs.get(old_ended) is None
    assert store.runs.get(old_running) is not None  # in progress: never pruned
    left = [n["id"] for n in store.notifications(limit=10)]
    assert left == waiting  # the log store has not got it yet: kept
    assert retention.prune(store, settings, now=datetime.now(UTC)) == {
        "runs": 0,
        "notifications": 0,
    }
    off = Settings(db_path=tmp_path / "db.sqlite", run_retention_days=0)
    assert retention.prune(store, off, now=later + timedelta(days=999))["runs"] == 0


def test_wlmon_delete_removes_runs_and_names_what_it_cannot(tmp_path, monkeypatch) -> None:
    db = tmp_path / "db.sqlite"
    store = Store(db)
    ended, running = _begin(store, "ended", "finished"), _begin(store, "running")
    monkeypatch.setenv("WLMON_API_DB_PATH", str(db))
    get_settings.cache_clear()
    try:
        runner = CliRunner()
        ok = runner.invoke(cli, ["delete", ended])
        assert ok.exit_code == 0 and f"deleted {ended}" in ok.output
        refused = runner.invoke(cli, ["delete", running])
        assert refused.exit_code == 2 and "cancel it first" in " ".join(refused.output.split())
        unknown = runner.invoke(cli, ["delete", "nope"])
        assert unknown.exit_code == 2 and "no run 'nope'" in unknown.output
    finally:
        get_settings.cache_clear()
    assert Store(db).runs.get(ended) is None
