"""Exporter settings, from the environment (WLMON_EXPORTER_...)."""

from __future__ import annotations

from functools import lru_cache

from pydantic import SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class ExporterSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="WLMON_EXPORTER_")

    # One flag per entry of exporters.collectors.COLLECTORS.
    collector_st03: bool = True
    collector_st05: bool = True
    collector_dbbuffer: bool = True
    collector_oscounters: bool = True
    collector_sapbuffer: bool = True
    # SAP instances through sapstartsrv (settings: WLMON_SAPCONTROL_...).
    collector_sapcontrol: bool = False
    # A real PostgreSQL as the buffer-pool source (WLMON_EXPORTER_POSTGRES_DSN), instead
    # of the model's DB2 pools; the DSN may hold a password, so it is a secret.
    postgres_dsn: SecretStr | None = None
    postgres_sid: str = "PG"
    # Statements exported by ST05, longest elapsed time first (bounded series count).
    st05_top_n: int = 25


@lru_cache
def get_settings() -> ExporterSettings:
    return ExporterSettings()
