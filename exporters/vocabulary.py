"""The exporters' vocabulary: the whitepaper indicators, the causes, the OS counters.

The collectors, the report, the HTML page, the CLI tables, the alert-rule builder and the
dashboard builder read these names from here, so an indicator is added in one place. What the
model computes (task types, the time components of a step) is the model's own
(`landscape_model.terms`): the model sits below the exporters and reads nothing of theirs.
The threshold numbers live in `alerts/thresholds.yml` (the one file an operator tunes;
`alerts.thresholds` reads it, exporters.thresholds.Thresholds types it and the edge hands it
down); each indicator names its key there. What is not tuned (which component an alert reads,
how much higher pages, the texts people read) is here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from landscape_model.terms import COMPONENT_BY_KEY


def section_id(heading: str) -> str:
    """The id of an alerts/runbooks.md section in the page the API serves, from its heading
    (an alert name): lower case, other characters as hyphens. Rules link to it."""
    return re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")


@dataclass(frozen=True)
class Indicator:
    """A whitepaper rule on one time component of dialog steps (seed 000, 4.3.5.1)."""

    component: str  # the ST03 time component it reads (a key of COMPONENTS)
    alert: str  # the alert that fires on it
    threshold_key: str  # its key in alerts/thresholds.yml (seconds): the paper's, the warning level
    # Deprecated: the old critical twins' "much higher" multiple, which the dashboards' red
    # and the model's CCMS node colours still read. The alerts page at thresholds.yml's
    # `page_key` (Thresholds.page_seconds), which those should read instead; nothing in
    # alerts/ reads this.
    critical_multiple: float | None
    summary: str
    diagnosis: str
    description: str  # what a breach means, completed by the rule builder with the value
    value_format: str = "%.0f"  # how the description prints the value in ms
    # Its key in alerts/thresholds.yml for the page level (seconds): where the alert fires.
    page_key: str | None = None
    # What the alert says is wrong: Alertmanager groups by it (one fault, one message, the
    # symptoms of one cause together), see CAUSES.
    cause: str = ""

    @property
    def runbook_anchor(self) -> str:
        return section_id(self.alert)

    @property
    def label(self) -> str:
        return COMPONENT_BY_KEY[self.component].label


_ROLL_DIAGNOSIS = (
    "The roll buffer or the extended memory is too small (seed 000, 4.3.5.1 rule 4); "
    "contexts spill to the roll file. Enlarge rdisp/ROLL_SHM and em/initial_size_MB (4.3.1)."
)
# Causes: the `cause` label of every alert on one of them, what Alertmanager groups a
# notification by (provisioning/alertmanager/alertmanager.yml), so roll-in, roll-out and
# extended memory of one roll area are one message, and the database host's CPU, disk queue
# and physical reads travel with the slow DB requests they explain.
CAUSE_WORK_PROCESSES = "work-processes"
CAUSE_DATABASE = "database"
CAUSE_ENQUEUE = "enqueue"
CAUSE_ROLL_AREA = "roll-area"
CAUSES: tuple[str, ...] = (
    CAUSE_WORK_PROCESSES,
    CAUSE_DATABASE,
    CAUSE_ENQUEUE,
    CAUSE_ROLL_AREA,
)
# Each indicator pages at its own level of alerts/thresholds.yml (`page_key`), below the
# old "much higher" twins (4x, DB 2x) so every fault of the model pages within two
# minutes: a slow enqueue link holds about twice the 5 ms threshold, and a DB bottleneck's
# one-minute mean hovers around 2x. The paper's threshold stays the warning level (what
# ST03 and the dashboards colour orange); alerts/workload.py says why no alert fires on it.
INDICATORS: tuple[Indicator, ...] = (
    Indicator(
        component="dispatcher_wait",
        page_key="dispatcher_wait_page_seconds",
        cause=CAUSE_WORK_PROCESSES,
        alert="SAPDispatcherWaitTimeHigh",
        threshold_key="dispatcher_wait_seconds",
        critical_multiple=4,
        summary="Dialog steps wait in the dispatcher queue for a work process.",
        description="Dialog steps on {inst} wait {value} ms on average for a free work process",
        diagnosis=(
            "Too few dialog work processes are configured for this instance (seed 000, 4.3.5.1 "
            "rule 1). Add work processes if requests queue in the dispatcher, within what the "
            "database can serve (4.3.2)."
        ),
    ),
    Indicator(
        component="db_request",
        page_key="db_request_page_seconds",
        cause=CAUSE_DATABASE,
        alert="SAPDatabaseRequestTimeHigh",
        threshold_key="db_request_seconds",
        critical_multiple=2,
        summary="Database requests of dialog steps are slow.",
        description="Dialog steps on {inst} spend {value} ms on average in database requests",
        diagnosis=(
            "The database is a bottleneck, or too many work processes in total contend for it "
            "(seed 000, 4.3.5.1 rule 2). Check buffer-pool hit ratios, disk I/O and the "
            "expensive statements in ST05 (4.3.5.2)."
        ),
    ),
    Indicator(
        component="enqueue",
        page_key="enqueue_page_seconds",
        cause=CAUSE_ENQUEUE,
        alert="SAPEnqueueTimeHigh",
        threshold_key="enqueue_seconds",
        critical_multiple=4,
        summary="Lock requests to the enqueue server are slow.",
        description=(
            "Dialog steps on {inst} spend {value} ms on average waiting for the enqueue server"
        ),
        diagnosis=(
            "The enqueue server is a bottleneck (seed 000, 4.3.5.1 rule 3). Configure more "
            "enqueue work processes or speed up the network to the enqueue server."
        ),
        value_format="%.1f",
    ),
    Indicator(
        component="roll_in",
        page_key="roll_page_seconds",
        cause=CAUSE_ROLL_AREA,
        alert="SAPRollInTimeHigh",
        threshold_key="roll_seconds",
        critical_multiple=4,
        summary="User contexts are slow to roll in.",
        description="Roll-in on {inst} takes {value} ms per dialog step on average",
        diagnosis=_ROLL_DIAGNOSIS,
    ),
    Indicator(
        component="roll_out",
        page_key="roll_page_seconds",
        cause=CAUSE_ROLL_AREA,
        alert="SAPRollOutTimeHigh",
        threshold_key="roll_seconds",
        critical_multiple=4,
        summary="User contexts are slow to roll out.",
        description="Roll-out on {inst} takes {value} ms per dialog step on average",
        diagnosis=_ROLL_DIAGNOSIS,
    ),
)
INDICATOR_BY_COMPONENT: dict[str, Indicator] = {i.component: i for i in INDICATORS}
INDICATOR_BY_ALERT: dict[str, Indicator] = {i.alert: i for i in INDICATORS}
# Indicators judged by one threshold together (roll-in and roll-out share roll_seconds).
INDICATORS_BY_THRESHOLD: dict[str, tuple[Indicator, ...]] = {
    key: tuple(i for i in INDICATORS if i.threshold_key == key)
    for key in dict.fromkeys(i.threshold_key for i in INDICATORS)
}

# The SD benchmark's pass criterion (seed 000, section 2): average dialog response below 2 s.
DIALOG_RESPONSE = Indicator(
    component="response",
    alert="SAPDialogResponseTimeHigh",
    threshold_key="dialog_response_seconds",
    critical_multiple=None,  # the bound is a pass criterion: missing it is not a page
    summary="Average dialog response time is at or above the 2 s benchmark bound.",
    description="Dialog steps of {inst} take {value} s on average",
    diagnosis=(
        "The SD benchmark passes only with an average weighted dialog response below 2 s at 10 s "
        "think time (seed 000, section 2). Look at which part grew (dispatcher wait, DB request, "
        "enqueue, roll) and at the alerts on those parts."
    ),
    value_format="%.2f",
)


def per_step_mean(component: str, window: str = "5m") -> str:
    """The recorded mean per step of one component (seconds) over `window` (5m, the paper's
    mean; 1m, the fast window of the critical twins), per instance and task type.

    alerts/build.py writes the recording rule; alerts and dashboards read the series.
    """
    return f"sap_instance_task_type:sap_workload_{component}_seconds_per_step:mean{window}"


# The system's mean dialog response per step (seconds), per SID: the SD benchmark's bound is
# on the average over all instances, not on one instance.
DIALOG_RESPONSE_MEAN = "sid:sap_workload_dialog_response_seconds_per_step:mean5m"


@dataclass(frozen=True)
class OsCounter:
    """One of a run's standard OS counters per host (seed 003 Tables 2-3): its key in the
    run's columns (`os.HOST.KEY`), the PerfMon object and counter the report names it by,
    and the unit the page reads it in. Every source (PerfMon import, Prometheus window,
    the model's recorder) writes these keys; the report and the page read them."""

    key: str
    counter: str
    unit: str

    @property
    def object(self) -> str:
        """The PerfMon object (Processor), as the standard English name writes it."""
        return self.counter.split("\\")[0]

    @property
    def name(self) -> str:
        """The counter within its object (% Processor Time)."""
        return self.counter.split("\\")[-1]


# The keys, by name, for the code that reads or writes one of them.
CPU_PCT = "cpu_pct"
AVAILABLE_MB = "available_mb"
PAGES_PER_S = "pages_per_s"
DISK_QUEUE = "disk_queue"

OS_COUNTERS: tuple[OsCounter, ...] = (
    OsCounter(CPU_PCT, "Processor\\% Processor Time", "%"),
    OsCounter(AVAILABLE_MB, "Memory\\Available MBytes", "MB"),
    OsCounter(PAGES_PER_S, "Memory\\Pages/sec", "pages/s"),
    OsCounter(DISK_QUEUE, "PhysicalDisk\\Avg. Disk Queue Length", "requests"),
)
OS_COUNTER_KEYS: tuple[str, ...] = tuple(c.key for c in OS_COUNTERS)
OS_COUNTER_BY_KEY: dict[str, OsCounter] = {c.key: c for c in OS_COUNTERS}
