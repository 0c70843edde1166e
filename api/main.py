"""The FastAPI application factory."""

from __future__ import annotations

import threading

from fastapi import FastAPI
from prometheus_client import make_asgi_app

from api.config import Settings, get_settings
from api.routes import alerts, health, imports, runbooks, runs
from api.store import Store
from exporters import __version__


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()

    # One store for the app's life; SQLite closes with the process. (Closing it on lifespan
    # shutdown would break an app served again, as test clients do.)
    app = FastAPI(title=settings.title, version=__version__)
    app.state.store = Store(settings.db_path)
    app.state.store.runs.fail_interrupted()
    app.state.settings = settings
    # The real-time run driving the live exporter, if any (there is one live model).
    app.state.live_run = None
    app.state.live_lock = threading.Lock()
    app.dependency_overrides[get_settings] = lambda: settings
    app.include_router(health.router)
    app.include_router(alerts.router)
    app.include_router(runs.router)
    app.include_router(imports.router)
    app.include_router(runbooks.router)
    app.mount("/metrics", make_asgi_app())
    return app
