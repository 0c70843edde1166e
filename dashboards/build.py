"""Builds the Grafana dashboards (dashboards/<folder>/<slug>.json) from code.

Run `python dashboards/build.py` after a change; tests/dashboards fails when the committed
JSON and this builder disagree. Thresholds come from alerts/thresholds.yml, the one source
the alert rules are checked against. Datasources are referenced by their fixed uids.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
THRESHOLDS = yaml.safe_load((HERE.parent / "alerts" / "thresholds.yml").read_text())
PROM = {"type": "prometheus", "uid": "prometheus"}
LOKI = {"type": "loki", "uid": "loki"}
INFLUX = {"type": "influxdb", "uid": "influxdb"}
SEL = 'sid=~"$sid",sap_instance=~"$sap_instance"'
SEL_TT = SEL + ',task_type=~"$task_type"'
# Steps/s per instance as recorded from either source (model or sapcontrol); max by instance
# keeps one where both read the same instance.
STEPS = "sap_instance_task_type:sap_workload_steps:rate5m"


def prom(expr: str, legend: str = "", instant: bool = False, fmt: str = "time_series") -> dict:
    return {
        "datasource": PROM,
        "expr": expr,
        "legendFormat": legend,
        "range": not instant,
        "instant": instant,
        "format": fmt,
    }


def loki(expr: str) -> dict:
    return {"datasource": LOKI, "expr": expr, "queryType": "range"}


def flux(query: str) -> dict:
    return {"datasource": INFLUX, "query": query}


def steps(color_at: list[tuple[float | None, str]]) -> dict:
    return {"mode": "absolute", "steps": [{"value": v, "color": c} for v, c in color_at]}


def stat_options(color_mode: str = "background", graph_mode: str = "none") -> dict:
    return {
        "colorMode": color_mode,
        "graphMode": graph_mode,
        "reduceOptions": {"calcs": ["lastNotNull"]},
    }


def traffic(limit: float) -> dict:
    """Green below the whitepaper threshold, red at or above it."""
    return steps([(None, "green"), (limit, "red")])


class Dashboard:
    def __init__(
        self, uid: str, title: str, folder: str, tags: list[str], variables: bool = True
    ) -> None:
        self.uid, self.title, self.folder, self.tags = uid, title, folder, tags
        self.panels: list[dict] = []
        self.variables = variables
        self.extra_variables: list[dict] = []
        self.annotations: list[dict] = []
        self._x = self._y = 0
        self._row_h = 0

    def add(
        self,
        kind: str,
        title: str,
        targets: list[dict],
        w: int = 12,
        h: int = 8,
        unit: str = "",
        thresholds: dict | None = None,
        show_thresholds: bool = False,
        description: str = "",
        options: dict | None = None,
        custom: dict | None = None,
        transformations: list | None = None,
        min_: float | None = None,
        max_: float | None = None,
        decimals: int | None = None,
        links: list[dict] | None = None,
        overrides: list[dict] | None = None,
    ) -> None:
        if self._x + w > 24:
            self._x, self._y = 0, self._y + self._row_h
            self._row_h = 0
        defaults: dict = {"unit": unit} if unit else {}
        if thresholds:
            defaults["thresholds"] = thresholds
        if min_ is not None:
            defaults["min"] = min_
        if max_ is not None:
            defaults["max"] = max_
        if decimals is not None:
            defaults["decimals"] = decimals
        if links:
            defaults["links"] = links
        cust = dict(custom or {})
        if show_thresholds:
            cust["thresholdsStyle"] = {"mode": "line+area"}
        if cust:
            defaults["custom"] = cust
        if kind in ("stat", "gauge", "bargauge"):
            defaults.setdefault("color", {"mode": "thresholds"})
        panel = {
            "id": len(self.panels) + 1,
            "type": kind,
            "title": title,
            "description": description,
            "datasource": targets[0]["datasource"],
            "gridPos": {"x": self._x, "y": self._y, "w": w, "h": h},
            "targets": [{"refId": chr(ord("A") + i), **t} for i, t in enumerate(targets)],
            "fieldConfig": {"defaults": defaults, "overrides": overrides or []},
            "options": options or {},
        }
        if transformations:
            panel["transformations"] = transformations
        self.panels.append(panel)
        self._x += w
        self._row_h = max(self._row_h, h)

    def json(self) -> dict:
        templating = []
        if self.variables:
            for name, query in (
                ("sid", "label_values(sap_workload_steps_total, sid)"),
                (
                    "sap_instance",
                    'label_values(sap_workload_steps_total{sid=~"$sid"}, sap_instance)',
                ),
                ("task_type", 'label_values(sap_workload_steps_total{sid=~"$sid"}, task_type)'),
            ):
                templating.append(
                    {
                        "name": name,
                        "label": name,
                        "type": "query",
                        "datasource": PROM,
                        "query": {"query": query, "refId": f"{name}-var"},
                        "definition": query,
                        "refresh": 2,
                        "includeAll": True,
                        "multi": True,
                        "allValue": ".*",
                        "sort": 1,
                        "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
                    }
                )
        templating += self.extra_variables
        return {
            "uid": self.uid,
            "title": self.title,
            "tags": ["wlmon", *self.tags],
            "timezone": "browser",
            "editable": False,
            "graphTooltip": 1,
            "refresh": "30s",
            "schemaVersion": 38,
            "version": 1,
            "time": {"from": "now-1h", "to": "now"},
            "templating": {"list": templating},
            "annotations": {"list": self.annotations},
            "panels": self.panels,
        }


def ms(metric: str, sel: str = SEL_TT) -> str:
    """Mean milliseconds per step of one ST03 time part, over the selection."""
    return (
        f"1000 * sum(rate(sap_workload_{metric}_seconds_total{{{sel}}}[5m]))"
        f" / sum(rate(sap_workload_steps_total{{{sel}}}[5m]))"
    )


def noc() -> Dashboard:
    d = Dashboard("wlmon-noc", "NOC overview", "NOC", ["noc"])
    dialog = SEL + ',task_type="dialog"'
    t = THRESHOLDS
    for title, metric, limit in (
        ("Dispatcher wait (ms)", "dispatcher_wait", t["dispatcher_wait_seconds"]),
        ("DB request (ms)", "db_request", t["db_request_seconds"]),
        ("Enqueue (ms)", "enqueue", t["enqueue_seconds"]),
        ("Roll-in (ms)", "roll_in", t["roll_seconds"]),
        ("Roll-out (ms)", "roll_out", t["roll_seconds"]),
    ):
        d.add(
            "stat",
            title,
            [
                prom(
                    f"max(1000 * sap_instance_task_type:sap_workload_{metric}_seconds_per_step:mean5m"
                    f"{{{dialog}}})",
                    instant=True,
                )
            ],
            w=4,
            h=6,
            unit="ms",
            thresholds=traffic(limit * 1000),
            decimals=1,
            description=f"Worst instance, dialog steps; red at the seed 000 threshold of {limit * 1000:g} ms.",
            options={**stat_options(), "textMode": "value"},
        )
    d.add(
        "stat",
        "Dialog response (s)",
        [
            prom(
                'sid:sap_workload_dialog_response_seconds_per_step:mean5m{sid=~"$sid"}',
                instant=True,
            )
        ],
        w=4,
        h=6,
        unit="s",
        decimals=2,
        thresholds=traffic(t["dialog_response_seconds"]),
        description="Average dialog response; the SD benchmark passes below 2 s (seed 000).",
        options=stat_options("background", "none"),
    )
    d.add(
        "stat",
        "Worst SAP buffer hit ratio",
        [
            prom(
                'min(sum by (sap_instance, buffer) (rate(sap_buffer_hits_total{sid=~"$sid",'
                'buffer!~"program|single_record|export_import"}[5m])) / sum by (sap_instance, buffer) '
                '(rate(sap_buffer_requests_total{sid=~"$sid",buffer!~"program|single_record|export_import"}[5m])))',
                instant=True,
            )
        ],
        w=4,
        h=6,
        unit="percentunit",
        decimals=2,
        thresholds=steps([(None, "red"), (0.98, "green")]),
        description="R/3 buffers should hit 98 % or better (seed 000, 4.3.1).",
        options=stat_options("background", "none"),
    )
    d.add(
        "stat",
        "Firing alerts",
        [prom('count(ALERTS{alertstate="firing",sid=~"$sid"}) or vector(0)', instant=True)],
        w=4,
        h=6,
        thresholds=steps([(None, "green"), (1, "red")]),
        options=stat_options("background", "none"),
    )
    d.add(
        "stat",
        "Dialog steps/s",
        [prom(f"sum(max by (sid, sap_instance) ({STEPS}{{{dialog}}}))", instant=True)],
        w=4,
        h=6,
        unit="reqps",
        decimals=0,
        thresholds=steps([(None, "blue")]),
        options=stat_options("value", "area"),
    )
    d.add(
        "stat",
        "SAPS",
        [prom(f"60 * sum(max by (sid, sap_instance) ({STEPS}{{{dialog}}}))", instant=True)],
        w=4,
        h=6,
        decimals=0,
        thresholds=steps([(None, "blue")]),
        description="Dialog steps per hour / 60 (seed 000 Table 5: 29,050).",
        options=stat_options("value", "none"),
    )
    rows = [
        (
            name,
            f"1000 * sap_instance_task_type:sap_workload_{metric}_seconds_per_step:mean5m{{{dialog}}}",
        )
        for name, metric in (
            ("dispatcher wait ms", "dispatcher_wait"),
            ("DB request ms", "db_request"),
            ("enqueue ms", "enqueue"),
            ("roll-in ms", "roll_in"),
            ("roll-out ms", "roll_out"),
        )
    ]
    d.add(
        "table",
        "Instances: the four whitepaper indicators (ms per dialog step)",
        [prom(expr, legend=name, instant=True, fmt="table") for name, expr in rows],
        w=24,
        h=12,
        decimals=1,
        transformations=[
            {"id": "merge", "options": {}},
            {
                "id": "organize",
                "options": {"excludeByName": {"Time": True, "__name__": True, "task_type": True}},
            },
        ],
    )
    return d


def st03() -> Dashboard:
    d = Dashboard("wlmon-st03", "ST03 workload", "SAP", ["st03"])
    parts = (
        "dispatcher_wait",
        "roll_in",
        "load_gen",
        "processing",
        "db_request",
        "enqueue",
        "roll_out",
        "gui",
    )
    d.add(
        "timeseries",
        "Response time split into its parts (ms per step)",
        [prom(ms(p), legend=p) for p in parts],
        w=24,
        h=9,
        unit="ms",
        custom={"stacking": {"mode": "normal"}, "fillOpacity": 40, "lineWidth": 1},
        description="Stacked: dispatcher wait, roll-in, load/generation, processing (CPU and its wait), "
        "DB request, enqueue, roll-out, GUI time.",
    )
    t = THRESHOLDS
    for title, metric, limit in (
        ("Dispatcher wait (ms)", "dispatcher_wait", t["dispatcher_wait_seconds"]),
        ("DB request (ms)", "db_request", t["db_request_seconds"]),
        ("Enqueue (ms)", "enqueue", t["enqueue_seconds"]),
        ("Roll-in and roll-out (ms)", "roll_in", t["roll_seconds"]),
    ):
        targets = [
            prom(
                f"1000 * sum by (sap_instance) (rate(sap_workload_{metric}_seconds_total{{{SEL_TT}}}[5m]))"
                f" / sum by (sap_instance) (rate(sap_workload_steps_total{{{SEL_TT}}}[5m]))",
                legend="{{sap_instance}}",
            )
        ]
        if metric == "roll_in":
            targets.append(
                prom(
                    f"1000 * sum by (sap_instance) (rate(sap_workload_roll_out_seconds_total"
                    f"{{{SEL_TT}}}[5m])) / sum by (sap_instance) (rate(sap_workload_steps_total"
                    f"{{{SEL_TT}}}[5m]))",
                    legend="{{sap_instance}} out",
                )
            )
        d.add(
            "timeseries",
            title,
            targets,
            w=12,
            h=8,
            unit="ms",
            thresholds=traffic(limit * 1000),
            show_thresholds=True,
            description=f"Per instance; the line is seed 000's {limit * 1000:g} ms.",
        )
    d.add(
        "barchart",
        "Response per transaction (ms per step)",
        [
            prom(
                '1000 * sum by (transaction) (rate(sap_workload_transaction_response_seconds_total{sid=~"$sid",'
                'task_type=~"$task_type"}[5m])) / sum by (transaction) (rate(sap_workload_transaction_steps_total'
                '{sid=~"$sid",task_type=~"$task_type"}[5m]))',
                legend="{{transaction}}",
                instant=True,
                fmt="table",
            )
        ],
        w=12,
        h=8,
        unit="ms",
        options={"xField": "transaction", "orientation": "horizontal"},
    )
    d.add(
        "heatmap",
        "Response time distribution",
        [
            prom(
                f"sum by (le) (increase(sap_workload_response_time_seconds_bucket{{{SEL_TT}}}[$__rate_interval]))",
                legend="{{le}}",
                fmt="heatmap",
            )
        ],
        w=12,
        h=8,
        options={"calculate": False, "yAxis": {"unit": "s"}, "cellGap": 1},
    )
    d.add(
        "timeseries",
        "Work processes busy vs configured",
        [
            prom(
                f"sum by (task_type) (sap_workload_work_processes_busy{{{SEL_TT}}})",
                legend="{{task_type}} busy",
            ),
            prom(
                f"sum by (task_type) (sap_workload_work_processes{{{SEL_TT}}})",
                legend="{{task_type}} configured",
            ),
        ],
        w=12,
        h=8,
    )
    d.add(
        "timeseries",
        "Dispatcher queue",
        [
            prom(
                f"sum by (sap_instance) (sap_workload_dispatcher_queue_length{{{SEL_TT}}})",
                legend="{{sap_instance}}",
            )
        ],
        w=12,
        h=8,
    )
    d.add(
        "timeseries",
        "Roll area and extended memory in use",
        [
            prom(
                f"sum(sap_roll_buffer_used_bytes{{{SEL}}}) / sum(sap_roll_buffer_size_bytes{{{SEL}}})",
                legend="roll buffer",
            ),
            prom(
                f"sum(sap_extended_memory_used_bytes{{{SEL}}}) / sum(sap_extended_memory_size_bytes{{{SEL}}})",
                legend="extended memory",
            ),
        ],
        w=12,
        h=8,
        unit="percentunit",
        min_=0,
        max_=1,
    )
    d.add(
        "timeseries",
        "Roll file writes",
        [prom(f"sum(rate(sap_roll_file_written_bytes_total{{{SEL}}}[5m]))", legend="bytes/s")],
        w=12,
        h=8,
        unit="Bps",
        description="Should stay 0 (seed 000, 4.3.1).",
    )
    return d


def st05() -> Dashboard:
    d = Dashboard("wlmon-st05", "ST05 expensive SQL", "SAP", ["st05"])
    d.add(
        "table",
        "Top statements by elapsed DB time",
        [
            prom(
                "topk(15, sum by (statement, table, operation) (increase(sap_st05_statement_elapsed_seconds_total"
                '{sid=~"$sid"}[$__range])))',
                instant=True,
                fmt="table",
            )
        ],
        w=12,
        h=10,
        unit="s",
        decimals=1,
        description="Seed 000 4.3.5.2: sort the compressed summary by elapsed DB time. The SQL text is in the "
        "trace lines beside.",
        transformations=[
            {"id": "organize", "options": {"excludeByName": {"Time": True}}},
            {"id": "sortBy", "options": {"sort": [{"field": "Value", "desc": True}]}},
        ],
    )
    d.add(
        "bargauge",
        "Tables by elapsed DB time",
        [
            prom(
                'topk(10, sum by (table) (rate(sap_st05_table_elapsed_seconds_total{sid=~"$sid"}[5m])))',
                legend="{{table}}",
                instant=True,
            )
        ],
        w=12,
        h=10,
        unit="s",
        thresholds=steps([(None, "blue")]),
        options={
            "orientation": "horizontal",
            "displayMode": "gradient",
            "reduceOptions": {"calcs": ["lastNotNull"]},
        },
    )
    d.add(
        "timeseries",
        "Elapsed DB seconds per second, top tables",
        [
            prom(
                'topk(5, sum by (table) (rate(sap_st05_table_elapsed_seconds_total{sid=~"$sid"}[5m])))',
                legend="{{table}}",
            )
        ],
        w=12,
        h=8,
        unit="s",
    )
    d.add(
        "logs",
        "SQL trace summaries (Loki)",
        [loki('{source="st05", sid=~"$sid", sap_instance=~"$sap_instance"} | logfmt')],
        w=12,
        h=8,
        options={"showTime": True, "wrapLogMessage": True, "sortOrder": "Descending"},
    )
    return d


def dbbuffer() -> Dashboard:
    d = Dashboard("wlmon-dbbuffer", "Database buffer pools", "Database", ["db2"])
    t = THRESHOLDS
    for kind in ("data", "index"):
        d.add(
            "timeseries",
            f"{kind.capitalize()} hit ratio per pool",
            [
                prom(
                    f'sid_bufferpool:sap_db_bufferpool_{kind}_hit_ratio:ratio5m{{sid=~"$sid"}}',
                    legend="{{bufferpool}}",
                )
            ],
            unit="percentunit",
            thresholds=steps([(None, "red"), (t[f"db2_{kind}_hit_ratio_min"], "green")]),
            show_thresholds=True,
            min_=0.8,
            max_=1,
        )
    d.add(
        "timeseries",
        "Physical reads per pool",
        [
            prom(
                'sum by (bufferpool) (rate(sap_db_bufferpool_data_physical_reads_total{sid=~"$sid"}[5m]) + '
                'rate(sap_db_bufferpool_index_physical_reads_total{sid=~"$sid"}[5m]))',
                legend="{{bufferpool}}",
            )
        ],
        unit="rps",
    )
    d.add(
        "timeseries",
        "Page writes: asynchronous (I/O cleaners) vs synchronous",
        [
            prom(
                'sum(rate(sap_db_bufferpool_async_data_writes_total{sid=~"$sid"}[5m]) + '
                'rate(sap_db_bufferpool_async_index_writes_total{sid=~"$sid"}[5m]))',
                legend="asynchronous",
            ),
            prom(
                'sum(rate(sap_db_bufferpool_data_writes_total{sid=~"$sid"}[5m]) + rate(sap_db_bufferpool_'
                'index_writes_total{sid=~"$sid"}[5m])) - sum(rate(sap_db_bufferpool_async_data_writes_total'
                '{sid=~"$sid"}[5m]) + rate(sap_db_bufferpool_async_index_writes_total{sid=~"$sid"}[5m]))',
                legend="synchronous",
            ),
        ],
        unit="wps",
        custom={"stacking": {"mode": "normal"}, "fillOpacity": 30},
        description="Synchronous writes mean the I/O cleaners fall behind (seed 000 Table 3).",
    )
    d.add(
        "timeseries",
        "SAP buffer hit ratio",
        [
            prom(
                f"sum by (buffer) (rate(sap_buffer_hits_total{{{SEL}}}[5m])) / "
                f"sum by (buffer) (rate(sap_buffer_requests_total{{{SEL}}}[5m]))",
                legend="{{buffer}}",
            )
        ],
        unit="percentunit",
        thresholds=steps([(None, "red"), (0.98, "green")]),
        show_thresholds=True,
        min_=0.9,
        max_=1,
        description="98 % or better, except program, single-record and export/import.",
    )
    d.add(
        "timeseries",
        "SAP buffer swaps",
        [prom(f"sum by (buffer) (rate(sap_buffer_swaps_total{{{SEL}}}[5m]))", legend="{{buffer}}")],
        unit="ops",
        thresholds=steps([(None, "green"), (0.000001, "red")]),
        show_thresholds=True,
        description="There should be no swaps (seed 000, 4.3.1).",
    )
    return d


def oscounters() -> Dashboard:
    d = Dashboard("wlmon-os", "OS counters", "Hosts", ["os"])
    d.add(
        "timeseries",
        "Processor\\% Processor Time (windows_exporter)",
        [
            prom(
                '100 * (1 - sum by (host) (rate(windows_cpu_time_total{sid=~"$sid",mode="idle"}[5m])) / '
                'count by (host) (windows_cpu_time_total{sid=~"$sid",mode="idle"}))',
                legend="{{host}}",
            )
        ],
        unit="percent",
        min_=0,
        max_=100,
    )
    d.add(
        "timeseries",
        "CPU busy (node_exporter)",
        [
            prom(
                '100 * (1 - avg by (host) (rate(node_cpu_seconds_total{sid=~"$sid",mode="idle"}[5m])))',
                legend="{{host}}",
            )
        ],
        unit="percent",
        min_=0,
        max_=100,
    )
    d.add(
        "timeseries",
        "Memory\\Available MBytes",
        [prom('windows_memory_available_bytes{sid=~"$sid"} / 1048576', legend="{{host}}")],
        unit="decmbytes",
    )
    d.add(
        "timeseries",
        "MemAvailable (node_exporter)",
        [prom('node_memory_MemAvailable_bytes{sid=~"$sid"}', legend="{{host}}")],
        unit="bytes",
    )
    d.add(
        "timeseries",
        "Memory\\Pages/sec",
        [
            prom(
                'rate(windows_memory_swap_page_operations_total{sid=~"$sid"}[5m])',
                legend="{{host}}",
            )
        ],
        unit="ops",
    )
    d.add(
        "timeseries",
        "PhysicalDisk\\Avg. Disk Queue Length",
        [
            prom(
                'sum by (host) (rate(windows_physical_disk_read_seconds_total{sid=~"$sid"}[5m]) + '
                'rate(windows_physical_disk_write_seconds_total{sid=~"$sid"}[5m]))',
                legend="{{host}}",
            )
        ],
    )
    d.add(
        "timeseries",
        "This host: CPU (Telegraf, InfluxDB)",
        [
            flux(
                'from(bucket: "wlmon/autogen") |> range(start: v.timeRangeStart, stop: v.timeRangeStop) '
                '|> filter(fn: (r) => r._measurement == "cpu" and r._field == "usage_idle" and r.cpu == "cpu-total")'
                " |> map(fn: (r) => ({r with _value: 100.0 - r._value})) "
                "|> aggregateWindow(every: v.windowPeriod, fn: mean, createEmpty: false)"
            )
        ],
        unit="percent",
        min_=0,
        max_=100,
    )
    d.add(
        "timeseries",
        "This host: available memory (Telegraf, InfluxDB)",
        [
            flux(
                'from(bucket: "wlmon/autogen") |> range(start: v.timeRangeStart, stop: v.timeRangeStop) '
                '|> filter(fn: (r) => r._measurement == "mem" and r._field == "available") '
                "|> aggregateWindow(every: v.windowPeriod, fn: mean, createEmpty: false)"
            )
        ],
        unit="bytes",
    )
    return d


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


def forensics() -> Dashboard:
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
        [
            prom(
                'sid:sap_workload_dialog_response_seconds_per_step:mean5m{sid=~"$sid"}',
                legend="response",
            )
        ],
        w=12,
        unit="s",
        thresholds=traffic(THRESHOLDS["dialog_response_seconds"]),
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
                f"max(1000 * sap_instance_task_type:sap_workload_{m}_seconds_per_step:mean5m"
                f'{{sid=~"$sid",task_type="dialog"}})',
                legend=m,
            )
            for m in ("dispatcher_wait", "db_request", "enqueue", "roll_in", "roll_out")
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


DASHBOARDS = (noc, st03, st05, dbbuffer, oscounters, forensics)
FOLDER_DIRS = {
    "NOC": "noc",
    "SAP": "sap",
    "Database": "database",
    "Hosts": "hosts",
    "Forensics": "forensics",
}


def _instances_module():
    """dashboards/instances.py (plain dicts), loaded by path as this file is run as a script."""
    spec = importlib.util.spec_from_file_location("dashboards_instances", HERE / "instances.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build() -> dict[Path, str]:
    out = {}
    for make in DASHBOARDS:
        d = make()
        slug = d.uid.removeprefix("wlmon-")
        out[HERE / FOLDER_DIRS[d.folder] / f"{slug}.json"] = (
            json.dumps(d.json(), indent=2, sort_keys=True) + "\n"
        )
    inst = _instances_module()
    out[inst.OUT] = inst.render()
    return out


if __name__ == "__main__":
    for path, text in build().items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print("wrote", path.relative_to(HERE.parent), file=sys.stderr)
