"""The API server closes a connection whose request headers are too slow (slowloris), on a
real socket on 127.0.0.1; stock uvicorn, the control, keeps it open."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import uvicorn

from api.config import Settings
from api.main import create_app
from api.serving import HEADER_TIMEOUT_S, HeaderTimeoutProtocol, server_config, with_header_timeout

BOUND_S = 0.5


@contextmanager
def _serving(tmp_path, http) -> Iterator[int]:
    app = create_app(Settings(db_path=tmp_path / "db.sqlite", token="t"))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(app, http=http, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])))
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            assert time.monotonic() < deadline, "the API did not start in 10 s"
            time.sleep(0.02)
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def _seconds_until_closed(port: int, sent: bytes, wait_s: float) -> float | None:
    """Send `sent`, then wait up to `wait_s` for the server to close; None if it did not."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait_s) as c:
        start = time.monotonic()
        c.sendall(sent)
        try:
            while c.recv(4096):
                pass
        except TimeoutError:
            return None
        return time.monotonic() - start


def test_half_a_request_line_is_closed_within_the_bound(tmp_path) -> None:
    with _serving(tmp_path, with_header_timeout(BOUND_S)) as port:
        took = _seconds_until_closed(port, b"GET /hea", wait_s=5)
        assert took is not None, "the server kept a half request line open for 5 s"
        assert BOUND_S * 0.8 <= took <= BOUND_S + 1.5
        # Headers sent in one go are served, and the next request on the same connection
        # gets the bound again after the first response.
        with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
            c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert c.recv(4096).startswith(b"HTTP/1.1 200")
            c.sendall(b"GET /heal")
            start = time.monotonic()
            while c.recv(4096):
                pass
            assert time.monotonic() - start <= BOUND_S + 1.5


def test_stock_uvicorn_keeps_it_open(tmp_path) -> None:
    # The control: without the guard the same half line is still open after 3x the bound.
    with _serving(tmp_path, "httptools") as port:
        assert _seconds_until_closed(port, b"GET /hea", wait_s=BOUND_S * 3) is None


def test_wlmon_api_serves_with_the_guard() -> None:
    config = server_config("127.0.0.1", 8000, HEADER_TIMEOUT_S)
    assert issubclass(config.http, HeaderTimeoutProtocol)
    assert config.http.header_timeout_s == HEADER_TIMEOUT_S
    with pytest.raises(ValueError, match="not positive"):
        with_header_timeout(0)
