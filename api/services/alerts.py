"""Alertmanager's notifications: every one stored; the Loki forwarder (api/services/
loki_forwarder.py) pushes them from there, behind the webhook's answer."""

from __future__ import annotations

from prometheus_client import Counter

from api.schemas import AlertmanagerPayload
from api.services.loki_forwarder import LokiForwarder
from api.store import Store

RECEIVED = Counter(
    "wlmon_api_notifications_received_total", "Alert notifications stored.", ["status"]
)


def receive(store: Store, forwarder: LokiForwarder, payload: AlertmanagerPayload) -> dict:
    """Store all alerts of one notification and wake the forwarder; what was stored."""
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
    forwarder.notify()
    return {
        "stored": len(ids),
        "ids": ids,
        # Nothing goes to Loki during the call any more; see queued_for_loki.
        "forwarded_to_loki": 0,
        "queued_for_loki": len(ids) if forwarder.enabled else 0,
    }
