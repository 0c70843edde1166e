"""The SAP instances dashboard, from the sapcontrol source: status lights, work processes,
dispatcher queues, the enqueue server, CCMS dialog values and the source's own health.

Built like the others (dashboards.model); only its template variables differ: they list
the instances sapstartsrv reports, not the model's.
"""

from __future__ import annotations

from alerts.settings import MonitoringConfig
from dashboards.defaults import SEL, limit_line, prom, variables
from dashboards.model import (
    INSTANCE_LEGEND,
    Column,
    Dashboard,
    Format,
    Kind,
    Panel,
    Unit,
    ValueText,
    Variable,
    steps,
)

# Nothing read: sapstartsrv's own GRAY (unknown), neither healthy nor alarming.
GREY = "gray"
# sapstartsrv's STATE-COLOR codes (GRAY 1 .. RED 4).
COLORS = (
    ValueText("1", "GRAY", "gray"),
    ValueText("2", "GREEN", "green"),
    ValueText("3", "YELLOW", "yellow"),
    ValueText("4", "RED", "red"),
)
UP = (ValueText("0", "DOWN", "red"), ValueText("1", "UP", "green"))


# The template variables from the instances sapstartsrv reports, not the model's steps.
VARIABLES = (
    Variable("sid", "SID", matcher='sap_up{source="sapcontrol"}'),
    Variable("sap_instance", "instance", matcher='sap_up{source="sapcontrol",sid=~"$sid"}'),
    Variable(
        "task_type",
        "task type",
        matcher='sap_instance_task_type:sap_workload_steps:rate5m{sid=~"$sid"}',
    ),
)
# What a panel says when the sapcontrol source is not configured (or reads nothing).
NOT_READ = "Not read: no sapcontrol source answers (docs/sapcontrol.md)"


def _panel(kind: Kind, title: str, description: str, queries: list, w: int, h: int, **kw) -> Panel:  # type: ignore[type-arg]
    return Panel(
        kind, title, description, queries, w, h, no_value=kw.pop("no_value", NOT_READ), **kw
    )


def dashboard(config: MonitoringConfig) -> Dashboard:
    d = Dashboard(
        "wlmon-instances",
        "SAP instances (sapcontrol)",
        "SAP",
        ("sapcontrol",),
        "The SAP instances as sapstartsrv reports them: lights, work processes, queues, "
        "the enqueue server, CCMS dialog values and the source's own health.",
        # sapstartsrv reads instances, not task types: that picker would filter nothing.
        variables("task_type", base=VARIABLES),
    )
    d.group("Instances and processes")
    d.add(
        _panel(
            Kind.STAT,
            "Instances (sapstartsrv answering)",
            "sap_up per instance: 0 when its sapstartsrv did not answer within its "
            "deadline (WLMON_SAPCONTROL_TIMEOUT_S).",
            [
                prom(
                    f'max by (sid, sap_instance) (sap_up{{source="sapcontrol",{SEL}}})',
                    "{{sap_instance}}",
                    instant=True,
                )
            ],
            24,
            5,
            mappings=UP,
            thresholds=steps((None, GREY), (0, "red"), (1, "green")),
            show_name=True,
        )
    )
    # Telegraf re-exposes the exporter's series: max by keeps one per instance and process.
    process = f"max by (sap_instance, process) (sap_process_status{{{SEL}}})"
    d.add(
        _panel(
            Kind.STAT,
            "Processes not GREEN, per instance (GetProcessList)",
            "How many of the instance's processes (disp+work, gwrd, icman, msg_server, "
            "enserver, ...) are not GREEN: a stopped one reads GRAY, a failed one RED, the "
            "dispatcher YELLOW when its dialog queue does not drain. The table below names them.",
            [
                prom(
                    f"count by (sap_instance) ({process} != 2)"
                    f" or on(sap_instance) (0 * count by (sap_instance) ({process}))",
                    "{{sap_instance}}",
                    instant=True,
                )
            ],
            24,
            5,
            # Grey, not green, when nothing is read ("Not read"): a count only lights once read.
            thresholds=steps((None, GREY), (0, "green"), (1, "red")),
            show_name=True,
        )
    )
    d.add(
        _panel(
            Kind.TABLE,
            "Process status lights (GetProcessList)",
            "dispstatus of each process sapstartsrv started, one row per instance: "
            "disp+work turns yellow when the dialog queue time grows.",
            [prom(process, instant=True, table=True)],
            24,
            8,
            pivot=("sap_instance", "process"),
            mappings=COLORS,
            thresholds=steps((None, GREY), (2, "green"), (3, "yellow"), (4, "red")),
            # An empty cell is a process the instance does not run (msg_server on a dialog
            # instance), not a source that reads nothing: the stats above say that.
            no_value="–",
        )
    )
    d.group("Work processes and queues")
    d.add(
        _panel(
            Kind.TABLE,
            "Work processes by status (ABAPGetWPTable)",
            "SM50 of every instance: how many of its work processes (all types) "
            "wait, run, are on hold, stopped or ended.",
            [
                prom(
                    f"sum by (sap_instance, status) (max by (sap_instance, type, status)"
                    f" (sap_work_processes{{{SEL}}}))",
                    instant=True,
                    table=True,
                )
            ],
            12,
            10,
            pivot=("sap_instance", "status"),
        )
    )
    d.add(
        _panel(
            Kind.TIMESERIES,
            "Busy dialog work processes by activity",
            "What busy DIA work processes do (Action/Reason in SM50). Averaged and "
            "divided by the dialog step rate, each is the time per step in that activity "
            "(alerts/sapcontrol.rules.yml).",
            [
                prom(
                    f'sum by (activity) (sap_work_processes_activity{{type="DIA",{SEL}}})',
                    "{{activity}}",
                )
            ],
            12,
            10,
            stacked=True,
            fill=0.4,
        )
    )
    d.add(
        _panel(
            Kind.TIMESERIES,
            "Dialog queue (ABAP/DIA): now and peak",
            "GetQueueStatistic Now and High: requests waiting for a free dialog work process.",
            [
                # 31 instances are 31 lines no legend names: the longest queue, then drill
                # down with the sap_instance picker.
                prom(
                    f'max(sap_dispatcher_queue_length{{queue="ABAP/DIA",{SEL}}})',
                    "longest now (any instance)",
                ),
                prom(
                    f'max(sap_dispatcher_queue_peak{{queue="ABAP/DIA",{SEL}}})',
                    "peak (any instance)",
                ),
            ],
            12,
            8,
        )
    )
    d.add(
        _panel(
            Kind.TIMESERIES,
            "Dispatcher queue writes per second",
            "Requests put into each queue (GetQueueStatistic Writes); ABAP/DIA is the "
            "dialog step rate.",
            [
                prom(
                    f"sum by (queue) (rate(sap_dispatcher_queue_writes_total{{{SEL}}}[5m]))",
                    "{{queue}}",
                )
            ],
            12,
            8,
            format=Format(Unit.REQUESTS_PER_S),
        )
    )
    d.group("Enqueue server")
    d.add(
        _panel(
            Kind.TIMESERIES,
            "Enqueue lock table: entries now and peak",
            "EnqGetStatistic locks/owner/arguments -now and -high (the ASCS only).",
            [
                prom(f"sum by (table) (sap_enqueue_table_entries{{{SEL}}})", "{{table}}"),
                prom(f"sum by (table) (sap_enqueue_table_entries_peak{{{SEL}}})", "{{table}} peak"),
            ],
            8,
            8,
        )
    )
    d.add(
        _panel(
            Kind.TIMESERIES,
            "Enqueue requests, errors and rejects per second",
            "Lock requests per operation, and the errors and rejects among them (should stay 0).",
            [
                prom(
                    f"sum by (operation) (rate(sap_enqueue_requests_total{{{SEL}}}[5m]))",
                    "{{operation}}",
                ),
                prom(
                    f"sum(rate(sap_enqueue_errors_total{{{SEL}}}[5m])) + "
                    f"sum(rate(sap_enqueue_rejects_total{{{SEL}}}[5m]))",
                    "errors + rejects",
                ),
            ],
            8,
            8,
            format=Format(Unit.REQUESTS_PER_S),
        )
    )
    d.add(
        _panel(
            Kind.TIMESERIES,
            "Enqueue server time per lock request (ms)",
            "Server side only: a slow network to the enqueue server shows as dialog "
            "work processes on hold for ENQ, not here.",
            [
                prom(
                    f"1000 * sum(rate(sap_enqueue_server_time_seconds_total{{{SEL}}}[5m])) / "
                    f'sum(rate(sap_enqueue_requests_total{{operation="enqueue",{SEL}}}[5m]))',
                    "server",
                ),
                prom(
                    f"1000 * sum(rate(sap_enqueue_lock_wait_time_seconds_total{{{SEL}}}[5m])) / "
                    f'sum(rate(sap_enqueue_requests_total{{operation="enqueue",{SEL}}}[5m]))',
                    "waiting for the lock table",
                ),
            ],
            8,
            8,
            format=Format(Unit.MS),
        )
    )
    # What a NOC pages on besides response times (alerts/sapcontrol.py, issue 31): the
    # evidence each of those alerts links here for.
    d.group("Short dumps, CCMS alerts and locks")
    d.add(
        _panel(
            Kind.TIMESERIES,
            "ABAP short dumps per minute, worst instance (CCMS)",
            "R3Abap Shortdumps Frequency of the instance writing most; the red line is "
            "where SAPShortDumpStorm pages (alerts/thresholds.yml short_dumps_per_minute). "
            "ST22 names the runtime errors.",
            [
                prom(
                    f"60 * max(sap_ccms_shortdumps_per_second{{{SEL}}})",
                    "short dumps/min (worst instance)",
                )
            ],
            8,
            8,
            thresholds=limit_line(config.thresholds.short_dumps_per_minute),
        )
    )
    d.add(
        _panel(
            Kind.STAT,
            "Red CCMS alerts open (GetAlerts)",
            "Red alerts RZ20 holds open, all instances together (yellow ones are not counted "
            "here): an update error, an aborted job, a spool error each also pages through "
            "its own alert; RZ20 completes them.",
            [
                prom(
                    f'sum(max by (sap_instance) (sap_ccms_alerts{{severity="red",{SEL}}}))',
                    "red",
                    instant=True,
                )
            ],
            8,
            8,
            thresholds=steps((None, GREY), (0, "green"), (1, "red")),
        )
    )
    d.add(
        _panel(
            Kind.TIMESERIES,
            "Enqueue locks held (SM12), by table",
            "EnqGetLockTable on the ASCS: locks per table (the allow-listed ones, the rest "
            "as other). SAPLockHeldLong pages on the oldest lock's age.",
            [prom(f"sum by (table) (sap_enqueue_locks{{{SEL}}})", "{{table}}")],
            8,
            8,
        )
    )
    d.add(
        _panel(
            Kind.TIMESERIES,
            "Longest-running work process (SM50), by type",
            "ABAPGetWPTable Time: how long the longest busy work process of each type has "
            "been on its current request, worst instance. The red line is where "
            "SAPLongRunningDialogStep pages for a dialog step (alerts/thresholds.yml "
            "long_running_dialog_step_seconds); background jobs may run longer. SM50 names "
            "the user and program.",
            [
                prom(
                    f"max by (type) (sap_work_processes_longest_running_seconds{{{SEL}}})",
                    "{{type}}",
                )
            ],
            8,
            8,
            format=Format(Unit.SECONDS),
            thresholds=limit_line(config.thresholds.long_running_dialog_step_seconds),
        )
    )
    d.add(
        _panel(
            Kind.TIMESERIES,
            "AS Java application threads busy, by instance",
            "J2EEGetThreadList2 on the AS Java instances (features J2EE): the share of "
            "application threads working on a task. The red line is where "
            "SAPJavaThreadPoolExhausted pages (alerts/thresholds.yml "
            "java_thread_pool_busy_ratio); at 100 % new HTTP requests wait for a thread. "
            "NWA's thread monitor names the task they run.",
            [
                prom(
                    f'sum by (sap_instance) (sap_java_threads{{{SEL},pool="application",'
                    f'state="busy"}}) / sum by (sap_instance) '
                    f'(sap_java_threads{{{SEL},pool="application"}})',
                    "{{sap_instance}}",
                )
            ],
            8,
            8,
            format=Format(Unit.RATIO),
            thresholds=limit_line(config.thresholds.java_thread_pool_busy_ratio),
        )
    )
    d.group("Updates, system log and high availability")
    d.add(
        _panel(
            Kind.TIMESERIES,
            "Update queue (ABAP/UPD), update errors, aborted jobs, spool errors",
            "V1 updates waiting in the update queue (GetQueueStatistic) and CCMS's counts "
            "(R3Services Update, Background, Spool), all instances together. A queue that "
            "stays up while nothing is read from it pages as SAPUpdateHang; an update error as "
            "SAPUpdateErrors, aborted jobs and spool errors when CCMS turns them red. SM13, "
            "SM37 and SP01 list them.",
            [
                prom(
                    f'sum(sap_dispatcher_queue_length{{queue="ABAP/UPD",{SEL}}})',
                    "updates waiting",
                ),
                prom(f"sum(sap_ccms_update_errors{{{SEL}}})", "update errors (CCMS)"),
                prom(f"sum(sap_ccms_aborted_jobs{{{SEL}}})", "aborted jobs (CCMS)"),
                prom(f"sum(sap_ccms_spool_errors{{{SEL}}})", "spool errors (CCMS)"),
            ],
            8,
            8,
        )
    )
    d.add(
        _panel(
            Kind.TIMESERIES,
            "System log entries per minute (SM21), by severity",
            "ABAPReadSyslog, all instances together, by the entry's colour. SAPSyslogErrors "
            "pages per instance on red entries other than runtime errors (AB0, which the "
            "short-dump panel counts) at the rate the red line shows "
            "(alerts/thresholds.yml syslog_errors_per_minute); the texts are in the log store.",
            [
                prom(
                    f"60 * sum by (severity) (rate(sap_syslog_entries_total{{{SEL}}}[5m]))",
                    "{{severity}}",
                )
            ],
            8,
            8,
            thresholds=limit_line(config.thresholds.syslog_errors_per_minute),
        )
    )
    d.add(
        _panel(
            Kind.STAT,
            "Enqueue replication to the ERS (EnqGetStatistic)",
            "The worst replication state of the SID's enqueue servers: GREEN while the ERS "
            "holds a copy of the lock table, RED when it is lost (SAPEnqueueReplicationLost: "
            "a failover now would lose every lock), GRAY where no replication is configured.",
            [
                prom(
                    f"max(sap_enqueue_replication_state{{{SEL}}})",
                    "replication",
                    instant=True,
                )
            ],
            4,
            4,
            mappings=COLORS,
            thresholds=steps((None, GREY), (2, "green"), (3, "yellow"), (4, "red")),
        )
    )
    d.add(
        _panel(
            Kind.STAT,
            "HA checks in ERROR (HACheckConfig, HACheckFailoverConfig)",
            "Checks of the HA configuration and state reading ERROR, all instances "
            "together; SAPHACheckFailed pages after 5 minutes. 'Not read' where no cluster "
            "connector answers (sap_ha_failover_active 0).",
            [
                prom(
                    f'sum(sap_ha_checks{{state="error",{SEL}}})',
                    "checks in error",
                    instant=True,
                )
            ],
            4,
            4,
            thresholds=steps((None, GREY), (0, "green"), (1, "red")),
        )
    )
    d.group("Kernel and software components")
    d.add(
        _panel(
            Kind.TABLE,
            "Kernel patch by instance and executable (GetVersionInfo)",
            "The kernel release and patch each kernel executable of each instance runs (dbsl: "
            "the database library). One system runs one kernel: an instance with an older "
            "patch than the rest is one sapcpe or a restart left behind "
            "(SAPKernelPatchMismatch after 15 minutes names it). Read every "
            "WLMON_SAPCONTROL_VERSION_INTERVAL_S (15 minutes by default).",
            [
                prom(
                    f"max by (sap_instance, executable, release, patch) (sap_kernel_info{{{SEL}}})",
                    instant=True,
                    table=True,
                )
            ],
            14,
            8,
            # The patch as SAP writes it (1100, not 1,100): the info series' label.
            columns=(
                Column("sap_instance", "Instance"),
                Column("executable", "Executable"),
                Column("release", "Release"),
                Column("patch", "Patch"),
            ),
            sort_by=("Instance", False),
            hide=("value", "Value"),
        )
    )
    d.add(
        _panel(
            Kind.TABLE,
            "Software components (ABAPGetComponentList, CVERS)",
            "Release and support package level of each ABAP software component of the system "
            "(SPAM's list): compare SIDs of one landscape before a transport.",
            [
                prom(
                    "max by (sid, component, release, support_package) "
                    '(sap_software_component_info{sid=~"$sid"})',
                    instant=True,
                    table=True,
                )
            ],
            10,
            8,
            columns=(
                Column("sid", "SID", width=60),
                Column("component", "Component"),
                Column("release", "Release"),
                Column("support_package", "Support package"),
            ),
            # Each row is a component (an info series, always 1): its value says nothing.
            hide=("value", "Value"),
        )
    )
    d.group("CCMS and the source's health")
    d.add(
        _panel(
            Kind.TIMESERIES,
            "CCMS dialog times, average over instances (ms)",
            "GetAlertTree R3Services/Dialog: each value is CCMS's average over its own "
            "last interval.",
            [
                prom(f"1000 * avg(sap_ccms_dialog_{m}_time_seconds{{{SEL}}})", label)
                for m, label in (
                    ("response", "ResponseTime"),
                    ("queue", "QueueTime"),
                    ("db_request", "DBRequestTime"),
                    ("load_gen", "Load+GenTime"),
                    ("roll", "RollTime"),
                )
            ],
            12,
            8,
            format=Format(Unit.MS),
        )
    )
    d.add(
        _panel(
            Kind.TIMESERIES,
            "Users logged in and dialog steps per minute (CCMS)",
            "CCMS's own count of logged-in users and dialog steps: the load sapstartsrv reports.",
            [
                prom(f"sum(sap_ccms_dialog_users_logged_in{{{SEL}}})", "users logged in"),
                prom(f"60 * sum(sap_ccms_dialog_steps_per_second{{{SEL}}})", "dialog steps/min"),
            ],
            12,
            8,
        )
    )
    d.add(
        _panel(
            Kind.STAT,
            "Web methods failing now",
            "A 401 means service/protectedwebmethods protects a method and the "
            "credentials are missing (docs/sapcontrol.md).",
            # 0 only while calls are being made: nothing read is "not read", never a green 0.
            [
                prom(
                    f"count(sap_sapcontrol_request_success{{{SEL}}} == 0)"
                    f" or (0 * count(sap_sapcontrol_request_success{{{SEL}}}))",
                    instant=True,
                )
            ],
            6,
            6,
            thresholds=steps((None, GREY), (0, "green"), (1, "red")),
        )
    )
    d.add(
        _panel(
            Kind.TIMESERIES,
            "Time to read each instance (s)",
            "How long the sapcontrol collector took per instance: near the deadline "
            "(WLMON_SAPCONTROL_TIMEOUT_S) an instance is about to be reported down.",
            [prom(f"sap_sapcontrol_scrape_duration_seconds{{{SEL}}}", "{{sap_instance}}")],
            18,
            6,
            format=Format(Unit.SECONDS),
            legend=INSTANCE_LEGEND,
        )
    )
    return d
