"""API settings from the environment (WLMON_API_...)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import AliasChoices, Field, FilePath, SecretStr, model_validator
from pydantic_settings import SettingsConfigDict

from exporters.secretfiles import EXPORTER_TOKEN_VARIABLE, SecretFilesSettings
from exporters.sinks.loki import DEFAULT_PUSH_PATH, LogStoreAccess


def default_state_dir() -> Path:
    """~/.local/state/wlmon, the native stack's default state (wlmon/stack/stored.py)."""
    return Path.home() / ".local" / "state" / "wlmon"


def default_db_path(state_dir: Path) -> Path:
    """<state dir>/data/api/wlmon.sqlite, where the native stack's API keeps it."""
    return state_dir / "data" / "api" / "wlmon.sqlite"


# Import limits (api/services/import_limits.py), the API's and `wlmon import`'s defaults.
PERFMON_MAX_BYTES = 512 * 1024 * 1024  # a day of 1,000 counters at 15 s is ~190 MB in UTF-16
PERFMON_MAX_ROWS = 250_000  # a week at 5 s is 121 000 samples
ST03_MAX_BYTES = 10 * 1024 * 1024
ST03_MAX_ROWS = 100_000  # an ST03N export of every transaction of a month: tens of thousands
# A STAD export of a million steps (bench/imports.py: ~125 MB as a text download, twice that
# in UTF-16) imports in < 30 s and < 1 GB; a row per step, its header lines besides.
STAD_MAX_BYTES = 512 * 1024 * 1024
STAD_MAX_ROWS = 1_200_000


class Settings(SecretFilesSettings):  # compose secrets as files
    model_config = SettingsConfigDict(env_prefix="WLMON_API_", populate_by_name=True)

    title: str = "wlmon API"
    # Secrets only from the environment or secret files (WLMON_SECRETS_DIR). Without a
    # token every write is refused.
    token: SecretStr | None = None
    # The database `wlmon up` gives the API, so the CLI and the API see the same runs.
    # The stack's state dir, read as the native stack reads it (WLMON_STATE_DIR, no API
    # prefix), so the API and the CLI find the stack's database with nothing else set.
    state_dir: Path = Field(
        default_factory=default_state_dir,
        validation_alias="WLMON_STATE_DIR",
    )
    # WLMON_API_DB_PATH; unset: the state dir's (default_db_path).
    db_path: Path | None = None
    # The database refuses to grow past this many bytes (SQLite's max_page_count): writes
    # are then refused with 507, as on a full disk. None: as large as the disk allows.
    db_max_bytes: int | None = Field(default=None, ge=1024 * 1024)
    # /healthz reports degraded below this much free space on the database's disk.
    min_free_bytes: int = Field(default=100 * 1024 * 1024, ge=0)
    # Retention (0: keep for ever): ended runs and their data, and notifications the log
    # store has (as long as it keeps them, 30 days), checked at start and every interval.
    run_retention_days: float = Field(default=365.0, ge=0)
    notification_retention_days: float = Field(default=30.0, ge=0)
    retention_interval_s: float = Field(default=3600.0, gt=0)
    # The log store run events and notifications go to, in Loki's push protocol:
    # VictoriaLogs (`wlmon up`), or a Loki of your own with logs_push_path
    # "/loki/api/v1/push" (docs/operations.md).
    logs_url: str | None = None
    logs_push_path: str = DEFAULT_PUSH_PATH
    # Its HTTPS: the CA its certificate is signed by (`wlmon up`: wlmon/stack/pki.py), basic
    # auth (VictoriaLogs' -httpAuth.*), and a client certificate and key only for a Loki
    # behind mutual TLS.
    logs_ca_file: FilePath | None = None
    logs_username: str = ""
    logs_password: SecretStr | None = None
    logs_cert_file: FilePath | None = None
    logs_key_file: FilePath | None = None
    influx_url: str | None = None
    # "user:password" when InfluxDB runs with auth (the native stack and docker-compose do).
    influx_token: SecretStr | None = None
    # Or the user and its password apart: docker-compose gives the password as a secret file
    # (WLMON_SECRETS_DIR/wlmon_api_influx_password), which cannot hold "user:password".
    influx_username: str = ""
    influx_password: SecretStr | None = None
    prometheus_url: str = "http://127.0.0.1:9090"
    # Real-time runs drive the live exporter's control endpoint.
    exporter_url: str = "http://127.0.0.1:9300"
    # The exporter's control token, sent as a bearer: the exporter's own variable
    # (WLMON_API_EXPORTER_TOKEN: the old name).
    exporter_token: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices(EXPORTER_TOKEN_VARIABLE, "WLMON_API_EXPORTER_TOKEN"),
    )
    # A run's hold on the exporter: renewed at every step; when the API stops renewing it
    # (killed), the exporter drops the run's faults after this many wall seconds.
    exporter_lease_s: float = Field(default=30.0, gt=0, le=3600)
    # Where Grafana runs, run events become annotations (admin password from the environment).
    # Where operators open the dashboards (Perses; WLMON_EXTERNAL_HOST and its port in the
    # native stack): the stored notifications' and log lines' dashboard links.
    dashboards_url: str = "http://127.0.0.1:3000"
    grafana_url: str | None = None
    grafana_user: str = "admin"
    grafana_password: SecretStr | None = None
    sid: str = "BMK"
    max_body_bytes: int = 1024 * 1024
    # Imports, through the API and `wlmon import` alike (api/services/import_limits.py):
    # larger files are refused before they are parsed.
    perfmon_max_bytes: int = Field(default=PERFMON_MAX_BYTES, ge=1)
    perfmon_max_rows: int = Field(default=PERFMON_MAX_ROWS, ge=1)
    st03_max_bytes: int = Field(default=ST03_MAX_BYTES, ge=1)
    st03_max_rows: int = Field(default=ST03_MAX_ROWS, ge=1)
    stad_max_bytes: int = Field(default=STAD_MAX_BYTES, ge=1)
    stad_max_rows: int = Field(default=STAD_MAX_ROWS, ge=1)
    # CPU-bound work (imports, fast runs, reports) runs in worker processes, off the event
    # loop and outside its GIL: this many at once, and at most `worker_queue` more waiting
    # before requests are refused with 503.
    workers: int = Field(default=2, ge=1, le=32)
    worker_queue: int = Field(default=16, ge=0, le=1000)
    # Reports of ended runs are kept, rendered, up to this many bytes (least recently used
    # go first).
    report_cache_bytes: int = Field(default=64 * 1024 * 1024, ge=0)
    # The longest fast run the API simulates (seconds of model time; a day takes minutes).
    # APDEX's T in seconds; None: the SD benchmark's dialog bound / 4 (0.5 s with 2 s), so
    # a step over the bound is frustrated (docs/reports.md).
    apdex_t_s: float | None = Field(default=None, gt=0, le=60)
    max_fast_run_s: float = Field(default=86_400.0, gt=0, le=86_400.0)
    # Notifications reach the log store from a background thread: at most this many per push, and
    # after a failed push it waits up to `loki_max_backoff_s`.
    loki_batch: int = Field(default=1000, ge=1, le=10_000)
    loki_max_backoff_s: float = Field(default=30.0, gt=0)
    # After news it waits this long for more before pushing (Promtail's batchwait is 1 s):
    # at 200 notifications/s, one push and one UPDATE per linger instead of one per
    # notification, each a wake-up of the thread and a write transaction the webhook's
    # insert would find the database busy with (docs/operations.md, "The webhook beside
    # imports"). 0: push at once.
    loki_linger_s: float = Field(default=0.5, ge=0, le=10)

    @model_validator(mode="after")
    def _db_in_the_state(self) -> Settings:
        if self.db_path is None:
            self.db_path = default_db_path(self.state_dir)
        return self

    @model_validator(mode="after")
    def _logs_access_whole(self) -> Settings:
        if (self.logs_cert_file is None) != (self.logs_key_file is None):
            raise ValueError(
                "WLMON_API_LOGS_CERT_FILE and WLMON_API_LOGS_KEY_FILE go together "
                "(a client certificate and its key)"
            )
        if self.logs_password is not None and not self.logs_username:
            raise ValueError("WLMON_API_LOGS_PASSWORD is set, but WLMON_API_LOGS_USERNAME is not")
        if self.influx_password is not None and not self.influx_username:
            raise ValueError(
                "WLMON_API_INFLUX_PASSWORD is set, but WLMON_API_INFLUX_USERNAME is not"
            )
        if self.influx_password is not None and self.influx_token is not None:
            raise ValueError(
                "WLMON_API_INFLUX_TOKEN and WLMON_API_INFLUX_PASSWORD are both set: give one"
            )
        access = self.logs_access
        if access is not None:
            # Loaded now, at the edge: a key of another certificate or a file that is not
            # PEM would otherwise pass here and fail every run's annotations (a 500 after
            # the run was stored) and the notification forwarder, one by one.
            try:
                access.context()
            except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
                raise ValueError(
                    "WLMON_API_LOGS_CA_FILE, WLMON_API_LOGS_CERT_FILE, WLMON_API_LOGS_KEY_FILE "
                    f"({access.ca_file}, {access.cert_file}, {access.key_file}) do not load: "
                    f"{exc}"
                ) from exc
        return self

    @property
    def influx_credentials(self) -> str:
        """InfluxDB 1.8's "user:password" token, from the token or the user and password."""
        if self.influx_token is not None:
            return self.influx_token.get_secret_value()
        if self.influx_password is not None:
            return f"{self.influx_username}:{self.influx_password.get_secret_value()}"
        return ""

    @property
    def logs_access(self) -> LogStoreAccess | None:
        files = (self.logs_ca_file, self.logs_cert_file, self.logs_key_file)
        if not self.logs_username and not any(files):
            return None
        return LogStoreAccess(
            ca_file=self.logs_ca_file,
            username=self.logs_username,
            password=self.logs_password.get_secret_value() if self.logs_password else "",
            cert_file=self.logs_cert_file,
            key_file=self.logs_key_file,
        )


@lru_cache
def get_settings() -> Settings:
    return Settings()
