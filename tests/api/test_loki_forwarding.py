"""The webhook stores and answers; a thread forwards to the log store behind it (issue 17:
with the store frozen each call held the event loop ~3 s). A fake Loki-protocol receiver on
a free port takes the pushes (counting them); a frozen one accepts connections and never
answers; the real VictoriaLogs (HTTPS + basic auth) takes them as `wlmon up` runs it."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from api.config import Settings
from api.main import create_app
from api.services.loki_forwarder import LOKI_FAILURES
from exporters.sinks.loki import LogStoreAccess
from tests.api.test_alerts_webhook import PAYLOAD
from tests.victorialogs import victorialogs
from wlmon.stack import pki

AUTH = {"Authorization": "Bearer t"}


class FakeLoki(ThreadingHTTPServer):
    def __init__(self) -> None:
        self.lines: list[dict] = []
        self.pushes = 0
        self.fail = False

        class Handler(BaseHTTPRequestHandler):
            def do_POST(handler) -> None:  # `self` is the server
                body = json.loads(handler.rfile.read(int(handler.headers["Content-Length"])))
                self.pushes += 1
                if self.fail:
                    handler.send_response(503)
                else:
                    for stream in body["streams"]:
                        self.lines += [json.loads(v[1]) for v in stream["values"]]
                    handler.send_response(204)
                handler.end_headers()

            def log_message(handler, *args) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)


@pytest.fixture
def loki():
    server = FakeLoki()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()


def _client(
    tmp_path, logs_url: str, linger_s: float = 0.5, access: LogStoreAccess | None = None
) -> TestClient:
    given = (
        {
            "logs_ca_file": access.ca_file,
            "logs_username": access.username,
            "logs_password": access.password,
        }
        if access
        else {}
    )
    settings = Settings(
        db_path=tmp_path / "db.sqlite",
        token="t",
        logs_url=logs_url,
        loki_max_backoff_s=0.5,
        loki_linger_s=linger_s,
        **given,
    )
    return TestClient(create_app(settings))


@pytest.fixture
def store(tmp_path):
    with victorialogs(tmp_path / "victorialogs") as running:
        yield running


def test_notifications_reach_victorialogs_with_its_password(tmp_path, store) -> None:
    with _client(tmp_path, store.url, access=store.access) as c:
        assert c.post("/alerts/webhook", json=PAYLOAD, headers=AUTH).status_code == 200
        assert _until(lambda: c.get("/alerts/notifications").json()[0]["forwarded_to_loki"])
    (row,) = store.rows('{source="alertmanager", sid="BMK", severity="warning"}')
    assert json.loads(row["_msg"])["alertname"] == "SAPEnqueueTimeHigh"
    line = json.loads(row["_msg"])
    assert line["diagnosis"] == "The enqueue server is a bottleneck."
    # What a person reading the log needs to act: the runbook, the rule, the dashboard.
    assert line["runbook_url"] == "alerts/runbooks.md#sapenqueuetimehigh"
    assert line["generator_url"] == "http://127.0.0.1:9090/graph"
    assert "/projects/wlmon/dashboards/st03?start=" in line["dashboard_url"]
    assert "var-sap_instance=penguin2_D00" in line["dashboard_url"]


def test_a_wrong_password_forwards_nothing_and_keeps_it(tmp_path, store) -> None:
    """VictoriaLogs answers 401: a refusal of the request, not of the lines, so they stay
    queued in the API's store until the password is fixed (they were once dropped as a 4xx)."""
    wrong = LogStoreAccess(ca_file=store.access.ca_file, username="wlmon-logs", password="no")
    before = LOKI_FAILURES._value.get()
    with _client(tmp_path, store.url, access=wrong) as c:
        assert c.post("/alerts/webhook", json=PAYLOAD, headers=AUTH).status_code == 200
        assert _until(lambda: LOKI_FAILURES._value.get() >= before + 2)  # tried, and again
        assert not c.get("/alerts/notifications").json()[0]["forwarded_to_loki"]
    assert store.count('{source="alertmanager"}') == 0
    with _client(tmp_path, store.url, access=store.access) as c:  # fixed: they go now
        assert _until(lambda: c.get("/alerts/notifications").json()[0]["forwarded_to_loki"])
    assert store.count('{source="alertmanager"}') == 1


def test_a_stranger_ca_forwards_nothing_and_keeps_it(tmp_path, store) -> None:
    """A client trusting another CA does not send its password to the port at all."""
    foreign, _ = pki.ensure(tmp_path / "foreign")
    stranger = LogStoreAccess(ca_file=foreign.ca, username="wlmon-logs", password="x")
    before = LOKI_FAILURES._value.get()
    with _client(tmp_path, store.url, access=stranger) as c:
        assert c.post("/alerts/webhook", json=PAYLOAD, headers=AUTH).status_code == 200
        assert _until(lambda: LOKI_FAILURES._value.get() >= before + 2)
        assert not c.get("/alerts/notifications").json()[0]["forwarded_to_loki"]
    assert store.count('{source="alertmanager"}') == 0


def test_log_store_settings_go_together_and_name_files_that_exist(tmp_path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("")
    with pytest.raises(ValidationError, match="WLMON_API_LOGS_KEY_FILE"):
        Settings(db_path=tmp_path / "db.sqlite", logs_cert_file=ca)
    with pytest.raises(ValidationError, match="WLMON_API_LOGS_USERNAME"):
        Settings(db_path=tmp_path / "db.sqlite", logs_password="pw")
    with pytest.raises(ValidationError, match="logs_key_file"):
        Settings(
            db_path=tmp_path / "db.sqlite",
            logs_cert_file=ca,
            logs_key_file=tmp_path / "missing.key",
        )


def _until(check, timeout_s: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False


def test_notifications_reach_loki_after_the_answer(tmp_path, loki) -> None:
    with _client(tmp_path, f"http://127.0.0.1:{loki.server_port}") as c:
        r = c.post("/alerts/webhook", json=PAYLOAD, headers=AUTH)
        assert r.status_code == 200 and r.json()["queued_for_loki"] == 1
        assert _until(lambda: c.get("/alerts/notifications").json()[0]["forwarded_to_loki"])
        assert [line["alertname"] for line in loki.lines] == ["SAPEnqueueTimeHigh"]
        assert loki.lines[0]["diagnosis"] == "The enqueue server is a bottleneck."


def test_a_failing_loki_gets_them_later_and_once(tmp_path, loki) -> None:
    loki.fail = True
    with _client(tmp_path, f"http://127.0.0.1:{loki.server_port}") as c:
        for _ in range(3):
            assert c.post("/alerts/webhook", json=PAYLOAD, headers=AUTH).status_code == 200
        time.sleep(0.5)
        assert not any(n["forwarded_to_loki"] for n in c.get("/alerts/notifications").json())
        loki.fail = False
        assert _until(lambda: len(loki.lines) == 3)
        assert all(n["forwarded_to_loki"] for n in c.get("/alerts/notifications").json())
        time.sleep(0.5)
        assert len(loki.lines) == 3


def test_a_frozen_loki_does_not_hold_the_webhook(tmp_path) -> None:
    # Listens (the kernel completes connections) but never reads: SIGSTOPped Loki.
    frozen = socket.socket()
    frozen.bind(("127.0.0.1", 0))
    frozen.listen(64)
    try:
        with _client(tmp_path, f"http://127.0.0.1:{frozen.getsockname()[1]}") as c:
            took = []
            for _ in range(10):
                t0 = time.perf_counter()
                assert c.post("/alerts/webhook", json=PAYLOAD, headers=AUTH).status_code == 200
                took.append(time.perf_counter() - t0)
            # The push's own timeout is 3 s; a call that waited for it would show here.
            assert max(took) < 1.0, took
            assert len(c.get("/alerts/notifications").json()) == 10
    finally:
        frozen.close()


def test_a_notifications_loki_timestamp_is_its_own_not_the_pushs() -> None:
    """Retried after a push that timed out but landed, the same entries go again and Loki
    keeps one copy (issue 26: 60 notifications became 227 lines with push-time stamps)."""
    from api.services.loki_forwarder import line_timestamp_ns

    a = {"id": 41, "received_at": "2026-11-25T12:00:00.123456+00:00"}
    b = {"id": 42, "received_at": "2026-11-25T12:00:00.123456+00:00"}
    first = line_timestamp_ns(a)
    time.sleep(0.01)
    assert line_timestamp_ns(dict(a)) == first
    assert line_timestamp_ns(b) == first + 1
    assert first // 1000 == 1795608000123456


def test_a_burst_goes_to_loki_in_few_pushes(tmp_path, loki) -> None:
    """Issue 26: at 200 notifications/s the forwarder woke, pushed and wrote its marks once
    per notification, each write a moment the webhook's insert found the database busy. News
    within the linger waits for the rest of the burst: 30 notifications, sent well within
    one linger, go in the first push (the thread's start) and one more, all of them once."""
    with _client(tmp_path, f"http://127.0.0.1:{loki.server_port}", linger_s=2.0) as c:
        t0 = time.monotonic()
        for _ in range(30):
            assert c.post("/alerts/webhook", json=PAYLOAD, headers=AUTH).status_code == 200
        sent_s = time.monotonic() - t0
        assert _until(lambda: len(loki.lines) == 30)
        if sent_s < 1.5:  # a machine so loaded it took longer may need a third push
            assert loki.pushes <= 2, loki.pushes
        # The linger delays a notification by about itself, not by the idle wait.
        assert time.monotonic() - t0 < sent_s + 2.0 + 5.0
        time.sleep(0.5)
        assert len(loki.lines) == 30


def test_log_store_tls_files_that_do_not_load_are_refused_with_the_settings(tmp_path) -> None:
    """A key of another certificate passes FilePath; refused here, not at the first run's
    annotations (which raised ssl.SSLError after the run was stored)."""
    made, _ = pki.ensure(tmp_path / "tls")
    other, _ = pki.ensure(tmp_path / "other")
    with pytest.raises(ValidationError, match="do not load"):
        Settings(
            db_path=tmp_path / "db.sqlite",
            logs_ca_file=made.ca,
            logs_cert_file=made.cert("server"),
            logs_key_file=other.key("server"),
        )
    with pytest.raises(ValidationError, match="do not load"):
        Settings(db_path=tmp_path / "db.sqlite", logs_ca_file=made.key("server"))
    settings = Settings(
        db_path=tmp_path / "db.sqlite",
        logs_ca_file=made.ca,
        logs_username="wlmon-logs",
        logs_password="pw",
    )
    assert settings.logs_access.auth == ("wlmon-logs", "pw")
    assert "pw" not in repr(settings.logs_access)
