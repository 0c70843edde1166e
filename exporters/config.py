"""Exporter settings, from the environment (WLMON_EXPORTER_...)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

# The largest `users` the control endpoint accepts. The solver works the finite-source
# queue of each instance as arrays of (its users + 1) elements, solved many times: 10^5
# users take about a second to solve, 10^6 minutes, and 10^14 asked for 2.13 EiB. 100,000
# is 17x the largest scenario of the catalog (SD benchmark 2003, 5,790 users).
DEFAULT_MAX_USERS = 100_000


class ExporterSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="WLMON_EXPORTER_")

    # One flag per entry of exporters.registry.COLLECTORS, e.g.
    # WLMON_EXPORTER_COLLECTOR_ST05=false.
    collector_st03: bool = True
    collector_st05: bool = True
    collector_dbbuffer: bool = True
    collector_oscounters: bool = True
    collector_sapbuffer: bool = True
    # SAP instances through sapstartsrv (its own settings: WLMON_SAPCONTROL_...); it reads
    # no model, so it is off unless configured.
    collector_sapcontrol: bool = False
    # A real PostgreSQL as the dbbuffer collector's source (WLMON_EXPORTER_POSTGRES_DSN),
    # instead of the model's DB2 pools; the DSN may hold a password, so it is a secret.
    postgres_dsn: SecretStr | None = None
    postgres_sid: str = "PG"
    # Statements exported by ST05, longest elapsed time first (bounded series count).
    st05_top_n: int = 25
    # Bearer token required by control writes (PUT /control/faults); without one they are
    # refused. `wlmon up` generates it into the state's secrets/exporter-token.
    control_token: SecretStr | None = None
    # Where the control state (scenario, faults, users, run id, lease) is kept across
    # restarts; none: not kept.
    state_file: Path | None = None
    max_users: int = DEFAULT_MAX_USERS


@lru_cache
def get_settings() -> ExporterSettings:
    return ExporterSettings()
