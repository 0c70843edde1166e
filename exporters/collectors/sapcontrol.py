"""sapcontrol: SAP instances read through sapstartsrv's SAPControl web service.

Its source (`SAPControlSource`) is the SAPControl client side: exporters.sources.sapcontrol
reads any sapstartsrv, a real one or the model's (exporters.sapstartsrv), every instance in
parallel within its own deadline; a dead or hung instance reads `sap_up{sap_instance=...} 0`
and the others are complete. This module turns one reading into metrics: ABAP instances
give their work-process table, dispatcher queues and CCMS dialog values, the enqueue server
its lock statistics. Sample::

    sap_up{sap_instance="penguin2_D00",sid="BMK",source="sapcontrol"} 1
    sap_work_processes{sap_instance="penguin2_D00",sid="BMK",status="run",type="DIA"} 7
    sap_dispatcher_queue_writes_total{queue="ABAP/DIA",sap_instance="penguin2_D00",sid="BMK"} 58131
    sap_ccms_dialog_queue_time_seconds{sap_instance="penguin2_D00",sid="BMK"} 0.004
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from exporters.collectors.base import SourceCollector, UpSample
from exporters.collectors.sapcontrol_versions import components, kernel_versions
from exporters.sapcontrol import ccms
from exporters.sapcontrol.client import Endpoint
from exporters.sapcontrol.schema import STATE_COLOR_CODE, Record

log = logging.getLogger(__name__)

SOURCE = "sapcontrol"
LABELS = ["sid", "sap_instance"]

# SM50 status texts (sapcontrol abbreviates them) -> the `status` label.
STATUS = {
    "wait": "wait",
    "waiting": "wait",
    "run": "run",
    "running": "run",
    "hold": "hold",
    "on hold": "hold",
    "stop": "stopped",
    "stopped": "stopped",
    "ended": "ended",
    "shutdown": "shutdown",
    "reserved": "reserved",
}
STATUSES = ("wait", "run", "hold", "stopped", "ended")
# What a busy work process is doing, in the ST03 time components it takes time from.
ACTIVITIES = ("roll_in", "load_gen", "processing", "db_request", "enqueue", "roll_out", "hold")
DB_ACTIONS = {
    "sequential read",
    "direct read",
    "insert",
    "update",
    "delete",
    "modify",
    "commit",
    "rollback",
    "open cursor",
    "fetch",
    "db procedure",
}
WP_TYPES = ("DIA", "UPD", "UP2", "BTC", "SPO", "ENQ")

# CCMS nodes read as gauges: (path suffix, metric, what it mirrors); where two suffixes
# give one metric, the first found is read. The dialog values are
# averages over the monitor's last interval (RZ20), so they stay gauges; recording rules
# weigh them by the interval's dialog steps (alerts/sapcontrol.rules.yml).
CCMS_GAUGES: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("Dialog", "ResponseTime"), "dialog_response_time_seconds", "dialog response time"),
    # Trees built from the "Dialog Overview" monitor name it flat (observIQ's samples).
    (("ResponseTimeDialog",), "dialog_response_time_seconds", "dialog response time"),
    (
        ("ResponseTimeDialogRFC",),
        "dialog_rfc_response_time_seconds",
        "response time of dialog and RFC steps",
    ),
    (("Dialog", "QueueTime"), "dialog_queue_time_seconds", "wait in the dispatcher queue"),
    (("Dialog", "Load+GenTime"), "dialog_load_gen_time_seconds", "program load+generation"),
    (("Dialog", "RollTime"), "dialog_roll_time_seconds", "roll time of the user context"),
    (("Dialog", "DBRequestTime"), "dialog_db_request_time_seconds", "database request time"),
    (("Dialog", "FrontendResponseTime"), "dialog_frontend_response_time_seconds", "front-end"),
    (("Dialog", "FrontEndNetTime"), "dialog_frontend_net_time_seconds", "front-end network"),
    (("Dialog", "GuiCallbackTime"), "dialog_gui_callback_time_seconds", "GUI callbacks"),
    (("Dialog", "DialogSteps"), "dialog_steps_per_second", "dialog steps per second"),
    (("Dialog", "UsersLoggedIn"), "dialog_users_logged_in", "users logged in"),
    (("Dialog", "Utilisation"), "dialog_utilisation_ratio", "dialog work processes busy"),
    (("Update", "PerformanceU1", "ResponseTime"), "update_response_time_seconds", "V1 update"),
    (("CPU", "CPU_Utilization"), "cpu_utilisation_ratio", "host CPU utilisation"),
)
# CCMS nodes a NOC pages on, where RZ20's "Entire System" monitor keeps them (R3Abap/
# Shortdumps, R3Services/Background, /Update, /Spool/SpoolService): (node name, metric, what
# it counts). Matched by name, as real trees nest them at different depths and clients
# record some without parents (observIQ's samples have all four flat); the `node` label of
# sap_ccms_node_state is the name. CCMS shows "Shortdumps Frequency" per minute (read per
# second); the others are counts over the monitor's last interval, and AbapErrorInUpdate is
# often only a colour (no value: its state alone is exported).
NOC_NODES: tuple[tuple[str, str, str], ...] = (
    ("Shortdumps Frequency", "shortdumps_per_second", "ABAP short dumps (ST22) per second"),
    ("AbortedJobs", "aborted_jobs", "background jobs aborted (SM37)"),
    ("AbapErrorInUpdate", "update_errors", "update requests ended in an ABAP error (SM13)"),
    ("ErrorsInWpSPO", "spool_errors", "errors in spool work processes (SP01)"),
)
# GetAlerts `Value` -> the `severity` label of open CCMS alerts (GREEN/GRAY ones are none).
ALERT_SEVERITY = {"SAPControl-YELLOW": "yellow", "SAPControl-RED": "red"}
# HACheck categories and states (HAVerificationState, HACheckCategory): the wire has
# "SAPControl-HA-ERROR", "SAPControl-SAP-CONFIGURATION"; sapcontrol's CLI prints them as
# "ERROR", "SAP CONFIGURATION". Labels: category sap_configuration, sap_state,
# ha_configuration, ha_state (else other); state success, warning, error (else other).
HA_CATEGORIES = ("sap_configuration", "sap_state", "ha_configuration", "ha_state")
HA_STATES = ("success", "warning", "error")
HA_CHECKS = {"HACheckConfig": "config", "HACheckFailoverConfig": "failover"}
# EnqGetStatistic elements -> the `operation` label of sap_enqueue_requests_total.
ENQ_REQUESTS = {
    "enqueue": "enqueue-requests",
    "dequeue": "dequeue-requests",
    "dequeue_all": "dequeue-all-requests",
    "cleanup": "cleanup-requests",
    "backup": "backup-requests",
    "reporting": "reporting-requests",
    "compress": "compress-requests",
    "verify": "verify-requests",
}
ENQ_TABLE = {"locks": "locks", "owners": "owner", "arguments": "arguments"}
# ICM thread status texts (SMICM: "Available", older releases "Free"; "Running").
ICM_THREAD_STATUS = {"available": "free", "free": "free", "running": "running"}
ICM_THREAD_STATUSES = ("free", "running")
# AS Java: the pools a thread belongs to, as labels only where known (anything else: other).
J2EE_POOLS = {"application": "application", "system": "system"}
# Thread states in which a J2EE thread has no request: it waits in its pool for a task.
J2EE_IDLE_STATES = ("waiting", "idle", "available")
J2EE_STATE_PREFIX = "SAPControl-J2EE-"
# Bounded labels of ICM connections: anything else reads "other".
ICM_PROTOCOLS = ("http", "https", "smtp")
ICM_ROLES = ("server", "client")
INT32 = 2**32


@dataclass(frozen=True)
class Target:
    """One sapstartsrv to read, with what discovery knows of it."""

    endpoint: Endpoint
    hostname: str = ""
    nr: int = -1
    features: str = ""
    dispstatus: str = ""
    # False: reached over plain HTTP although found over HTTPS, so no password is sent.
    credentials: bool = True
    # Named in WLMON_SAPCONTROL_ENDPOINTS (not found by discovery): preferred when the same
    # instance is reached two ways.
    configured: bool = False


@dataclass
class Identity:
    sid: str
    sap_instance: str
    features: str
    # SAPLOCALHOST and SAPSYSTEM (or the instance list's hostname and instanceNr): with the
    # SID they name one instance whatever the path that reached it.
    host: str = ""
    nr: int = -1

    @property
    def key(self) -> tuple[str, int, str] | None:
        """(SID, instance number, host), None while not known."""
        if not self.host or self.nr < 0:
            return None
        return (self.sid, self.nr, self.host.lower())


@dataclass(frozen=True)
class CallHealth:
    """How the source has been calling one sapstartsrv (exporters.sources.sapcontrol_guard):
    counts since start, what is backed off now, and what is insecure about the transport."""

    calls: dict[tuple[str, str], int] = field(default_factory=dict)  # (method, outcome)
    skipped: dict[tuple[str, str], int] = field(default_factory=dict)  # (method, reason)
    backoff_s: dict[str, float] = field(default_factory=dict)  # method -> seconds left
    failing: dict[str, bool] = field(default_factory=dict)  # method -> last call failed
    auth_refused: bool = False
    budget_exhausted: int = 0
    budget_left: int = 0
    insecure: tuple[str, ...] = ()


@dataclass(frozen=True)
class LockSummary:
    """One instance's lock table (EnqGetLockTable) at its last reading, ages as of now
    (exporters.sources.sapcontrol_locks)."""

    by_table: dict[str, int] = field(default_factory=dict)  # allow-listed table or other
    users: int = 0
    most_by_one_user: int = 0
    oldest_age_s: float | None = None  # None: no lock held


@dataclass
class InstanceResult:
    target: Target
    identity: Identity
    # sapstartsrv answered at least one call in this scrape (a fault or a 401 is an answer;
    # a slow method that ran out of time after others answered does not make it down).
    up: bool = False
    error: str = ""
    duration: float = 0.0
    calls: dict[str, tuple[bool, float]] = field(default_factory=dict)
    data: dict[str, list[Record] | Record] = field(default_factory=dict)
    # The instance answered with no identity (empty GetInstanceProperties): not exported.
    anonymous: bool = False
    health: CallHealth | None = None
    # SM21 entries since the first ABAPReadSyslog answer, by (severity, message id); None
    # before that answer (exporters.sources.sapcontrol_syslog).
    syslog: dict[tuple[str, str], int] | None = None
    # The lock table's summary; None before the first EnqGetLockTable answer.
    locks: LockSummary | None = None


def guess_instance_name(features: str, nr: int) -> str:
    """SAP's naming for standard instances, for one never seen answering."""
    feats = set(features.split("|"))
    if "ABAP" in feats:
        return f"D{nr:02d}"
    if "ENQREP" in feats:
        return f"ERS{nr:02d}"
    if {"MESSAGESERVER", "ENQUE"} & feats:
        return f"ASCS{nr:02d}"
    return f"{nr:02d}"


@dataclass(frozen=True)
class SAPControlReading:
    """One reading of every instance; `discovery` is whether the discovery instance's
    GetSystemInstanceList answered, None when the instances are configured, not found;
    `complete` is False when discovery failed with no instance list known."""

    instances: list[InstanceResult]
    discovery: bool | None = None
    complete: bool = True
    # The systems' decimal notation for CCMS values ('point', 'comma'; WLMON_SAPCONTROL_
    # DECIMAL), None: decided per alert tree from its own values (exporters.sapcontrol.ccms).
    notation: str | None = None
    # Instances discovery found moved to another host since start: (sid, instance) -> count.
    failovers: dict[tuple[str, str], int] = field(default_factory=dict)
    # CCMS nodes configured beside NOC_NODES (WLMON_SAPCONTROL_CCMS_NODES): name -> path.
    ccms_nodes: dict[str, tuple[str, ...]] = field(default_factory=dict)


class SAPControlSource(Protocol):
    """sapstartsrv instances, read through SAPControl."""

    def read(self) -> SAPControlReading: ...


def ha_word(text: str | None, strip: tuple[str, ...], allowed: tuple[str, ...]) -> str:
    """An HACheck enum value as a label: prefixes and spelling of wire and CLI taken off."""
    word = str(text or "").strip().upper().replace(" ", "-")
    for prefix in strip:
        word = word.removeprefix(prefix)
    word = word.lower().replace("-", "_")
    return word if word in allowed else "other"


def ha_nodes(answer: Record) -> list[str]:
    """HANodes as names: items of the array, each possibly a comma-separated list (as
    sapcontrol prints them, "node1, node2")."""
    out = []
    for item in answer.get("HANodes") or []:
        out += [n.strip() for n in str(item).split(",") if n.strip()]
    return out


def wp_activity(row: Record) -> str | None:
    """The ST03 component a busy work process is in, from SM50's Status/Reason/Action."""
    status = STATUS.get(str(row["Status"]).strip().lower(), "other")
    if status == "wait":
        return None
    if str(row["Reason"]).strip().upper() == "ENQ":
        return "enqueue"
    action = str(row["Action"]).strip().lower()
    if action == "roll in":
        return "roll_in"
    if action == "roll out":
        return "roll_out"
    if action.startswith(("load", "generat")):
        return "load_gen"
    if action in DB_ACTIONS:
        return "db_request"
    if status == "run":
        return "processing"
    return "hold"


def cpu_seconds(text: str) -> float:
    """SM50's CPU or Time column ('3:27:13', '12:42' or seconds) in seconds."""
    total = 0.0
    for part in str(text).strip().split(":"):
        if not part:
            continue
        try:
            total = total * 60 + float(part)
        except ValueError:
            return 0.0
    return total


def unsigned(value: int | None) -> int | None:
    """dpmon's counters are xsd:int and wrap; read them as unsigned 32-bit."""
    if value is None:
        return None
    return value + INT32 if value < 0 else value


def color_code(color: str | None) -> float | None:
    """STATE-COLOR as 1 gray .. 4 red; None for an absent or unknown colour (never 0)."""
    code = STATE_COLOR_CODE.get(color or "")
    return None if code is None else float(code)


def add(family: Metric, labels: list[str], value: float | int | None) -> None:
    """A sample where the answer had a value: an element left out stays out."""
    if value is not None:
        family.add_metric(labels, float(value))


class SAPControlCollector(SourceCollector[SAPControlSource, SAPControlReading]):
    """Every instance's SAPControl answers as metric families, and its own `sap_up`."""

    name = "sapcontrol"

    def __init__(
        self, source: SAPControlSource, clock: Callable[[], float] = time.perf_counter
    ) -> None:
        super().__init__(source)
        self.clock = clock
        self._unread_logged: set[tuple[str, str]] = set()

    def _unread(self, where: str, node: str, description: str) -> None:
        """A CCMS value that reads as two numbers is left out; said once per instance and
        node (not at every scrape), with what settles it."""
        if (where, node) not in self._unread_logged:
            self._unread_logged.add((where, node))
            log.warning(
                "sapcontrol %s GetAlertTree %s: %r reads as %s; nothing else in the tree "
                "tells the decimal notation, so it is left unread: set "
                "WLMON_SAPCONTROL_DECIMAL=point or =comma (the system's decimal notation)",
                where,
                node,
                description,
                " or ".join(
                    f"{v:g} ({k})" for k, v in ccms.readings(description.split()[0]).items()
                ),
            )

    def read(self) -> SAPControlReading:
        return self.source.read()

    def families(self, reading: SAPControlReading | None) -> Iterable[Metric]:
        return self._families(reading or SAPControlReading([]))

    def up_samples(self, reading: SAPControlReading) -> list[UpSample]:
        """One `sap_up{sid,sap_instance,source="sapcontrol"}` per instance read."""
        return [
            (
                {"sid": r.identity.sid, "sap_instance": r.identity.sap_instance, "source": SOURCE},
                1.0 if r.up else 0.0,
            )
            for r in reading.instances
        ]

    def succeeded(self, reading: SAPControlReading) -> bool:
        return reading.complete

    def collect(self) -> Iterator[Metric]:
        """Standalone use (a registry of its own, no model): its families and meta-metrics."""
        start = self.clock()
        reading = self.read()
        fams = list(self.families(reading))
        up = GaugeMetricFamily("sap_up", "1 if the monitored system's statistics could be read.")
        for labels, value in self.up_samples(reading):
            up.add_sample("sap_up", labels, value)
        yield from fams
        yield up
        ok = GaugeMetricFamily(
            "sap_scrape_collector_success",
            "1 if the collector succeeded in this scrape.",
            labels=["collector"],
        )
        ok.add_metric([self.name], 1.0 if self.succeeded(reading) else 0.0)
        dur = GaugeMetricFamily(
            "sap_scrape_collector_duration_seconds",
            "Time the collector took in this scrape.",
            labels=["collector"],
        )
        dur.add_metric([self.name], self.clock() - start)
        yield ok
        yield dur

    # ------------------------------------------------------------------ metric families
    def _families(self, reading: SAPControlReading) -> Iterator[Metric]:
        g = _Families()
        disc = g.gauge(
            "sap_sapcontrol_discovery_success",
            "1 if the last GetSystemInstanceList of the discovery instance answered.",
            [],
        )
        if reading.discovery is not None:
            disc.add_metric([], 1.0 if reading.discovery else 0.0)
        failovers = g.counter(
            "sap_sapcontrol_failovers",
            "Times discovery found the instance (by SID and instance name, e.g. ASCS01) on "
            "another host than before (an HA failover): rediscovery runs at once when an "
            "instance stops answering. `instance_name`, not `instance`: that is Prometheus's "
            "target label.",
            ["sid", "instance_name"],
        )
        for (sid, instance), count in sorted(reading.failovers.items()):
            failovers.add_metric([sid, instance], float(count))
        for r in reading.instances:
            self._instance_families(g, r, reading.notation, reading.ccms_nodes)
            if r.health is not None:
                self._call_health(g, [r.identity.sid, r.identity.sap_instance], r.health)
        self._components(g, reading)
        return iter(g.all)

    @staticmethod
    def _components(g: _Families, reading: SAPControlReading) -> None:
        """ABAPGetComponentList: CVERS is the system's (one database), so one set per SID,
        from the first of its ABAP instances that answered."""
        info = g.gauge(
            "sap_software_component_info",
            "ABAP software components installed (ABAPGetComponentList, table CVERS): release "
            "and support package level (SAP's digits, e.g. 0045); always 1.",
            ["sid", "component", "release", "support_package"],
        )
        count = g.gauge(
            "sap_software_components",
            "Rows of the system's component list (ABAPGetComponentList); the info series "
            "hold at most 300 of them.",
            ["sid"],
        )
        seen: set[str] = set()
        for r in reading.instances:
            rows = r.data.get("ABAPGetComponentList") if r.up else None
            if rows is None or r.identity.sid in seen:
                continue
            seen.add(r.identity.sid)
            kept, total = components(rows)
            for c in kept:
                info.add_metric([r.identity.sid, c.component, c.release, c.support_package], 1.0)
            count.add_metric([r.identity.sid], float(total))

    @staticmethod
    def _call_health(g: _Families, base: list[str], h: CallHealth) -> None:
        calls = g.counter(
            "sap_sapcontrol_calls",
            "Web-method calls made to the instance's sapstartsrv since start, by outcome: ok, "
            "unauthorized (HTTP 401), fault (SOAP fault), server_error (HTTP 5xx), invalid "
            "(truncated or malformed answer), timeout (no complete answer by the deadline), "
            "unreachable (no connection).",
            [*LABELS, "method", "outcome"],
        )
        for (method, result), n in sorted(h.calls.items()):
            calls.add_metric([*base, method, result], float(n))
        skipped = g.counter(
            "sap_sapcontrol_calls_skipped",
            "Calls not made, by reason: backoff (the method failed lately), auth (the "
            "monitoring user was refused lately), budget (the instance's calls per minute "
            "used up), state (disp+work not running: no ABAP method), deadline (no time left).",
            [*LABELS, "method", "reason"],
        )
        for (method, reason), n in sorted(h.skipped.items()):
            skipped.add_metric([*base, method, reason], float(n))
        backoff = g.gauge(
            "sap_sapcontrol_backoff_seconds",
            "Seconds until the method is called again on the instance (0: not backed off).",
            [*LABELS, "method"],
        )
        failing = g.gauge(
            "sap_sapcontrol_method_failing",
            "1 if the method's last call on the instance failed other than by HTTP 401 (a "
            "fault, HTTP 5xx, a malformed answer, no answer); kept while it is backed off.",
            [*LABELS, "method"],
        )
        for method in sorted(h.backoff_s):
            backoff.add_metric([*base, method], h.backoff_s[method])
        for method in sorted(h.failing):
            failing.add_metric([*base, method], 1.0 if h.failing[method] else 0.0)
        g.gauge(
            "sap_sapcontrol_auth_refused",
            "1 while the monitoring user is refused (HTTP 401) by the instance's sapstartsrv: "
            "its protected methods are held back, one login attempt per AUTH_BACKOFF_S.",
        ).add_metric(base, 1.0 if h.auth_refused else 0.0)
        g.counter(
            "sap_sapcontrol_call_budget_exhausted",
            "Minutes in which the instance's call budget (CALL_BUDGET_PER_MINUTE) ran out.",
        ).add_metric(base, float(h.budget_exhausted))
        g.gauge(
            "sap_sapcontrol_call_budget_remaining",
            "Calls the instance's budget allows in the current 60 s window.",
        ).add_metric(base, float(h.budget_left))
        insecure = g.gauge(
            "sap_sapcontrol_insecure",
            "1 for each weakness of how the instance is reached: basic_auth_over_http (the "
            "password crosses the network in clear), tls_verify_off (VERIFY=false).",
            [*LABELS, "reason"],
        )
        for reason in h.insecure:
            insecure.add_metric([*base, reason], 1.0)

    def _instance_families(
        self,
        g: _Families,
        r: InstanceResult,
        notation: str | None,
        ccms_nodes: dict[str, tuple[str, ...]],
    ) -> None:
        base = [r.identity.sid, r.identity.sap_instance]
        g.gauge(
            "sap_sapcontrol_scrape_duration_seconds",
            "Time this scrape spent reading the instance's sapstartsrv (all its methods).",
        ).add_metric(base, r.duration)
        ok = g.gauge(
            "sap_sapcontrol_request_success",
            "1 if the web method answered in this scrape (0: fault, 401 or no answer).",
            [*LABELS, "method"],
        )
        took = g.gauge(
            "sap_sapcontrol_request_duration_seconds",
            "Time the web method took to answer in this scrape.",
            [*LABELS, "method"],
        )
        for method, (success, seconds) in sorted(r.calls.items()):
            ok.add_metric([*base, method], 1.0 if success else 0.0)
            took.add_metric([*base, method], seconds)
        if r.target.dispstatus:
            add(
                g.gauge(
                    "sap_instance_status",
                    "GetSystemInstanceList dispstatus of the instance: 1 gray (stopped), "
                    "2 green, 3 yellow, 4 red (sapstartsrv's STATE-COLOR).",
                ),
                base,
                color_code(r.target.dispstatus),
            )
        g.gauge(
            "sap_instance_info",
            "The instance's features as GetSystemInstanceList lists them; always 1.",
            [*LABELS, "features"],
        ).add_metric([*base, r.identity.features], 1.0)
        if r.syslog is not None:
            entries = g.counter(
                "sap_syslog_entries",
                "New ABAP system log (SM21) entries since the first ABAPReadSyslog answer, by "
                "severity (red, yellow, green, gray) and message id (those in "
                "WLMON_SAPCONTROL_SYSLOG_MESSAGE_IDS, else other); the text is in the log "
                'store, {source="sapcontrol_syslog"}.',
                [*LABELS, "severity", "message_id"],
            )
            for (sev, mid), n in sorted(r.syslog.items()):
                entries.add_metric([*base, sev, mid], float(n))
        if r.locks is not None:
            self._lock_table(g, base, r.locks)
        if not r.up:
            return
        for method, payload in r.data.items():
            fill = {
                "GetProcessList": self._processes,
                "ABAPGetWPTable": self._work_processes,
                "GetQueueStatistic": self._queues,
                "EnqGetStatistic": self._enqueue,
                "ICMGetThreadList": self._icm_threads,
                "ICMGetConnectionList": self._icm_connections,
                "J2EEGetProcessList2": self._java_processes,
                "J2EEGetThreadList2": self._java_threads,
                "GetVersionInfo": self._kernel,
            }.get(method)
            if fill is not None:
                fill(g, base, payload)
            elif method == "GetAlertTree":
                where = r.target.endpoint.label
                self._ccms(g, base, payload, notation, where, ccms_nodes)
            elif method == "GetAlerts":
                self._open_alerts(g, base, payload, ccms_nodes)
            elif method == "HAGetFailoverConfig":
                self._ha_config(g, base, payload)
            elif method in HA_CHECKS:
                self._ha_checks(g, base, HA_CHECKS[method], payload)

    @staticmethod
    def _processes(g: _Families, base: list[str], rows: list[Record]) -> None:
        fam = g.gauge(
            "sap_process_status",
            "GetProcessList dispstatus of each process sapstartsrv started (disp+work, gwrd, "
            "icman, msg_server, enserver, ...): 1 gray, 2 green, 3 yellow, 4 red.",
            [*LABELS, "process"],
        )
        for row in rows:
            if row["name"]:
                add(fam, [*base, row["name"]], color_code(row["dispstatus"]))

    @staticmethod
    def _work_processes(g: _Families, base: list[str], rows: list[Record]) -> None:
        by_status = g.gauge(
            "sap_work_processes",
            "Work processes by type (DIA, UPD, BTC, ...) and status (wait, run, hold, "
            "stopped, ended), from ABAPGetWPTable (SM50).",
            [*LABELS, "type", "status"],
        )
        by_activity = g.gauge(
            "sap_work_processes_activity",
            "Busy work processes by what they do (ABAPGetWPTable Status/Reason/Action): "
            "roll_in, roll_out, load_gen, db_request, enqueue (on hold for ENQ), processing "
            "(ABAP), hold (other waits). Their mean over time divided by the step rate is the "
            "time per step (Little's law).",
            [*LABELS, "type", "activity"],
        )
        cpu = g.counter(
            "sap_work_processes_cpu_seconds",
            "CPU time of the work processes since they started (ABAPGetWPTable column Cpu).",
            [*LABELS, "type"],
        )
        longest = g.gauge(
            "sap_work_processes_longest_running_seconds",
            "How long the longest-running busy work process of each type has been on its "
            "current request (ABAPGetWPTable column Time, SM50's elapsed time); 0 with none "
            "busy. Who and which program is SM50's to say, not a label's.",
            [*LABELS, "type"],
        )
        counts: dict[tuple[str, str], int] = {}
        acts: dict[tuple[str, str], int] = {}
        cpus: dict[str, float] = {}
        longs: dict[str, float] = {}
        for row in rows:
            typ = str(row["Typ"]).strip().upper() or "?"
            status = STATUS.get(str(row["Status"]).strip().lower(), "other")
            counts[(typ, status)] = counts.get((typ, status), 0) + 1
            act = wp_activity(row)
            if act is not None:
                acts[(typ, act)] = acts.get((typ, act), 0) + 1
            cpus[typ] = cpus.get(typ, 0.0) + cpu_seconds(row["Cpu"] or "")
            if status != "wait":
                longs[typ] = max(longs.get(typ, 0.0), cpu_seconds(row["Time"] or ""))
        for typ in sorted(cpus):
            for status in sorted({*STATUSES, *(s for t, s in counts if t == typ)}):
                by_status.add_metric([*base, typ, status], float(counts.get((typ, status), 0)))
            for act in ACTIVITIES:
                by_activity.add_metric([*base, typ, act], float(acts.get((typ, act), 0)))
            cpu.add_metric([*base, typ], cpus[typ])
            longest.add_metric([*base, typ], longs.get(typ, 0.0))

    @staticmethod
    def _queues(g: _Families, base: list[str], rows: list[Record]) -> None:
        labels = [*LABELS, "queue"]
        now = g.gauge(
            "sap_dispatcher_queue_length",
            "Requests waiting in the queue now (GetQueueStatistic Now, dpmon).",
            labels,
        )
        high = g.gauge(
            "sap_dispatcher_queue_peak",
            "Highest queue length since the instance started (GetQueueStatistic High).",
            labels,
        )
        cap = g.gauge(
            "sap_dispatcher_queue_capacity",
            "Requests the queue can hold (GetQueueStatistic Max).",
            labels,
        )
        writes = g.counter(
            "sap_dispatcher_queue_writes",
            "Requests put into the queue since the instance started (GetQueueStatistic "
            "Writes); for ABAP/DIA, the dialog steps dispatched.",
            labels,
        )
        reads = g.counter(
            "sap_dispatcher_queue_reads",
            "Requests taken from the queue by a work process (GetQueueStatistic Reads).",
            labels,
        )
        for row in rows:
            if not row["Typ"]:
                continue
            key = [*base, row["Typ"]]
            add(now, key, row["Now"])
            add(high, key, row["High"])
            add(cap, key, row["Max"])
            add(writes, key, unsigned(row["Writes"]))
            add(reads, key, unsigned(row["Reads"]))

    @staticmethod
    def _icm_threads(g: _Families, base: list[str], rows: list[Record]) -> None:
        by_status = g.gauge(
            "sap_icm_threads",
            "ICM worker threads by status (ICMGetThreadList, SMICM): free (Available) or "
            "running; other for any other status text.",
            [*LABELS, "status"],
        )
        counts = dict.fromkeys(ICM_THREAD_STATUSES, 0)
        for row in rows:
            status = ICM_THREAD_STATUS.get(str(row["status"]).strip().lower(), "other")
            counts[status] = counts.get(status, 0) + 1
        for status, n in counts.items():
            by_status.add_metric([*base, status], float(n))
        counted = [row["requests"] for row in rows]
        add(
            g.counter(
                "sap_icm_requests",
                "Requests the ICM's current worker threads processed (ICMGetThreadList "
                "requests summed); threads ICM ends take their count with them, which rate() "
                "reads as a reset.",
            ),
            base,
            None if None in counted else sum(counted),
        )

    @staticmethod
    def _java_processes(g: _Families, base: list[str], rows: list[Record]) -> None:
        """J2EEGetProcessList2: the server nodes jstart runs. The node label is the cluster id
        (a fixed number per node), never its name or text."""
        states = g.gauge(
            "sap_java_server_processes",
            "AS Java processes jstart runs (J2EEGetProcessList2) by J2EE state: stopped, "
            "starting, core-running, running, stopping, maintenance, unknown.",
            [*LABELS, "state"],
        )
        counts: dict[str, int] = {}
        for row in rows:
            state = str(row.get("state") or "").removeprefix(J2EE_STATE_PREFIX)
            state = state.removeprefix("J2EE-")
            word = state.lower() if state else "unknown"
            counts[word] = counts.get(word, 0) + 1
        for word, n in sorted(counts.items()):
            states.add_metric([*base, word], float(n))
        # Counts since jstart started (a jstart restart resets them, as a counter's reset).
        restarts = g.counter(
            "sap_java_process_restarts",
            "Times jstart restarted the AS Java process since jstart started "
            "(J2EEGetProcessList2 restartCount), by cluster id.",
            [*LABELS, "cluster_id"],
        )
        errors = g.counter(
            "sap_java_process_errors",
            "Errors jstart counted for the AS Java process (J2EEGetProcessList2 errorCount), "
            "by cluster id.",
            [*LABELS, "cluster_id"],
        )
        for row in rows:
            if row.get("clusterId") is None:
                continue
            key = [*base, str(row["clusterId"])]
            add(restarts, key, row.get("restartCount"))
            add(errors, key, row.get("errorCount"))

    @staticmethod
    def _java_threads(g: _Families, base: list[str], rows: list[Record]) -> None:
        """J2EEGetThreadList2: each thread of the server nodes; counted by pool (allow-listed)
        and whether it works on a task. Thread names, users and tasks stay out of labels."""
        fam = g.gauge(
            "sap_java_threads",
            "AS Java threads (J2EEGetThreadList2) by pool (application, system, other) and "
            "state: busy (working on a task) or idle (waiting in its pool for one).",
            [*LABELS, "pool", "state"],
        )
        counts = {(p, s): 0 for p in ("application", "system") for s in ("busy", "idle")}
        for row in rows:
            pool = J2EE_POOLS.get(str(row.get("pool") or "").strip().lower(), "other")
            text = str(row.get("state") or "").strip().lower()
            idle = not row.get("task") or not text or text.startswith(J2EE_IDLE_STATES)
            key = (pool, "idle" if idle else "busy")
            counts[key] = counts.get(key, 0) + 1
        for (pool, state), n in sorted(counts.items()):
            fam.add_metric([*base, pool, state], float(n))

    @staticmethod
    def _kernel(g: _Families, base: list[str], rows: list[Record]) -> None:
        """GetVersionInfo: each kernel executable's release and patch (a patch differing
        within one SID is a kernel update sapcpe or a restart did not finish)."""
        versions = kernel_versions(rows)
        info = g.gauge(
            "sap_kernel_info",
            "Kernel release and patch of each kernel executable of the instance "
            "(GetVersionInfo; executable: sapstartsrv, disp+work, gwrd, icman, msg_server, "
            "enserver, enq_server, jstart, ..., dbsl the database library); always 1.",
            [*LABELS, "executable", "release", "patch"],
        )
        patch = g.gauge(
            "sap_kernel_patch",
            "Kernel patch number of each kernel executable of the instance (GetVersionInfo), "
            "labelled by its release: compared across the instances of a SID.",
            [*LABELS, "executable", "release"],
        )
        for f in versions.files:
            info.add_metric([*base, f.executable, f.release, str(f.patch)], 1.0)
            patch.add_metric([*base, f.executable, f.release], float(f.patch))
        g.gauge(
            "sap_kernel_versions_unread",
            "Kernel executables whose GetVersionInfo text did not start with a release and a "
            "patch (left out of sap_kernel_info, not guessed).",
        ).add_metric(base, float(versions.unread))

    @staticmethod
    def _icm_connections(g: _Families, base: list[str], rows: list[Record]) -> None:
        fam = g.gauge(
            "sap_icm_connections",
            "Network connections the ICM handles now (ICMGetConnectionList) by protocol "
            "(http, https, smtp, other) and role (server: incoming, client: outgoing).",
            [*LABELS, "protocol", "role"],
        )
        counts = {(p, r): 0 for p in ICM_PROTOCOLS for r in ICM_ROLES}
        for row in rows:
            proto = str(row["protocol"]).strip().lower()
            role = str(row["role"]).strip().lower()
            key = (
                proto if proto in ICM_PROTOCOLS else "other",
                role if role in ICM_ROLES else "other",
            )
            counts[key] = counts.get(key, 0) + 1
        for (proto, role), n in counts.items():
            fam.add_metric([*base, proto, role], float(n))

    @staticmethod
    def _enqueue(g: _Families, base: list[str], stat: Record) -> None:
        labels = [*LABELS, "table"]
        now = g.gauge(
            "sap_enqueue_table_entries",
            "Entries in the lock table now: locks (elementary locks), owners, arguments "
            "(EnqGetStatistic locks-now, owner-now, arguments-now).",
            labels,
        )
        high = g.gauge(
            "sap_enqueue_table_entries_peak",
            "Most entries held at once since start (EnqGetStatistic *-high).",
            labels,
        )
        cap = g.gauge(
            "sap_enqueue_table_entries_capacity",
            "Entries the lock table can hold (EnqGetStatistic *-max).",
            labels,
        )
        state = g.gauge(
            "sap_enqueue_table_state",
            "EnqGetStatistic *-state of the lock table: 1 gray, 2 green, 3 yellow, 4 red.",
            labels,
        )
        for table, key in ENQ_TABLE.items():
            row = [*base, table]
            add(now, row, stat[f"{key}-now"])
            add(high, row, stat[f"{key}-high"])
            add(cap, row, stat[f"{key}-max"])
            add(state, row, color_code(stat[f"{key}-state"]))
        requests = g.counter(
            "sap_enqueue_requests",
            "Requests to the enqueue server since start by operation (EnqGetStatistic "
            "enqueue-requests, dequeue-requests, dequeue-all-requests, ...).",
            [*LABELS, "operation"],
        )
        for op, key in ENQ_REQUESTS.items():
            add(requests, [*base, op], stat[key])
        errors = g.counter(
            "sap_enqueue_errors",
            "Failed lock and release requests (EnqGetStatistic enqueue-errors, dequeue-errors).",
            [*LABELS, "operation"],
        )
        add(errors, [*base, "enqueue"], stat["enqueue-errors"])
        add(errors, [*base, "dequeue"], stat["dequeue-errors"])
        add(
            g.counter(
                "sap_enqueue_rejects",
                "Lock requests rejected because the lock was held (EnqGetStatistic "
                "enqueue-rejects).",
            ),
            base,
            stat["enqueue-rejects"],
        )
        for name, key, text in (
            ("lock_time", "lock-time", "in lock table operations"),
            ("lock_wait_time", "lock-wait-time", "waiting for access to the lock table"),
            ("server_time", "server-time", "in the enqueue server in all"),
        ):
            add(
                g.counter(
                    f"sap_enqueue_{name}_seconds",
                    f"Seconds spent {text} since start (EnqGetStatistic {key}).",
                ),
                base,
                stat[key],
            )
        add(
            g.gauge(
                "sap_enqueue_replication_state",
                "EnqGetStatistic replication-state: 1 gray (no replication), 2 green, "
                "3 yellow, 4 red.",
            ),
            base,
            color_code(stat["replication-state"]),
        )

    def _ccms(
        self,
        g: _Families,
        base: list[str],
        tree: list[Record],
        notation: str | None,
        where: str,
        extra: dict[str, tuple[str, ...]],
    ) -> None:
        nodes = ccms.paths(tree)
        notation = ccms.tree_notation([n.get("description") for n in tree], notation)
        state = g.gauge(
            "sap_ccms_node_state",
            "GetAlertTree ActualValue of the CCMS nodes wlmon reads: 1 gray, 2 green, "
            "3 yellow, 4 red.",
            [*LABELS, "node"],
        )
        read: set[str] = set()
        for suffix, metric, what in CCMS_GAUGES:
            fam = g.gauge(
                f"sap_ccms_{metric}",
                f"CCMS {'/'.join(suffix)} ({what}) from GetAlertTree: the monitor's average over "
                "its last interval, in base units. Absent while CCMS shows '-'.",
            )
            node = None if metric in read else ccms.find(nodes, suffix)
            if node is None:
                continue
            read.add(metric)
            add(state, [*base, "/".join(suffix)], color_code(node["ActualValue"]))
            value = ccms.parse_value(node["description"], notation)
            if value is not None:
                fam.add_metric(base, value)
            elif notation is None and ccms.ambiguous(node["description"]):
                self._unread(where, "/".join(suffix), node["description"])
        for name, metric, what in NOC_NODES:
            fam = g.gauge(
                f"sap_ccms_{metric}",
                f"CCMS {name} from GetAlertTree: {what} over the monitor's last interval. "
                "Absent where the tree has no such node or shows no value (its colour is in "
                f'sap_ccms_node_state{{node="{name}"}}).',
            )
            self._node(g, base, nodes, (name,), name, fam, notation, where)
        value = g.gauge(
            "sap_ccms_value",
            "Value of a CCMS node configured in WLMON_SAPCONTROL_CCMS_NODES (`node` is its "
            "configured name), in base units.",
            [*LABELS, "node"],
        )
        for name, suffix in sorted(extra.items()):
            self._node(g, base, nodes, suffix, name, value, notation, where, [name])

    def _node(
        self,
        g: _Families,
        base: list[str],
        nodes: ccms.Paths,
        suffix: tuple[str, ...],
        name: str,
        fam: Metric,
        notation: str | None,
        where: str,
        extra: list[str] | None = None,
    ) -> None:
        """One node's colour (sap_ccms_node_state{node=name}) and value into `fam`."""
        node = ccms.find(nodes, suffix)
        if node is None:
            return
        state = g.gauge("sap_ccms_node_state", "", [*LABELS, "node"])
        add(state, [*base, name], color_code(node["ActualValue"]))
        value = ccms.parse_value(node.get("description"), notation)
        if value is not None:
            fam.add_metric([*base, *(extra or [])], value)
        elif notation is None and ccms.ambiguous(node.get("description")):
            self._unread(where, name, node["description"])

    @staticmethod
    def _lock_table(g: _Families, base: list[str], locks: LockSummary) -> None:
        by_table = g.gauge(
            "sap_enqueue_locks",
            "Locks in the lock table (EnqGetLockTable, SM12) by table: those in "
            "WLMON_SAPCONTROL_LOCK_TABLES, every other as other.",
            [*LABELS, "table"],
        )
        for table, n in sorted(locks.by_table.items()):
            by_table.add_metric([*base, table], float(n))
        g.gauge(
            "sap_enqueue_lock_users",
            "Users (client and name) holding locks (EnqGetLockTable): counted, not labels.",
        ).add_metric(base, float(locks.users))
        g.gauge(
            "sap_enqueue_locks_most_by_one_user",
            "The most locks one user holds (EnqGetLockTable).",
        ).add_metric(base, float(locks.most_by_one_user))
        age = g.gauge(
            "sap_enqueue_oldest_lock_age_seconds",
            "How long the oldest lock in the table has been seen held, tracked across "
            "readings (a lock entry carries no time): from the first reading that had it, so "
            "for locks held before the exporter started, a lower bound. Absent with no lock.",
        )
        if locks.oldest_age_s is not None:
            age.add_metric(base, locks.oldest_age_s)

    @staticmethod
    def _ha_config(g: _Families, base: list[str], answer: Record) -> None:
        active = bool(answer.get("HAActive"))
        g.gauge(
            "sap_ha_failover_active",
            "1 if a cluster (HA failover software) runs the instance: HAGetFailoverConfig "
            "HAActive; 0 without one, or with the cluster in maintenance.",
        ).add_metric(base, 1.0 if active else 0.0)
        if not active:
            return
        nodes = ha_nodes(answer)
        g.gauge(
            "sap_ha_cluster_nodes",
            "Nodes of the cluster running the instance (HAGetFailoverConfig HANodes).",
        ).add_metric(base, float(len(nodes)))
        on = str(answer.get("HAActiveNode") or "").strip()
        if on:
            # One series per instance: the node is a cluster member (HANodes, two or a few).
            g.gauge(
                "sap_ha_active_node_info",
                "The cluster node the instance runs on now (HAGetFailoverConfig "
                "HAActiveNode); always 1. A change is a failover.",
                [*LABELS, "node"],
            ).add_metric([*base, on], 1.0)

    @staticmethod
    def _ha_checks(g: _Families, base: list[str], check: str, rows: list[Record]) -> None:
        fam = g.gauge(
            "sap_ha_checks",
            "HACheckConfig (check=config: the system's HA configuration and state) and "
            "HACheckFailoverConfig (check=failover: the cluster connector's) results by "
            "category and state; each combination always present (0: none). The checks' "
            "texts are in the answer, not in labels.",
            [*LABELS, "check", "category", "state"],
        )
        counts = {(c, st): 0 for c in HA_CATEGORIES for st in HA_STATES}
        for row in rows:
            cat = ha_word(row.get("category"), ("SAPCONTROL-",), HA_CATEGORIES)
            st = ha_word(row.get("state"), ("SAPCONTROL-", "HA-"), HA_STATES)
            counts[(cat, st)] = counts.get((cat, st), 0) + 1
        for (cat, st), n in counts.items():
            fam.add_metric([*base, check, cat, st], float(n))

    @staticmethod
    def _open_alerts(
        g: _Families, base: list[str], answer: Record, extra: dict[str, tuple[str, ...]]
    ) -> None:
        """GetAlerts: open CCMS alerts (RZ20's alert browser) by severity, and by the
        attribute (MTE name) they are on where that is one wlmon knows (the NOC nodes, the
        dialog values, the configured nodes), else `other`: MTE names are free text."""
        known = {name for name, _, _ in NOC_NODES}
        known |= {suffix[-1] for suffix, _, _ in CCMS_GAUGES}
        known |= {suffix[-1] for suffix in extra.values()}
        total = g.gauge(
            "sap_ccms_alerts",
            "Open CCMS alerts (GetAlerts: not yet completed in RZ20) by severity: yellow, red.",
            [*LABELS, "severity"],
        )
        by_attr = g.gauge(
            "sap_ccms_alerts_by_attribute",
            "Open CCMS alerts by severity and the attribute (MTE) they were raised on: the "
            "names wlmon reads from the alert tree, `other` for any other.",
            [*LABELS, "severity", "attribute"],
        )
        counts = dict.fromkeys(ALERT_SEVERITY.values(), 0)
        attrs: dict[tuple[str, str], int] = {}
        for row in answer.get("alert") or []:
            severity = ALERT_SEVERITY.get(row.get("Value") or "")
            if severity is None:
                continue
            counts[severity] += 1
            attr = str(row.get("Attribute") or "").strip()
            key = (severity, attr if attr in known else "other")
            attrs[key] = attrs.get(key, 0) + 1
        for severity, n in counts.items():
            total.add_metric([*base, severity], float(n))
        for (severity, attr), n in sorted(attrs.items()):
            by_attr.add_metric([*base, severity, attr], float(n))


class _Families:
    """Metric families by name, created once per scrape in first-use order."""

    def __init__(self) -> None:
        self._by_name: dict[str, Metric] = {}
        self.all: list[Metric] = []

    def _get(self, kind, name: str, help_text: str, labels: list[str] | None) -> Metric:
        if name not in self._by_name:
            fam = kind(name, help_text, labels=LABELS if labels is None else labels)
            self._by_name[name] = fam
            self.all.append(fam)
        return self._by_name[name]

    def gauge(self, name: str, help_text: str, labels: list[str] | None = None) -> Metric:
        return self._get(GaugeMetricFamily, name, help_text, labels)

    def counter(self, name: str, help_text: str, labels: list[str] | None = None) -> Metric:
        return self._get(CounterMetricFamily, name, help_text, labels)
