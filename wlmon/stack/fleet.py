"""`wlmon up --profile fleet`: many SIDs, no single server whose loss blinds the NOC.

The fleet file (provisioning/fleet/fleet.yml, or WLMON_FLEET_FILE) is the one place that
names the SIDs; every config below is rendered from it. Topology (docs/fleet.md):

    exporter per SID  <-scrape-  Prometheus replica A, B (same config, replica="A"/"B")
                                 each evaluates the rules and sends to every Alertmanager
    Alertmanager peers 1..n gossip on 127.0.0.1 (one notification per group, not per peer)
    Thanos sidecar per replica -> bucket (filesystem; S3 by WLMON_FLEET_OBJSTORE_CONFIG)
    Thanos store gateway <- bucket;  Thanos query over both sidecars and the store,
    de-duplicating on `replica`;  Thanos compactor (retention, downsampling) on the bucket
    Perses' `prometheus` datasource -> Thanos query

Services are built here rather than read from services.yml because their number follows
the fleet file (an exporter per SID, a sidecar per replica, a peer per Alertmanager).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from exporters.config import DEFAULT_MAX_USERS
from exporters.monitor import KIND_SAPCONTROL, KIND_TWIN, SapControlSpec, first_error
from landscape_model.catalog import Catalog
from wlmon.stack import peertiming, perses, render
from wlmon.stack.components import COMPONENTS
from wlmon.stack.runtime import Stack, StackError, perses_admin_signs_in
from wlmon.stack.services import Service
from wlmon.stack.settings import REPO_DIR, StackSettings

# A SAP system ID: three characters, a letter first (SAP note 1979280 reserves some).
SID = re.compile(r"[A-Z][A-Z0-9]{2}")
DEFAULT_FLEET_FILE = REPO_DIR / "provisioning" / "fleet" / "fleet.yml"
REPLICA_NAMES = "ABCDEFGH"
REPLICA_LABEL = "replica"
MAX_SIDS = 100
# The cardinality budget a NOC sizes Prometheus by (docs/fleet.md, bench/fleet.py), series
# in Prometheus including recording rules and ALERTS: per SAP instance (measured 119-121
# on the three shipped landscapes) and per SID beside its instances (DB pools, hosts, ST05
# top statements; measured 585-1,208). tests/integration/test_fleet_thanos.py holds each
# SID of a running fleet to it.
SERIES_PER_INSTANCE_BUDGET = 140  # 119 measured (docs/fleet.md); 133 once in a full CI run
SERIES_PER_SID_BUDGET = 1500  # one port each above the base; a bigger fleet runs on more hosts


class FleetError(ValueError):
    """A fleet file or entry to fix; the message names the file, entry and field."""


class FleetSid(BaseModel):
    """One SID of the fleet: a twin (`scenario:`, the model answering as that system) or a
    real system (`sapcontrol:`, read through its sapstartsrv; exporters.monitor), never
    both. A real SID's settings are rendered into its own exporter's file only."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sid: str = Field(pattern=rf"^{SID.pattern}$")  # whole: pydantic searches a pattern
    scenario: str | None = None
    sapcontrol: SapControlSpec | None = None
    description: str = ""
    # Users the SID's exporter runs its scenario at (`wlmon exporter --users`); unset: the
    # scenario's own. A scenario's users can be its benchmark limit (sd-two-tier's 800 are
    # seed 004's "max users at < 2 s"), which a fleet member should not sit at all the time.
    users: int | None = Field(default=None, ge=1, le=DEFAULT_MAX_USERS)
    # Real SIDs naming the same group are served by one monitor-only exporter process
    # (`exporter-<group>`): several small SIDs in one process cost a fraction of a process
    # each (bench/sapcontrol_scale.py). Unset: the SID's own process.
    exporter_group: str | None = Field(default=None, pattern=r"^[a-z][a-z0-9-]{0,30}$")

    @model_validator(mode="after")
    def _one_kind(self) -> FleetSid:
        if (self.scenario is None) == (self.sapcontrol is None):
            raise ValueError("give either scenario (a twin) or sapcontrol (a real system)")
        if self.users is not None and self.scenario is None:
            raise ValueError("users: only a twin (scenario) runs at a number of users")
        if self.exporter_group is not None and self.sapcontrol is None:
            raise ValueError("exporter_group: only real SIDs (sapcontrol) share an exporter")
        return self

    @property
    def kind(self) -> str:
        return KIND_TWIN if self.scenario is not None else KIND_SAPCONTROL


class FleetFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    sids: list[FleetSid] = Field(min_length=1, max_length=MAX_SIDS)
    prometheus_replicas: int = Field(default=2, ge=1, le=len(REPLICA_NAMES))
    alertmanager_peers: int = Field(default=2, ge=1, le=5)


def fleet_path(settings: StackSettings) -> Path:
    return settings.fleet_file or DEFAULT_FLEET_FILE


def load_fleet(path: Path, scenarios: list[str] | None = None) -> FleetFile:
    """The fleet file, checked: each SID once, each scenario known (when given)."""
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise FleetError(f"{path}: cannot read the fleet file: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise FleetError(f"{path}:{where} not YAML: {getattr(exc, 'problem', exc)}") from exc
    try:
        fleet = FleetFile.model_validate(doc)
    except ValidationError as exc:
        raise FleetError(f"{path}: {first_error(exc)}") from exc
    seen: set[str] = set()
    for i, entry in enumerate(fleet.sids):
        if entry.sid in seen:
            raise FleetError(f"{path}: sids.{i}.sid: {entry.sid} is listed twice")
        seen.add(entry.sid)
        if entry.sapcontrol is not None:
            problem = sapcontrol_problem(entry.sapcontrol)
            if problem:
                raise FleetError(f"{path}: sids.{i}.sapcontrol.{problem}")
        elif scenarios is not None and entry.scenario not in scenarios:
            raise FleetError(
                f"{path}: sids.{i}.scenario: unknown scenario {entry.scenario!r}"
                f" (known: {', '.join(scenarios)})"
            )
    return fleet


def sapcontrol_problem(spec: SapControlSpec) -> str:
    """'' when the entry makes a working source's settings (addresses, password file
    readable, CA file there, VERIFY/CA not contradicting), else `field: why`."""
    try:
        spec.settings()
    except ValidationError as exc:
        return first_error(exc)
    except ValueError as exc:
        return str(exc)
    return ""


def monitor_file(entries: list[FleetSid]) -> dict:
    """The monitor file (exporters.monitor) of one exporter: its SIDs' entries alone."""
    sids = []
    for entry in entries:
        assert entry.sapcontrol is not None
        spec = entry.sapcontrol.model_dump(mode="json", exclude_defaults=True)
        sids.append({"sid": entry.sid, "sapcontrol": spec})
    return {"sids": sids}


@dataclass(frozen=True)
class FleetExporter:
    """One exporter process of the fleet: a twin's, a real SID's, or a group of real SIDs'."""

    name: str
    port: int
    entries: tuple[FleetSid, ...]

    @property
    def real(self) -> bool:
        return self.entries[0].sapcontrol is not None


def add_sid(path: Path, entry: FleetSid, scenarios: list[str], source: Path | None = None) -> None:
    """Append one SID to the fleet file (created from `source` when it does not exist).

    The entry is appended as one line of text, so the file's comments stay; it is written by
    the YAML library (any description quoted as it needs), and the new file must read back
    to the old entries plus this one before it replaces the old (atomically), else nothing
    is written and the field that would not be kept is named."""
    origin = path if path.is_file() else (source or DEFAULT_FLEET_FILE)
    fleet = _empty_fleet(origin) or load_fleet(origin, scenarios)
    if entry.sid in {s.sid for s in fleet.sids}:
        raise FleetError(f"{path}: {entry.sid} is already in the fleet")
    if entry.scenario is not None and entry.scenario not in scenarios:
        raise FleetError(
            f"--scenario: unknown scenario {entry.scenario!r} (known: {', '.join(scenarios)})"
        )
    text = origin.read_text(encoding="utf-8")
    if not _sids_last(text):
        raise FleetError(f"{origin}: `sids:` must be the file's last key to append to it")
    if not text.endswith("\n"):
        text += "\n"
    text += f"  - {_entry_line(entry)}\n"
    want = fleet.model_copy(update={"sids": [*fleet.sids, entry]})
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    tmp = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        shutil.copymode(origin, tmp)  # mkstemp's 0600 otherwise
        try:
            kept = load_fleet(tmp, scenarios) == want
        except FleetError:
            kept = False
        if not kept:
            field = _field_not_kept(entry)
            if field is None:
                raise FleetError(
                    f"{origin}: an entry appended does not read back (`sids:` must be a block"
                    " list); nothing written"
                )
            raise FleetError(f"{path}: {field}: cannot be stored as given; nothing written")
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def _empty_fleet(path: Path) -> FleetFile | None:
    """A fleet file begun by hand with `sids:` and no entry yet (a fleet of real SIDs only,
    docs/monitor.md): its other keys checked, no SID. None for any other file."""
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None
    if not isinstance(doc, dict) or "sids" not in doc or doc["sids"] is not None:
        return None
    probe = {**doc, "sids": [{"sid": "AAA", "scenario": "x"}]}
    try:
        return FleetFile.model_validate(probe).model_copy(update={"sids": []})
    except ValidationError as exc:
        raise FleetError(f"{path}: {first_error(exc)}") from exc


class _EntryDumper(yaml.SafeDumper):
    """One-line flow YAML: a string that would span lines is double-quoted, escaped."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = None if value.isprintable() else '"'  # a line break, tab, control character
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style)


_EntryDumper.add_representer(str, _represent_str)


def _entry_dict(entry: FleetSid) -> dict[str, object]:
    # The file's layout: sid and scenario first; users, description only when given.
    doc: dict[str, object] = {"sid": entry.sid}
    if entry.scenario is not None:
        doc["scenario"] = entry.scenario
    if entry.sapcontrol is not None:
        doc["sapcontrol"] = entry.sapcontrol.model_dump(mode="json", exclude_defaults=True)
    if entry.users is not None:
        doc["users"] = entry.users
    if entry.exporter_group is not None:
        doc["exporter_group"] = entry.exporter_group
    if entry.description:
        doc["description"] = entry.description
    return doc


def _entry_line(entry: FleetSid) -> str:
    """`{sid: QAS, scenario: sd-two-tier, description: '...'}`, quoted by the YAML library."""
    return yaml.dump(
        _entry_dict(entry),
        Dumper=_EntryDumper,
        default_flow_style=True,
        sort_keys=False,
        allow_unicode=True,
        width=sys.maxsize,
    ).rstrip("\n")


def _reads_back(entry: FleetSid) -> bool:
    line = _entry_line(entry)
    try:
        back = yaml.safe_load(f"sids:\n  - {line}\n")["sids"][0]
    except (yaml.YAMLError, TypeError, KeyError, IndexError):
        return False
    return "\n" not in line and back == _entry_dict(entry)


def _field_not_kept(entry: FleetSid) -> str | None:
    """The field whose text the entry's line does not keep: the line reads back once it is
    plain. None when the line alone reads back (then the file does not take it)."""
    if _reads_back(entry):
        return None
    for field, plain in (("description", ""), ("scenario", "x"), ("users", None)):
        if getattr(entry, field) in (plain, None):
            continue
        if _reads_back(entry.model_copy(update={field: plain})):
            return f"--{field}"
    return f"entry {entry.sid}"


def _sids_last(text: str) -> bool:
    keys = [ln.split(":")[0] for ln in text.splitlines() if re.match(r"[a-z_]+:", ln)]
    return bool(keys) and keys[-1] == "sids"


@dataclass(frozen=True)
class FleetPorts:
    """Every fleet port, from one base (WLMON_FLEET_PORT_BASE): fixed offsets per role."""

    base: int

    @property
    def query_http(self) -> int:
        return self.base

    @property
    def query_grpc(self) -> int:
        return self.base + 1

    @property
    def store_http(self) -> int:
        return self.base + 2

    @property
    def store_grpc(self) -> int:
        return self.base + 3

    @property
    def compact_http(self) -> int:
        return self.base + 4

    @property
    def api(self) -> int:
        return self.base + 5

    @property
    def perses(self) -> int:
        return self.base + 6

    def prometheus(self, i: int) -> int:
        return self.base + 10 + i

    def sidecar_http(self, i: int) -> int:
        return self.base + 20 + 2 * i

    def sidecar_grpc(self, i: int) -> int:
        return self.base + 21 + 2 * i

    def alertmanager(self, j: int) -> int:
        return self.base + 40 + 2 * j

    def alertmanager_cluster(self, j: int) -> int:
        return self.base + 41 + 2 * j

    def exporter(self, k: int) -> int:
        return self.base + 100 + k

    def all(self, fleet: FleetFile) -> list[int]:
        return [
            *range(self.base, self.base + 7),
            *(self.prometheus(i) for i in range(fleet.prometheus_replicas)),
            *(self.sidecar_http(i) for i in range(fleet.prometheus_replicas)),
            *(self.sidecar_grpc(i) for i in range(fleet.prometheus_replicas)),
            *(self.alertmanager(j) for j in range(fleet.alertmanager_peers)),
            *(self.alertmanager_cluster(j) for j in range(fleet.alertmanager_peers)),
            *(self.exporter(k) for k in range(len(fleet.sids))),
        ]


def http(port: int) -> str:
    return f"http://127.0.0.1:{port}"


def _bin(component: str, binary: str | None = None) -> str:
    return str(COMPONENTS[component].path(binary or component))


class FleetLayout:
    """The fleet's services and configs, from the settings and the fleet file."""

    def __init__(self, settings: StackSettings, fleet: FleetFile, state: Path) -> None:
        self.settings = settings
        self.fleet = fleet
        self.ports = FleetPorts(settings.fleet_port_base)
        self.config = state / "config"
        self.data = state / "data"
        self.bucket = self.data / "bucket"

    @property
    def replicas(self) -> list[str]:
        return list(REPLICA_NAMES[: self.fleet.prometheus_replicas])

    def objstore_config(self) -> Path:
        """WLMON_FLEET_OBJSTORE_CONFIG (e.g. an S3 bucket), else the rendered filesystem one."""
        given = self.settings.fleet_objstore_config
        return given if given is not None else self.config / "thanos" / "bucket.yml"

    # ---------------------------------------------------------------- rendering
    def render(
        self, api_token: str, alertmanager_password: str, perses_inputs: perses.PersesInputs
    ) -> None:
        src = self.settings.repo_dir / "provisioning" / "fleet"
        password_file = render.prometheus_alertmanager_password(
            self.config / "prometheus", alertmanager_password
        )
        for i, replica in enumerate(self.replicas):
            self._render_prometheus(src / "prometheus.yml", i, replica, password_file)
        render.render_rules(self.settings, self.config)
        self._render_monitor_files()
        am_dir = self.config / "alertmanager"
        values = render.alertmanager_values(
            self.settings, self.config, api_token, alertmanager_password
        )
        values["WLMON_API_URL"] = self.settings.fleet_webhook_base or http(self.ports.api)
        # The fleet's own Perses: the notifications' dashboard links open it.
        values["WLMON_PERSES_URL"] = render.external_url(self.settings, self.ports.perses)
        render.render_alertmanager(
            self.settings.repo_dir / "provisioning" / "alertmanager", values, am_dir
        )
        bucket = yaml.safe_load((src / "thanos" / "bucket.yml").read_text())
        bucket["config"]["directory"] = str(self.bucket)
        out = self.config / "thanos" / "bucket.yml"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(yaml.safe_dump(bucket, sort_keys=False))
        self.bucket.mkdir(parents=True, exist_ok=True)
        # The single stack's Perses, its `prometheus` datasource on Thanos query: every
        # dashboard reads the fleet unchanged.
        perses.render(
            self.settings.repo_dir,
            self.config,
            # The peers gossip their alerts and silences: the first shows the cluster's.
            replace(
                perses_inputs,
                prometheus_url=http(self.ports.query_http),
                alertmanager_url=http(self.ports.alertmanager(0)),
            ),
        )

    def check_peer_timeout(self) -> None:
        """ValueError when a peer's wait would fall on the instant another peer flushes
        (peertiming.py): the pair would then send some notifications twice. Each route's
        groups flush on their own grid (the evaluation interval and that route's timers),
        so each route is checked on its own. The watchdog route is not: a heartbeat sent
        by both peers is one more beat to the dead man's switch, not a page sent twice."""
        s = self.settings
        # Prometheus evaluates the rules at the scrape interval (_render_prometheus).
        evaluation = {"WLMON_SCRAPE_INTERVAL": s.scrape_interval}
        routes = (
            {
                "WLMON_AM_GROUP_WAIT": s.am_group_wait,
                "WLMON_AM_GROUP_INTERVAL": s.am_group_interval,
            },
            {
                "WLMON_AM_CAUSE_GROUP_WAIT": s.am_cause_group_wait,
                "WLMON_AM_CAUSE_GROUP_INTERVAL": s.am_cause_group_interval,
            },
        )
        for timers in routes:
            peertiming.check_peer_timeout(
                s.fleet_am_peer_timeout, evaluation | timers, self.fleet.alertmanager_peers
            )

    def _render_prometheus(self, template: Path, i: int, replica: str, password_file: Path) -> Path:
        doc = yaml.safe_load(template.read_text())
        glob = doc.setdefault("global", {})
        glob["scrape_interval"] = self.settings.scrape_interval
        glob["evaluation_interval"] = self.settings.scrape_interval
        glob.setdefault("external_labels", {})[REPLICA_LABEL] = replica
        doc["rule_files"] = [str(self.config / "prometheus" / "rules" / "*.rules.yml")]
        auth = {"username": render.ALERTMANAGER_USER, "password_file": str(password_file)}
        doc["alerting"]["alertmanagers"] = [
            {
                "basic_auth": auth,
                "static_configs": [
                    {
                        "targets": [
                            f"127.0.0.1:{self.ports.alertmanager(j)}"
                            for j in range(self.fleet.alertmanager_peers)
                        ]
                    }
                ],
            }
        ]
        jobs = []
        for job in doc["scrape_configs"]:
            if job["job_name"] == "wlmon-exporter":
                # A target serving one SID is labelled with it (SAPExporterDown names the
                # SID); a group's series carry their own SIDs (honor_labels). The fleet lists
                # its real SIDs' exporters itself: compose's DNS lookup of `monitor` goes.
                job.pop("dns_sd_configs", None)
                job["static_configs"] = [
                    {"targets": [f"127.0.0.1:{x.port}"]}
                    | ({"labels": {"sid": x.entries[0].sid}} if len(x.entries) == 1 else {})
                    for x in self.exporters()
                ]
            elif job["job_name"] == "prometheus":
                job["static_configs"] = [{"targets": [f"127.0.0.1:{self.ports.prometheus(i)}"]}]
            elif job["job_name"] == "alertmanager":
                job["basic_auth"] = auth
                job["static_configs"] = [
                    {
                        "targets": [
                            f"127.0.0.1:{self.ports.alertmanager(j)}"
                            for j in range(self.fleet.alertmanager_peers)
                        ]
                    }
                ]
            elif job["job_name"] == "thanos":
                job["static_configs"] = [
                    {
                        "targets": [
                            f"127.0.0.1:{p}"
                            for p in (
                                self.ports.query_http,
                                self.ports.store_http,
                                self.ports.compact_http,
                                self.ports.sidecar_http(i),
                            )
                        ]
                    }
                ]
            jobs.append(job)
        doc["scrape_configs"] = jobs
        out = self.config / "prometheus" / f"prometheus-{replica}.yml"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(yaml.safe_dump(doc, sort_keys=False))
        return out

    def exporters(self) -> list[FleetExporter]:
        """The exporter processes in fleet-file order: one per twin and per ungrouped real
        SID, one per exporter_group (on its first member's port)."""
        out: list[FleetExporter] = []
        groups: dict[str, int] = {}
        for k, entry in enumerate(self.fleet.sids):
            group = entry.exporter_group
            if group is not None and group in groups:
                i = groups[group]
                out[i] = replace(out[i], entries=(*out[i].entries, entry))
                continue
            name = f"exporter-{group or entry.sid.lower()}"
            if group is not None:
                groups[group] = len(out)
            out.append(FleetExporter(name, self.ports.exporter(k), (entry,)))
        return out

    def monitor_path(self, exporter: FleetExporter) -> Path:
        return self.config / "exporters" / f"{exporter.name.removeprefix('exporter-')}.yml"

    def _render_monitor_files(self) -> None:
        """Each real exporter's own monitor file (0600: it names password files and users):
        an exporter never sees the entry of a SID it does not serve."""
        for exporter in self.exporters():
            if not exporter.real:
                continue
            path = self.monitor_path(exporter)
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                doc = monitor_file(list(exporter.entries))
                out.write(yaml.safe_dump(doc, sort_keys=False))

    def _monitor_exporter(self, exporter: FleetExporter) -> Service:
        """A real SID's (or group's) exporter: monitor-only, its own file, no model."""
        port = exporter.port
        return Service(
            name=exporter.name,
            argv=[
                sys.executable,
                "-m",
                "wlmon",
                "exporter",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--monitor",
                str(self.monitor_path(exporter)),
            ],
            port=port,
            url=f"{http(port)}/metrics",
            health_url=f"{http(port)}/healthz",
        )

    # ---------------------------------------------------------------- services
    def services(self, secrets: dict[str, str], logs: Path) -> list[Service]:
        s, p = self.settings, self.ports
        am_auth = (render.ALERTMANAGER_USER, secrets["alertmanager_password"])
        out: list[Service] = []
        peers = range(self.fleet.alertmanager_peers)
        for j in peers:
            others = [f"--cluster.peer=127.0.0.1:{p.alertmanager_cluster(o)}" for o in peers]
            out.append(
                Service(
                    name=f"alertmanager-{j + 1}",
                    component="alertmanager",
                    argv=[
                        _bin("alertmanager"),
                        f"--config.file={self.config}/alertmanager/alertmanager.yml",
                        f"--storage.path={self.data}/alertmanager-{j + 1}",
                        # Its notification log snapshotted as the stack's (services.yml).
                        f"--data.maintenance-interval={s.am_maintenance_interval}",
                        "--enable-feature=receiver-name-in-metrics",
                        f"--web.listen-address=127.0.0.1:{p.alertmanager(j)}",
                        f"--web.external-url={http(p.alertmanager(j))}",
                        f"--web.config.file={self.config}/alertmanager/web.yml",
                        f"--cluster.listen-address=127.0.0.1:{p.alertmanager_cluster(j)}",
                        f"--cluster.advertise-address=127.0.0.1:{p.alertmanager_cluster(j)}",
                        # The peer at position k waits k x this before it sends what peer
                        # 0 should have sent: the bound on a notification's delay when a
                        # peer dies (docs/fleet.md).
                        f"--cluster.peer-timeout={s.fleet_am_peer_timeout}",
                        *[o for o in others if not o.endswith(f":{p.alertmanager_cluster(j)}")],
                    ],
                    port=p.alertmanager(j),
                    url=http(p.alertmanager(j)),
                    health_url=f"{http(p.alertmanager(j))}/-/ready",
                    health_auth=am_auth,
                    dirs=[f"{self.data}/alertmanager-{j + 1}"],
                )
            )
        for exporter in self.exporters():
            port, entry = exporter.port, exporter.entries[0]
            if exporter.real:
                out.append(self._monitor_exporter(exporter))
                continue
            out.append(
                Service(
                    name=f"exporter-{entry.sid.lower()}",
                    argv=[
                        sys.executable,
                        "-m",
                        "wlmon",
                        "exporter",
                        "--host",
                        "127.0.0.1",
                        "--port",
                        str(port),
                        "--scenario",
                        entry.scenario,
                        "--sid",
                        entry.sid,
                        "--speed",
                        str(s.exporter_speed),
                        "--state-file",
                        f"{self.data}/exporter-{entry.sid.lower()}/control.json",
                        *(["--users", str(entry.users)] if entry.users is not None else []),
                    ],
                    env={"WLMON_EXPORTER_TOKEN": secrets["exporter_token"]},
                    port=port,
                    url=f"{http(port)}/metrics",
                    health_url=f"{http(port)}/healthz",
                    dirs=[f"{self.data}/exporter-{entry.sid.lower()}"],
                )
            )
        out.append(
            Service(
                name="api",
                argv=[
                    sys.executable,
                    "-m",
                    "wlmon",
                    "api",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(p.api),
                ],
                port=p.api,
                url=http(p.api),
                health_url=f"{http(p.api)}/healthz",
                dirs=[f"{self.data}/api"],
                env={
                    "WLMON_API_TOKEN": secrets["api_token"],
                    "WLMON_API_DB_PATH": f"{self.data}/api/wlmon.sqlite",
                    "WLMON_API_PROMETHEUS_URL": http(p.query_http),
                    "WLMON_EXPORTER_TOKEN": secrets["exporter_token"],
                },
            )
        )
        block = s.fleet_block_duration
        for i, replica in enumerate(self.replicas):
            tsdb = f"{self.data}/prometheus-{replica}"
            out.append(
                Service(
                    name=f"prometheus-{replica}",
                    component="prometheus",
                    argv=[
                        _bin("prometheus"),
                        f"--config.file={self.config}/prometheus/prometheus-{replica}.yml",
                        f"--storage.tsdb.path={tsdb}",
                        f"--web.listen-address=127.0.0.1:{p.prometheus(i)}",
                        # No --web.enable-lifecycle, as the stack's own (services.yml):
                        # /-/quit and /-/reload would answer anyone on the machine.
                        # The sidecar uploads only blocks Prometheus does not compact
                        # further: min = max block duration (2h in production).
                        f"--storage.tsdb.min-block-duration={block}",
                        f"--storage.tsdb.max-block-duration={block}",
                        f"--storage.tsdb.retention.time={s.fleet_prometheus_retention}",
                        # Alerts expire 4 evaluations after a replica dies (services.yml).
                        f"--rules.alert.resend-delay={s.scrape_interval}",
                    ],
                    port=p.prometheus(i),
                    url=http(p.prometheus(i)),
                    health_url=f"{http(p.prometheus(i))}/-/ready",
                    dirs=[tsdb],
                )
            )
            out.append(
                Service(
                    name=f"sidecar-{replica}",
                    component="thanos",
                    argv=[
                        _bin("thanos"),
                        "sidecar",
                        f"--tsdb.path={tsdb}",
                        f"--prometheus.url={http(p.prometheus(i))}",
                        f"--objstore.config-file={self.objstore_config()}",
                        f"--http-address=127.0.0.1:{p.sidecar_http(i)}",
                        f"--grpc-address=127.0.0.1:{p.sidecar_grpc(i)}",
                    ],
                    port=p.sidecar_http(i),
                    url=http(p.sidecar_http(i)),
                    health_url=f"{http(p.sidecar_http(i))}/-/ready",
                )
            )
        out.append(
            Service(
                name="store",
                component="thanos",
                argv=[
                    _bin("thanos"),
                    "store",
                    f"--data-dir={self.data}/store",
                    f"--objstore.config-file={self.objstore_config()}",
                    f"--http-address=127.0.0.1:{p.store_http}",
                    f"--grpc-address=127.0.0.1:{p.store_grpc}",
                    f"--sync-block-duration={s.fleet_store_sync}",
                ],
                port=p.store_http,
                url=http(p.store_http),
                health_url=f"{http(p.store_http)}/-/ready",
                dirs=[f"{self.data}/store"],
            )
        )
        endpoints = [f"127.0.0.1:{p.sidecar_grpc(i)}" for i in range(len(self.replicas))]
        endpoints.append(f"127.0.0.1:{p.store_grpc}")
        out.append(
            Service(
                name="query",
                component="thanos",
                argv=[
                    _bin("thanos"),
                    "query",
                    f"--http-address=127.0.0.1:{p.query_http}",
                    f"--grpc-address=127.0.0.1:{p.query_grpc}",
                    f"--query.replica-label={REPLICA_LABEL}",
                    # Thanos's own engine (the default is Prometheus's): it streams
                    # de-duplicated series instead of materialising both replicas first.
                    f"--query.promql-engine={s.fleet_query_engine}",
                    # Down endpoints are dropped after this: a killed sidecar or store
                    # stops costing each query a timeout.
                    "--endpoint.info-timeout=5s",
                    "--store.unhealthy-timeout=30s",
                    *[f"--endpoint={e}" for e in endpoints],
                ],
                port=p.query_http,
                url=http(p.query_http),
                health_url=f"{http(p.query_http)}/-/ready",
            )
        )
        out.append(
            Service(
                name="compact",
                component="thanos",
                argv=[
                    _bin("thanos"),
                    "compact",
                    "--wait",
                    f"--wait-interval={s.fleet_compact_interval}",
                    f"--data-dir={self.data}/compact",
                    f"--objstore.config-file={self.objstore_config()}",
                    f"--http-address=127.0.0.1:{p.compact_http}",
                    f"--retention.resolution-raw={s.fleet_retention_raw}",
                    f"--retention.resolution-5m={s.fleet_retention_5m}",
                    f"--retention.resolution-1h={s.fleet_retention_1h}",
                    "--compact.concurrency=1",
                    "--downsample.concurrency=1",
                ],
                port=p.compact_http,
                url=http(p.compact_http),
                health_url=f"{http(p.compact_http)}/-/ready",
                dirs=[f"{self.data}/compact"],
            )
        )
        out.append(
            Service(
                name="perses",
                component="perses",
                argv=[
                    _bin("perses"),
                    "--config",
                    f"{self.config}/perses/config.yaml",
                    "--web.listen-address",
                    f"127.0.0.1:{p.perses}",
                    "--web.hide-port",
                ],
                port=p.perses,
                url=http(p.perses),
                health_url=f"{http(p.perses)}/api/v1/health",
                dirs=[f"{self.data}/perses"],
                after_start=functools.partial(
                    perses_admin_signs_in, password=secrets["perses_password"]
                ),
            )
        )
        return out


class FleetStack(Stack):
    """The fleet as `wlmon up --profile fleet` runs it: its own state under <state>/fleet
    (configs, data, logs, secrets, pids), so it runs beside the single-SID stack."""

    def __init__(self, settings: StackSettings | None = None) -> None:
        super().__init__(settings)
        self.state = self.settings.state_dir / "fleet"
        self.config_dir = self.state / "config"
        self.data_dir = self.state / "data"
        self.log_dir = self.state / "logs"
        self.run_file = self.state / "run" / "services.json"

    def fleet(self) -> FleetFile:
        try:
            return load_fleet(fleet_path(self.settings), Catalog().scenarios())
        except FleetError as exc:
            raise StackError(str(exc)) from exc

    def layout(self) -> FleetLayout:
        return FleetLayout(self.settings, self.fleet(), self.state)

    def services(self) -> list[Service]:
        secrets = {
            "api_token": self.api_token(),
            "exporter_token": self.exporter_token(),
            "alertmanager_password": self.alertmanager_auth()[1],
            "perses_password": self.perses_password()[0],
        }
        return self.layout().services(secrets, self.log_dir)

    def render(self) -> None:
        layout = self.layout()
        try:
            layout.check_peer_timeout()
        except ValueError as exc:
            raise StackError(str(exc)) from exc
        layout.render(self.api_token(), self.alertmanager_auth()[1], self.perses_inputs())

    def secret_sources(self) -> dict[str, str]:
        sources = super().secret_sources()
        return {k: v for k, v in sources.items() if not k.startswith("InfluxDB")}
