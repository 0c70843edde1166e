"""The exporter's configuration, read once at the edge (`load_config`, called by the CLI or
a test) and passed down as one typed `ExporterConfig`; nothing below it reads the
environment (the exporter's server requires one).

One prefix per concern:

- `WLMON_EXPORTER_` (ExporterSettings): the exporter itself, its collectors
  (`COLLECTOR_<NAME>`, one flag per registration in exporters.registry), control token,
  state file, PostgreSQL.
- `WLMON_SAPCONTROL_` (SAPControlSettings): the sapcontrol collector's source, which
  sapstartsrv to read and how; read only when that collector is on.
- `WLMON_SAPSTARTSRV_` (SapStartSrvSettings): the model answering as sapstartsrv.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr, create_model
from pydantic_settings import SettingsConfigDict

from exporters.registry import COLLECTORS
from exporters.sapcontrol.settings import SAPControlSettings, SapStartSrvSettings
from exporters.secretfiles import EXPORTER_TOKEN_VARIABLE, SecretFilesSettings

# The largest `users` the control endpoint accepts. The solver works the finite-source
# queue of each instance as arrays of (its users + 1) elements, solved many times: 10^5
# users take about a second to solve, 10^6 minutes, and 10^14 asked for 2.13 EiB. 100,000
# is 17x the largest scenario of the catalog (SD benchmark 2003, 5,790 users).
DEFAULT_MAX_USERS = 100_000


# One flag per entry of exporters.registry.COLLECTORS, made from the registrations (as
# node_exporter's registerCollector makes its --collector.<name> flags), e.g.
# WLMON_EXPORTER_COLLECTOR_ST05=false.
_CollectorFlags = create_model(
    "_CollectorFlags",
    __base__=SecretFilesSettings,  # compose secrets as files
    **{r.flag: (bool, r.default) for r in COLLECTORS},
)


class ExporterSettings(_CollectorFlags):
    model_config = SettingsConfigDict(env_prefix="WLMON_EXPORTER_", populate_by_name=True)

    # A real PostgreSQL as the dbbuffer collector's source (WLMON_EXPORTER_POSTGRES_DSN),
    # instead of the model's DB2 pools; the DSN may hold a password, so it is a secret.
    postgres_dsn: SecretStr | None = None
    postgres_sid: str = "PG"
    # Statements exported by ST05, longest elapsed time first (bounded series count).
    st05_top_n: int = 25
    # Bearer token required by control writes (PUT /control/faults); without one they are
    # refused. `wlmon up` generates it into the state's secrets/exporter-token. The API reads
    # the same variable to send it (WLMON_EXPORTER_CONTROL_TOKEN: the old name).
    control_token: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices(EXPORTER_TOKEN_VARIABLE, "WLMON_EXPORTER_CONTROL_TOKEN"),
    )
    # Where the control state (scenario, faults, users, run id, lease) is kept across
    # restarts; none: not kept.
    state_file: Path | None = None
    max_users: int = DEFAULT_MAX_USERS


@dataclass(frozen=True)
class ExporterConfig:
    """Everything the exporter is configured with, typed."""

    exporter: ExporterSettings
    # The sapcontrol collector's source; None while that collector is off (its settings are
    # then not even read, so a malformed one stops nothing).
    sapcontrol: SAPControlSettings | None = None
    # The model answering as sapstartsrv; None: it does not.
    sapstartsrv: SapStartSrvSettings | None = None

    def __post_init__(self) -> None:
        if self.exporter.collector_sapcontrol and self.sapcontrol is None:
            raise ValueError("the sapcontrol collector is on but has no WLMON_SAPCONTROL_ settings")


def load_config(
    sapstartsrv_port: int | None = None, collectors: dict[str, bool] | None = None
) -> ExporterConfig:
    """The configuration from the environment, with the CLI's flags over it: serving the
    model as sapstartsrv on `sapstartsrv_port`, collectors switched on or off by name.
    Raises pydantic's ValidationError or ValueError naming the setting."""
    exporter = ExporterSettings()
    if collectors:
        exporter = exporter.model_copy(
            update={f"collector_{name}": on for name, on in collectors.items()}
        )
    srv = SapStartSrvSettings()
    if sapstartsrv_port is not None:
        srv = srv.model_copy(update={"enabled": True, "base_port": sapstartsrv_port})
    sapcontrol = None
    if exporter.collector_sapcontrol:
        sapcontrol = SAPControlSettings()
        if not sapcontrol.endpoints and not sapcontrol.discover:
            if not (srv.enabled and srv.base_port):
                raise ValueError(
                    "WLMON_EXPORTER_COLLECTOR_SAPCONTROL is on but names no sapstartsrv: set "
                    "WLMON_SAPCONTROL_ENDPOINTS or _DISCOVER (or serve the model with "
                    "--sapstartsrv-port N, N > 0)"
                )
            # The model's own sapstartsrv on fixed ports: its first instance lists the rest.
            url = f"http://{srv.host}:{srv.base_port}/"
            update: dict = {"discover": [url]}
            # Every simulated instance listens on srv.host, whatever host its list names.
            if not sapcontrol.hosts:
                update["hosts"] = {"*": srv.host}
            # The exporter knows its own sapstartsrv's user: the protected methods answer.
            if sapcontrol.auth is None and srv.username and srv.password is not None:
                update |= {"username": srv.username, "password": srv.password}
            sapcontrol = sapcontrol.model_copy(update=update)
    return ExporterConfig(exporter, sapcontrol, srv if srv.enabled else None)
