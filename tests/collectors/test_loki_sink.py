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
    def __init__(self, answers: list[int]) -> None:
        self.answers = answers
        self.received: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
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
