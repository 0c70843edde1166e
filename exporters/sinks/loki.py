"""A buffered Loki pusher: lines survive an outage of Loki and arrive when it is back.

Lines queue in memory (bounded); a background thread pushes them in batches through
Loki's push API and keeps a failed batch for the next attempt, backing off up to
`max_backoff_s`. Only when the buffer is full are the oldest lines dropped, and counted.

A batch leaves the buffer before it is pushed, so lines that arrive during the push (and
may push the oldest out of a full buffer) are never mistaken for the batch; a batch Loki
should get again goes back in front of the buffer.
"""

from __future__ import annotations

import json
import logging
import ssl
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LokiTLS:
    """Loki's mutual TLS as a client sees it: the CA that signed Loki's certificate and this
    client's own certificate and key (PEM files; wlmon/stack/pki.py makes them)."""

    ca_file: Path
    cert_file: Path
    key_file: Path

    def context(self) -> ssl.SSLContext:
        """An SSL context trusting only the CA and presenting the client certificate. Built
        once per client: loading certificates is the costly part of TLS set-up."""
        ctx = ssl.create_default_context(cafile=str(self.ca_file))
        ctx.load_cert_chain(str(self.cert_file), str(self.key_file))
        return ctx

    def client(self, **kwargs) -> httpx.Client:
        """An HTTP client for Loki (queries, readiness) presenting this certificate."""
        return httpx.Client(verify=self.context(), **kwargs)


def loki_client(url: str, tls: LokiTLS | None, timeout_s: float) -> httpx.Client:
    """One pooled client for a Loki at `url`: with `tls` it presents the client certificate
    and trusts only Loki's CA; for plain http:// it loads no certificates at all (a CA bundle
    costs milliseconds of CPU per context)."""
    if tls is not None:
        return tls.client(timeout=timeout_s)
    plain = urlsplit(url).scheme == "http"
    # verify=False builds a bare context (no CA bundle); http:// never uses it.
    return httpx.Client(timeout=timeout_s, verify=not plain)


class LokiPusher:
    """Loki's push API through one pooled HTTP client (kept-alive connections).

    A client per push cost 16.8 ms of CPU, nearly all of it `ssl.create_default_context`
    loading the CA bundle, even for plain http://: at 200 webhooks/s that was a core. So one
    client per sink (its TLS context and connections reused), and for plain HTTP one that
    loads no certificates at all.
    """

    def __init__(self, url: str, timeout_s: float = 5.0, tls: LokiTLS | None = None) -> None:
        self.endpoint = url.rstrip("/") + "/loki/api/v1/push"
        self._client = loki_client(self.endpoint, tls, timeout_s)

    def push(self, lines: list[tuple[dict[str, str], int, str]]) -> None:
        """One request: (labels, timestamp ns, line) grouped into streams. Raises
        httpx.HTTPError when Loki does not take them.

        Loki keeps one copy of an entry whose stream, timestamp and line it already has, so
        a batch sent again after a push that timed out but landed (a stalled Loki) adds no
        duplicates, as long as the caller gives each line the same timestamp again.
        """
        streams: dict[tuple, list[list[str]]] = {}
        for labels, ts_ns, line in lines:
            streams.setdefault(tuple(sorted(labels.items())), []).append([str(ts_ns), line])
        body = {"streams": [{"stream": dict(k), "values": v} for k, v in streams.items()]}
        r = self._client.post(
            self.endpoint, content=json.dumps(body), headers={"Content-Type": "application/json"}
        )
        r.raise_for_status()

    def close(self) -> None:
        self._client.close()


@dataclass(frozen=True)
class LogLine:
    labels: tuple[tuple[str, str], ...]
    ts_ns: int
    line: str


class LokiSink:
    def __init__(
        self,
        url: str,
        *,
        flush_interval_s: float = 1.0,
        batch_size: int = 5000,
        max_buffer: int = 200_000,
        max_backoff_s: float = 10.0,
        timeout_s: float = 5.0,
        tls: LokiTLS | None = None,
    ) -> None:
        self.url = url
        self.flush_interval_s = flush_interval_s
        self.batch_size = batch_size
        self.max_backoff_s = max_backoff_s
        self.timeout_s = timeout_s
        self.max_buffer = max_buffer
        self._buffer: deque[LogLine] = deque(maxlen=max_buffer)
        self._lock = threading.Lock()
        # One push at a time (the thread and flush()), so batches reach Loki in order.
        self._push_lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="wlmon-loki", daemon=True)
        self._pusher = LokiPusher(url, timeout_s, tls)
        self._last_ts = 0
        self.sent = 0
        self.dropped = 0
        self.failures = 0

    def start(self) -> LokiSink:
        self._thread.start()
        return self

    def emit(self, labels: dict[str, str], line: str, ts_ns: int | None = None) -> None:
        with self._lock:
            # Loki wants increasing timestamps within a stream; keep ours strictly so.
            ts = max(ts_ns or time.time_ns(), self._last_ts + 1)
            self._last_ts = ts
            if len(self._buffer) == self.max_buffer:
                self.dropped += 1
            self._buffer.append(LogLine(tuple(sorted(labels.items())), ts, line))

    @property
    def pending(self) -> int:
        """Lines waiting in the buffer; a batch in flight is not among them."""
        with self._lock:
            return len(self._buffer)

    def flush(self, timeout_s: float = 10.0) -> bool:
        """Push everything now; True when the buffer is empty and no push is in flight."""
        deadline = time.monotonic() + timeout_s
        while True:
            # Each call first waits for a push in flight, which may put its batch back.
            pushed = self._push_once()
            if pushed and not self.pending:
                return True
            if time.monotonic() >= deadline:
                return False
            if not pushed:
                time.sleep(0.2)

    def stop(self, timeout_s: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout_s)
        self.flush(timeout_s)
        self._pusher.close()

    def _run(self) -> None:
        backoff = self.flush_interval_s
        while not self._stop.is_set():
            self._wake.wait(backoff)
            self._wake.clear()
            if self._stop.is_set():
                return
            if not self.pending:
                backoff = self.flush_interval_s
                continue
            backoff = (
                self.flush_interval_s if self._push_once() else min(backoff * 2, self.max_backoff_s)
            )

    def _push_once(self) -> bool:
        with self._push_lock:
            with self._lock:
                n = min(self.batch_size, len(self._buffer))
                batch = [self._buffer.popleft() for _ in range(n)]
            if not batch:
                return True
            try:
                # A batch put back keeps its lines' timestamps: pushed again, it is idempotent.
                self._pusher.push([(dict(item.labels), item.ts_ns, item.line) for item in batch])
            except httpx.HTTPStatusError as exc:
                self.failures += 1
                if not _retryable(exc.response.status_code):
                    # Loki took the lines it could and says the rest will never do (too old,
                    # too far out of order): retrying would block every later line.
                    log.warning("Loki refused %d line(s), dropping them: %s", len(batch), exc)
                    with self._lock:
                        self.dropped += len(batch)
                    return True
                log.warning("Loki push of %d line(s) failed, will retry: %s", len(batch), exc)
                self._put_back(batch)
                return False
            except httpx.HTTPError as exc:
                self.failures += 1
                log.warning("Loki push of %d line(s) failed, will retry: %s", len(batch), exc)
                self._put_back(batch)
                return False
            self.sent += len(batch)
            return True

    def _put_back(self, batch: list[LogLine]) -> None:
        """The batch in front of the buffer again, as its oldest lines: if lines arrived
        meanwhile and it no longer fits, its own oldest go (and are counted), as they would
        have from a full buffer."""
        with self._lock:
            overflow = len(batch) + len(self._buffer) - self.max_buffer
            if overflow > 0:
                self.dropped += overflow
                batch = batch[overflow:]
            self._buffer.extendleft(reversed(batch))


def _retryable(status: int) -> bool:
    return status == 429 or status >= 500
