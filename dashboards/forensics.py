"""Run forensics: pick a run, the time range snaps to it; its events, alerts and indicators."""

from __future__ import annotations

from dashboards.defaults import INFLUX, LOKI, flux, loki, prom, traffic
from dashboards.layout import Dashboard
from exporters.vocabulary import (
    DIALOG_RESPONSE,
    DIALOG_RESPONSE_MEAN,
    INDICATORS,
    per_step_mean,
    threshold_seconds,
)

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
    d = Dashboard("wlmon-forensics", "Run forensics", "Forensics", ["forensics"])
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
    )
    d.add(
        "timeseries",
        "Dialog response and its bound",
        [prom(f'{DIALOG_RESPONSE_MEAN}{{sid=~"$sid"}}', legend="response")],
        w=12,
        unit="s",
        thresholds=traffic(threshold_seconds(DIALOG_RESPONSE)),
        show_thresholds=True,
    )
    d.add(
        "timeseries",
        "Dialog steps/s",
        [
            prom(
                'sum(rate(sap_workload_steps_total{sid=~"$sid",task_type="dialog"}[5m]))',
                legend="steps/s",
            )
        ],
        w=12,
        unit="reqps",
    )
    d.add(
        "timeseries",
        "The four whitepaper indicators (worst instance, ms)",
        [
            prom(
                f'max(1000 * {per_step_mean(i.component)}{{sid=~"$sid",task_type="dialog"}})',
                legend=i.label,
            )
            for i in INDICATORS
        ],
        w=24,
        unit="ms",
        custom={"scaleDistribution": {"type": "log", "log": 10}},
    )
    d.add(
        "logs",
        "Run events",
        [loki('{source="run_events", sid=~"$sid"}')],
        w=12,
        options={"showTime": True, "sortOrder": "Descending"},
    )
    d.add(
        "logs",
        "Alert notifications",
        [loki('{source="alertmanager", sid=~"$sid"}')],
        w=12,
        options={"showTime": True, "sortOrder": "Descending"},
    )
    d.add(
        "table",
        "Run events in InfluxDB",
        [
            flux(
                'from(bucket: "wlmon/autogen") |> range(start: v.timeRangeStart, stop: v.timeRangeStop) '
                '|> filter(fn: (r) => r._measurement == "wlmon_run_events" and r._field == "message") '
                '|> group() |> keep(columns: ["_time", "event", "scenario", "_value"])'
            )
        ],
        w=24,
    )
    return d
