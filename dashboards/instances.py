"""The SAP instances dashboard, from the sapcontrol source: status lights, work processes,
dispatcher queues, the enqueue server, CCMS dialog values and the source's own health.

Laid out like the others (dashboards.layout); only its template variables differ: they
list the instances sapstartsrv reports, not the model's (dashboards/sap/instances.json).
"""

from __future__ import annotations

from dashboards.defaults import INSTANCE_LEGEND, SEL, prom, stat_options, steps
from dashboards.layout import Dashboard

# Nothing read: sapstartsrv's own GRAY (unknown), neither healthy nor alarming.
GREY = "#808080"
# Value mappings of sapstartsrv's STATE-COLOR codes (GRAY 1 .. RED 4).
COLORS = [
    {
        "type": "value",
        "options": {
            "1": {"text": "GRAY", "color": GREY, "index": 0},
            "2": {"text": "GREEN", "color": "green", "index": 1},
            "3": {"text": "YELLOW", "color": "yellow", "index": 2},
            "4": {"text": "RED", "color": "red", "index": 3},
        },
    }
]
UP = [
    {
        "type": "value",
        "options": {
            "0": {"text": "DOWN", "color": "red", "index": 0},
            "1": {"text": "UP", "color": "green", "index": 1},
        },
    }
]


# The template variables from the instances sapstartsrv reports, not the model's steps.
VARIABLES = (
    ("sid", 'label_values(sap_up{source="sapcontrol"}, sid)'),
    ("sap_instance", 'label_values(sap_up{source="sapcontrol",sid=~"$sid"}, sap_instance)'),
    (
        "task_type",
        'label_values(sap_instance_task_type:sap_workload_steps:rate5m{sid=~"$sid"}, task_type)',
    ),
)
STAT = stat_options()
# What a panel says when the sapcontrol source is not configured (or reads nothing).
NOT_READ = "Not read: no sapcontrol source answers (docs/sapcontrol.md)"


def dashboard() -> Dashboard:
    d = Dashboard(
        "wlmon-instances",
        "SAP instances (sapcontrol)",
        "SAP",
        ["sapcontrol"],
        VARIABLES,
        # sapstartsrv reads instances, not task types: that picker would filter nothing.
        hidden=("task_type",),
    )
    d.add(
        "stat",
        "Instances (sapstartsrv answering)",
        [
            prom(
                f'max by (sid, sap_instance) (sap_up{{source="sapcontrol",{SEL}}})',
                "{{sap_instance}}",
                instant=True,
            )
        ],
        24,
        5,
        description="sap_up per instance: 0 when its sapstartsrv did not answer within its "
        "deadline (WLMON_SAPCONTROL_TIMEOUT_S).",
        mappings=UP,
        thresholds=steps([(None, GREY), (0, "red"), (1, "green")]),
        options={**STAT, "textMode": "value_and_name"},
    )
    # Telegraf re-exposes the exporter's series: max by keeps one per instance and process.
    process = f"max by (sap_instance, process) (sap_process_status{{{SEL}}})"
    d.add(
        "stat",
        "Processes not GREEN, per instance (GetProcessList)",
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
        description="How many of the instance's processes (disp+work, gwrd, icman, msg_server, "
        "enserver, ...) are not GREEN: a stopped one reads GRAY, a failed one RED, the "
        "dispatcher YELLOW when its dialog queue does not drain. The table below names them.",
        # Grey, not green, when nothing is read ("Not read"): a count only lights once read.
        thresholds=steps([(None, GREY), (0, "green"), (1, "red")]),
        options={**STAT, "textMode": "value_and_name"},
    )
    d.add(
        "table",
        "Process status lights (GetProcessList)",
        [prom(process, instant=True, fmt="table")],
        24,
        8,
        transformations=[
            {"id": "organize", "options": {"excludeByName": {"Time": True}}},
            {
                "id": "groupingToMatrix",
                "options": {
                    "columnField": "process",
                    "rowField": "sap_instance",
                    "valueField": "Value",
                },
            },
        ],
        description="dispstatus of each process sapstartsrv started, one row per instance: "
        "disp+work turns yellow when the dialog queue time grows.",
        mappings=COLORS,
        thresholds=steps([(None, GREY), (2, "green"), (3, "yellow"), (4, "red")]),
        overrides=[
            {
                "matcher": {"id": "byType", "options": "number"},
                "properties": [{"id": "custom.cellOptions", "value": {"type": "color-background"}}],
            }
        ],
    )
    d.add(
        "table",
        "Work processes by status (ABAPGetWPTable)",
        [
            prom(
                f"sum by (sap_instance, status) (max by (sap_instance, type, status)"
                f" (sap_work_processes{{{SEL}}}))",
                instant=True,
                fmt="table",
            )
        ],
        12,
        10,
        transformations=[
            {"id": "organize", "options": {"excludeByName": {"Time": True}}},
            {
                "id": "groupingToMatrix",
                "options": {
                    "columnField": "status",
                    "rowField": "sap_instance",
                    "valueField": "Value",
                },
            },
        ],
        description="SM50 of every instance: how many of its work processes (all types) "
        "wait, run, are on hold, stopped or ended.",
    )
    d.add(
        "timeseries",
        "Busy dialog work processes by activity",
        [
            prom(
                f'sum by (activity) (sap_work_processes_activity{{type="DIA",{SEL}}})',
                "{{activity}}",
            )
        ],
        12,
        10,
        custom={"stacking": {"mode": "normal"}, "fillOpacity": 40},
        description="What busy DIA work processes do (Action/Reason in SM50). Averaged and "
        "divided by the dialog step rate, each is the time per step in that activity "
        "(alerts/sapcontrol.rules.yml).",
    )
    d.add(
        "timeseries",
        "Dialog queue (ABAP/DIA): now and peak",
        [
            # 31 instances are 31 lines no legend names: the longest queue, then drill down
            # with the sap_instance picker.
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
        description="GetQueueStatistic Now and High: requests waiting for a free dialog work "
        "process.",
    )
    d.add(
        "timeseries",
        "Dispatcher queue writes per second",
        [
            prom(
                f"sum by (queue) (rate(sap_dispatcher_queue_writes_total{{{SEL}}}[5m]))",
                "{{queue}}",
            )
        ],
        12,
        8,
        unit="reqps",
        description="Requests put into each queue (GetQueueStatistic Writes); ABAP/DIA is the "
        "dialog step rate.",
    )
    d.add(
        "timeseries",
        "Enqueue lock table: entries now and peak",
        [
            prom(f"sum by (table) (sap_enqueue_table_entries{{{SEL}}})", "{{table}}"),
            prom(f"sum by (table) (sap_enqueue_table_entries_peak{{{SEL}}})", "{{table}} peak"),
        ],
        8,
        8,
        description="EnqGetStatistic locks/owner/arguments -now and -high (the ASCS only).",
    )
    d.add(
        "timeseries",
        "Enqueue requests, errors and rejects per second",
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
        unit="reqps",
        description="Lock requests per operation, and the errors and rejects among them (should stay 0).",
    )
    d.add(
        "timeseries",
        "Enqueue server time per lock request (ms)",
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
        unit="ms",
        description="Server side only: a slow network to the enqueue server shows as dialog "
        "work processes on hold for ENQ, not here.",
    )
    d.add(
        "timeseries",
        "CCMS dialog times, average over instances (ms)",
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
        unit="ms",
        description="GetAlertTree R3Services/Dialog: each value is CCMS's average over its own "
        "last interval.",
    )
    d.add(
        "timeseries",
        "Users logged in and dialog steps per minute (CCMS)",
        [
            prom(f"sum(sap_ccms_dialog_users_logged_in{{{SEL}}})", "users logged in"),
            prom(f"60 * sum(sap_ccms_dialog_steps_per_second{{{SEL}}})", "dialog steps/min"),
        ],
        12,
        8,
        description="CCMS's own count of logged-in users and dialog steps: the load sapstartsrv reports.",
    )
    d.add(
        "stat",
        "Web methods failing now",
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
        thresholds=steps([(None, GREY), (0, "green"), (1, "red")]),
        options=STAT,
        description="A 401 means service/protectedwebmethods protects a method and the "
        "credentials are missing (docs/sapcontrol.md).",
    )
    d.add(
        "timeseries",
        "Time to read each instance (s)",
        [prom(f"sap_sapcontrol_scrape_duration_seconds{{{SEL}}}", "{{sap_instance}}")],
        18,
        6,
        unit="s",
        options={"legend": INSTANCE_LEGEND},
        description="How long the sapcontrol collector took per instance: near the deadline (WLMON_SAPCONTROL_TIMEOUT_S) an instance is about to be reported down.",
    )
    for panel in d.panels:
        panel["fieldConfig"]["defaults"]["noValue"] = NOT_READ
        if panel["title"] == "Process status lights (GetProcessList)":
            # An empty cell is a process the instance does not run (msg_server on a dialog
            # instance), not a source that reads nothing: the stats above say that.
            panel["fieldConfig"]["defaults"]["noValue"] = "–"
    return d
