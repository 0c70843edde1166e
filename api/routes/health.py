"""Liveness of the API itself."""

from __future__ import annotations

from fastapi import APIRouter

from api.schemas import Health
from exporters import __version__

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=Health, summary="The API is up")
async def healthz() -> dict[str, str]:
    # On the event loop itself (no thread hop): it answers exactly when the loop is free.
    return {"status": "ok", "version": __version__}
