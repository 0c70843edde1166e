"""Run forensics: pick a run, the time range snaps to it; its events, alerts and indicators."""

from __future__ import annotations

from alerts.thresholds import threshold_seconds
from dashboards.defaults import INFLUX, INSTANCE_LEGEND, LOKI, flux, limit_line, loki, prom, traffic
from dashboards.layout import Dashboard
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
OPEN_RUN = (
    "/d/wlmon-forensics/run-forensics?var-run=${__data.fields.run_id}"
    "&from=${__data.fields.start_ms}&to=${__data.fields.end_ms}&${sid:queryparam}"
)


def dashboard() -> Dashboard:
    d = Dashboard(
        "wlmon-forensics",
        "Run forensics",
        "Forensics",
        ["forensics"],
        # Its panels read the run's window by SID and instance; no panel is per task type.
        hidden=("task_type",),
    )
    d.extra_variables = [
        {
            "name": "run",
            "label": "run",
            "description": "Runs from the API (real-time and external), newest first. Open "
            "one from the Runs table to snap the time range to it.",
            "type": "query",
            "datasource": INFLUX,
            "query": RUN_IDS,
            "definition": RUN_IDS,
            "refresh": 2,
            "includeAll": False,
            "multi": False,
            "sort": 0,
        }
    ]
    d.annotations = [
        {
            "name": "Picked run: start, faults, steady state, end",
            "datasource": {"type": "grafana", "uid": "-- Grafana --"},
            "enable": True,
            "iconColor": "purple",
            "target": {"type": "tags", "tags": ["$run"], "matchAny": False, "limit": 100},
        },
        {
            "name": "Run events (Loki)",
            "datasource": LOKI,
            "enable": True,
            "iconColor": "orange",
            "expr": '{source="run_events", sid=~"$sid"}',
            "textFormat": "{{event}}",
            "tagKeys": "event,scenario",
        },
        {
            "name": "Alerts (Loki)",
            "datasource": LOKI,
            "enable": True,
            "iconColor": "red",
            "expr": '{source="alertmanager", sid=~"$sid", status="firing"}',
            "tagKeys": "severity",
        },
    ]
    d.add(
        "table",
        "Runs (open one to snap the time range to it)",
        [flux(RUNS_TABLE)],
        w=24,
        h=6,
        description="Each row links to this dashboard with the run picked and the time range "
        "set to its window; the shaded region is its steady state (the report's window).",
        options={"showHeader": True, "cellHeight": "sm"},
        custom={"filterable": False},
        links=[{"title": "Open this run", "url": OPEN_RUN}],
        overrides=[
            {
                "matcher": {"id": "byRegexp", "options": ".*_ms"},
                "properties": [{"id": "unit", "value": "dateTimeAsIso"}],
            }
        ],
        # What a person reads first, first; the event column (always run_end) hidden.
        transformations=[
            {
                "id": "organize",
                "options": {
                    "excludeByName": {"event": True},
                    "indexByName": {name: n for n, name in enumerate(RUN_ORDER)},
                    "renameByName": {
                        "label": "Run",
                        "start_ms": "Start",
                        "end_ms": "End",
                        "steady_start_ms": "Steady from",
                        "kind": "Kind",
                        "scenario": "Scenario",
                        "run_id": "Run id",
                    },
                },
            }
        ],
    )
    d.add(
        "timeseries",
        "Dialog response and its bound (1-minute mean)",
        [prom(_mean_1m("response", "sum"), legend="dialog response")],
        w=12,
        unit="s",
        decimals=2,
        thresholds=traffic(threshold_seconds(DIALOG_RESPONSE)),
        show_thresholds=True,
        description="Average dialog response over 1-minute windows (a short fault shows at its "
        f"height); the dashed line is the SD benchmark's {threshold_seconds(DIALOG_RESPONSE):g} "
        "s bound.",
    )
    d.add(
        "timeseries",
        "Dialog steps/s",
        [
            prom(
                'sum(rate(sap_workload_steps_total{sid=~"$sid",task_type="dialog"}[1m]))',
                legend="dialog steps/s",
            )
        ],
        w=12,
        unit="reqps",
        description="Throughput over 1-minute windows: ramp-up, steady state and what a fault "
        "cost.",
    )
    d.add(
        "timeseries",
        f"The {len(INDICATORS)} whitepaper indicators as a share of their thresholds "
        "(worst instance, 1-minute mean)",
        [
            prom(
                f"max({_mean_1m(i.component, 'sum by (sap_instance)', scale=1)})"
                f" / {threshold_seconds(i):g}",
                legend=i.label,
            )
            for i in INDICATORS
        ],
        w=24,
        unit="percentunit",
        min_=0,
        thresholds=limit_line(1),
        show_thresholds=True,
        description="Each indicator of the worst instance divided by its seed 000 threshold: "
        "above the dashed 100 % line its alert is due. One scale for all five, so the one that "
        "moved stands out.",
        options={"legend": INSTANCE_LEGEND},
    )
    d.add(
        "logs",
        "Run events",
        [loki('{source="run_events", sid=~"$sid"} | json | line_format `' + RUN_LINE + "`")],
        w=12,
        description="The run's start, faults, steady state and end, as the API logged them.",
        options={"showTime": True, "wrapLogMessage": True, "sortOrder": "Descending"},
    )
    d.add(
        "logs",
        "Alert notifications",
        [loki('{source="alertmanager", sid=~"$sid"} | json | line_format `' + ALERT_LINE + "`")],
        w=12,
        description="What Alertmanager sent (firing and resolved), with the alert's summary.",
        options={"showTime": True, "wrapLogMessage": True, "sortOrder": "Descending"},
    )
    d.add(
        "table",
        "Run events in InfluxDB",
        [
            flux(
                'from(bucket: "wlmon/autogen") |> range(start: v.timeRangeStart, stop: v.timeRangeStop) '
                '|> filter(fn: (r) => r._measurement == "wlmon_run_events" and r._field == "message") '
                '|> group() |> keep(columns: ["_time", "event", "scenario", "_value"]) '
                '|> sort(columns: ["_time"], desc: true)'
            )
        ],
        w=24,
        description="The same events as written to InfluxDB (what the run picker reads), "
        "newest first.",
        transformations=[
            {
                "id": "organize",
                "options": {
                    "renameByName": {
                        "_time": "Time",
                        "event": "Event",
                        "scenario": "Scenario",
                        "_value": "Message",
                    }
                },
            }
        ],
    )
    return d


RUN_ORDER = ("label", "start_ms", "end_ms", "steady_start_ms", "kind", "scenario", "run_id")
RUN_LINE = "{{.event}}  {{.message}}  {{.faults}}  run {{.run_id}}"
ALERT_LINE = "{{.status}} {{.alertname}} on {{.sap_instance}}: {{.summary}}"


def _mean_1m(component: str, agg: str, scale: float = 1) -> str:
    """Seconds per dialog step of one component over 1-minute windows (the recorded 5-minute
    means would flatten a fault of a few minutes)."""
    sel = 'sid=~"$sid",sap_instance=~"$sap_instance",task_type="dialog"'
    factor = f"{scale:g} * " if scale != 1 else ""
    return (
        f"{factor}{agg} (rate(sap_workload_{component}_seconds_total{{{sel}}}[1m]))"
        f" / {agg} (rate(sap_workload_steps_total{{{sel}}}[1m]))"
    )
