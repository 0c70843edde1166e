"""A buffered pusher in Loki's push protocol: lines survive an outage of the log store and
arrive when it is back.

The protocol is Loki's (`POST .../loki/api/v1/push`, JSON streams); the store wlmon runs is
VictoriaLogs, which takes it on `/insert/loki/api/v1/push` (DEFAULT_PUSH_PATH). A user's own
Loki takes the same lines on LOKI_PUSH_PATH: one sink for both, the path a setting.

Lines queue in memory (bounded); a background thread pushes them in batches and keeps a
failed batch for the next attempt, backing off up to `max_backoff_s`. Only when the buffer
is full are the oldest lines dropped, and counted.

A batch leaves the buffer before it is pushed, so lines that arrive during the push (and
may push the oldest out of a full buffer) are never mistaken for the batch; a batch the
store should get again goes back in front of the buffer.
"""

from __future__ import annotations

import json
import logging
import ssl
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

import httpx

log = logging.getLogger(__name__)

# VictoriaLogs' Loki endpoint. disable_message_parsing: a line is stored whole as `_msg`
# (otherwise a JSON line is split into fields and `_msg` is left empty), so what a reader
# gets back is the line pushed, as from Loki; LogsQL's unpack_json/unpack_logfmt split it
# at query time. No _stream_fields: every Loki label becomes a stream field, as in Loki.
DEFAULT_PUSH_PATH = "/insert/loki/api/v1/push?disable_message_parsing=1"
LOKI_PUSH_PATH = "/loki/api/v1/push"


@dataclass(frozen=True)
class LogStoreAccess:
    """How a client reaches the log store: the CA its server certificate is signed by, basic
    auth (VictoriaLogs' -httpAuth.*), and optionally a client certificate and key (a user's
    own Loki behind mutual TLS). The password never appears in a repr, URL or log line."""

    ca_file: Path | None = None
    username: str = ""
    password: str = field(default="", repr=False)
    cert_file: Path | None = None
    key_file: Path | None = None

    def context(self) -> ssl.SSLContext:
        """An SSL context trusting the CA (else the system's), presenting the client
        certificate when one is set. Built once per client: loading certificates is the
        costly part of TLS set-up."""
        ctx = ssl.create_default_context(cafile=str(self.ca_file) if self.ca_file else None)
        if self.cert_file is not None:
            ctx.load_cert_chain(str(self.cert_file), str(self.key_file) if self.key_file else None)
        return ctx

    @property
    def auth(self) -> tuple[str, str] | None:
        return (self.username, self.password) if self.username else None

    def client(self, **kwargs) -> httpx.Client:
        """An HTTP client for the store (pushes, queries, readiness) with these credentials."""
        return httpx.Client(verify=self.context(), auth=self.auth, **kwargs)


def log_store_client(url: str, access: LogStoreAccess | None, timeout_s: float) -> httpx.Client:
    """One pooled client for the store at `url`. For plain http:// no certificates are loaded
    at all (a CA bundle costs milliseconds of CPU per context)."""
    plain = urlsplit(url).scheme == "http"
    if access is not None and not plain:
        return access.client(timeout=timeout_s)
    # verify=False builds a bare context (no CA bundle); http:// never uses it.
    return httpx.Client(timeout=timeout_s, verify=False, auth=access.auth if access else None)


def rfc3339_ns(ts: str) -> int:
    """VictoriaLogs' `_time` (RFC 3339, up to 9 fraction digits, Z) as Unix nanoseconds."""
    whole, _, frac = ts.rstrip("Z").partition(".")
    seconds = int(datetime.fromisoformat(whole).replace(tzinfo=UTC).timestamp())
    return seconds * 1_000_000_000 + int((frac + "000000000")[:9])


def _rfc3339(ns: int) -> str:
    seconds, rest = divmod(ns, 1_000_000_000)
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S") + f".{rest:09d}Z"


class LokiPusher:
    """The Loki push protocol through one pooled HTTP client (kept-alive connections).

    A client per push cost 16.8 ms of CPU, nearly all of it `ssl.create_default_context`
    loading the CA bundle, even for plain http://: at 200 webhooks/s that was a core. So one
    client per sink (its TLS context and connections reused), and for plain HTTP one that
    loads no certificates at all.

    Loki keeps one copy of an entry it already has (same stream, timestamp and line);
    VictoriaLogs keeps every copy. So towards VictoriaLogs (a push path under /insert/), a
    push whose outcome is unknown (it timed out or the connection broke after the request
    went: a stalled store may still take it) makes the next push of those lines ask the
    store first which of them it has, and send only the others.
    """

    def __init__(
        self,
        url: str,
        timeout_s: float = 5.0,
        access: LogStoreAccess | None = None,
        push_path: str = DEFAULT_PUSH_PATH,
        settle_s: float = 2.0,
    ) -> None:
        self.base = url.rstrip("/")
        self.endpoint = self.base + "/" + push_path.lstrip("/")
        self._client = log_store_client(self.endpoint, access, timeout_s)
        # What VictoriaLogs takes is searchable within a second (its docs, "Forced flush");
        # a request the store held while stalled is taken within milliseconds of its thaw.
        self.settle_s = settle_s
        self._verify = urlsplit(self.endpoint).path.startswith("/insert/")
        self._uncertain = False
        self.skipped = 0  # lines not sent again: the store had them from an unknown push

    def push(self, lines: list[tuple[dict[str, str], int, str]]) -> None:
        """One request: (labels, timestamp ns, line) grouped into streams. Raises
        httpx.HTTPError when the store does not take them.

        The caller gives each line the same timestamp again when it pushes it again, so a
        line is known by (labels, timestamp, line) in Loki and VictoriaLogs alike.
        """
        if self._uncertain and self._verify:
            lines = self._not_stored(lines)
            self._uncertain = False
            if not lines:
                return
        streams: dict[tuple, list[list[str]]] = {}
        for labels, ts_ns, line in lines:
            streams.setdefault(tuple(sorted(labels.items())), []).append([str(ts_ns), line])
        body = {"streams": [{"stream": dict(k), "values": v} for k, v in streams.items()]}
        try:
            r = self._client.post(
                self.endpoint,
                content=json.dumps(body),
                headers={"Content-Type": "application/json"},
            )
        except httpx.TransportError as exc:
            # Sent, perhaps taken: ask before sending again. (Not when no connection was made.)
            if not isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout)):
                self._uncertain = True
            raise
        r.raise_for_status()

    def _not_stored(
        self, lines: list[tuple[dict[str, str], int, str]]
    ) -> list[tuple[dict[str, str], int, str]]:
        """Those of `lines` the store does not have. Raises httpx.HTTPError while it does not
        answer (the caller keeps the batch and asks again later)."""
        self._client.get(self.base + "/internal/force_flush").raise_for_status()
        # Answering again: what it held from before the stall is being taken now.
        time.sleep(self.settle_s)
        self._client.get(self.base + "/internal/force_flush").raise_for_status()
        names = sorted({k for labels, _, _ in lines for k in labels})
        first = min(ts for _, ts, _ in lines)
        last = max(ts for _, ts, _ in lines)
        # Only the batch's own streams, and no row limit: other writers' lines in the same
        # seconds (31 instances' ST05 summaries) must not crowd out the ones asked about.
        streams = sorted({tuple(sorted(labels.items())) for labels, _, _ in lines})
        selector = " OR ".join(
            "{" + ",".join(f"{k}={json.dumps(v)}" for k, v in stream) + "}" for stream in streams
        )
        r = self._client.post(
            self.base + "/select/logsql/query",
            data={
                "query": f"_time:[{_rfc3339(first)}, {_rfc3339(last)}] ({selector}) | fields "
                + ", ".join(["_time", "_msg", *(_quoted(n) for n in names)]),
            },
        )
        r.raise_for_status()
        have = set()
        for row in r.text.splitlines():
            if row.strip():
                doc = json.loads(row)
                labels = tuple(sorted((n, doc[n]) for n in names if doc.get(n, "") != ""))
                have.add((labels, rfc3339_ns(doc["_time"]), doc.get("_msg", "")))
        left = [x for x in lines if (tuple(sorted(x[0].items())), x[1], x[2]) not in have]
        if len(left) < len(lines):
            self.skipped += len(lines) - len(left)
            log.info(
                "log store already had %d of %d line(s) from a push that timed out",
                len(lines) - len(left),
                len(lines),
            )
        return left

    def close(self) -> None:
        self._client.close()


def _quoted(name: str) -> str:
    """A field name as LogsQL takes it (quoted: a label may be named like a keyword)."""
    return json.dumps(name)


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
        access: LogStoreAccess | None = None,
        push_path: str = DEFAULT_PUSH_PATH,
    ) -> None:
        self.url = url
        self.flush_interval_s = flush_interval_s
        self.batch_size = batch_size
        self.max_backoff_s = max_backoff_s
        self.timeout_s = timeout_s
        self.max_buffer = max_buffer
        self._buffer: deque[LogLine] = deque(maxlen=max_buffer)
        self._lock = threading.Lock()
        # One push at a time (the thread and flush()), so batches reach the store in order.
        self._push_lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="wlmon-logpush", daemon=True)
        self._pusher = LokiPusher(url, timeout_s, access, push_path)
        self._last_ts = 0
        self.sent = 0
        self.dropped = 0
        self.failures = 0

    def start(self) -> LokiSink:
        self._thread.start()
        return self

    def emit(self, labels: dict[str, str], line: str, ts_ns: int | None = None) -> None:
        with self._lock:
            # Loki wants increasing timestamps within a stream, and a line is known by its
            # timestamp when a push is retried: keep ours strictly increasing.
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
                if not retryable(exc.response.status_code):
                    # The store took the lines it could and says the rest will never do (too
                    # old, outside retention): retrying would block every later line.
                    log.warning(
                        "The log store refused %d line(s), dropping them: %s", len(batch), exc
                    )
                    with self._lock:
                        self.dropped += len(batch)
                    return True
                log.warning("Log push of %d line(s) failed, will retry: %s", len(batch), exc)
                self._put_back(batch)
                return False
            except httpx.HTTPError as exc:
                self.failures += 1
                log.warning("Log push of %d line(s) failed, will retry: %s", len(batch), exc)
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


# Refusals of the request, not of the lines: credentials or a path to fix (VictoriaLogs
# answers 401 without basic auth), a store busy or down. The lines wait for the fix.
RETRY_STATUSES = frozenset({401, 403, 404, 407, 429})


def retryable(status: int) -> bool:
    """Whether a refused push is to be sent again (else its lines are refused for good:
    malformed, too old, outside retention)."""
    return status in RETRY_STATUSES or status >= 500
