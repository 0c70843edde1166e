"""ST05 expensive SQL: statements and tables by elapsed DB time, the trace lines from Loki."""

from __future__ import annotations

from dashboards.defaults import loki, prom, steps
from dashboards.layout import Dashboard

BY = "statement, table, operation"
ELAPSED = 'sap_st05_statement_elapsed_seconds_total{sid=~"$sid"}'
EXECUTIONS = 'sap_st05_statement_executions_total{sid=~"$sid"}'
TOP = f"topk(15, sum by ({BY}) (increase({ELAPSED}[$__range])))"
# Elapsed DB time per second of wall clock: how many database calls are busy on average.
PER_SECOND = "suffix: s/s"
# One readable line per summary row: the instance first, the SQL text unescaped.
TRACE_LINE = (
    "{{.sap_instance}}  {{.table}} {{.operation}}  {{.elapsed_ms}} ms in {{.executions}} "
    "executions ({{.per_execution_ms}} ms each)  {{.sql}}"
)


def dashboard() -> Dashboard:
    d = Dashboard(
        "wlmon-st05",
        "ST05 expensive SQL",
        "SAP",
        ["st05"],
        # The SQL trace is per statement, not per task type: that picker would filter nothing.
        hidden=("task_type",),
    )
    d.add(
        "table",
        "Top statements by elapsed DB time (time range shown)",
        [
            prom(f"{TOP} / scalar(sum(increase({ELAPSED}[$__range])))", instant=True, fmt="table"),
            prom(
                f"(1000 * sum by ({BY}) (increase({ELAPSED}[$__range]))"
                f" / sum by ({BY}) (increase({EXECUTIONS}[$__range])))"
                f" and on ({BY}) {TOP}",
                instant=True,
                fmt="table",
            ),
        ],
        w=12,
        h=10,
        decimals=1,
        description="Seed 000 4.3.5.2: sort the compressed summary by elapsed DB time. Each "
        "statement's share of all DB time in the range, and its time per execution; the SQL "
        "text of a statement hash is in the trace lines below.",
        overrides=[
            {
                "matcher": {"id": "byName", "options": "Share of DB time"},
                "properties": [
                    {"id": "unit", "value": "percentunit"},
                    {"id": "custom.cellOptions", "value": {"type": "gauge", "mode": "basic"}},
                    {"id": "max", "value": 1},
                ],
            },
            {
                "matcher": {"id": "byName", "options": "ms per execution"},
                "properties": [{"id": "unit", "value": "ms"}],
            },
        ],
        transformations=[
            {"id": "merge", "options": {}},
            {
                "id": "organize",
                "options": {
                    "excludeByName": {"Time": True},
                    "indexByName": {"statement": 0, "table": 1, "operation": 2},
                    "renameByName": {
                        "statement": "Statement (hash)",
                        "table": "Table",
                        "operation": "Operation",
                        "Value #A": "Share of DB time",
                        "Value #B": "ms per execution",
                    },
                },
            },
            {"id": "sortBy", "options": {"sort": [{"field": "Share of DB time", "desc": True}]}},
        ],
    )
    d.add(
        "bargauge",
        "Tables by DB time (seconds per second, 5-minute rate)",
        [
            prom(
                'topk(10, sum by (table) (rate(sap_st05_table_elapsed_seconds_total{sid=~"$sid"}[5m])))',
                legend="{{table}}",
                instant=True,
            )
        ],
        w=12,
        h=10,
        unit=PER_SECOND,
        decimals=2,
        thresholds=steps([(None, "blue")]),
        description="Elapsed DB time of all statements on each table per second: 2 s/s means "
        "two database calls busy on it at any moment.",
        options={
            "orientation": "horizontal",
            "displayMode": "gradient",
            "reduceOptions": {"calcs": ["lastNotNull"]},
        },
    )
    d.add(
        "timeseries",
        "DB time of the top tables (seconds per second)",
        [
            prom(
                'topk(5, sum by (table) (rate(sap_st05_table_elapsed_seconds_total{sid=~"$sid"}[5m])))',
                legend="{{table}}",
            )
        ],
        w=12,
        h=8,
        unit=PER_SECOND,
        decimals=2,
        description="When the tables' DB time grew: a fault shows as a step here.",
        options={"legend": {"displayMode": "table", "placement": "right", "calcs": ["max"]}},
    )
    d.add(
        "logs",
        "SQL trace summaries (Loki)",
        [
            loki(
                '{source="st05", sid=~"$sid", sap_instance=~"$sap_instance"} | logfmt'
                f" | line_format `{TRACE_LINE}`"
            )
        ],
        w=12,
        h=8,
        description="The compressed ST05 summary of each instance and interval, with the SQL "
        "text of each statement hash.",
        options={"showTime": True, "wrapLogMessage": True, "sortOrder": "Descending"},
    )
    return d
