"""How the API is served: uvicorn with a bound on slow request headers.

uvicorn 0.54 has no header-read timeout: its keep-alive timer stops at the first byte, so a
client that sends half a request line holds a connection (and a file descriptor) forever,
and a few hundred such clients starve the API (slowloris). Its documented extension point
is the `http` setting, which takes a protocol class: this one subclasses the httptools
protocol (the one uvicorn picks, httptools being pinned) and closes a connection whose
request headers are not complete within `header_timeout_s` of the connection opening or
of the previous response ending. Bodies are not bounded here: an upload may be slow."""

from __future__ import annotations

import asyncio
import logging

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

log = logging.getLogger(__name__)

# nginx's client_header_timeout is 60 s; an API on loopback and a LAN needs far less, and a
# real client sends its headers in one packet.
HEADER_TIMEOUT_S = 10.0


class HeaderTimeoutProtocol(HttpToolsProtocol):
    """httptools, closing a connection whose request headers take too long."""

    header_timeout_s: float = HEADER_TIMEOUT_S
    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_timer()
        super().connection_lost(exc)

    def on_headers_complete(self) -> None:
        self._disarm_header_timer()
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # The next request on this keep-alive connection gets the same bound.
        if not self.transport.is_closing():
            self._arm_header_timer()

    def _arm_header_timer(self) -> None:
        self._disarm_header_timer()
        self._header_timer = self.loop.call_later(self.header_timeout_s, self._headers_too_slow)

    def _disarm_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            log.info(
                "closing %s: request headers not complete within %.1f s",
                self.client,
                self.header_timeout_s,
            )
            self.transport.close()


def with_header_timeout(seconds: float) -> type[HeaderTimeoutProtocol]:
    """The protocol class for uvicorn's `http` setting, with this bound."""
    if seconds <= 0:
        raise ValueError(f"header timeout: {seconds} s is not positive")
    return type("HeaderTimeoutProtocol", (HeaderTimeoutProtocol,), {"header_timeout_s": seconds})


def server_config(host: str, port: int, header_timeout_s: float) -> uvicorn.Config:
    """The uvicorn settings `wlmon api` serves with."""
    return uvicorn.Config(
        "api.main:create_app",
        factory=True,
        host=host,
        port=port,
        log_level="warning",
        http=with_header_timeout(header_timeout_s),
    )
