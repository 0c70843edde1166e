"""Run forensics: pick a run, the time range snaps to it; its events, alerts and indicators."""

from __future__ import annotations

import re

from alerts.settings import MonitoringConfig
from dashboards.defaults import flux, limit_line, logs, prom, traffic, variables
from dashboards.model import (
    INSTANCE_LEGEND,
    Annotation,
    Column,
    Dashboard,
    Format,
    Kind,
    Link,
    Panel,
    Unit,
    Variable,
)
from dashboards.sent import alert_lives
from exporters.vocabulary import DIALOG_RESPONSE, INDICATORS

RUN_EVENTS = (
    'from(bucket: "wlmon/autogen") |> range(start: -90d) '
    '|> filter(fn: (r) => r._measurement == "wlmon_run_events"'
)
RUN_COLUMNS = (
    '["run_id", "label", "kind", "scenario", "start_ms", "steady_start_ms", "end_ms", "event"]'
)
# The run's window (ms) from its last start/end event: the end event carries the actual end.
RUNS_TABLE = (
    RUN_EVENTS + ' and (r.event == "run_start" or r.event == "run_end")) '
    '|> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value") '
    '|> group(columns: ["run_id"]) |> sort(columns: ["_time"]) |> last(column: "start_ms") '
    f"|> group() |> keep(columns: {RUN_COLUMNS}) "
    '|> sort(columns: ["start_ms"], desc: true)'
)
RUN_IDS = (
    RUN_EVENTS + ' and r.event == "run_start" and r._field == "start_ms") '
    '|> group() |> sort(columns: ["_value"], desc: true) '
    "|> map(fn: (r) => ({_value: r.run_id})) |> unique()"
)
RUN_LINE = "<event>  <message>  <faults>  run <run_id>"
ALERT_LINE = "<status> <alertname> on <sap_instance>: <summary>"
RUN_EVENTS_LOGS = '{source="run_events", sid=~"$sid"}'
ALERTS_LOGS = '{source="alertmanager", sid=~"$sid"}'
# Open a run from the Runs table: this dashboard, the run picked, the time range its window.
OPEN_RUN = Link(
    "Open this run",
    "wlmon-forensics",
    row_vars=(("run", "run_id"),),
    row_time=("start_ms", "end_ms"),
)


def dashboard(config: MonitoringConfig) -> Dashboard:
    d = Dashboard(
        "wlmon-forensics",
        "Run forensics",
        "Forensics",
        ("forensics",),
        "Pick a run: its window, events, alerts and the indicators during it.",
        (
            # Its panels read the run's window by SID and instance; none is per task type.
            *variables("task_type"),
            Variable(
                "run",
                "run",
                flux=RUN_IDS,
                description="Runs from the API (real-time and external), newest first. Open "
                "one from the Runs table to snap the time range to it.",
                multi=False,
            ),
        ),
        annotations=(
            Annotation("Picked run: start, faults, steady state, end", "purple", run_tags="run"),
            Annotation(
                "Run events",
                "orange",
                logs(RUN_EVENTS_LOGS + " | unpack_json", RUN_EVENTS_LOGS),
                title_field="event",
                tag_fields=("event", "scenario"),
            ),
            Annotation(
                "Alerts",
                "red",
                logs(
                    ALERTS_LOGS + ' status:="firing" | unpack_json',
                    ALERTS_LOGS.replace("}", ', status="firing"}'),
                ),
                title_field="alertname",
                tag_fields=("severity",),
            ),
        ),
    )
    d.group("Runs")
    d.add(
        Panel(
            Kind.TABLE,
            "Runs (open one to snap the time range to it)",
            "Each row links to this dashboard with the run picked and the time range "
            "set to its window; the shaded region is its steady state (the report's window).",
            [flux(RUNS_TABLE, table=True)],
            width=24,
            height=6,
            links=(OPEN_RUN,),
            # What a person reads first, first; the event column (always run_end) hidden.
            columns=(
                Column("label", "Run"),
                Column("start_ms", "Start", Format(Unit.DATETIME)),
                Column("end_ms", "End", Format(Unit.DATETIME)),
                Column("steady_start_ms", "Steady from", Format(Unit.DATETIME)),
                Column("kind", "Kind"),
                Column("scenario", "Scenario"),
                Column("run_id", "Run id"),
            ),
            hide=("event",),
        )
    )
    d.group("The run's indicators")
    d.add(
        Panel(
            Kind.TIMESERIES,
            "Dialog response and its bound (1-minute mean)",
            "Average dialog response over 1-minute windows (a short fault shows at its "
            f"height); the dashed line is the SD benchmark's "
            f"{config.thresholds.seconds(DIALOG_RESPONSE):g} s bound.",
            [prom(_mean_1m("response", "sum"), legend="dialog response")],
            format=Format(Unit.SECONDS, 2),
            thresholds=traffic(config.thresholds.seconds(DIALOG_RESPONSE), lines=True),
        )
    )
    d.add(
        Panel(
            Kind.TIMESERIES,
            "Dialog steps/s",
            "Throughput over 1-minute windows: ramp-up, steady state and what a fault cost.",
            [
                prom(
                    'sum(rate(sap_workload_steps_total{sid=~"$sid",task_type="dialog"}[1m]))',
                    legend="dialog steps/s",
                )
            ],
            format=Format(Unit.REQUESTS_PER_S),
        )
    )
    d.add(
        Panel(
            Kind.TIMESERIES,
            f"The {len(INDICATORS)} whitepaper indicators as a share of their thresholds "
            "(worst instance, 1-minute mean)",
            "Each indicator of the worst instance divided by its seed 000 threshold: above "
            "the dashed 100 % line its alert is due. One scale for all five, so the one that "
            "moved stands out.",
            [
                prom(
                    f"max({_mean_1m(i.component, 'sum by (sap_instance)', scale=1)})"
                    f" / {config.thresholds.seconds(i):g}",
                    legend=i.label,
                )
                for i in INDICATORS
            ],
            width=24,
            format=Format(Unit.RATIO),
            min=0,
            thresholds=limit_line(1),
            legend=INSTANCE_LEGEND,
        )
    )
    d.group("Events and notifications")
    # One band per alert's life, where Grafana's annotation layer drew a line per message.
    d.add(alert_lives())
    d.add(
        Panel(
            Kind.LOGS,
            "Run events",
            "The run's start, faults, steady state and end, as the API logged them.",
            [
                logs(
                    f'{RUN_EVENTS_LOGS} | unpack_json | format "{RUN_LINE}"',
                    f"{RUN_EVENTS_LOGS} | json | line_format `{_logql_line(RUN_LINE)}`",
                )
            ],
        )
    )
    d.add(
        Panel(
            Kind.LOGS,
            "Alert notifications",
            "What Alertmanager sent (firing and resolved), with the alert's summary.",
            [
                logs(
                    f'{ALERTS_LOGS} | unpack_json | format "{ALERT_LINE}"',
                    f"{ALERTS_LOGS} | json | line_format `{_logql_line(ALERT_LINE)}`",
                )
            ],
        )
    )
    d.add(
        Panel(
            Kind.TABLE,
            "Run events in InfluxDB",
            "The same events as written to InfluxDB (what the run picker reads), newest first.",
            [
                flux(
                    'from(bucket: "wlmon/autogen") |> range(start: v.timeRangeStart, stop: v.timeRangeStop) '
                    '|> filter(fn: (r) => r._measurement == "wlmon_run_events" and r._field == "message") '
                    '|> group() |> keep(columns: ["_time", "event", "scenario", "_value"]) '
                    '|> sort(columns: ["_time"], desc: true)',
                    table=True,
                )
            ],
            width=24,
            columns=(
                Column("_time", "Time"),
                Column("event", "Event"),
                Column("scenario", "Scenario"),
                Column("_value", "Message"),
            ),
        )
    )
    return d


def _mean_1m(component: str, agg: str, scale: float = 1) -> str:
    """Seconds per dialog step of one component over 1-minute windows (the recorded 5-minute
    means would flatten a fault of a few minutes)."""
    sel = 'sid=~"$sid",sap_instance=~"$sap_instance",task_type="dialog"'
    factor = f"{scale:g} * " if scale != 1 else ""
    return (
        f"{factor}{agg} (rate(sap_workload_{component}_seconds_total{{{sel}}}[1m]))"
        f" / {agg} (rate(sap_workload_steps_total{{{sel}}}[1m]))"
    )


def _logql_line(line: str) -> str:
    """A LogsQL `format` template (<field>) as LogQL's line_format one ({{.field}})."""
    return re.sub(r"<(\w+)>", r"{{.\1}}", line)
