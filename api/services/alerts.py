"""Alertmanager's notifications: every one stored, and forwarded to Loki (earlier failures
are retried with the next notification)."""

from __future__ import annotations

import json
import logging
import time

import httpx
from prometheus_client import Counter

from api.config import Settings
from api.schemas import AlertmanagerPayload
from api.store import Store
from exporters.sinks.loki import push as push_to_loki

log = logging.getLogger(__name__)

RECEIVED = Counter(
    "wlmon_api_notifications_received_total", "Alert notifications stored.", ["status"]
)
LOKI_FAILURES = Counter(
    "wlmon_api_loki_forward_failures_total", "Failed pushes of notifications to Loki."
)
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
)
LOKI_ANNOTATIONS = ("summary", "description", "diagnosis")


def receive(store: Store, settings: Settings, payload: AlertmanagerPayload) -> dict:
    """Store all alerts of one notification, then forward what Loki has not got yet."""
    # Ends at year 1 means "not ended" in Alertmanager's encoding.
    alerts = [
        {
            "status": a.status,
            "labels": a.labels,
            "annotations": a.annotations,
            "fingerprint": a.fingerprint,
            "starts_at": a.startsAt.isoformat(),
            "ends_at": a.endsAt.isoformat() if a.endsAt and a.endsAt.year > 1 else None,
        }
        for a in payload.alerts
    ]
    ids = store.add_notifications(payload.receiver, payload.groupKey, alerts)
    for a in alerts:
        RECEIVED.labels(a["status"]).inc()
    return {"stored": len(ids), "ids": ids, "forwarded_to_loki": forward_pending(store, settings)}


def forward_pending(store: Store, settings: Settings) -> int:
    """Push every notification Loki has not got yet; how many went."""
    if not settings.loki_url:
        return 0
    pending = list(reversed(store.notifications(unforwarded=True, limit=1000)))
    if not pending:
        return 0
    now = time.time_ns()
    lines = []
    for k, n in enumerate(pending):
        labels = {
            "source": "alertmanager",
            "sid": n["sid"] or settings.sid,
            "severity": n["severity"],
            "status": n["status"],
        }
        fields = {key: n[key] for key in LOKI_FIELDS}
        fields |= {key: n["annotations"].get(key, "") for key in LOKI_ANNOTATIONS}
        lines.append((labels, now + k, json.dumps(fields, sort_keys=True)))
    try:
        push_to_loki(settings.loki_url, lines, timeout_s=3.0)
    except httpx.HTTPError as exc:
        LOKI_FAILURES.inc()
        log.warning("forwarding %d notification(s) to Loki failed: %s", len(pending), exc)
        return 0
    store.mark_forwarded(n["id"] for n in pending)
    return len(pending)
