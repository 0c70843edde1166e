"""Settings of the sapcontrol source (WLMON_SAPCONTROL_...) and of the model's sapstartsrv
(WLMON_SAPSTARTSRV_...). Passwords are secrets: from the environment or from a file named
by `..._PASSWORD_FILE` (a mounted secret), never echoed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


def _secret_from_file(password: SecretStr | None, path: Path | None, name: str) -> SecretStr | None:
    if password is not None or path is None:
        return password
    try:
        return SecretStr(path.read_text().strip())
    except OSError as exc:
        raise ValueError(f"{name}: cannot read {path}: {exc.strerror}") from exc


class SAPControlSettings(BaseSettings):
    """Where the sapcontrol collector finds sapstartsrv and how it talks to it."""

    model_config = SettingsConfigDict(env_prefix="WLMON_SAPCONTROL_")

    # Endpoints, comma separated: http(s)://host:5NN13/ or unix:/tmp/.sapstream5NN13.
    endpoints: Annotated[list[str], NoDecode] = Field(default_factory=list)
    # One instance's URL: GetSystemInstanceList there lists the whole system.
    discover: str | None = None
    # Host names of the instance list mapped to addresses ('*' for any), JSON:
    # {"penguin2": "10.0.0.12", "*": "127.0.0.1"}; unmapped names are used as they are.
    hosts: dict[str, str] = Field(default_factory=dict)
    # Prefer the HTTPS port (5NN14) of discovered instances where one is listed.
    prefer_https: bool = False
    username: str | None = None
    password: SecretStr | None = None
    password_file: Path | None = None
    verify: bool = True
    ca_file: Path | None = None
    # Per-instance deadline for all its calls in one scrape; keep it below Prometheus's
    # scrape_timeout so one dead instance never costs the whole scrape.
    timeout_s: float = Field(default=3.0, gt=0)
    max_parallel: int = Field(default=32, gt=0)
    # Reuse a reading younger than this for the next scrape (several scrapers, one exporter).
    cache_s: float = Field(default=0.0, ge=0)
    discovery_interval_s: float = Field(default=300.0, gt=0)

    @field_validator("endpoints", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("["):
                return json.loads(text)
            return [v.strip() for v in text.split(",") if v.strip()]
        return value

    @model_validator(mode="after")
    def _password(self) -> SAPControlSettings:
        self.password = _secret_from_file(self.password, self.password_file, "password_file")
        if self.password is not None and not self.username:
            raise ValueError("WLMON_SAPCONTROL_USERNAME is needed with a password")
        return self

    @property
    def auth(self) -> tuple[str, str] | None:
        if self.username and self.password is not None:
            return self.username, self.password.get_secret_value()
        return None


class SapStartSrvSettings(BaseSettings):
    """The model's own sapstartsrv endpoints (one per simulated instance)."""

    model_config = SettingsConfigDict(env_prefix="WLMON_SAPSTARTSRV_")

    enabled: bool = False
    host: str = "127.0.0.1"
    # 0: free ports; N: instance k on N + k (GetSystemInstanceList order).
    base_port: int = Field(default=0, ge=0, le=65535)
    # The OS user protected methods need; empty: <sid>adm.
    username: str = ""
    password: SecretStr | None = None
    password_file: Path | None = None
    uds_dir: Path | None = None
    tls_cert: Path | None = None
    tls_key: Path | None = None
    # CCMS dialog values are averages over this much simulated time.
    ccms_interval_s: float = Field(default=60.0, gt=0)

    @model_validator(mode="after")
    def _password(self) -> SapStartSrvSettings:
        self.password = _secret_from_file(self.password, self.password_file, "password_file")
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ValueError("WLMON_SAPSTARTSRV_TLS_CERT and _TLS_KEY go together")
        return self
