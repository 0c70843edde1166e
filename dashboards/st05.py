"""ST05 expensive SQL: statements and tables by elapsed DB time, the trace lines from the
log store (VictoriaLogs, LogsQL)."""

from __future__ import annotations

import re

from alerts.settings import MonitoringConfig
from dashboards.defaults import logs, prom, variables
from dashboards.model import Column, Dashboard, Format, Kind, Legend, Panel, Unit, steps

BY = "statement, table, operation"
ELAPSED = 'sap_st05_statement_elapsed_seconds_total{sid=~"$sid"}'
EXECUTIONS = 'sap_st05_statement_executions_total{sid=~"$sid"}'
TOP = f"topk(15, sum by ({BY}) (increase({ELAPSED}[$__range])))"
# One readable line per summary row: the instance first, the SQL text unescaped.
TRACE_LINE = (
    "<sap_instance>  <table> <operation>  <elapsed_ms> ms in <executions> "
    "executions (<per_execution_ms> ms each)  <sql>"
)
TRACE = (
    '{source="st05", sid=~"$sid", sap_instance=~"$sap_instance"} | unpack_logfmt'
    f' | format "{TRACE_LINE}"'
)
TRACE_LOGQL = (
    '{source="st05", sid=~"$sid", sap_instance=~"$sap_instance"} | logfmt | line_format `'
    + re.sub(r"<(\w+)>", r"{{.\1}}", TRACE_LINE)
    + "`"
)
SHARE = "Share of DB time"


def dashboard(config: MonitoringConfig) -> Dashboard:
    del config  # nothing here is drawn at a threshold
    d = Dashboard(
        "wlmon-st05",
        "ST05 expensive SQL",
        "SAP",
        ("st05",),
        "Statements and tables by elapsed DB time, and the SQL trace summaries.",
        # The SQL trace is per statement, not per task type: that picker would filter nothing.
        variables("task_type"),
    )
    d.group("Statements and tables")
    d.add(
        Panel(
            Kind.TABLE,
            "Top statements by elapsed DB time (time range shown)",
            "Seed 000 4.3.5.2: sort the compressed summary by elapsed DB time. Each "
            "statement's share of all DB time in the range, and its time per execution; the "
            "SQL text of a statement hash is in the trace lines below.",
            [
                prom(
                    f"{TOP} / scalar(sum(increase({ELAPSED}[$__range])))", instant=True, table=True
                ),
                prom(
                    f"(1000 * sum by ({BY}) (increase({ELAPSED}[$__range]))"
                    f" / sum by ({BY}) (increase({EXECUTIONS}[$__range])))"
                    f" and on ({BY}) {TOP}",
                    instant=True,
                    table=True,
                ),
            ],
            height=10,
            format=Format(Unit.NONE, 1),
            columns=(
                Column("statement", "Statement (hash)"),
                Column("table", "Table"),
                Column("operation", "Operation"),
                Column("#0", SHARE, Format(Unit.RATIO, 1), cell="gauge", max=1),
                Column("#1", "ms per execution", Format(Unit.MS, 1)),
            ),
            sort_by=(SHARE, True),
        )
    )
    d.add(
        Panel(
            Kind.BARS,
            "Tables by DB time (seconds per second, 5-minute rate)",
            "Elapsed DB time of all statements on each table per second: 2 s/s means "
            "two database calls busy on it at any moment.",
            [
                prom(
                    'topk(10, sum by (table) (rate(sap_st05_table_elapsed_seconds_total{sid=~"$sid"}[5m])))',
                    legend="{{table}}",
                    instant=True,
                )
            ],
            height=10,
            format=Format(Unit.SECONDS_PER_S, 2),
            thresholds=steps((None, "blue")),
        )
    )
    d.add(
        Panel(
            Kind.TIMESERIES,
            "DB time of the top tables (seconds per second)",
            "When the tables' DB time grew: a fault shows as a step here.",
            [
                prom(
                    'topk(5, sum by (table) (rate(sap_st05_table_elapsed_seconds_total{sid=~"$sid"}[5m])))',
                    legend="{{table}}",
                )
            ],
            format=Format(Unit.SECONDS_PER_S, 2),
            legend=Legend(values=("max",)),
        )
    )
    d.add(
        Panel(
            Kind.LOGS,
            "SQL trace summaries",
            "The compressed ST05 summary of each instance and interval, with the SQL "
            "text of each statement hash (log store, newest first).",
            [logs(TRACE, TRACE_LOGQL)],
        )
    )
    return d
