"""Side writes queued and retried (issue 38 item 6): a run's annotation for a user's Grafana
written while nothing listens there yet arrives once the server is up; the queue is bounded,
a request the peer refuses is not retried, one whose peer stays down is given up; each
counted. (Grafana itself is not run: its server is AGPL, marked not to use; a stdlib HTTP
server on the same port takes the annotation as Grafana's /api/annotations would.)"""

from __future__ import annotations

import http.server
import json
import socket
import threading
import time
from datetime import UTC, datetime

import httpx
from prometheus_client import REGISTRY
from pydantic import SecretStr

from api.config import Settings
from api.outbox import Outbox
from api.runs.annotations import RunAnnotations
from tests.api.rows import run_row


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LatePeer:
    """An HTTP server started later on a port chosen now; keeps (path, auth, body)."""

    def __init__(self, status: int = 200) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.got: list[tuple[str, str, dict]] = []
        self.status = status
        self.server: http.server.ThreadingHTTPServer | None = None

    def start(self) -> None:
        got, status = self.got, self.status

        class _Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                got.append((self.path, self.headers.get("Authorization", ""), body))
                self.send_response(status)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), _Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


def _metric(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def _wait(check, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    raise AssertionError(f"not within {timeout} s")


def test_an_annotation_written_before_its_grafana_is_up_arrives_after() -> None:
    peer = LatePeer()
    settings = Settings(
        grafana_url=peer.url, grafana_password=SecretStr("g-pass"), logs_url=None, influx_url=None
    )
    run = run_row("r-late", label="resumed", kind="realtime", scenario="s")
    pending0 = _metric("wlmon_api_side_writes_pending", target="grafana_annotations")
    delivered0 = _metric("wlmon_api_side_writes_delivered_total", target="grafana_annotations")
    ann = RunAnnotations(settings, run)
    try:
        ann.annotate("run_resumed", datetime.now(UTC), "run resumed at start")
        time.sleep(2.5)  # refused at least twice: nothing listens yet
        assert peer.got == []
        assert _metric("wlmon_api_side_writes_pending", target="grafana_annotations") == (
            pending0 + 1
        )
        peer.start()
        _wait(lambda: peer.got)
        path, auth, body = peer.got[0]
        assert path == "/api/annotations" and auth.startswith("Basic ")
        assert body["tags"][:4] == ["wlmon", "run", "r-late", "run_resumed"]
        assert "run resumed at start" in body["text"]
        _wait(
            lambda: (
                _metric("wlmon_api_side_writes_pending", target="grafana_annotations") == pending0
            )
        )
        assert _metric("wlmon_api_side_writes_delivered_total", target="grafana_annotations") == (
            delivered0 + 1
        )
        assert ann.failures == []
    finally:
        ann.close()
        peer.stop()


def test_the_queue_is_bounded_and_refusals_and_expiry_are_counted() -> None:
    def failed(reason: str) -> float:
        return _metric(
            "wlmon_api_side_writes_failed_total", target="grafana_annotations", reason=reason
        )

    down = f"http://127.0.0.1:{_free_port()}/api/annotations"
    overflow0, expired0, rejected0 = failed("overflow"), failed("expired"), failed("rejected")
    box = Outbox(max_pending=2, max_age_s=1.0, first_delay_s=0.2, max_delay_s=0.4)
    assert box.put("grafana_annotations", method="POST", url=down, json={})
    assert box.put("grafana_annotations", method="POST", url=down, json={})
    assert not box.put("grafana_annotations", method="POST", url=down, json={})
    assert failed("overflow") == overflow0 + 1
    # Both given up once their hour (here 1 s) of retries is over; nothing left queued.
    _wait(lambda: failed("expired") == expired0 + 2, 10)
    assert box.pending() == 0

    peer = LatePeer(status=400)
    peer.start()
    tries: list[int] = []

    def send(req: dict) -> httpx.Response:
        tries.append(1)
        return httpx.request(timeout=5, **req)

    try:
        box = Outbox(first_delay_s=0.1, send=send)
        box.put("grafana_annotations", method="POST", url=f"{peer.url}/api/annotations", json={})
        _wait(lambda: failed("rejected") == rejected0 + 1)
        time.sleep(0.5)
        assert len(tries) == 1  # a 400 will never succeed: not tried again
    finally:
        peer.stop()


def test_a_write_being_attempted_still_counts_against_the_bound() -> None:
    """The write the outbox is sending now is still pending (it may be retried): with a
    bound of 2 and one write in flight, a third is refused (CI run 46 saw it accepted when
    the thread had popped the first for its try)."""
    sending, release = threading.Event(), threading.Event()

    def send(req: dict) -> httpx.Response:
        sending.set()
        release.wait(5)
        return httpx.Response(204)

    box = Outbox(max_pending=2, send=send)
    try:
        assert box.put("grafana_annotations", method="POST", url="http://x/api/annotations")
        assert sending.wait(5)  # the first is in flight, out of the queue
        assert box.put("grafana_annotations", method="POST", url="http://x/api/annotations")
        assert box.pending() == 2
        assert not box.put("grafana_annotations", method="POST", url="http://x/api/annotations")
    finally:
        release.set()
    _wait(lambda: box.pending() == 0, 10)
