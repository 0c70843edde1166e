"""The FastAPI application factory."""

from __future__ import annotations

from fastapi import FastAPI
from prometheus_client import make_asgi_app

from api.config import get_settings
from api.routes import health
from exporters import __version__


def create_app() -> FastAPI:
    settings = get_settings()
    app = FastAPI(title=settings.title, version=__version__)
    app.include_router(health.router)
    app.mount("/metrics", make_asgi_app())
    return app
