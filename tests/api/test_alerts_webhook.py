"""POST /alerts/webhook with Alertmanager's payload; GET /alerts/notifications."""

from __future__ import annotations

import copy
import sqlite3
import threading
import time
from datetime import datetime

import fastapi.dependencies.utils as fastapi_dependencies
import pytest
from fastapi.testclient import TestClient
from prometheus_client import REGISTRY

from api.config import Settings
from api.main import create_app
from api.store import Store

TOKEN = "test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}

PAYLOAD = {
    "version": "4",
    "groupKey": '{}/{severity="warning"}:{sap_instance="penguin2_D00", sid="BMK"}',
    "truncatedAlerts": 0,
    "status": "firing",
    "receiver": "noc-warning",
    "groupLabels": {"sid": "BMK", "sap_instance": "penguin2_D00"},
    "commonLabels": {"alertname": "SAPEnqueueTimeHigh", "severity": "warning"},
    "commonAnnotations": {},
    "externalURL": "http://127.0.0.1:9093",
    "alerts": [
        {
            "status": "firing",
            "labels": {
                "alertname": "SAPEnqueueTimeHigh",
                "severity": "warning",
                "sid": "BMK",
                "sap_instance": "penguin2_D00",
                "task_type": "dialog",
            },
            "annotations": {
                "summary": "Lock requests to the enqueue server are slow.",
                "description": "Dialog steps on penguin2_D00 (BMK) spend 12.8 ms ...",
                "diagnosis": "The enqueue server is a bottleneck.",
                "runbook_url": "alerts/runbooks.md#sapenqueuetimehigh",
            },
            "startsAt": "2026-11-23T07:00:00Z",
            "endsAt": "0001-01-01T00:00:00Z",
            "generatorURL": "http://127.0.0.1:9090/graph",
            "fingerprint": "a1b2c3",
        }
    ],
}


@pytest.fixture
def client(tmp_path):
    settings = Settings(db_path=tmp_path / "db.sqlite", token=TOKEN, logs_url="http://127.0.0.1:9")
    with TestClient(create_app(settings)) as c:
        yield c


def test_firing_and_resolved_notifications_are_stored_and_listed(client) -> None:
    r = client.post("/alerts/webhook", json=PAYLOAD, headers=AUTH)
    assert r.status_code == 200, r.text
    assert r.json()["stored"] == 1
    resolved = copy.deepcopy(PAYLOAD)
    resolved["status"] = resolved["alerts"][0]["status"] = "resolved"
    resolved["alerts"][0]["endsAt"] = "2026-11-23T07:10:00Z"
    assert client.post("/alerts/webhook", json=resolved, headers=AUTH).status_code == 200
    items = client.get("/alerts/notifications").json()
    assert [i["status"] for i in items] == ["resolved", "firing"]
    first = items[1]
    assert first["alertname"] == "SAPEnqueueTimeHigh"
    assert first["sap_instance"] == "penguin2_D00"
    assert first["ends_at"] is None
    assert first["annotations"]["diagnosis"] == "The enqueue server is a bottleneck."
    assert items[0]["ends_at"].startswith("2026-11-23T07:10")
    assert (
        client.get("/alerts/notifications", params={"status": "firing"}).json()[0]["id"]
        == first["id"]
    )


def test_log_store_down_keeps_the_notification_and_flags_it(client) -> None:
    r = client.post("/alerts/webhook", json=PAYLOAD, headers=AUTH)
    assert r.json()["forwarded_to_loki"] == 0
    assert client.get("/alerts/notifications").json()[0]["forwarded_to_loki"] is False


@pytest.mark.parametrize(
    ("headers", "code"),
    [
        ({}, 401),
        ({"Authorization": "Bearer nope"}, 401),
        ({"Authorization": f"Basic {TOKEN}"}, 401),
    ],
)
def test_writes_need_the_token(client, headers, code) -> None:
    assert client.post("/alerts/webhook", json=PAYLOAD, headers=headers).status_code == code
    assert client.get("/alerts/notifications").json() == []


def test_without_a_configured_token_writes_are_refused(tmp_path) -> None:
    with TestClient(create_app(Settings(db_path=tmp_path / "db.sqlite", token=None))) as c:
        r = c.post("/alerts/webhook", json=PAYLOAD, headers=AUTH)
        assert r.status_code == 503
        assert "WLMON_API_TOKEN" in r.json()["detail"]


def test_a_bad_alert_is_a_422_naming_the_field_and_stores_nothing(client) -> None:
    bad = copy.deepcopy(PAYLOAD)
    bad["alerts"].append(copy.deepcopy(bad["alerts"][0]))
    bad["alerts"][1]["status"] = "exploded"
    r = client.post("/alerts/webhook", json=bad, headers=AUTH)
    assert r.status_code == 422
    assert r.json()["detail"].startswith("alerts.1.status:")
    assert client.get("/alerts/notifications").json() == []


def test_not_json_and_oversized_bodies(client, tmp_path) -> None:
    assert client.post("/alerts/webhook", content=b"{", headers=AUTH).status_code == 422
    big = b'{"x": "' + b"a" * (1024 * 1024 + 10) + b'"}'
    assert client.post("/alerts/webhook", content=big, headers=AUTH).status_code == 413


def test_a_webhook_call_analyses_no_dependency_again(client, monkeypatch) -> None:
    """Issue 17 (the webhook's tail): with any dependency override on the app, FastAPI
    analysed every dependency of every request again (signatures, type adapters): 2.6 ms of
    CPU per webhook call against 0.8 ms without, enough to queue calls on a busy machine."""
    # The first call builds the route's dependencies (FastAPI does that once, lazily).
    assert client.post("/alerts/webhook", json=copy.deepcopy(PAYLOAD), headers=AUTH).is_success
    calls = []
    original = fastapi_dependencies.get_dependant

    def counting(*args, **kwargs):
        calls.append(kwargs.get("call"))
        return original(*args, **kwargs)

    monkeypatch.setattr(fastapi_dependencies, "get_dependant", counting)
    assert client.post("/alerts/webhook", json=copy.deepcopy(PAYLOAD), headers=AUTH).is_success
    assert calls == []


def test_the_loop_never_waits_for_another_writer(tmp_path) -> None:
    """The webhook stores on the event loop only when that cannot wait: with a worker
    holding the database's write lock, the loop's insert gives up at once (the route then
    stores from a thread, which waits)."""
    store = Store(tmp_path / "db.sqlite")
    rows = [{"status": "firing", "labels": {"alertname": "A"}, "starts_at": "2026-11-23"}]
    worker = sqlite3.connect(tmp_path / "db.sqlite", isolation_level=None)
    worker.execute("BEGIN IMMEDIATE")
    t0 = time.perf_counter()
    assert store.try_add_notifications("r", "g", rows) is None
    assert time.perf_counter() - t0 < 0.5  # sqlite's busy handler would sleep up to 5 s
    worker.execute("COMMIT")
    assert store.try_add_notifications("r", "g", rows) == [1]
    assert [n["alertname"] for n in store.notifications()] == ["A"]


def test_a_webhook_call_while_a_worker_writes_is_stored_from_a_thread(tmp_path) -> None:
    db = tmp_path / "db.sqlite"
    with TestClient(create_app(Settings(db_path=db, token=TOKEN))) as c:
        worker = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
        worker.execute("BEGIN IMMEDIATE")
        threading.Timer(0.3, lambda: worker.execute("COMMIT")).start()
        busy = REGISTRY.get_sample_value("wlmon_api_webhook_database_busy_total") or 0.0
        r = c.post("/alerts/webhook", json=copy.deepcopy(PAYLOAD), headers=AUTH)
        assert r.status_code == 200 and r.json()["stored"] == 1
        assert len(c.get("/alerts/notifications").json()) == 1
        # Counted, so an operator sees how often the webhook meets another writer.
        after = REGISTRY.get_sample_value("wlmon_api_webhook_database_busy_total")
        assert after == busy + 1
        assert c.post("/alerts/webhook", json=copy.deepcopy(PAYLOAD), headers=AUTH).is_success
        assert REGISTRY.get_sample_value("wlmon_api_webhook_database_busy_total") == after


def _ms(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def test_the_stored_notification_keeps_its_links(tmp_path) -> None:
    """generatorURL and the dashboard at the alert's time range and instance: 15 minutes
    before it started to 15 after it ended, SID and instance selected (written out here by
    hand, not by alerts/dashboards.py)."""
    settings = Settings(
        db_path=tmp_path / "db.sqlite", token=TOKEN, dashboards_url="http://noc.example:3000/"
    )
    resolved = copy.deepcopy(PAYLOAD)
    resolved["status"] = resolved["alerts"][0]["status"] = "resolved"
    resolved["alerts"][0]["endsAt"] = "2026-11-23T07:10:00Z"
    with TestClient(create_app(settings)) as client:
        assert client.post("/alerts/webhook", json=PAYLOAD, headers=AUTH).status_code == 200
        assert client.post("/alerts/webhook", json=resolved, headers=AUTH).status_code == 200
        done, firing = client.get("/alerts/notifications").json()
    start = _ms("2026-11-23T07:00:00Z") - 15 * 60 * 1000
    end = _ms("2026-11-23T07:10:00Z") + 15 * 60 * 1000
    assert done["dashboard_url"] == (
        f"http://noc.example:3000/projects/wlmon/dashboards/st03?start={start}&end={end}"
        "&var-sid=BMK&var-sap_instance=penguin2_D00"
    )
    assert done["generator_url"] == firing["generator_url"] == "http://127.0.0.1:9090/graph"
    # Firing: to the time it was received.
    query = dict(p.split("=") for p in firing["dashboard_url"].split("?")[1].split("&"))
    assert int(query["start"]) == start
    assert abs(int(query["end"]) - time.time() * 1000) < 60_000


def test_an_older_database_gains_the_link_columns(tmp_path) -> None:
    db = tmp_path / "db.sqlite"
    Store(db)
    with sqlite3.connect(db) as conn:
        conn.execute("ALTER TABLE notifications DROP COLUMN dashboard_url")
        conn.execute("ALTER TABLE notifications DROP COLUMN generator_url")
    store = Store(db)
    alert = {"status": "firing", "labels": {}, "starts_at": "2026-11-23T07:00:00+00:00"}
    store.add_notifications("r", "g", [alert | {"dashboard_url": "http://d"}])
    assert store.notifications()[0]["dashboard_url"] == "http://d"
