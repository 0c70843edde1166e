"""Liveness of the API itself."""

from __future__ import annotations

from fastapi import APIRouter

from api.schemas import Health
from exporters import __version__

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=Health, summary="The API is up")
def healthz() -> dict[str, str]:
    return {"status": "ok", "version": __version__}
