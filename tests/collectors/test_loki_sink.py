"""The buffered Loki sink against a small HTTP server that answers like Loki: lines Loki
refuses for good (400: too old, out of order) are dropped and counted, so they cannot block
the lines behind them; lines refused for now (5xx) are kept and sent later."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from exporters.sinks.loki import LokiSink


class FakeLoki:
    """Answers pushes with `answers` in turn, then 204. With `hold`, the first push waits
    (and sets `arrived`) until the test releases it, so lines can arrive meanwhile."""

    def __init__(self, answers: list[int], hold: bool = False) -> None:
        self.answers = answers
        self.received: list[str] = []
        self.arrived = threading.Event()
        self.release = threading.Event()
        if not hold:
            self.release.set()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
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
