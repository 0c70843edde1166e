"""The FastAPI application factory."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from prometheus_client import make_asgi_app

from api.config import Settings, get_settings
from api.routes import alerts, health, imports, runbooks, runs
from api.services.errors import ServiceError
from api.services.live import LiveRuns
from api.store import Store
from exporters import __version__


async def _refused(request: Request, exc: ServiceError) -> JSONResponse:
    """A service's refusal as its HTTP status and message, so routes need no try/except."""
    return JSONResponse({"detail": str(exc)}, status_code=exc.status_code)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()

    # One store for the app's life; SQLite closes with the process. (Closing it on lifespan
    # shutdown would break an app served again, as test clients do.)
    app = FastAPI(title=settings.title, version=__version__)
    app.state.store = Store(settings.db_path)
    app.state.settings = settings
    app.state.live = LiveRuns()
    # Runs an earlier API left running end failed; the exporter drops their faults.
    app.state.live.recover(app.state.store, settings)
    app.dependency_overrides[get_settings] = lambda: settings
    app.add_exception_handler(ServiceError, _refused)
    app.include_router(health.router)
    app.include_router(alerts.router)
    app.include_router(runs.router)
    app.include_router(imports.router)
    app.include_router(runbooks.router)
    app.mount("/metrics", make_asgi_app())
    return app
