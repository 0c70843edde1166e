"""API settings from the environment (WLMON_API_...)."""

from __future__ import annotations

from functools import lru_cache

from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="WLMON_API_")

    title: str = "wlmon API"
    # Secrets only from the environment; no default token.
    token: str | None = None


@lru_cache
def get_settings() -> Settings:
    return Settings()
