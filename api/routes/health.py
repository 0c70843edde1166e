"""Liveness of the API itself."""

from __future__ import annotations

from fastapi import APIRouter

from exporters import __version__

router = APIRouter(tags=["health"])


@router.get("/healthz", summary="The API is up")
def healthz() -> dict[str, str]:
    return {"status": "ok", "version": __version__}
