"""Alertmanager's webhook: every notification stored and listed; forwarded to the log store behind
the answer."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, HTTPException, Query, Request, status
from fastapi.concurrency import run_in_threadpool
from pydantic import ValidationError

from api.deps import ForwarderDep, SettingsDep, StoreDep, WriteAuth
from api.schemas import AlertmanagerPayload, Notification, WebhookResult, refusals
from api.services import alerts

router = APIRouter(prefix="/alerts", tags=["alerts"])


@router.post(
    "/webhook",
    response_model=WebhookResult,
    dependencies=[WriteAuth],
    summary="Receive an Alertmanager notification",
    responses=refusals(
        {
            413: "the body is too large",
            422: "not an Alertmanager payload (the field named)",
            507: "the API's disk (or its database's size cap) is full: nothing stored",
        },
        write=True,
    ),
)
async def webhook(
    request: Request, store: StoreDep, settings: SettingsDep, forwarder: ForwarderDep
) -> dict:
    # The raw body, so its size is checked before it is parsed.
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
    # On the loop when the database is free (an insert: 0.2 ms; a hop to a thread costs
    # more); when a writer holds it, waiting for it happens in a thread. The log store gets it
    # later, from a thread.
    base = settings.dashboards_url
    answer = alerts.receive_now(store, forwarder, payload, base)
    if answer is None:
        answer = await run_in_threadpool(alerts.receive, store, forwarder, payload, base)
    request.app.state.storage.succeeded()
    return answer


@router.get("/notifications", response_model=list[Notification], summary="Stored notifications")
def notifications(
    store: StoreDep,
    status_: Annotated[Literal["firing", "resolved"] | None, Query(alias="status")] = None,
    alertname: str | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> list[dict]:
    return store.notifications(status=status_, alertname=alertname, limit=limit)
