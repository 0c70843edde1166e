"""Retention of the API's database: ended runs and notifications older than their settings
go, so the file stops growing (637 MB after the test suite, issue 26). Runs in progress and
notifications the log store has not taken yet are never pruned."""

from __future__ import annotations

import logging
import threading
from datetime import UTC, datetime, timedelta

from prometheus_client import Counter

from api.config import Settings
from api.store import Store, is_full, limit_met

log = logging.getLogger(__name__)

PRUNED = Counter(
    "wlmon_api_retention_pruned_total", "Rows removed by the API's retention.", ["kind"]
)


def prune(store: Store, settings: Settings, now: datetime | None = None) -> dict[str, int]:
    """One pass; how many runs and notifications went."""
    now = now or datetime.now(UTC)
    gone = {"runs": 0, "notifications": 0}
    if settings.run_retention_days > 0:
        gone["runs"] = store.runs.prune(now - timedelta(days=settings.run_retention_days))
    if settings.notification_retention_days > 0:
        gone["notifications"] = store.prune_notifications(
            now - timedelta(days=settings.notification_retention_days)
        )
    for kind, n in gone.items():
        PRUNED.labels(kind).inc(n)
    if any(gone.values()):
        log.info("retention removed %(runs)d run(s) and %(notifications)d notification(s)", gone)
    return gone


def prune_until(store: Store, settings: Settings, stop: threading.Event) -> None:
    """At start, then every `retention_interval_s`, until `stop` (the API's thread)."""
    while True:
        try:
            prune(store, settings)
        except Exception as exc:  # a full disk, a locked file: the next round tries again
            log.warning("retention pass failed: %s", exc)
            if is_full(exc):  # a refused write, counted as the requests' are
                store.failures.record(limit_met(store.path, store.max_bytes, exc))
        if stop.wait(settings.retention_interval_s):
            return
