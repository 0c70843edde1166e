"""The FastAPI application factory."""

from __future__ import annotations

import asyncio
import functools
import gc
import math
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request, status
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from prometheus_client import make_asgi_app

from alerts.runbooks import read_runbooks
from alerts.thresholds import load_thresholds
from api.config import Settings, get_settings
from api.routes import alerts, health, imports, runbooks, runs
from api.services import retention
from api.services.errors import ServiceError
from api.services.live import LiveRuns
from api.services.loki_forwarder import LokiForwarder
from api.services.report_cache import ReportCache
from api.services.storage import StorageHealth, is_full
from api.services.workers import WorkerPool
from api.store import Database, Store
from api.telemetry import RequestTimer, watch_loop_lag
from exporters import __version__
from exporters.thresholds import Thresholds


async def _refused(request: Request, exc: ServiceError) -> JSONResponse:
    """A service's refusal as its HTTP status and message, so routes need no try/except."""
    # 503 (workers busy) says when to come back.
    headers = {"Retry-After": "5"} if exc.status_code == 503 else None
    return JSONResponse({"detail": str(exc)}, status_code=exc.status_code, headers=headers)


def _finite(value: Any) -> Any:
    """JSON has no NaN or Infinity: such an input, echoed in a refusal, goes as its text."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
    """FastAPI's 422, but one whose echoed input is NaN (Python's json reads it) stays a 422
    instead of failing to encode as a 500."""
    return JSONResponse(
        {"detail": _finite(jsonable_encoder(exc.errors()))},
        status_code=status.HTTP_422_UNPROCESSABLE_CONTENT,
    )


async def _storage_failed(request: Request, exc: Exception) -> JSONResponse:
    """A write the database (or the disk) refused: 507 with the reason when the disk or the
    database's cap is full, else 500 naming the error; either way /healthz says so."""
    if isinstance(exc, OSError) and not is_full(exc):
        raise exc  # not a storage fault: the server's own 500
    message = request.app.state.storage.failed(exc)
    code = 507 if is_full(exc) else status.HTTP_500_INTERNAL_SERVER_ERROR
    return JSONResponse({"detail": message}, status_code=code)


@functools.cache
def _freeze_startup_heap() -> None:
    """What is loaded by now (FastAPI's routes and schemas, pydantic's validators, the
    libraries) lives as long as the process: out of the collector's sight, so a full
    collection walks only what requests made, not the whole heap (tens of milliseconds on
    the loop otherwise). Once per process: a process serving app after app (tests) would
    otherwise keep every earlier one's garbage."""
    gc.collect()
    gc.freeze()


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    # What an earlier API left unforwarded goes to the log store now.
    app.state.forwarder.notify()
    # The WAL's checkpoints, away from the requests (the loop's inserts make none).
    stop = threading.Event()
    threading.Thread(
        target=app.state.store.checkpoint_until, args=(stop,), name="wlmon-api-wal", daemon=True
    ).start()
    threading.Thread(
        target=retention.prune_until,
        args=(app.state.store, app.state.settings, stop),
        name="wlmon-api-retention",
        daemon=True,
    ).start()
    lag = asyncio.create_task(watch_loop_lag())
    _freeze_startup_heap()
    yield
    lag.cancel()
    stop.set()
    # A planned stop: a run in progress is left for the next API to resume (not failed).
    app.state.live.shutdown(app.state.store)
    # Worker processes and the forwarder's thread stop with the server; both start again
    # on demand if the app is served again (test clients do).
    app.state.pool.shutdown()
    app.state.forwarder.stop()


def create_app(
    settings: Settings | None = None,
    thresholds: Thresholds | None = None,
    read_runbooks_md: Callable[[], str] = read_runbooks,
) -> FastAPI:
    """The app, configured here at the edge: the settings (environment), the thresholds
    reports and checks judge by (alerts/thresholds.yml, read by the alerts package) and the
    runbooks' reader (the alerts package's); services get them passed down."""
    settings = settings or get_settings()
    thresholds = thresholds or load_thresholds()

    # One store for the app's life; SQLite closes with the process. (Closing it on lifespan
    # shutdown would break an app served again, as test clients do.)
    app = FastAPI(title=settings.title, version=__version__, lifespan=_lifespan)
    app.state.store = Store(settings.db_path, settings.db_max_bytes)
    app.state.storage = StorageHealth(
        settings.db_path, settings.min_free_bytes, max_bytes=settings.db_max_bytes
    )
    app.state.settings = settings
    app.state.thresholds = thresholds
    app.state.runbooks = read_runbooks_md
    app.state.live = LiveRuns()
    # Runs an earlier API left running: resumed, or ended `interrupted` with their data.
    app.state.live.recover(app.state.store, settings)
    app.state.pool = WorkerPool(
        Database(settings.db_path, settings.db_max_bytes), settings.workers, settings.worker_queue
    )
    app.state.report_cache = ReportCache(settings.report_cache_bytes)
    app.state.forwarder = LokiForwarder(app.state.store, settings)

    app.add_exception_handler(ServiceError, _refused)
    app.add_exception_handler(RequestValidationError, _invalid)
    app.add_exception_handler(sqlite3.Error, _storage_failed)
    app.add_exception_handler(OSError, _storage_failed)
    app.include_router(health.router)
    app.include_router(alerts.router)
    app.include_router(runs.router)
    app.include_router(imports.router)
    app.include_router(runbooks.router)
    app.mount("/metrics", make_asgi_app())
    app.add_middleware(RequestTimer)
    return app
