"""Settings of the sapcontrol source (WLMON_SAPCONTROL_...) and of the model's sapstartsrv
(WLMON_SAPSTARTSRV_...). Passwords are secrets: from the environment or from a file named
by `..._PASSWORD_FILE` (a mounted secret), never echoed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from exporters.sapcontrol.ccms import NOC_NODE_NAMES
from exporters.sapcontrol.client import scrub


def _secret_from_file(password: SecretStr | None, path: Path | None, name: str) -> SecretStr | None:
    if password is not None or path is None:
        return password
    try:
        return SecretStr(path.read_text().strip())
    except OSError as exc:
        raise ValueError(f"{name}: cannot read {path}: {exc.strerror}") from exc


def address_problem(text: str) -> str:
    """What is wrong with a sapstartsrv address ('' if nothing): http(s)://host:port/ or
    unix:/path/of/the/socket."""
    if text.startswith("unix:"):
        return "" if text.removeprefix("unix:").startswith("/") else "need unix:/absolute/path"
    parts = urlsplit(text)
    if parts.username or parts.password:
        return "credentials do not belong in the URL (use USERNAME and PASSWORD_FILE)"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "need http(s)://host:port/ or unix:/path"
    return ""


class SAPControlSettings(BaseSettings):
    """Where the sapcontrol collector finds sapstartsrv and how it talks to it."""

    # hide_input_in_errors: a refused value (a URL with a password in it) is not echoed.
    model_config = SettingsConfigDict(env_prefix="WLMON_SAPCONTROL_", hide_input_in_errors=True)

    # Endpoints, comma separated: http(s)://host:5NN13/ or unix:/tmp/.sapstream5NN13.
    endpoints: Annotated[list[str], NoDecode] = Field(default_factory=list)
    # Instances' URLs, comma separated, tried in turn: the first GetSystemInstanceList that
    # answers lists the whole system.
    discover: Annotated[list[str], NoDecode] = Field(default_factory=list)
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
    # A method answering HTTP 5xx, a SOAP fault, a malformed answer or none in time is not
    # called again on that instance for this long, doubling with each failure up to
    # BACKOFF_MAX_S (+- BACKOFF_JITTER of it, from a generator seeded by the endpoint, so
    # instances that failed together do not come back together).
    backoff_s: float = Field(default=30.0, gt=0)
    backoff_max_s: float = Field(default=900.0, gt=0)
    backoff_jitter: float = Field(default=0.1, ge=0, lt=1)
    # After HTTP 401 (the monitoring user refused) no protected method of the instance is
    # called for this long, doubling up to AUTH_BACKOFF_MAX_S: one failed OS login per
    # period, where a retry per scrape locks the user out (pam_faillock: 3 in 15 min).
    auth_backoff_s: float = Field(default=600.0, gt=0)
    auth_backoff_max_s: float = Field(default=3600.0, gt=0)
    # Web-method calls per instance in any 60 s: the calls over it wait (the process list
    # first, so liveness is the last thing given up). Prometheus and Telegraf scraping every
    # 15 s without sharing a reading make 8 readings a minute: ~56 calls of an ABAP instance
    # today, so 120 leaves room for more methods and stops a runaway (a scraper every second).
    call_budget_per_minute: int = Field(default=120, gt=0)
    # Reuse a reading younger than this for the next scrape (several scrapers, one exporter).
    cache_s: float = Field(default=0.0, ge=0)
    discovery_interval_s: float = Field(default=300.0, gt=0)
    # After a failed discovery, wait this long before the next try, doubling each time up
    # to discovery_interval_s; the last instance list found stays in use meanwhile.
    discovery_retry_s: float = Field(default=15.0, gt=0)
    # The last instance list found is kept here, so a restart finds the system even while
    # the discovery instances are down.
    state_file: Path | None = None
    # The systems' decimal notation (SU01 / the locale sapstartsrv formats CCMS values in):
    # "point" (1,260.5) or "comma" (1.260,5). Unset, each alert tree's own values decide,
    # and a value that reads two ways ("1,260") when none tells is left unread.
    decimal: Literal["point", "comma"] | None = None
    # More CCMS nodes to export as sap_ccms_value{node=<name>} and sap_ccms_node_state, JSON
    # name -> path suffix of the alert tree (names from the root, "/" between):
    # {"HostspoolListUsed": "Spool/HostspoolListUsed"}. Beside the NOC's nodes wlmon maps by
    # default (exporters/collectors/sapcontrol.py NOC_NODES). Names are the label's values,
    # so the label stays bounded by this setting.
    ccms_nodes: dict[str, str] = Field(default_factory=dict)
    # HAGetFailoverConfig, HACheckConfig and HACheckFailoverConfig run the cluster
    # connector (sap_suse_cluster_connector: crm commands) on the host: asked at most this
    # often per ASCS/ERS instance.
    ha_interval_s: float = Field(default=60.0, gt=0)
    # EnqGetLockTable (SM12) answers every lock (tens of thousands in a busy system): asked
    # at most this often per ASCS; a lock's age is known to within it.
    lock_table_interval_s: float = Field(default=30.0, gt=0)
    # Tables (EnqGetLockTable lock-name) counted under their own `table` label (comma
    # separated); every other table counts as `other`.
    lock_tables: Annotated[list[str], NoDecode] = Field(default_factory=list)
    # ABAPReadSyslog (SM21) answers the whole syslog the instance holds: asked at most this
    # often per instance, not every scrape.
    syslog_interval_s: float = Field(default=60.0, gt=0)
    # GetVersionInfo and ABAPGetComponentList (the kernel patch, CVERS) change only when an
    # instance restarts on a new kernel or a support package is imported: asked at most
    # this often per instance (the first scrape asks at once).
    version_interval_s: float = Field(default=900.0, gt=0)
    # SM21 message ids counted under their own label (comma separated); every other id is
    # counted as `other`. AB0 (ABAP runtime error), AB1 (short dump written) and R49
    # (communication error) by default: what a NOC sees most.
    syslog_message_ids: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["AB0", "AB1", "R49"]
    )

    @field_validator("lock_tables", mode="before")
    @classmethod
    def _tables(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        for table in value:
            if not re.fullmatch(r"[A-Za-z/][A-Za-z0-9_/]{0,29}", str(table)):
                raise ValueError(
                    f"WLMON_SAPCONTROL_LOCK_TABLES: {table!r}: an ABAP table name is at most "
                    "30 letters, digits, _ and / (VBAK, /SAPAPO/MATKEY)"
                )
        return [str(t).upper() for t in value]

    @field_validator("syslog_message_ids", mode="before")
    @classmethod
    def _ids(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        for mid in value:
            if not re.fullmatch(r"[A-Za-z0-9]{3}", str(mid)):
                raise ValueError(
                    f"WLMON_SAPCONTROL_SYSLOG_MESSAGE_IDS: {mid!r}: an SM21 message id is "
                    "three letters or digits (AB0, R49)"
                )
        return [str(m).upper() for m in value]

    @field_validator("ccms_nodes")
    @classmethod
    def _node_names(cls, value: dict[str, str]) -> dict[str, str]:
        for name, path in value.items():
            if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_.+ -]{0,63}", name):
                raise ValueError(
                    f"WLMON_SAPCONTROL_CCMS_NODES: name {name!r}: letters, digits, _ . + - and "
                    "spaces, at most 64, starting with a letter"
                )
            if name in NOC_NODE_NAMES:
                raise ValueError(
                    f"WLMON_SAPCONTROL_CCMS_NODES: {name!r} is read by default (as "
                    "sap_ccms_node_state and its own metric): give the node another name"
                )
            if not path.strip("/ ") or "//" in path:
                raise ValueError(
                    f"WLMON_SAPCONTROL_CCMS_NODES[{name!r}]: {path!r}: need a node path such as "
                    "R3Services/Spool/HostspoolListUsed"
                )
        return value

    @field_validator("endpoints", "discover", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("["):
                return json.loads(text)
            return [v.strip() for v in text.split(",") if v.strip()]
        return value

    @field_validator("endpoints", "discover")
    @classmethod
    def _addresses(cls, value: list[str], info) -> list[str]:
        for text in value:
            problem = address_problem(text)
            if problem:
                raise ValueError(
                    f"WLMON_SAPCONTROL_{info.field_name.upper()}: {scrub(text)!r}: {problem}"
                )
        return value

    @model_validator(mode="after")
    def _password(self) -> SAPControlSettings:
        self.password = _secret_from_file(self.password, self.password_file, "password_file")
        if self.password is not None and not self.username:
            raise ValueError("WLMON_SAPCONTROL_USERNAME is needed with a password")
        if not self.verify and self.ca_file is not None:
            # Which one was meant cannot be told: refuse rather than let one silently win.
            raise ValueError(
                "WLMON_SAPCONTROL_VERIFY=false and WLMON_SAPCONTROL_CA_FILE contradict each "
                "other: a CA file is for verifying; drop one of them"
            )
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
    # With TLS: instance k's HTTPS port (its 5NN14) is this + k; 0: free ports. HTTP stays
    # on base_port + k beside it.
    tls_base_port: int = Field(default=0, ge=0, le=65535)
    # CCMS dialog values are averages over this much simulated time.
    ccms_interval_s: float = Field(default=60.0, gt=0)

    @model_validator(mode="after")
    def _password(self) -> SapStartSrvSettings:
        self.password = _secret_from_file(self.password, self.password_file, "password_file")
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ValueError("WLMON_SAPSTARTSRV_TLS_CERT and _TLS_KEY go together")
        return self
