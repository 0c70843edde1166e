"""The buffered Loki sink against a small HTTP server that answers like Loki: lines Loki
refuses for good (400: too old, out of order) are dropped and counted, so they cannot block
the lines behind them; lines refused for now (5xx) are kept and sent later."""

from __future__ import annotations

import base64
import json
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from exporters.sinks.loki import LOKI_PUSH_PATH, LogStoreAccess, LokiPusher, LokiSink


class FakeLoki:
    """Answers pushes with `answers` in turn, then 204. With `hold`, the first push waits
    (and sets `arrived`) until the test releases it, so lines can arrive meanwhile."""

    def __init__(self, answers: list[int], hold: bool = False) -> None:
        self.answers = answers
        self.received: list[str] = []
        self.peers: list[tuple[str, int]] = []  # the client's address of each push
        self.requests: list[tuple[str, str, str | None]] = []  # method, path, Authorization
        self.arrived = threading.Event()
        self.release = threading.Event()
        if not hold:
            self.release.set()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as Loki offers it

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(("POST", self.path, self.headers.get("Authorization")))
                outer.peers.append(self.client_address)
                outer.arrived.set()
                outer.release.wait(10)
                status = outer.answers.pop(0) if outer.answers else 204
                if status == 204:
                    outer.received += [v[1] for s in body["streams"] for v in s["values"]]
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_port}"


@pytest.mark.parametrize(
    ("answers", "delivered", "dropped"),
    [([400], ["second"], 1), ([503, 503], ["first", "second"], 0)],
)
def test_refused_for_good_is_dropped_refused_for_now_is_retried(
    answers, delivered, dropped
) -> None:
    loki = FakeLoki(answers)
    sink = LokiSink(loki.url, flush_interval_s=0.05, max_backoff_s=0.1).start()
    try:
        sink.emit({"source": "test"}, "first")
        deadline = time.monotonic() + 10
        while loki.answers and time.monotonic() < deadline:
            time.sleep(0.05)
        sink.emit({"source": "test"}, "second")
        while len(loki.received) < len(delivered) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        sink.stop()
        loki.httpd.shutdown()
    assert loki.received == delivered
    assert sink.dropped == dropped


def _push_while_the_buffer_overflows(answer: int) -> tuple[FakeLoki, LokiSink]:
    """Lines a, b are in flight when c, d, e arrive at a buffer of 3; then Loki answers."""
    loki = FakeLoki([answer], hold=True)
    sink = LokiSink(loki.url, batch_size=2, max_buffer=3)  # no thread: the test drives it
    for line in ("a", "b"):
        sink.emit({"source": "test"}, line)
    pusher = threading.Thread(target=sink._push_once)
    pusher.start()
    assert loki.arrived.wait(10)
    for line in ("c", "d", "e"):
        sink.emit({"source": "test"}, line)
    loki.release.set()
    pusher.join(10)
    return loki, sink


@pytest.mark.parametrize(
    ("answer", "delivered", "sent", "dropped"),
    [
        # Once failed: c, d and e were sent in place of a, b; c, d counted as sent, never sent.
        pytest.param(204, ["a", "b", "c", "d", "e"], 5, 0, id="taken"),
        # Back in front of the buffer as its oldest lines: the full buffer keeps its newest.
        pytest.param(503, ["c", "d", "e"], 3, 2, id="retried"),
    ],
)
def test_lines_arriving_during_a_push_are_neither_lost_nor_miscounted(
    answer: int, delivered: list[str], sent: int, dropped: int
) -> None:
    loki, sink = _push_while_the_buffer_overflows(answer)
    try:
        assert sink.flush(10)
    finally:
        loki.httpd.shutdown()
    assert loki.received == delivered
    assert (sink.sent, sink.dropped) == (sent, dropped)


def test_one_pooled_connection_and_no_tls_work_for_plain_http(monkeypatch) -> None:
    """Issue 26: a client (and an SSL context loading the CA bundle) per push burnt a core at
    200 webhooks/s. Now every push of a sink reuses one kept-alive connection, and a plain
    http:// pusher never builds a certificate-verifying context."""

    def no_tls(*args, **kwargs):
        raise AssertionError("ssl.create_default_context called for plain HTTP")

    monkeypatch.setattr(ssl, "create_default_context", no_tls)
    loki = FakeLoki([])
    pusher = LokiPusher(loki.url, timeout_s=5)
    for k in range(20):
        pusher.push([({"job": "t"}, 1_000 + k, f"line {k}")])
    pusher.close()
    assert loki.received == [f"line {k}" for k in range(20)]
    assert len(set(loki.peers)) == 1, f"{len(set(loki.peers))} connections for 20 pushes"


def test_a_put_back_batch_keeps_its_timestamps(monkeypatch) -> None:
    """Sent again after a failure, a batch carries the same (timestamp, line) pairs, which
    Loki stores once: a push that timed out but landed adds no duplicates."""
    sent: list[list[tuple[int, str]]] = []

    def record(self, lines) -> None:
        sent.append([(ts, line) for _, ts, line in lines])
        if len(sent) == 1:
            import httpx

            raise httpx.ReadTimeout("Loki stalled")

    monkeypatch.setattr(LokiPusher, "push", record)
    sink = LokiSink("http://127.0.0.1:9", batch_size=10)
    sink.emit({"job": "t"}, "a")
    sink.emit({"job": "t"}, "b")
    assert sink.flush(timeout_s=5)
    assert len(sent) == 2 and sent[0] == sent[1]


def test_the_push_path_and_basic_auth_are_the_settings(monkeypatch) -> None:
    """VictoriaLogs' Loki endpoint (whole lines, no JSON splitting) by default; a Loki of
    one's own on its own path; the basic auth on every push, never in the URL."""
    loki = FakeLoki([])
    access = LogStoreAccess(username="wlmon-logs", password="s3cret")
    for path in (None, LOKI_PUSH_PATH):
        pusher = LokiPusher(loki.url, access=access, **({"push_path": path} if path else {}))
        pusher.push([({"job": "t"}, 1, "x")])
        pusher.close()
    loki.httpd.shutdown()
    auth = "Basic " + base64.b64encode(b"wlmon-logs:s3cret").decode()
    assert loki.requests == [
        ("POST", "/insert/loki/api/v1/push?disable_message_parsing=1", auth),
        ("POST", "/loki/api/v1/push", auth),
    ]
    assert "s3cret" not in repr(access)


def test_towards_a_loki_a_timed_out_push_is_sent_again_without_asking() -> None:
    """Loki keeps one copy of a line it has (same stream, timestamp, line): the pusher asks
    only VictoriaLogs (whose /select it would otherwise call on a Loki, which has none)."""
    loki = FakeLoki([], hold=True)
    pusher = LokiPusher(loki.url, timeout_s=0.5, push_path=LOKI_PUSH_PATH)
    with pytest.raises(httpx.ReadTimeout):
        pusher.push([({"job": "t"}, 1, "x")])
    loki.release.set()
    pusher.push([({"job": "t"}, 1, "x")])
    pusher.close()
    loki.httpd.shutdown()
    assert [r[:2] for r in loki.requests] == [("POST", "/loki/api/v1/push")] * 2
