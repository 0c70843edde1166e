"""Liveness of the API itself."""

from __future__ import annotations

from fastapi import APIRouter, Request

from api.schemas import Health
from exporters import __version__

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=Health, summary="The API is up, and whether degraded")
async def healthz(request: Request) -> dict:
    # On the event loop itself (no thread hop): it answers exactly when the loop is free.
    # Degraded still answers 200: the API is up (`wlmon up` waits for 200), yet says why
    # it cannot store what it is sent. (One statfs call: microseconds.)
    reasons = request.app.state.storage.reasons()
    return {"status": "degraded" if reasons else "ok", "version": __version__, "reasons": reasons}
