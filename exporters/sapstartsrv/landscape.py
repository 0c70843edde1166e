"""The live landscape model seen through SAPControl: what each instance's sapstartsrv answers.

Dialog instances (`penguin2_D00`, ...) run ABAP (features ABAP|GATEWAY|ICMAN|IGS); the
central-services host runs the message and enqueue server as `ASCS01`
(MESSAGESERVER|ENQUE). Every answer is derived from the model's current operating point
and its cumulative counters:

- ABAPGetWPTable: one row per configured work process. How many are busy, and with what,
  follows Little's law: a component taking t seconds of every step, at r steps/s, keeps
  r*t work processes in it on average (roll-in/out as Action "Roll In"/"Roll Out", DB
  calls as "Sequential Read"/"Insert"/... with their table, lock requests as Status
  "Hold" Reason "ENQ", the rest ABAP processing). Counts are drawn by systematic
  sampling (error diffusion): each call shows whole work processes, and their average
  over calls is the model's mean, so short monitoring windows converge.
- GetQueueStatistic: ABAP/DIA and ABAP/UPD Now from the model's dispatcher queues (the
  same sampling), High their peak, Writes/Reads the requests put into and taken from
  the queue since start (one per step).
- EnqGetStatistic (ASCS only): lock requests from the steps' enqueues, lock and wait
  time accumulated from the enqueue server's service and queueing time. A slow network
  to the enqueue server is not seen here (as on a real system): it shows as work
  processes on hold for ENQ on the dialog instances.
- ICMGetThreadList / ICMGetConnectionList: the ICM of a dialog instance is idle, as in the
  SD benchmark, whose users come through SAP GUI and the dispatcher, not HTTP: its worker
  threads are all "Available" with no requests and it holds no connections.
- GetAlertTree: the CCMS R3Services/Dialog values as sapstartsrv returns them (`description`
  "123 msec", "/min", "%"), averaged over the last CCMS interval of simulated time.
"""

from __future__ import annotations

import threading
import time
import zlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from exporters.sapcontrol.schema import GRAY, GREEN, RED, YELLOW, Record
from exporters.thresholds import Thresholds
from exporters.vocabulary import DIALOG_RESPONSE, INDICATOR_BY_COMPONENT, Indicator
from landscape_model.config import Scenario
from landscape_model.engine import Snapshot
from landscape_model.network import instance_layout
from landscape_model.terms import COMPONENTS

_C = {name: k for k, name in enumerate(COMPONENTS)}
ASCS_NAME = "ASCS01"
DIALOG_FEATURES = "ABAP|GATEWAY|ICMAN|IGS"
ASCS_FEATURES = "MESSAGESERVER|ENQUE"
JAVA_FEATURES = "J2EE|IGS"  # an AS Java instance as GetSystemInstanceList lists it
QUEUE_MAX = 14000  # rdisp/elem_per_queue as dpmon and sap_host_exporter's samples show it
ICM_QUEUE_MAX = 6000
ICM_THREADS = 10  # worker threads the model's ICM keeps (SMICM's thread list)
ENQ_TABLE_MAX = 56415  # lock table entries, the figure in sap_host_exporter's samples
# Queue types a dialog instance's dispatcher lists (dpmon), in its order.
QUEUES = ("ABAP/NOWP", "ABAP/DIA", "ABAP/UPD", "ABAP/ENQ", "ABAP/BTC", "ABAP/SPO", "ABAP/UP2")
# Where a busy work process spends a step's time, and how SM50 shows it: (component,
# Status, Reason, Action). DB calls get their Action from the statement's operation.
ACTIVITIES = (
    ("roll_in", "Run", "", "Roll In"),
    ("load_gen", "Run", "", "Load Report"),
    ("processing", "Run", "", ""),
    ("db_request", "Run", "", "DB"),
    ("enqueue", "Hold", "ENQ", ""),
    ("roll_out", "Run", "", "Roll Out"),
)
DB_ACTION = {
    "SELECT": "Sequential Read",
    "INSERT": "Insert",
    "UPDATE": "Update",
    "DELETE": "Delete",
}
# ABAP main programs of the SD benchmark transactions (SM50 column Program).
PROGRAMS = {
    "VA01": "SAPMV45A",
    "VA03": "SAPMV45A",
    "VL01N": "SAPMV50A",
    "VL02N": "SAPMV50A",
    "VA05": "SAPMV75A",
    "VF01": "SAPMV60A",
}
UPDATE_PROGRAM = "RSM13000"
CLIENT = "100"
# A dialog instance's process list turns yellow when the dialog queue time exceeds this.
DISP_QUEUE_YELLOW_S = 1.0
# The process a web method reads from, and the fault it answers while that process is
# stopped. "DpAttachStartService failed" is what a real sapstartsrv answered ABAPGetWPTable
# with its dispatcher down; the other texts are the model's.
NEEDS_PROCESS = {
    "ABAPGetWPTable": ("disp+work", "DpAttachStartService failed"),
    "ABAPGetSystemWPTable": ("disp+work", "DpAttachStartService failed"),
    "GetQueueStatistic": ("disp+work", "DpAttachStartService failed"),
    "GetAlertTree": ("disp+work", "DpAttachStartService failed"),
    "GetAlerts": ("disp+work", "DpAttachStartService failed"),
    "ABAPGetComponentList": ("disp+work", "DpAttachStartService failed"),
    "ICMGetThreadList": ("icman", "IcmAttach failed"),
    "ICMGetConnectionList": ("icman", "IcmAttach failed"),
    "EnqGetStatistic": ("enserver", "EnqGetStatistic: enqueue server not running"),
    "EnqGetLockTable": ("enserver", "EnqGetLockTable: enqueue server not running"),
    # AS Java: sapstartsrv reads the J2EE lists from jstart (the fault text is the twin's).
    "J2EEGetProcessList2": ("jstart", "J2EEGetProcessList2: jstart not running"),
    "J2EEGetThreadList2": ("jstart", "J2EEGetThreadList2: jstart not running"),
}
# Signals SendSignal stops a process with (by name or number, as sapcontrol accepts them).
STOP_SIGNALS = frozenset({"9", "15", "KILL", "TERM", "SIGKILL", "SIGTERM", "INT", "2", "SIGINT"})


@dataclass(frozen=True)
class InstanceInfo:
    """One instance of the model as GetSystemInstanceList lists it."""

    name: str  # wlmon's sap_instance, e.g. penguin2_D00
    host: str
    instance_name: str  # D00, ASCS01
    nr: int
    features: str
    index: int  # row in the operating point's instance arrays; -1 for the ASCS
    start_priority: str

    @property
    def abap(self) -> bool:
        return "ABAP" in self.features.split("|")

    @property
    def enqueue(self) -> bool:
        return "ENQUE" in self.features.split("|")

    @property
    def icm(self) -> bool:
        return "ICMAN" in self.features.split("|")

    @property
    def java(self) -> bool:
        return "J2EE" in self.features.split("|")


def _nr(instance_name: str) -> int:
    digits = "".join(ch for ch in instance_name[-2:] if ch.isdigit())
    return int(digits or 0)


def _hms(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def _sap_time(epoch: float) -> str:
    return time.strftime("%Y %m %d %H:%M:%S", time.localtime(epoch))


def _color(value: float, yellow: float | None, red: float | None) -> str:
    if red is not None and value >= red:
        return RED
    if yellow is not None and value >= yellow:
        return YELLOW
    return GREEN


def _levels(t: Thresholds, indicator: Indicator, parts: int = 1) -> tuple[float, float | None]:
    yellow = 1000.0 * parts * t.seconds(indicator)
    multiple = indicator.critical_multiple
    return yellow, (yellow * multiple if multiple is not None else None)


def ccms_levels_ms(thresholds: Thresholds) -> dict[str, tuple[float, float | None]]:
    """CCMS Dialog node -> (yellow, red) alert levels in ms, from the thresholds the edge read
    (alerts/thresholds.yml) and the indicators' critical multiples: the node turns yellow
    where wlmon's alert warns and red where it pages. RollTime is roll-in plus roll-out, so
    it has both parts' share."""
    t = thresholds
    return {
        "ResponseTime": _levels(t, DIALOG_RESPONSE),
        "QueueTime": _levels(t, INDICATOR_BY_COMPONENT["dispatcher_wait"]),
        "RollTime": _levels(t, INDICATOR_BY_COMPONENT["roll_in"], parts=2),
        "DBRequestTime": _levels(t, INDICATOR_BY_COMPONENT["db_request"]),
    }


class _Diffuser:
    """Systematic sampling: whole numbers whose running mean follows a fractional target."""

    def __init__(self) -> None:
        self.carry: dict[tuple, float] = {}

    def draw(self, key: tuple, mean: float) -> int:
        # Each key starts at its own phase (a stable hash of it, not 0.5 for all): with one
        # start, 30 instances at 0.2 work processes on ENQ all showed 1 in the same call
        # and 0 in the four between, so no window of a few scrapes summed them right; a
        # real SM50 table is read at independent moments on each instance.
        start = (zlib.crc32(repr(key).encode()) % 1000) / 1000
        acc = self.carry.get(key, start) + max(0.0, float(mean))
        n = int(np.floor(acc))
        self.carry[key] = acc - n
        return n


class ModelLandscape:
    """Builds every SAPControl answer of every instance from the live model."""

    def __init__(
        self,
        snapshot: Callable[[], Snapshot],
        scenario: Callable[[], Scenario],
        thresholds: Thresholds,
        ccms_interval_s: float = 60.0,
        clock: Callable[[], float] = time.time,
        seed: int = 1,
        snapshot_ttl_s: float = 0.1,
    ) -> None:
        self._snapshot = snapshot
        self._scenario = scenario
        # The CCMS alert levels, handed down from the edge (no file read here).
        self.thresholds = thresholds
        self.ccms_interval_s = ccms_interval_s
        self.clock = clock
        self.seed = seed
        self.snapshot_ttl_s = snapshot_ttl_s
        self.started = clock()
        self._lock = threading.RLock()
        self._cache: tuple[float, Snapshot] | None = None
        self._users_cache: dict = {}
        self._calls = 0
        # instance name -> names of its processes stopped (Stop, SendSignal) until Start.
        self._stopped_procs: dict[str, set[str]] = {}
        # instance name -> (epoch, text, STATE-COLOR) of what happened to its processes:
        # its ABAP system log (ABAPReadSyslog).
        self._events: dict[str, deque] = {}
        # Wall-clock time the ascs-failover fault was first seen on (None while it is off):
        # its phases (enqueue down, moved with replication lost, replicating) run from there.
        self._failover_since: float | None = None
        self._reset(0.0)

    def _reset(self, sim_time: float) -> None:
        """Fresh counters: a new run (or a replaced scenario) is an instance restart."""
        self._sim_time = sim_time
        self._diffuser = _Diffuser()
        self._high: dict[tuple[str, str], int] = {}
        self._queue_counts: dict[tuple[str, str], tuple[int, int]] = {}
        self._history: dict[str, deque] = {}
        self._enq = {"requests": 0.0, "lock": 0.0, "wait": 0.0}
        self._enq_high = {"locks": 0, "owner": 0, "arguments": 0}
        # instance name -> (dialog steps, fraction of a dump) at the last ABAPReadSyslog.
        self._dumped: dict[str, tuple[float, float]] = {}
        # instance name -> ABAP/UPD Reads when its update hang began (update-hang fault).
        self._upd_hang: dict[str, int] = {}
        # Wall-clock time the long-running-dialog-step fault was first answered.
        self._long_step_since: float | None = None
        self.started = self.clock()

    # ------------------------------------------------------------------ model access
    def snapshot(self) -> Snapshot:
        with self._lock:
            now = self.clock()
            if self._cache and now - self._cache[0] < self.snapshot_ttl_s:
                return self._cache[1]
            snap = self._snapshot()
            if snap.totals.sim_time < self._sim_time:
                self._reset(snap.totals.sim_time)
            self._sim_time = snap.totals.sim_time
            self._cache = (now, snap)
            return snap

    def instances(self) -> list[InstanceInfo]:
        snap = self.snapshot()
        out = []
        for i, name in enumerate(snap.state.instances):
            host, inst = name.rsplit("_", 1)
            out.append(InstanceInfo(name, host, inst, _nr(inst), DIALOG_FEATURES, i, "3"))
        cs_host = self._scenario().landscape.central_services.host
        # From the fault's first moment the cluster runs the ASCS on the other node (its
        # enqueue server still starting for the first outage_s): the list names that node,
        # so a monitor that asks again when the old node stops answering follows at once.
        if self._failover_phase() is not None:
            cs_host = self._scenario().landscape.ascs_failover.to_host
        # The name stays the listener's key (the twin serves the moved instance on the same
        # port); the host GetSystemInstanceList names is the node it runs on now.
        name_host = self._scenario().landscape.central_services.host
        out.append(
            InstanceInfo(
                f"{name_host}_{ASCS_NAME}",
                cs_host,
                ASCS_NAME,
                _nr(ASCS_NAME),
                ASCS_FEATURES,
                -1,
                "1",
            )
        )
        java = self._scenario().landscape.java
        if java is not None:
            # No row of the model's arrays: the Java instance takes none of its ABAP load.
            out.append(
                InstanceInfo(
                    f"{java.host}_{java.instance_name}",
                    java.host,
                    java.instance_name,
                    _nr(java.instance_name),
                    JAVA_FEATURES,
                    -1,
                    "3",
                )
            )
        return out

    def instance(self, name: str) -> InstanceInfo:
        for inst in self.instances():
            if inst.name == name:
                return inst
        raise KeyError(f"no instance {name!r} in the model")

    def _rng(self, inst: InstanceInfo) -> np.random.Generator:
        self._calls += 1
        return np.random.default_rng([self.seed, inst.index + 1, self._calls])

    # ------------------------------------------------------------------ identity
    def system_instance_list(
        self, ports: dict[str, tuple[int, int]], stopped: set[str]
    ) -> list[Record]:
        rows = []
        for inst in self.instances():
            http, https = ports.get(inst.name, (0, 0))
            procs = self.stopped_processes(inst.name)
            if inst.name in stopped or len(procs) == len(self._processes(inst)):
                color = GRAY
            elif procs:
                color = RED  # started, but a process that should run does not
            elif inst.abap and self._queue_time(inst) >= DISP_QUEUE_YELLOW_S:
                color = YELLOW
            else:
                color = GREEN
            rows.append(
                {
                    "hostname": inst.host,
                    "instanceNr": inst.nr,
                    "httpPort": http,
                    "httpsPort": https,
                    "startPriority": inst.start_priority,
                    "features": inst.features,
                    "dispstatus": color,
                }
            )
        return rows

    def instance_properties(self, inst: InstanceInfo) -> list[Record]:
        snap = self.snapshot()
        props = {
            "SAPSYSTEMNAME": snap.sid,
            "SAPSYSTEM": f"{inst.nr:02d}",
            "INSTANCE_NAME": inst.instance_name,
            "SAPLOCALHOST": inst.host,
            "SAPLOCALHOSTFULL": inst.host,
            "Features": inst.features,
        }
        return [{"property": k, "propertytype": "Attribute", "value": v} for k, v in props.items()]

    # ------------------------------------------------------------------ what monitors read
    def version_info(self, inst: InstanceInfo) -> list[Record]:
        """GetVersionInfo: the instance's executables in SAP's own VersionInfo text
        ("753, patch 1100, changelist 2117385, RKS compatibility level 1, optU (...),
        linuxx86_64"). An instance the landscape's `software.lagging` names still runs the
        previous patch (the kernel-patch-drift fault)."""
        soft = self._scenario().landscape.software
        exe = f"/usr/sap/{self.snapshot().sid}/{inst.instance_name}/exe"
        if inst.java:
            files = ["jstart", "icman", "igswd_mt"]
        elif inst.abap:
            files = ["disp+work", "gwrd", "icman", "dbdb6slib.so"]
        else:
            files = ["msg_server", "enserver"]
        lagging = inst.name in soft.lagging
        patch = soft.lagging_patch if lagging else soft.kernel_patch
        changelist = soft.kernel_changelist - (patch != soft.kernel_patch) * 17113
        built = "Jun 12 2023, 05:18:04" if lagging else "Jan 10 2024, 21:10:06"
        text = (
            f"{soft.kernel_release}, patch {patch}, changelist {changelist}, "
            f"RKS compatibility level 1, optU ({built}), linuxx86_64"
        )
        return [
            {"Filename": f"{exe}/{name}", "VersionInfo": text, "Time": _sap_time(self.started)}
            for name in [*files, "sapstartsrv"]
        ]

    def component_list(self, inst: InstanceInfo) -> list[Record]:
        """ABAPGetComponentList: CVERS, the same on every ABAP instance (one database)."""
        if not inst.abap:
            return []
        return [
            {
                "component": c.component,
                "release": c.release,
                "patchlevel": c.patchlevel,
                "componenttype": "S",
                "description": c.description,
            }
            for c in self._scenario().landscape.software.components
        ]

    def parameters(self, inst: InstanceInfo) -> dict[str, str]:
        """The profile parameters the model knows for the instance."""
        snap = self.snapshot()
        sid = snap.sid
        params = {
            "SAPSYSTEMNAME": sid,
            "SAPSYSTEM": f"{inst.nr:02d}",
            "INSTANCE_NAME": inst.instance_name,
            "SAPLOCALHOST": inst.host,
            "SAPGLOBALHOST": self._scenario().landscape.central_services.host,
            "DIR_INSTANCE": f"/usr/sap/{sid}/{inst.instance_name}",
        }
        if inst.abap:
            st = snap.state
            params["rdisp/wp_no_dia"] = str(int(st.wp_total[inst.index, 0]))
            params["rdisp/wp_no_vb"] = str(int(st.wp_total[inst.index, 1]))
        return params

    def parameter_value(self, inst: InstanceInfo, name: str) -> str:
        """ParameterValue: one parameter's value, or all of them (`name=value` lines) for
        an empty name; KeyError for one the model does not know."""
        params = self.parameters(inst)
        if not name:
            return "\n".join(f"{k}={v}" for k, v in params.items())
        return params[name]

    def environment(self, inst: InstanceInfo) -> list[str]:
        """GetEnvironment: sapstartsrv's process environment, as `NAME=value` strings."""
        sid = self.snapshot().sid
        home = f"/usr/sap/{sid}/{inst.instance_name}"
        return [
            f"SAPSYSTEMNAME={sid}",
            f"SAPSYSTEM={inst.nr:02d}",
            f"DIR_LIBRARY={home}/exe",
            f"LD_LIBRARY_PATH={home}/exe",
            f"USER={sid.lower()}adm",
        ]

    def access_points(self, inst: InstanceInfo, http: int, https: int) -> list[Record]:
        """GetAccessPointList: where the instance's sapstartsrv listens (the model serves no
        other network service)."""
        rows = []
        for port, protocol in ((http, "HTTP"), (https, "HTTPS")):
            if port:
                rows.append(
                    {
                        "address": inst.host,
                        "port": port,
                        "protocol": protocol,
                        "processname": "sapstartsrv",
                        "active": "Yes",
                    }
                )
        return rows

    def start_profile(self, inst: InstanceInfo) -> Record:
        """GetStartProfile: the profile's name and the lines that start its processes."""
        sid = self.snapshot().sid
        lines = [
            f"SAPSYSTEMNAME = {sid}",
            f"SAPSYSTEM = {inst.nr:02d}",
            f"INSTANCE_NAME = {inst.instance_name}",
            f"SAPLOCALHOST = {inst.host}",
            "DIR_EXECUTABLE = $(DIR_INSTANCE)/exe",
        ]
        for k, (process, *_rest) in enumerate(self._processes(inst)):
            lines.append(f"_P{k:02d} = {process}")
            lines.append(f"Start_Program_{k:02d} = local $(DIR_EXECUTABLE)/$(_P{k:02d}) pf=$(_PF)")
        return {
            "name": f"/usr/sap/{sid}/SYS/profile/{sid}_{inst.instance_name}_{inst.host}",
            "lines": lines,
        }

    def _failover_phase(self) -> str | None:
        """Under the ascs-failover fault: "down" (enqueue server stopped, still on the old
        node), "lost" (on the new node, ERS replication not active), "replicating"; None
        without the fault."""
        failover = self._scenario().landscape.ascs_failover
        if failover is None:
            self._failover_since = None
            return None
        now = self.clock()
        if self._failover_since is None:
            self._failover_since = now
        age = now - self._failover_since
        if age < failover.outage_s:
            return "down"
        return "lost" if age < failover.outage_s + failover.replication_lost_s else "replicating"

    def moving_instance(self) -> str | None:
        """The ASCS's listener name while it moves (the ascs-failover fault's first
        outage_s): the old node's sapstartsrv is gone then, its connections refused."""
        if self._failover_phase() != "down":
            return None
        return f"{self._scenario().landscape.central_services.host}_{ASCS_NAME}"

    def ha_failover_config(self) -> Record:
        """HAGetFailoverConfig: without the ascs-failover fault the model is not an HA system
        (no cluster software); with it, a two-node cluster naming the node the ASCS runs on."""
        sc = self._scenario().landscape
        if sc.ascs_failover is not None:
            phase = self._failover_phase()
            active = sc.central_services.host if phase == "down" else sc.ascs_failover.to_host
            return {
                "HAActive": True,
                "HAProductVersion": "SUSE Linux Enterprise High Availability Extension",
                "HASAPInterfaceVersion": "sap_suse_cluster_connector",
                "HADocumentation": "https://www.suse.com/documentation/sle-ha",
                "HAActiveNode": active,
                "HANodes": [sc.central_services.host, sc.ascs_failover.to_host],
            }
        return {
            "HAActive": False,
            "HAProductVersion": "",
            "HASAPInterfaceVersion": "",
            "HADocumentation": "",
            "HAActiveNode": "",
            "HANodes": [],
        }

    @staticmethod
    def ha_check_failover_config() -> list[Record]:
        """HACheckFailoverConfig: no HA software, so no failover checks (an empty list, as
        sapstartsrv answers without a cluster connector)."""
        return []

    def ha_check_config(self) -> list[Record]:
        """HACheckConfig: the checks of the system's configuration and state the model can
        answer (SAP-CONFIGURATION, SAP-STATE; no HA software, so no HA-* checks)."""
        insts = self.instances()
        abap = [i for i in insts if i.abap]
        running = [i for i in abap if len(self.stopped_processes(i.name)) < len(self._processes(i))]
        scs = next(i for i in insts if i.enqueue)
        scs_up = not self.stopped_processes(scs.name)

        def check(state: str, category: str, description: str, comment: str) -> Record:
            return {
                "state": f"SAPControl-HA-{state}",
                "category": f"SAPControl-{category}",
                "description": description,
                "comment": comment,
            }

        return [
            check(
                "SUCCESS" if len(abap) > 1 else "WARNING",
                "SAP-CONFIGURATION",
                "Redundant ABAP instance configuration",
                f"{len(abap)} ABAP instances detected",
            ),
            check(
                "SUCCESS",
                "SAP-CONFIGURATION",
                "Enqueue separation",
                f"The enqueue server runs in {scs.instance_name}, apart from the ABAP instances",
            ),
            check(
                "SUCCESS" if scs_up else "ERROR",
                "SAP-STATE",
                "SCS instance running",
                f"{scs.instance_name} {'running' if scs_up else 'not running'}",
            ),
            check(
                "SUCCESS" if len(running) > 1 else "ERROR",
                "SAP-STATE",
                "Redundant ABAP instance state",
                f"{len(running)} of {len(abap)} ABAP instances running",
            ),
        ]

    def alerts(self, inst: InstanceInfo, root_tid: str = "") -> Record:
        """GetAlerts: the CCMS nodes under `root_tid` (all: '') that are yellow or red now,
        each as an alert on its monitoring object (the parent node) and attribute."""
        tree = self.alert_tree(inst)
        root = next((n for n in tree if n["Tid"] == root_tid), tree[0]) if root_tid else tree[0]
        out = []
        for node in tree:
            if node["ActualValue"] not in (YELLOW, RED) or not node["Tid"].startswith(root["Tid"]):
                continue
            parent = tree[node["parent"]] if node["parent"] >= 0 else node
            out.append(
                {
                    "Object": parent["name"],
                    "Attribute": node["name"],
                    "Value": node["ActualValue"],
                    "Description": f"{node['name']} {node['description']}",
                    "Time": node["Time"],
                    "Tid": node["Tid"],
                    "Aid": "",
                }
            )
        return {"RootTidName": root["name"], "alert": out}

    def syslog(self, inst: InstanceInfo) -> list[Record]:
        """ABAPReadSyslog: the instance's start, what happened to its processes since, and
        under the short-dump-storm fault each short dump as SM21 writes it (AB0 runtime
        error, red; AB1 short dump written, yellow), the last 1,000 entries."""
        if inst.abap:
            self._dump_entries(inst)
        events = [(self.started, "Instance started (wlmon landscape model)", GREEN, "")]
        with self._lock:
            events += list(self._events.get(inst.name, ()))
        return [
            {
                "Time": _sap_time(when),
                "Typ": "",
                "Client": "",
                "User": "",
                "Tcode": "",
                "MNo": mno,
                "Text": text,
                "Severity": color,
            }
            for when, text, color, mno in events
        ]

    def _dump_entries(self, inst: InstanceInfo) -> None:
        """The dumps the instance's dialog steps made since the last call, at the fault's
        share of them (fractions carried to the next call)."""
        with self._lock:
            share = self._scenario().landscape.abap_errors.short_dumps_per_step
            steps = float(self.snapshot().totals.steps[inst.index, 0].sum())
            last, carry = self._dumped.get(inst.name, (steps, 0.0))
            dumps = max(steps - last, 0.0) * share + carry
            whole = int(dumps)
            self._dumped[inst.name] = (steps, dumps - whole)
            for _ in range(min(whole, 500)):  # one call never floods the 1,000 kept
                self._event(inst.name, 'Run-time error "ZCX_WLMON_STORM" occurred', RED, "AB0")
                self._event(inst.name, '> Short dump "ZCX_WLMON_STORM" generated', YELLOW, "AB1")

    # ------------------------------------------------------------------ process control
    def stop_processes(self, name: str, processes: set[str] | None = None) -> None:
        """Stop `processes` of instance `name` (all: `Stop`); they read GRAY "Stopped"."""
        inst = self.instance(name)
        every = {p[0] for p in self._processes(inst)}
        wanted = every if processes is None else set(processes)
        if wanted - every:
            raise KeyError(f"{name} runs no process {sorted(wanted - every)}")
        with self._lock:
            self._stopped_procs.setdefault(name, set()).update(wanted)
            for process in sorted(wanted):
                self._event(name, f"Process {process} stopped", RED)

    def start_processes(self, name: str) -> None:
        """`Start`: every stopped process of instance `name` runs again."""
        self.instance(name)
        with self._lock:
            for process in sorted(self._stopped_procs.pop(name, set())):
                self._event(name, f"Process {process} started", GREEN)

    def _event(self, name: str, text: str, color: str, mno: str = "") -> None:
        entry = (self.clock(), text, color, mno)
        self._events.setdefault(name, deque(maxlen=1000)).append(entry)

    def stopped_processes(self, name: str) -> frozenset[str]:
        cs = self._scenario().landscape.central_services.host
        if name == f"{cs}_{ASCS_NAME}" and self._failover_phase() == "down":
            return frozenset(self._stopped_procs.get(name, set()) | {"enserver"})
        with self._lock:
            return frozenset(self._stopped_procs.get(name, ()))

    def send_signal(self, name: str, pid: int, signal: str) -> None:
        """SendSignal: a stop signal to one of the instance's pids stops that process."""
        inst = self.instance(name)
        by_pid = {row["pid"]: row["name"] for row in self.process_list(inst) if row["pid"] > 0}
        if pid not in by_pid:
            raise KeyError(f"no process with pid {pid}")
        if signal.strip().upper() in STOP_SIGNALS:
            self.stop_processes(name, {by_pid[pid]})

    def unavailable(self, inst: InstanceInfo, operation: str) -> str:
        """The fault text of `operation` while the process it reads is stopped, else ''."""
        process, fault = NEEDS_PROCESS.get(operation, ("", ""))
        return fault if process in self.stopped_processes(inst.name) else ""

    def _processes(self, inst: InstanceInfo) -> list[tuple[str, str, str, str]]:
        if inst.java:
            return [
                ("jstart", "J2EE Server", GREEN, "All processes running"),
                ("igswd_mt", "IGS Watchdog", GREEN, "Running"),
                ("icman", "ICM", GREEN, "Running"),
            ]
        if not inst.abap:
            return [
                ("msg_server", "MessageServer", GREEN, "Running"),
                ("enserver", "EnqueueServer", GREEN, "Running"),
            ]
        queue_s = self._queue_time(inst)
        color = YELLOW if queue_s >= DISP_QUEUE_YELLOW_S else GREEN
        return [
            (
                "disp+work",
                "Dispatcher",
                color,
                f"Running, Message Server connection ok, Dialog Queue time: {queue_s:.2f} sec",
            ),
            ("igswd_mt", "IGS Watchdog", GREEN, "Running"),
            ("gwrd", "Gateway", GREEN, "Running"),
            ("icman", "ICM", GREEN, "Running"),
        ]

    def process_list(self, inst: InstanceInfo) -> list[Record]:
        up = self.clock() - self.started
        start = _sap_time(self.started)
        base_pid = 4000 + 100 * (inst.index + 1)
        stopped = self.stopped_processes(inst.name)
        rows = []
        for k, (name, desc, color, text) in enumerate(self._processes(inst)):
            if name in stopped:
                # As sapstartsrv lists a process it started that is not running: gray,
                # no pid, no start time.
                rows.append(
                    {
                        "name": name,
                        "description": desc,
                        "dispstatus": GRAY,
                        "textstatus": "Stopped",
                        "starttime": "",
                        "elapsedtime": "",
                        "pid": -1,
                    }
                )
                continue
            rows.append(
                {
                    "name": name,
                    "description": desc,
                    "dispstatus": color,
                    "textstatus": text,
                    "starttime": start,
                    "elapsedtime": _hms(up),
                    "pid": base_pid + k,
                }
            )
        return rows

    def _queue_time(self, inst: InstanceInfo) -> float:
        """Current dialog queue time (Little's law: queue length / arrival rate)."""
        st = self.snapshot().state
        rate = float(st.step_rate[inst.index, 0].sum())
        return float(st.dispatcher_queue[inst.index, 0]) / rate if rate > 0 else 0.0

    # ------------------------------------------------------------------ work processes
    def _busy_means(self, snap: Snapshot, i: int) -> dict[str, float]:
        """Mean dialog work processes in each activity (Little's law), per component."""
        st = snap.state
        rate = st.step_rate[i, 0]  # [transaction]
        return {comp: float(np.dot(rate, st.means[i, 0, :, _C[comp]])) for comp, *_ in ACTIVITIES}

    @staticmethod
    def _statements(snap: Snapshot, task: str, rng, n: int) -> list[tuple[str, str]]:
        """(Action, Table) of `n` DB calls in progress, drawn by the DB time each takes."""
        st = snap.state
        idx = [k for k, s in enumerate(st.statements) if s[1] == task]
        if not idx or n <= 0:
            return [("Sequential Read", "")] * max(n, 0)
        w = st.stmt_exec_rate[idx] * st.stmt_time[idx]
        picks = rng.choice(len(idx), size=n, p=w / w.sum()) if w.sum() > 0 else [0] * n
        out = []
        for p in picks:
            _, _, table, op = st.statements[idx[int(p)]]
            out.append((DB_ACTION.get(op, "Sequential Read"), table))
        return out

    def wp_table(self, inst: InstanceInfo) -> list[Record]:
        if not inst.abap:
            return []
        with self._lock:
            snap = self.snapshot()
            st, i = snap.state, inst.index
            rng = self._rng(inst)
            n_dia, n_upd = int(st.wp_total[i, 0]), int(st.wp_total[i, 1])
            counts = {
                comp: self._diffuser.draw((inst.name, "DIA", comp), mean)
                for comp, mean in self._busy_means(snap, i).items()
            }
            while sum(counts.values()) > n_dia:  # overload: every work process is busy
                counts[max(counts, key=counts.get)] -= 1
            upd_busy = min(n_upd, self._diffuser.draw((inst.name, "UPD"), st.wp_busy[i, 1]))
            busy_rows = [a for a in ACTIVITIES for _ in range(counts[a[0]])]
            n_busy = len(busy_rows)
            # Who is busy with what: the identities are random, the counts are not.
            tx_w = st.step_rate[i, 0]
            txs = (
                [
                    st.transactions[int(k)]
                    for k in rng.choice(len(tx_w), n_busy, p=tx_w / tx_w.sum())
                ]
                if tx_w.sum() > 0
                else [""] * n_busy
            )
            db = iter(self._statements(snap, "dialog", rng, sum(a[3] == "DB" for a in busy_rows)))
            upd_db = self._statements(snap, "update", rng, upd_busy)
            users = self._users(i)
            user_ids = rng.integers(1, users + 1, size=n_busy + upd_busy)
            hold = float(
                np.dot(tx_w, st.means[i, 0][:, [_C[c] for c, *_ in ACTIVITIES]].sum(axis=1))
                / max(tx_w.sum(), 1e-9)
            )
            elapsed = rng.exponential(max(hold, 1e-3), size=n_busy)
            cpu = snap.totals.seconds[i, :, :, _C["cpu"]].sum(axis=1)  # [task]
            offset = int(rng.integers(0, max(n_dia, 1)))
            slot = {(offset + k) % n_dia: k for k in range(n_busy)} if n_dia else {}
            rows: list[Record] = []
            for no in range(n_dia):
                row = self._wp_row(no, "DIA", i, cpu[0] / max(n_dia, 1))
                k = slot.get(no)
                if k is not None:
                    _, status, reason, action = busy_rows[k]
                    table = ""
                    if action == "DB":
                        action, table = next(db)
                    row |= {
                        "Status": status,
                        "Reason": reason,
                        "Time": str(int(elapsed[k])),
                        "Program": PROGRAMS.get(txs[k], "SAPMSSY1"),
                        "Client": CLIENT,
                        "User": f"SD{int(user_ids[k]):05d}",
                        "Action": action,
                        "Table": table,
                    }
                rows.append(row)
            if rows:
                self._long_running_step(inst, rows)
            for k in range(n_upd):
                row = self._wp_row(n_dia + k, "UPD", i, cpu[1] / max(n_upd, 1))
                if k < upd_busy:
                    action, table = upd_db[k]
                    row |= {
                        "Status": "Run",
                        "Time": "0",
                        "Program": UPDATE_PROGRAM,
                        "Client": CLIENT,
                        "User": f"SD{int(user_ids[n_busy + k]):05d}",
                        "Action": action,
                        "Table": table,
                    }
                rows.append(row)
            return rows

    def _long_running_step(self, inst: InstanceInfo, dia_rows: list[Record]) -> None:
        """Under the long-running-dialog-step fault, the first ABAP instance's last dialog
        work process runs one step whose Time grows with the wall clock."""
        start = self._scenario().landscape.abap_errors.long_running_step_s
        if start <= 0:
            self._long_step_since = None
            return
        # The ABAP instances are numbered from 0 in the model's order (instances()).
        if inst.index != 0:
            return
        if self._long_step_since is None:
            self._long_step_since = self.clock()
        row = dia_rows[-1]
        row |= {
            "Status": "Run",
            "Reason": "",
            "Time": str(int(start + self.clock() - self._long_step_since)),
            "Program": "ZSD_OPEN_ITEMS",
            "Client": CLIENT,
            "User": "SDREPORT",
            "Action": "Sequential Read",
            "Table": "VBAP",
        }

    def _users(self, i: int) -> int:
        """Users logged on to instance i, as the logon groups spread them."""
        sc = self._scenario()
        if self._users_cache.get("scenario") is not sc:
            self._users_cache = {"scenario": sc, "users": instance_layout(sc)}
        return max(1, self._users_cache["users"][i].users)

    @staticmethod
    def _wp_row(no: int, typ: str, i: int, cpu_s: float) -> Record:
        return {
            "No": no,
            "Typ": typ,
            "Pid": 10000 + 100 * (i + 1) + no,
            "Status": "Wait",
            "Reason": "",
            "Start": "yes",
            "Err": "",
            "Sem": "",
            "Cpu": _hms(cpu_s),
            "Time": "",
            "Program": "",
            "Client": "",
            "User": "",
            "Action": "",
            "Table": "",
        }

    def system_wp_table(self, active_only: bool) -> list[Record]:
        snap = self.snapshot()
        rows = []
        for inst in self.instances():
            if not inst.abap:
                continue
            label = f"{inst.host}_{snap.sid}_{inst.nr:02d}"
            for row in self.wp_table(inst):
                if active_only and row["Status"] == "Wait":
                    continue
                rows.append({"Instance": label, **row})
        return rows

    # ------------------------------------------------------------------ dispatcher queues
    def queue_statistic(self, inst: InstanceInfo) -> list[Record]:
        if not inst.abap:
            return []
        with self._lock:
            snap = self.snapshot()
            st, t, i = snap.state, snap.totals, inst.index
            steps = t.steps[i].sum(axis=1)  # [task]
            rows = []
            for q in (*QUEUES, "ICM/Intern"):
                task = {"ABAP/DIA": 0, "ABAP/UPD": 1}.get(q)
                now = (
                    self._diffuser.draw((inst.name, "queue", q), st.dispatcher_queue[i, task])
                    if task is not None
                    else 0
                )
                reads = int(steps[task]) if task is not None else 0
                last_w, last_r = self._queue_counts.get((inst.name, q), (0, 0))
                reads = max(reads, last_r)
                writes = max(reads + now, last_w)
                if q == "ABAP/UPD":
                    now, reads, writes = self._update_hang(inst, now, reads, writes, last_r)
                self._queue_counts[(inst.name, q)] = (writes, reads)
                high = max(self._high.get((inst.name, q), 0), now)
                self._high[(inst.name, q)] = high
                rows.append(
                    {
                        "Typ": q,
                        "Now": now,
                        "High": high,
                        "Max": ICM_QUEUE_MAX if q.startswith("ICM") else QUEUE_MAX,
                        # xsd:int on the wire: counters wrap at 2^31 as dpmon's do.
                        "Writes": writes % 2**31,
                        "Reads": reads % 2**31,
                    }
                )
            return rows

    def _update_hang(
        self, inst: InstanceInfo, now: int, reads: int, writes: int, last_reads: int
    ) -> tuple[int, int, int]:
        """ABAP/UPD (Now, Reads, Writes) while the update work processes take nothing: the
        V1 requests the steps make keep arriving (Writes), none is read (Reads stands
        where the hang began), so Now is all that arrived since. When it ends, the update
        work processes take up the queue again and the model's own queue is back."""
        if not self._scenario().landscape.abap_errors.update_hang:
            self._upd_hang.pop(inst.name, None)
            return now, reads, writes
        frozen = self._upd_hang.setdefault(inst.name, last_reads)
        waiting = min(writes - frozen, QUEUE_MAX)
        return waiting, frozen, frozen + waiting

    # ------------------------------------------------------------------ AS Java
    def j2ee_process_list(self, inst: InstanceInfo) -> list[Record]:
        """J2EEGetProcessList2: jstart's server nodes, each RUNNING since the twin started
        (cluster ids as AS Java numbers them: instance number * 100000 + 50 + node)."""
        java = self._scenario().landscape.java
        if java is None or not inst.java:
            return []
        up = self.clock() - self.started
        return [
            {
                "telnetPort": 50008 + 100 * inst.nr,
                "name": f"server{k}",
                "pid": 6100 + k,
                "type": "J2EE Server",
                "restart": "yes",
                "exitCode": "",
                "state": "SAPControl-J2EE-RUNNING",
                "statetext": "Running",
                "startTime": _sap_time(self.started),
                "elapsedTime": _hms(up),
                "restartCount": 0,
                "errorCount": 0,
                "cpu": "",
                "debug": "no",
                "clusterId": inst.nr * 100000 + 50 + k,
            }
            for k in range(java.server_nodes)
        ]

    def j2ee_thread_list(self, inst: InstanceInfo) -> list[Record]:
        """J2EEGetThreadList2: each server node's system and application threads. A busy
        application thread runs an HTTP request (task, state Processing); an idle one waits
        in its pool. Under the java-thread-pool-exhausted fault every application thread
        is busy, long (YELLOW), on the same back-end call."""
        java = self._scenario().landscape.java
        if java is None or not inst.java:
            return []
        now = _sap_time(self.clock())
        full = java.thread_pool_exhausted
        busy = (
            java.application_threads if full else round(java.busy_share * java.application_threads)
        )
        rows: list[Record] = []
        for node in range(java.server_nodes):
            threads = [("System", k < 2, f"SystemThread[{k}]") for k in range(java.system_threads)]
            threads += [
                ("Application", k < busy, f"Application [impl:3]_Threads[{k}]")
                for k in range(java.application_threads)
            ]
            for k, (pool, working, name) in enumerate(threads):
                rows.append(
                    {
                        "processname": f"server{node}",
                        "startTime": _sap_time(self.started),
                        "updateTime": now,
                        "taskupdateTime": now if working else "",
                        "subtaskupdateTime": "",
                        "task": (
                            "HTTP request /XMII/Runner (JCo call to PRD)"
                            if working and pool == "Application"
                            else ("Timeout service" if working else "")
                        ),
                        "subtask": "",
                        "name": name,
                        "classname": "com.sap.engine.core.thread.impl3.SingleThread",
                        "user": "MII_SERVICE" if working and pool == "Application" else "",
                        "pool": pool,
                        "state": "Processing" if working else "Waiting for task",
                        "dispstatus": YELLOW
                        if working and full and pool == "Application"
                        else GREEN,
                        "index": k,
                    }
                )
        return rows

    # ------------------------------------------------------------------ ICM
    def icm_thread_list(self, inst: InstanceInfo) -> list[Record]:
        if not inst.icm:
            return []
        base_tid = 20000 + 100 * (inst.index + 1)
        return [
            {
                "name": f"Thread {k}",
                "id": str(base_tid + k),
                "requests": 0,
                "status": "Available",
                "requesttype": "",
            }
            for k in range(ICM_THREADS)
        ]

    def icm_connection_list(self, inst: InstanceInfo) -> list[Record]:
        return []

    # ------------------------------------------------------------------ enqueue server
    def _enqueues(self, snap: Snapshot) -> np.ndarray:
        """Lock requests per step, [task (dialog, update), transaction]."""
        sc, st = self._scenario(), snap.state
        enq = np.zeros((2, len(st.transactions)))
        for j, name in enumerate(st.transactions):
            tx = sc.transactions[name]
            enq[0, j] = tx.dialog.enqueues
            enq[1, j] = tx.update.enqueues if tx.update else 0.0
        return enq

    def _locks_held(self, snap: Snapshot) -> float:
        """Mean locks in the lock table: held from the request to the end of the LUW (the
        step's commit), by Little's law."""
        st = snap.state
        rate = float((st.step_rate * self._enqueues(snap)).sum())
        held = st.means[:, 0, :, _C["response"]] - st.means[:, 0, :, _C["gui"]]
        hold_s = float(np.average(held, weights=st.step_rate[:, 0] + 1e-12))
        return rate * max(hold_s, 0.0)

    def enq_lock_table(self) -> list[Record]:
        """EnqGetLockTable: as many exclusive locks as the lock table holds on average now
        (systematic sampling, as locks-now), on the tables the steps change, weighted by
        how often they change them."""
        with self._lock:
            snap = self.snapshot()
            st = snap.state
            n = self._diffuser.draw(("ASCS", "locktable"), self._locks_held(snap))
            idx = [k for k, s in enumerate(st.statements) if s[3] in ("INSERT", "UPDATE")]
            held = self._held_lock()
            if not idx or n <= 0:
                return held
            self._calls += 1
            rng = np.random.default_rng([self.seed, 0, self._calls])
            w = np.asarray(st.stmt_exec_rate, dtype=float)[idx]
            picks = rng.choice(len(idx), size=n, p=w / w.sum()) if w.sum() > 0 else [0] * n
            rows = []
            for k, p in enumerate(picks):
                table = str(st.statements[idx[int(p)]][2])
                owner = f"{int(rng.integers(10**8)):08d}"
                rows.append(
                    {
                        "lock-name": table,
                        "lock-arg": f"{CLIENT}{int(rng.integers(10**10)):010d}",
                        "lock-mode": "E",
                        "owner": owner,
                        "owner-vb": owner,
                        "use-count-owner": 1,
                        "use-count-owner-vb": 1,
                        "client": CLIENT,
                        "user": f"SD{k:05d}",
                        "transaction": "",
                        "object": "",
                        "backup": False,
                    }
                )
            return rows + held

    def _held_lock(self) -> list[Record]:
        """Under the lock-held fault, the same entry in every answer: user SDSTUCK's
        exclusive lock on sales document 4711 (VBAK), never released."""
        if not self._scenario().landscape.abap_errors.lock_held:
            return []
        owner = "20261128093000000000penguin2_BMK_00"
        return [
            {
                "lock-name": "VBAK",
                "lock-arg": f"{CLIENT}0000004711",
                "lock-mode": "E",
                "owner": owner,
                "owner-vb": owner,
                "use-count-owner": 1,
                "use-count-owner-vb": 1,
                "client": CLIENT,
                "user": "SDSTUCK",
                "transaction": "VA02",
                "object": "EVVBAKE",
                "backup": False,
            }
        ]

    def enq_statistic(self) -> Record:
        with self._lock:
            snap = self.snapshot()
            sc = self._scenario()
            cs = sc.landscape.central_services
            st, t = snap.state, snap.totals
            enq = self._enqueues(snap)
            requests = float((t.steps.sum(axis=0) * enq).sum())  # [task, tx] summed
            # Time one request spends at the server: service plus its queue, from the
            # dialog steps' enqueue component (which also holds the network round trip).
            per_step = st.means[:, 0, :, _C["enqueue"]].mean(axis=0)
            with np.errstate(invalid="ignore", divide="ignore"):
                per_req = np.where(enq[0] > 0, per_step / enq[0], np.nan)
            total = float(np.nanmean(per_req)) if np.isfinite(per_req).any() else 0.0
            wait = max(0.0, total - cs.link_rtt_s - cs.enqueue_service_s)
            delta = max(0.0, requests - self._enq["requests"])
            self._enq["requests"] = requests
            self._enq["lock"] += delta * cs.enqueue_service_s
            self._enq["wait"] += delta * wait
            held_mean = self._locks_held(snap)
            locks = self._diffuser.draw(("ASCS", "locks"), held_mean)
            owners = self._diffuser.draw(("ASCS", "owners"), held_mean / 1.6)
            for key, now in (("locks", locks), ("owner", owners), ("arguments", locks)):
                self._enq_high[key] = max(self._enq_high[key], now)
            util = st.enqueue_util
            return {
                "owner-now": owners,
                "owner-high": self._enq_high["owner"],
                "owner-max": ENQ_TABLE_MAX,
                "owner-state": GREEN,
                "arguments-now": locks,
                "arguments-high": self._enq_high["arguments"],
                "arguments-max": ENQ_TABLE_MAX,
                "arguments-state": GREEN,
                "locks-now": locks,
                "locks-high": self._enq_high["locks"],
                "locks-max": ENQ_TABLE_MAX,
                "locks-state": _color(util, 0.7, 0.9),
                "enqueue-requests": int(requests),
                "enqueue-rejects": 0,
                "enqueue-errors": 0,
                "dequeue-requests": 0,
                "dequeue-errors": 0,
                # One DequeueAll per LUW, which ends with its V1 update.
                "dequeue-all-requests": int(t.steps[:, 1].sum()),
                "cleanup-requests": 0,
                "backup-requests": 0,
                "reporting-requests": 0,
                "compress-requests": 0,
                "verify-requests": 0,
                "lock-time": round(self._enq["lock"], 6),
                "lock-wait-time": round(self._enq["wait"], 6),
                "server-time": round(self._enq["lock"] + self._enq["wait"], 6),
                "replication-state": {None: GRAY, "down": GRAY, "lost": RED}.get(
                    self._failover_phase(), GREEN
                ),
            }

    # ------------------------------------------------------------------ CCMS alert tree
    def _interval(self, inst: InstanceInfo, snap: Snapshot) -> tuple:
        """(simulated seconds, dialog steps, dialog seconds per component, update steps,
        update response seconds) over the last CCMS interval, from the call history."""
        t, i = snap.totals, inst.index
        cur = (
            t.sim_time,
            float(t.steps[i, 0].sum()),
            t.seconds[i, 0].sum(axis=0).copy(),
            float(t.steps[i, 1].sum()),
            float(t.seconds[i, 1, :, _C["response"]].sum()),
        )
        hist = self._history.setdefault(inst.name, deque(maxlen=512))
        if not hist or hist[-1][0] < cur[0]:
            hist.append(cur)
        while len(hist) > 2 and hist[1][0] <= cur[0] - self.ccms_interval_s:
            hist.popleft()
        base = hist[0] if hist[0][0] <= cur[0] - self.ccms_interval_s else None
        if base is None or cur[1] - base[1] <= 0:
            base = (0.0, 0.0, np.zeros_like(cur[2]), 0.0, 0.0)  # since start
        return (
            cur[0] - base[0],
            cur[1] - base[1],
            cur[2] - base[2],
            cur[3] - base[3],
            cur[4] - base[4],
        )

    def _error_nodes(
        self,
        node: Callable,
        top: int,
        services: int,
        update: int,
        dumps_per_min: float,
        update_errors: float,
    ) -> None:
        """The CCMS nodes a NOC pages on, where RZ20's "Entire System" monitor has them:
        R3Abap/Shortdumps (Shortdumps Frequency, /min), R3Services/Background/AbortedJobs,
        R3Services/Update/AbapErrorInUpdate (errors in the interval; red on any) and
        R3Services/Spool/SpoolService/ErrorsInWpSPO. The model runs no background or spool
        work, so those two stay 0 and green."""
        red = self.thresholds.short_dumps_per_minute
        abap = node("R3Abap", top, None)
        dumps = node("Shortdumps", abap, None)
        node(
            "Shortdumps Frequency",
            dumps,
            f"{dumps_per_min:.0f} /min",
            _color(dumps_per_min, red / 10, red),
        )
        background = node("Background", services, None)
        node("AbortedJobs", background, "0")
        errors = round(update_errors)
        node("AbapErrorInUpdate", update, f"{errors}", RED if errors > 0 else GREEN)
        spool = node("SpoolService", node("Spool", services, None), None)
        node("ErrorsInWpSPO", spool, "0")

    def alert_tree(self, inst: InstanceInfo) -> list[Record]:
        with self._lock:
            snap = self.snapshot()
            stamp = _sap_time(self.clock())
            root = f"{inst.host}_{snap.sid}_{inst.nr:02d}"
            nodes: list[Record] = []

            def node(name: str, parent: int, desc: str | None, color: str = GREEN) -> int:
                path = [root] if parent < 0 else [nodes[parent]["Tid"], name]
                nodes.append(
                    {
                        "name": name,
                        "parent": parent,
                        "ActualValue": color,
                        "description": desc,
                        "Time": stamp,
                        "AnalyseTool": "",
                        "VisibleLevel": "SAPControl-OPERATOR",
                        "HighAlertValue": color,
                        "AlDescription": "",
                        "AlTime": "",
                        "Tid": "\\".join(path),
                    }
                )
                return len(nodes) - 1

            top = node(root, -1, None)
            st = snap.state
            if inst.abap:
                i = inst.index
                span, steps, secs, u_steps, u_resp = self._interval(inst, snap)
                services = node("R3Services", top, None)
                dialog = node("Dialog", services, None)

                def ms(comp: str) -> float | None:
                    return 1000.0 * secs[_C[comp]] / steps if steps > 0 else None

                levels = ccms_levels_ms(self.thresholds)

                def timing(name: str, value: float | None) -> None:
                    if value is None:
                        node(name, dialog, "-", GRAY)
                    else:
                        yellow, red = levels.get(name, (None, None))
                        node(name, dialog, f"{value:.0f} msec", _color(value, yellow, red))

                roll = None if steps <= 0 else (ms("roll_in") or 0.0) + (ms("roll_out") or 0.0)
                timing("ResponseTime", ms("response"))
                timing("QueueTime", ms("dispatcher_wait"))
                timing("Load+GenTime", ms("load_gen"))
                timing("RollTime", roll)
                timing("DBRequestTime", ms("db_request"))
                timing("GuiCallbackTime", ms("gui"))
                busy = float(st.wp_busy[i, 0]) / max(float(st.wp_total[i, 0]), 1.0)
                node("Utilisation", dialog, f"{100 * busy:.0f} %", _color(busy, 0.8, 0.95))
                node("NumberOfWpDIA", dialog, f"{int(st.wp_total[i, 0])}", GRAY)
                per_min = 60.0 * steps / span if span > 0 else 0.0
                node("DialogSteps", dialog, f"{per_min:.0f} /min")
                node("UsersLoggedIn", dialog, f"{self._users(i)}")
                update = node("Update", services, None)
                u1 = node("PerformanceU1", update, None)
                if u_steps > 0:
                    node("ResponseTime", u1, f"{1000.0 * u_resp / u_steps:.0f} msec")
                else:
                    node("ResponseTime", u1, "-", GRAY)
                errors = self._scenario().landscape.abap_errors
                dumps = errors.short_dumps_per_step * per_min
                upd_errors = errors.update_error_share * u_steps
                self._error_nodes(node, top, services, update, dumps, upd_errors)
                cpu = float(st.host_cpu_util[st.instance_host[i]])
            else:
                cpu = float(st.cs_cpu_util)
            os_node = node("OperatingSystem", top, None)
            cpu_node = node("CPU", os_node, None)
            node("CPU_Utilization", cpu_node, f"{100 * cpu:.0f} %", _color(cpu, 0.8, 0.95))
            return nodes
