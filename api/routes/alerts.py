"""Alertmanager's webhook: every notification stored, listed, and forwarded to Loki."""

from __future__ import annotations

import json
import logging
import time
from datetime import datetime
from typing import Annotated, Literal

import httpx
from fastapi import APIRouter, HTTPException, Query, Request, status
from prometheus_client import Counter
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from api.deps import SettingsDep, StoreDep, WriteAuth
from exporters.sinks.loki import push as push_to_loki

log = logging.getLogger(__name__)
router = APIRouter(prefix="/alerts", tags=["alerts"])

RECEIVED = Counter(
    "wlmon_api_notifications_received_total", "Alert notifications stored.", ["status"]
)
LOKI_FAILURES = Counter(
    "wlmon_api_loki_forward_failures_total", "Failed pushes of notifications to Loki."
)


class AlertmanagerAlert(BaseModel):
    model_config = ConfigDict(extra="allow")

    status: Literal["firing", "resolved"]
    labels: dict[str, str]
    annotations: dict[str, str] = Field(default_factory=dict)
    startsAt: datetime
    endsAt: datetime | None = None
    generatorURL: str = ""
    fingerprint: str = ""


class AlertmanagerPayload(BaseModel):
    """Alertmanager webhook payload, version 4."""

    model_config = ConfigDict(extra="allow")

    version: str
    groupKey: str
    status: Literal["firing", "resolved"]
    receiver: str
    groupLabels: dict[str, str] = Field(default_factory=dict)
    commonLabels: dict[str, str] = Field(default_factory=dict)
    commonAnnotations: dict[str, str] = Field(default_factory=dict)
    externalURL: str = ""
    alerts: list[AlertmanagerAlert] = Field(min_length=1, max_length=1000)


class StoredNotification(BaseModel):
    id: int
    received_at: str
    receiver: str
    group_key: str
    status: str
    alertname: str
    severity: str
    sid: str
    sap_instance: str
    fingerprint: str
    starts_at: str
    ends_at: str | None
    labels: dict[str, str]
    annotations: dict[str, str]
    forwarded_to_loki: bool


class WebhookResult(BaseModel):
    stored: int
    ids: list[int]
    forwarded_to_loki: int


@router.post(
    "/webhook",
    response_model=WebhookResult,
    dependencies=[WriteAuth],
    summary="Receive an Alertmanager notification",
)
async def webhook(request: Request, store: StoreDep, settings: SettingsDep) -> WebhookResult:
    body = await request.body()
    if len(body) > settings.max_body_bytes:
        raise HTTPException(
            status.HTTP_413_CONTENT_TOO_LARGE, f"body over {settings.max_body_bytes} bytes"
        )
    try:
        payload = AlertmanagerPayload.model_validate_json(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(body)"
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT, f"{where}: {first['msg']}"
        ) from exc
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
    forwarded = _forward_pending(store, settings)
    return WebhookResult(stored=len(ids), ids=ids, forwarded_to_loki=forwarded)


def _forward_pending(store, settings) -> int:
    """Push every notification Loki has not got yet (earlier failures are retried here)."""
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
        fields = {
            key: n[key]
            for key in (
                "alertname",
                "sap_instance",
                "status",
                "severity",
                "starts_at",
                "ends_at",
                "receiver",
                "id",
            )
        }
        fields |= {
            key: n["annotations"].get(key, "") for key in ("summary", "description", "diagnosis")
        }
        lines.append((labels, now + k, json.dumps(fields, sort_keys=True)))
    try:
        push_to_loki(settings.loki_url, lines, timeout_s=3.0)
    except httpx.HTTPError as exc:
        LOKI_FAILURES.inc()
        log.warning("forwarding %d notification(s) to Loki failed: %s", len(pending), exc)
        return 0
    store.mark_forwarded(n["id"] for n in pending)
    return len(pending)


@router.get(
    "/notifications", response_model=list[StoredNotification], summary="Stored notifications"
)
def notifications(
    store: StoreDep,
    status_: Annotated[Literal["firing", "resolved"] | None, Query(alias="status")] = None,
    alertname: str | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> list[dict]:
    return store.notifications(status=status_, alertname=alertname, limit=limit)
