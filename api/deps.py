"""Shared dependencies: settings, the store, the real-time run holder, the token check on
writes."""

from __future__ import annotations

import secrets
from typing import Annotated

from fastapi import Depends, Header, HTTPException, Request, status

from api.config import Settings, get_settings
from api.services.live import LiveRuns
from api.store import Store


def get_store(request: Request) -> Store:
    return request.app.state.store


def get_live(request: Request) -> LiveRuns:
    return request.app.state.live


def require_token(
    settings: Annotated[Settings, Depends(get_settings)],
    authorization: Annotated[str | None, Header()] = None,
) -> None:
    """Every write needs `Authorization: Bearer <WLMON_API_TOKEN>`."""
    if settings.token is None:
        raise HTTPException(
            status.HTTP_503_SERVICE_UNAVAILABLE,
            "writes are disabled: set WLMON_API_TOKEN for the API",
        )
    scheme, _, given = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not secrets.compare_digest(
        given, settings.token.get_secret_value()
    ):
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "missing or wrong bearer token",
            headers={"WWW-Authenticate": "Bearer"},
        )


StoreDep = Annotated[Store, Depends(get_store)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
LiveDep = Annotated[LiveRuns, Depends(get_live)]
WriteAuth = Depends(require_token)
