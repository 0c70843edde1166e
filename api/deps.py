"""Shared dependencies: settings, the store, the real-time run holder, the worker pool, the
report cache, the log forwarder, the token check on writes.

All `async def`: they only look things up, and FastAPI runs a plain `def` dependency in the
thread pool, a hop each, several per request."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Annotated

from fastapi import Depends, Header, HTTPException, Request, status

from api.config import Settings
from api.services.live import LiveRuns
from api.services.loki_forwarder import LokiForwarder
from api.services.report_cache import ReportCache
from api.services.workers import WorkerPool
from api.store import Store
from exporters.thresholds import Thresholds


async def get_app_settings(request: Request) -> Settings:
    # The app's own, from its state: a dependency override would do as well, but FastAPI
    # analyses every dependency of a request again (signatures, type adapters) as soon as
    # the app has any override: 2.6 ms of CPU per webhook call, the cause of its tail.
    return request.app.state.settings


async def get_thresholds(request: Request) -> Thresholds:
    return request.app.state.thresholds


async def get_runbooks(request: Request) -> Callable[[], str]:
    return request.app.state.runbooks


async def get_store(request: Request) -> Store:
    return request.app.state.store


async def get_live(request: Request) -> LiveRuns:
    return request.app.state.live


async def get_pool(request: Request) -> WorkerPool:
    return request.app.state.pool


async def get_report_cache(request: Request) -> ReportCache:
    return request.app.state.report_cache


async def get_forwarder(request: Request) -> LokiForwarder:
    return request.app.state.forwarder


async def require_token(
    settings: Annotated[Settings, Depends(get_app_settings)],
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
SettingsDep = Annotated[Settings, Depends(get_app_settings)]
LiveDep = Annotated[LiveRuns, Depends(get_live)]
PoolDep = Annotated[WorkerPool, Depends(get_pool)]
ReportCacheDep = Annotated[ReportCache, Depends(get_report_cache)]
ForwarderDep = Annotated[LokiForwarder, Depends(get_forwarder)]
ThresholdsDep = Annotated[Thresholds, Depends(get_thresholds)]
RunbooksDep = Annotated[Callable[[], str], Depends(get_runbooks)]
WriteAuth = Depends(require_token)
