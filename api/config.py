"""API settings from the environment (WLMON_API_...)."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


def default_db_path() -> Path:
    """<state dir>/data/api/wlmon.sqlite: the state dir is WLMON_STATE_DIR, as the native
    stack reads it (wlmon/stack/settings.py), else ~/.local/state/wlmon."""
    state = os.environ.get("WLMON_STATE_DIR") or Path.home() / ".local" / "state" / "wlmon"
    return Path(state) / "data" / "api" / "wlmon.sqlite"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="WLMON_API_")

    title: str = "wlmon API"
    # Secrets only from the environment. Without a token every write is refused.
    token: SecretStr | None = None
    # The database `wlmon up` gives the API, so the CLI and the API see the same runs.
    db_path: Path = Field(default_factory=lambda: default_db_path())
    loki_url: str | None = None
    influx_url: str | None = None
    # "user:password" when InfluxDB runs with auth (the native stack and docker-compose do).
    influx_token: SecretStr | None = None
    prometheus_url: str = "http://127.0.0.1:9090"
    # Real-time runs drive the live exporter's control endpoint.
    exporter_url: str = "http://127.0.0.1:9300"
    # Where Grafana runs, run events become annotations (admin password from the environment).
    grafana_url: str | None = None
    grafana_user: str = "admin"
    grafana_password: SecretStr | None = None
    sid: str = "BMK"
    max_body_bytes: int = 1024 * 1024


@lru_cache
def get_settings() -> Settings:
    return Settings()
