"""ST05 SQL trace, compressed: executions, rows and elapsed DB time per statement.

Statements are identified by a hash of their text (the text itself goes to the log store with the
trace records, never into a label). Only the top N statements by elapsed time are
exported, so the series count stays bounded; per-table totals cover everything. Sample::

    sap_st05_statement_elapsed_seconds_total{statement="4ae2b9abdcdeb347",table="VBAK",...} 812.4
    sap_st05_table_elapsed_seconds_total{sid="BMK",table="VBAP"} 1290.2
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from prometheus_client.core import CounterMetricFamily, Metric

from exporters.collectors.base import SourceCollector


@dataclass
class StatementTotals:
    """One statement of the trace, identical statements merged (ST05 'Summarize')."""

    statement: str  # hash of the SQL text
    text: str
    table: str
    operation: str
    executions: float = 0.0
    rows: float = 0.0
    elapsed: float = 0.0


@dataclass(frozen=True)
class SQLTrace:
    """Totals per statement since the system's start, in any order."""

    sid: str
    statements: Sequence[StatementTotals]


class SQLTraceSource(Protocol):
    def sql_trace(self) -> SQLTrace: ...


def longest_first(statements: Iterable[StatementTotals]) -> list[StatementTotals]:
    """Sorted by elapsed DB time, longest first, as ST05 sorts its summary."""
    return sorted(statements, key=lambda r: (-r.elapsed, r.statement))


class ST05Collector(SourceCollector[SQLTraceSource, SQLTrace]):
    def __init__(self, source: SQLTraceSource, top_n: int = 25) -> None:
        super().__init__(source)
        self.top_n = top_n

    def read(self) -> SQLTrace:
        return self.source.sql_trace()

    def families(self, trace: SQLTrace | None) -> Iterator[Metric]:
        labels = ["sid", "statement", "table", "operation"]
        execs = CounterMetricFamily(
            "sap_st05_statement_executions",
            "Executions of the statement (ST05 'Executions').",
            labels=labels,
        )
        rows = CounterMetricFamily(
            "sap_st05_statement_rows",
            "Rows the statement returned or changed (ST05 'Records').",
            labels=labels,
        )
        elapsed = CounterMetricFamily(
            "sap_st05_statement_elapsed_seconds",
            "Elapsed DB time of the statement (ST05 'Duration'); top statements by this only.",
            labels=labels,
        )
        table_elapsed = CounterMetricFamily(
            "sap_st05_table_elapsed_seconds",
            "Elapsed DB time of all statements on the table.",
            labels=["sid", "table"],
        )
        table_execs = CounterMetricFamily(
            "sap_st05_table_executions",
            "Executions of all statements on the table.",
            labels=["sid", "table"],
        )
        if trace is not None:
            rows_by_stmt = longest_first(trace.statements)
            for r in rows_by_stmt[: self.top_n]:
                key = [trace.sid, r.statement, r.table, r.operation]
                execs.add_metric(key, r.executions)
                rows.add_metric(key, r.rows)
                elapsed.add_metric(key, r.elapsed)
            tables: dict[str, list[float]] = {}
            for r in rows_by_stmt:
                acc = tables.setdefault(r.table, [0.0, 0.0])
                acc[0] += r.elapsed
                acc[1] += r.executions
            for table in sorted(tables):
                table_elapsed.add_metric([trace.sid, table], tables[table][0])
                table_execs.add_metric([trace.sid, table], tables[table][1])
        yield from (execs, rows, elapsed, table_elapsed, table_execs)
