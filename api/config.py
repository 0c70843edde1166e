"""API settings from the environment (WLMON_API_...)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="WLMON_API_")

    title: str = "wlmon API"
    # Secrets only from the environment. Without a token every write is refused.
    token: SecretStr | None = None
    db_path: Path = Field(
        default_factory=lambda: Path.home() / ".local" / "state" / "wlmon" / "api.sqlite"
    )
    loki_url: str | None = None
    influx_url: str | None = None
    prometheus_url: str = "http://127.0.0.1:9090"
    # Real-time runs drive the live exporter's control endpoint.
    exporter_url: str = "http://127.0.0.1:9300"
    # The exporter's control token (its WLMON_EXPORTER_CONTROL_TOKEN), sent as a bearer.
    exporter_token: SecretStr | None = None
    # A run's hold on the exporter: renewed at every step; when the API stops renewing it
    # (killed), the exporter drops the run's faults after this many wall seconds.
    exporter_lease_s: float = Field(default=30.0, gt=0, le=3600)
    # Where Grafana runs, run events become annotations (admin password from the environment).
    grafana_url: str | None = None
    grafana_user: str = "admin"
    grafana_password: SecretStr | None = None
    sid: str = "BMK"
    max_body_bytes: int = 1024 * 1024


@lru_cache
def get_settings() -> Settings:
    return Settings()
