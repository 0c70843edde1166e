"""Where the native stack keeps its state and which ports it uses (WLMON_... variables)."""

from __future__ import annotations

import socket
from pathlib import Path

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from alerts.settings import RunbookSettings
from exporters.sapstartsrv.server import free_port_block
from wlmon.stack.stored import StateSource, default_state_dir

REPO_DIR = Path(__file__).resolve().parents[2]


class Ports(BaseSettings):
    """The servers' usual ports, each overridable (WLMON_PORT_PERSES=3001, ...)."""

    model_config = SettingsConfigDict(env_prefix="WLMON_PORT_")

    perses: int = 3000
    prometheus: int = 9090
    alertmanager: int = 9093
    alertmanager_cluster: int = 0  # 0: clustering off, so nothing binds 0.0.0.0:9094
    victorialogs: int = 9428  # its only listener: HTTPS (no gRPC port)
    influxdb: int = 8086
    influxdb_rpc: int = 8088
    telegraf: int = 9273
    exporter: int = 9300
    # The monitor-only exporter of the real SIDs (WLMON_MONITOR_FILE).
    monitor: int = 9301
    api: int = 8000
    # The model answering as sapstartsrv: instance k on this port + k (SAP's 5<NN>13 for
    # instance 00; a block of SAPSTARTSRV_PORTS).
    sapstartsrv: int = 50013


class StackSettings(RunbookSettings):
    """Every value: given > WLMON_* variable > kept in the state (wlmon/stack/stored.py,
    `wlmon config set`) > the default here. The runbook base (WLMON_RUNBOOK_BASE_URL, its
    check in alerts/settings.py) is one of them, so the rendering reads no settings itself."""

    model_config = SettingsConfigDict(env_prefix="WLMON_")

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        state = StateSource(settings_cls, init_settings, env_settings)
        return init_settings, env_settings, dotenv_settings, state, file_secret_settings

    state_dir: Path = Field(default_factory=default_state_dir)
    repo_dir: Path = REPO_DIR
    sid: str = "BMK"
    scenario: str = "sd-benchmark-2003"
    exporter_speed: float = 1.0
    st05_trace_interval_s: float = 60.0
    scrape_interval: str = "15s"
    # Compresses every rule's rate windows and for: durations by this factor (tests and
    # demos that cannot wait 10 minutes for an alert); 1 in production.
    rules_time_scale: float = Field(default=1.0, gt=0, le=1)
    # Prometheus restores an alert's `for` state after a restart (ALERTS_FOR_STATE in its
    # TSDB) for outages up to the tolerance, but only for rules whose for: exceeds the grace
    # period (default 10m: none of ours); a restored pending alert fires no sooner than the
    # grace after the restart. Both scaled by rules_time_scale like the rules.
    rules_for_grace_period: str = "20s"
    rules_for_outage_tolerance: str = "1h"
    telegraf_interval: str = "10s"
    # Perses' one user, `admin` (native auth); generated into the state's secrets unless given.
    perses_admin_password: SecretStr | None = None
    # How often Perses reads its provisioning folders again (dashboards are code).
    perses_provisioning_interval: str = "1m"
    # The Perses dashboards provisioned at start: dashboards/perses/ of the repo unless set.
    perses_dashboards_dir: Path | None = None
    api_token: SecretStr | None = None
    # The exporter's control token (its writes: faults, users, runs); the API is given it.
    exporter_token: SecretStr | None = None
    # InfluxDB runs with auth on, so nothing else on the host can write or drop the
    # database; the admin password is generated into the state's secrets unless given.
    influxdb_admin_user: str = "wlmon-admin"
    influxdb_admin_password: SecretStr | None = None
    # Alertmanager asks for basic auth (user ALERTMANAGER_USER) on every endpoint, its API
    # (silences) and /-/ready included; generated into the state's secrets unless given.
    alertmanager_password: SecretStr | None = None
    # Retention: what a NOC keeps on one host (docs/operations.md has the growth per day).
    # Prometheus: its own default 15 days, and a size cap so a burst of series cannot
    # fill the disk; InfluxDB keeps runs longer (forensics), the log store (VictoriaLogs) as
    # long as InfluxDB, with a size cap too (its oldest days go first).
    prometheus_retention_time: str = "15d"
    prometheus_retention_size: str = "10GB"
    influxdb_retention: str = "30d"
    victorialogs_retention: str = "30d"
    victorialogs_max_disk: str = "10GiB"
    # VictoriaLogs asks for basic auth (user VICTORIALOGS_USER) on every endpoint but /health;
    # generated into the state's secrets unless given.
    victorialogs_password: SecretStr | None = None
    # Telegraf keeps in memory what InfluxDB does not take: sized for this long an outage
    # of everything it ships (the exporter's series every scrape, the host counters).
    telegraf_outage_s: int = Field(default=600, ge=60)
    # Measured: /metrics of the default `wlmon up` (7,828 with the sapcontrol source reading
    # the model's 31 instances; 4,110 before it was on by default).
    exporter_series: int = Field(default=7830, gt=0)
    # The twin: the model's exporter (simulated SID `sid`, scenario `scenario`). False: no
    # model runs, nothing simulated is served (a landscape of real SIDs only).
    model: bool = True
    # The real SIDs (docs/monitor.md): a monitor file read by a monitor-only exporter on
    # WLMON_PORT_MONITOR; each SID's sapcontrol settings come from this file alone, never
    # from WLMON_SAPCONTROL_* variables.
    monitor_file: Path | None = None
    # The exporter reads the model's own sapstartsrv through its sapcontrol source, as it
    # would a real system's (docs/sapcontrol.md): the SAP instances dashboard and the
    # process alerts. Off: that dashboard says "Not read".
    model_sapstartsrv: bool = True
    # Its monitoring user (docs/sapcontrol.md: a dedicated OS user, not <sid>adm) and that
    # user's password (generated into the state's secrets unless given).
    sapstartsrv_username: str = "wlmon"
    sapstartsrv_password: SecretStr | None = None
    # The same variables the exporter reads: Prometheus and Telegraf both scrape it, so a
    # reading younger than cache_s is shared; timeout_s stays below the scrape timeout.
    sapcontrol_cache_s: float = Field(default=5.0, ge=0)
    sapcontrol_timeout_s: float = Field(default=3.0, gt=0)
    # How often the slower SAPControl reads are made (SM21, SM12): the exporter's own
    # defaults; passed explicitly, as the service inherits no WLMON_SAPCONTROL_* variable.
    sapcontrol_syslog_interval_s: float = Field(default=60.0, gt=0)
    sapcontrol_lock_table_interval_s: float = Field(default=30.0, gt=0)
    sapcontrol_version_interval_s: float = Field(default=900.0, gt=0)
    # The address operators' browsers use for this machine: the links in notifications
    # (dashboards, runbooks) and Prometheus' and Alertmanager's --web.external-url name it
    # with each service's port. The servers still listen on 127.0.0.1 only: another host
    # reaches them through the operator's proxy or tunnel on the same ports.
    external_host: str = Field(
        default="127.0.0.1", pattern=r"^[A-Za-z0-9.\-]+$|^\[[0-9A-Fa-f:]+\]$"
    )
    # Receivers beside the API's webhook (docs/operations.md, Receivers: an example each):
    # each is rendered only when its secret or its secret's file is given. Secrets come
    # from the environment or a file (the *_file settings); Alertmanager reads them from
    # 0600 files, never from its config, and they are never printed.
    # Email notifications only when a smarthost is set: without one every notification
    # would log a failed delivery.
    smtp_smarthost: str = ""
    smtp_from: str = "wlmon@localhost"
    smtp_username: str = ""
    smtp_password: SecretStr | None = None
    smtp_password_file: Path | None = None
    smtp_require_tls: bool = True
    alert_email_critical: str = "oncall@localhost"
    alert_email_warning: str = "noc@localhost"
    am_group_wait: str = "30s"
    # How often Alertmanager snapshots its notification log and silences to the state (its
    # --data.maintenance-interval, default 15m): what a kill -9 can lose of them.
    am_maintenance_interval: str = "10s"
    am_group_interval: str = "5m"
    # The cause routes' own (provisioning/alertmanager/alertmanager.yml): all instances of
    # one fault fire in the same evaluation, and the resolved message should follow quickly.
    am_cause_group_wait: str = "15s"
    am_cause_group_interval: str = "30s"
    # Chat: a Slack incoming webhook (its URL is the secret) and the channel to post in
    # (empty: the webhook's own), and a Microsoft Teams workflow webhook (msteamsv2).
    slack_webhook_url: SecretStr | None = None
    slack_webhook_url_file: Path | None = None
    slack_channel: str = ""
    teams_webhook_url: SecretStr | None = None
    teams_webhook_url_file: Path | None = None
    # Paging: a PagerDuty Events API v2 integration's routing key; pages only (critical).
    pagerduty_routing_key: SecretStr | None = None
    pagerduty_routing_key_file: Path | None = None
    pagerduty_url: str = "https://events.pagerduty.com/v2/enqueue"
    # The dead man's switch: where SAPWatchdog's heartbeats go (unset: nowhere) and how
    # often. The URL of a heartbeat check usually is its token, so it is a secret.
    watchdog_url: SecretStr | None = None
    watchdog_url_file: Path | None = None
    watchdog_interval: str = "1m"
    ports: Ports = Field(default_factory=Ports)
    # The fleet profile (`wlmon up --profile fleet`, docs/fleet.md). Its SIDs: this file,
    # else provisioning/fleet/fleet.yml. Its ports: fixed offsets from one base.
    fleet_file: Path | None = None
    fleet_port_base: int = Field(default=19100, ge=1024, le=65000)
    # Where Alertmanager's webhook goes (the fleet's API unless set; tests count there).
    fleet_webhook_base: str = ""
    # A Thanos objstore file (S3, GCS, ...); unset: a filesystem bucket in the state dir.
    fleet_objstore_config: Path | None = None
    # Prometheus cuts a block this long; the sidecar uploads it. Thanos's own 2h in
    # production; tests shorten it to see uploads within a minute.
    fleet_block_duration: str = "2h"
    # Locally a replica keeps a day beyond the blocks it uploaded: the bucket holds the rest.
    fleet_prometheus_retention: str = "1d"
    fleet_store_sync: str = "3m"
    fleet_compact_interval: str = "5m"
    # A NOC's choice: raw for a month (incidents are looked at within weeks), 5-minute
    # for half a year (capacity trends), hourly for two years (year-on-year peaks).
    fleet_retention_raw: str = "30d"
    fleet_retention_5m: str = "180d"
    fleet_retention_1h: str = "730d"
    # Alertmanager's --cluster.peer-timeout: how long peer k waits per earlier peer before it
    # sends a notification they should have sent. Not Alertmanager's 15s: with the 15 s
    # evaluation and group timers above, peer 2 would read the notification log at the
    # instant peer 1 flushes a group that runs 15 s out of phase, and both would send
    # (wlmon/stack/peertiming.py). Half-way between: 7.5 s for the gossip either way.
    fleet_am_peer_timeout: str = "22.5s"
    # Thanos query's PromQL engine: thanos or prometheus (bench/fleet.py compares them).
    fleet_query_engine: str = Field(default="thanos", pattern="^(thanos|prometheus)$")

    @model_validator(mode="after")
    def _something_to_watch(self) -> StackSettings:
        if not self.model and self.monitor_file is None:
            raise ValueError(
                "WLMON_MODEL=false and no WLMON_MONITOR_FILE: nothing to watch; name the real "
                "SIDs' monitor file (docs/monitor.md) or keep the twin"
            )
        return self

    @model_validator(mode="after")
    def _no_example_secret(self) -> StackSettings:
        """A secret left at a placeholder (older .env.example files said change-me) is
        refused before anything is rendered: it is a password anyone can guess."""
        for name, value in self:
            if isinstance(value, SecretStr) and _placeholder(value.get_secret_value()):
                raise ValueError(
                    f"WLMON_{name.upper()} is a placeholder ({value.get_secret_value()!r}); "
                    "set a real secret, or unset it and one is generated into the state's "
                    "secrets"
                )
        return self


# What example files and habits put where a secret goes (compared without case or
# separators: Change_Me and CHANGEME too).
PLACEHOLDERS = {"changeme", "password", "secret", "admin", "example", "xxx", "todo"}


def _placeholder(secret: str) -> bool:
    folded = "".join(c for c in secret.lower() if c.isalnum())
    return folded in PLACEHOLDERS


# Ports held for the model's sapstartsrv: the SD benchmark landscape has 32 instances
# (30 dialog, the ASCS, the Java instance).
SAPSTARTSRV_PORTS = 64


def free_port_environment() -> dict[str, str]:
    """WLMON_PORT_* variables naming free loopback ports for every service (tests, benches)."""
    socks = []
    env = {"WLMON_PORT_SAPSTARTSRV": str(free_port_block(SAPSTARTSRV_PORTS))}
    try:
        for name in Ports.model_fields:
            if name in ("alertmanager_cluster", "sapstartsrv"):
                continue
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            socks.append(sock)
            env[f"WLMON_PORT_{name.upper()}"] = str(sock.getsockname()[1])
    finally:
        for sock in socks:
            sock.close()
    return env
