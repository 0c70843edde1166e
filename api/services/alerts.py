"""Alertmanager's notifications: every one stored; the log forwarder (api/services/
loki_forwarder.py) pushes them from there, behind the webhook's answer."""

from __future__ import annotations

from datetime import UTC, datetime

from prometheus_client import Counter

from alerts.dashboards import dashboard_url
from api.schemas import AlertmanagerPayload
from api.services.loki_forwarder import LokiForwarder
from api.store import Store

RECEIVED = Counter(
    "wlmon_api_notifications_received_total", "Alert notifications stored.", ["status"]
)


BUSY = Counter(
    "wlmon_api_webhook_database_busy_total",
    "Webhook calls whose insert found another writer holding the database (a worker storing"
    " an import or a run, the log forwarder marking), so they stored from a thread.",
)


def _rows(payload: AlertmanagerPayload, dashboards_base: str) -> list[dict]:
    """The alerts as stored: with Prometheus' link (generatorURL) and the dashboard's at
    the alert's time range and instance, as the other receivers' text has it
    (alerts/dashboards.py; provisioning/alertmanager/wlmon.tmpl)."""
    now = datetime.now(UTC)
    rows = []
    for a in payload.alerts:
        # Ends at year 1 means "not ended" in Alertmanager's encoding; a firing alert's
        # endsAt is only Alertmanager's resolve timeout, not an end.
        ended = a.endsAt if a.status == "resolved" and a.endsAt and a.endsAt.year > 1 else None
        link = dashboard_url(dashboards_base, a.labels, a.startsAt, ended, now)
        rows.append(
            {
                "status": a.status,
                "labels": a.labels,
                "annotations": a.annotations,
                "fingerprint": a.fingerprint,
                "starts_at": a.startsAt.isoformat(),
                "ends_at": a.endsAt.isoformat() if a.endsAt and a.endsAt.year > 1 else None,
                "generator_url": a.generatorURL,
                "dashboard_url": link or "",
            }
        )
    return rows


def _stored(forwarder: LokiForwarder, alerts: list[dict], ids: list[int]) -> dict:
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


def receive(
    store: Store, forwarder: LokiForwarder, payload: AlertmanagerPayload, dashboards_base: str
) -> dict:
    """Store all alerts of one notification and wake the forwarder; what was stored."""
    alerts = _rows(payload, dashboards_base)
    ids = store.add_notifications_waiting(payload.receiver, payload.groupKey, alerts)
    return _stored(forwarder, alerts, ids)


def receive_now(
    store: Store, forwarder: LokiForwarder, payload: AlertmanagerPayload, dashboards_base: str
) -> dict | None:
    """As `receive` if it can be done without waiting for the database (the event loop
    calls it); None: another writer holds it, call `receive` from a thread."""
    alerts = _rows(payload, dashboards_base)
    ids = store.try_add_notifications(payload.receiver, payload.groupKey, alerts)
    if ids is None:
        BUSY.inc()
        return None
    return _stored(forwarder, alerts, ids)
