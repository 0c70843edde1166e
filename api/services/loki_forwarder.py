"""Stored notifications on their way to the log store (Loki's push protocol: VictoriaLogs, or a
user's Loki), behind the webhook: a thread pushes what the store has not got yet in batches
and marks it, so Alertmanager's call never waits for the store (a stopped or frozen store
used to hold every call for the push's timeout).

The API's database is the queue: a notification is marked forwarded only once the log store
took it, so what a failed push, a refusal or a restart of the API leaves behind goes with a
later push. After a failure the thread waits, doubling up to `loki_max_backoff_s`.
"""

from __future__ import annotations

import json
import logging
import threading
from datetime import datetime

import httpx
from prometheus_client import Counter

from api.config import Settings
from api.store import Store
from exporters.sinks.loki import LokiPusher, retryable

log = logging.getLogger(__name__)

LOKI_FAILURES = Counter(
    "wlmon_api_loki_forward_failures_total", "Failed pushes of notifications to Loki."
)
LOKI_FORWARDED = Counter("wlmon_api_loki_forwarded_total", "Notifications Loki took from the API.")
LOKI_PUSHES = Counter("wlmon_api_loki_pushes_total", "Pushes of notifications to Loki tried.")
# What a Loki line of a notification carries besides its labels.
LOKI_FIELDS = (
    "alertname",
    "sap_instance",
    "status",
    "severity",
    "starts_at",
    "ends_at",
    "receiver",
    "id",
    "generator_url",
    "dashboard_url",
)
LOKI_ANNOTATIONS = ("summary", "description", "diagnosis", "runbook_url")
# Without news the thread still looks every so often (what an earlier API left behind).
IDLE_S = 60.0
FIRST_BACKOFF_S = 1.0


def line_timestamp_ns(notification: dict) -> int:
    """A notification's timestamp in the log store, a function of the notification alone:
    when a push timed out but the store took it (a stalled store), the retry sends the same
    entries, which Loki keeps once and VictoriaLogs is asked about first (LokiPusher). (The
    time of the push, as before, made each retry new lines: 60 notifications became 227
    lines.) Its receipt time, and its id in the last nanoseconds
    so two notifications of one microsecond stay two entries."""
    received = datetime.fromisoformat(notification["received_at"])
    micros = round(received.timestamp() * 1_000_000)
    return micros * 1000 + notification["id"] % 1000


def push_pending(store: Store, settings: Settings, pusher: LokiPusher) -> tuple[int, bool]:
    """Push one batch of what Loki has not got yet, oldest first; (how many went, whether
    more wait). Raises httpx.HTTPError when Loki does not take them."""
    batch = settings.loki_batch
    pending = list(reversed(store.notifications(unforwarded=True, limit=batch + 1)))[:batch]
    if not pending:
        return 0, False
    lines = []
    for n in pending:
        labels = {
            "source": "alertmanager",
            "sid": n["sid"] or settings.sid,
            "severity": n["severity"],
            "status": n["status"],
        }
        fields = {key: n[key] for key in LOKI_FIELDS}
        fields |= {key: n["annotations"].get(key, "") for key in LOKI_ANNOTATIONS}
        lines.append((labels, line_timestamp_ns(n), json.dumps(fields, sort_keys=True)))
    LOKI_PUSHES.inc()
    try:
        pusher.push(lines)
    except httpx.HTTPStatusError as exc:
        code = exc.response.status_code
        if retryable(code):
            raise
        # Loki's final word (malformed, too old): pushing them again would block every
        # later notification behind them. They stay in the API's store.
        log.warning("the log store refused %d notification(s) for good: %s", len(pending), exc)
    store.mark_forwarded(n["id"] for n in pending)
    LOKI_FORWARDED.inc(len(pending))
    return len(pending), len(pending) == batch


class LokiForwarder:
    """One thread per app, started by the first `notify()` when a Loki URL is set."""

    def __init__(self, store: Store, settings: Settings) -> None:
        self.store = store
        self.settings = settings
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    @property
    def enabled(self) -> bool:
        return bool(self.settings.logs_url)

    def notify(self) -> None:
        """New notifications are stored: push them soon."""
        if not self.enabled:
            return
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._stop.clear()
                self._thread = threading.Thread(
                    target=self._run, name="wlmon-api-loki", daemon=True
                )
                self._thread.start()
        self._wake.set()

    def stop(self, timeout_s: float = 5.0) -> None:
        with self._lock:
            thread, self._thread = self._thread, None
        self._stop.set()
        self._wake.set()
        if thread is not None:
            thread.join(timeout_s)

    def _run(self) -> None:
        assert self.settings.logs_url
        try:
            pusher = LokiPusher(
                self.settings.logs_url,
                timeout_s=3.0,
                access=self.settings.logs_access,
                push_path=self.settings.logs_push_path,
            )
        except (OSError, ValueError) as exc:  # a certificate or key that does not load
            LOKI_FAILURES.inc()
            log.error("cannot forward notifications to the log store: its TLS files: %s", exc)
            return
        try:
            self._loop(pusher)
        finally:
            pusher.close()

    def _loop(self, pusher: LokiPusher) -> None:
        backoff = 0.0
        while not self._stop.is_set():
            # Cleared before the push: news during the push wakes the wait below at once.
            self._wake.clear()
            try:
                _, more = push_pending(self.store, self.settings, pusher)
                backoff = 0.0
            except httpx.HTTPError as exc:
                LOKI_FAILURES.inc()
                backoff = min(max(2 * backoff, FIRST_BACKOFF_S), self.settings.loki_max_backoff_s)
                log.warning(
                    "forwarding notifications to the log store failed (%s); next try in %g s",
                    exc,
                    backoff,
                )
                more = False
            if more and not backoff:
                continue
            # A failure waits out its backoff even when news comes; otherwise news wakes it,
            # and what else comes within the linger goes in the same push.
            if backoff:
                self._stop.wait(backoff)
            elif self._wake.wait(IDLE_S) and self.settings.loki_linger_s:
                self._stop.wait(self.settings.loki_linger_s)
