"""ST05 SQL trace, compressed: executions, rows and elapsed DB time per statement.

Statements are identified by a hash of their text (the text itself goes to Loki with the
trace records, never into a label). Only the top N statements by elapsed time are
exported, so the series count stays bounded; per-table totals cover everything. Sample::

    sap_st05_statement_elapsed_seconds_total{statement="4ae2b9abdcdeb347",table="VBAK",...} 812.4
    sap_st05_table_elapsed_seconds_total{sid="BMK",table="VBAP"} 1290.2
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from prometheus_client.core import CounterMetricFamily, Metric

from exporters.collectors.base import SnapshotCollector, SnapshotSource
from exporters.model.engine import Snapshot


@dataclass
class StatementTotals:
    statement: str
    text: str
    table: str
    operation: str
    executions: float = 0.0
    rows: float = 0.0
    elapsed: float = 0.0


def statement_totals(snap: Snapshot) -> list[StatementTotals]:
    """The model's statements merged by SQL text (as ST05 merges identical statements),
    sorted by elapsed DB time, longest first."""
    t, st = snap.totals, snap.state
    merged: dict[str, StatementTotals] = {}
    for k, (_, _, table, op) in enumerate(st.statements):
        text, key = st.statement_sql[k], st.statement_ids[k]
        row = merged.setdefault(key, StatementTotals(key, text, table, op))
        row.executions += float(t.stmt_exec[k])
        row.rows += float(t.stmt_rows[k])
        row.elapsed += float(t.stmt_seconds[k])
    return sorted(merged.values(), key=lambda r: (-r.elapsed, r.statement))


class ST05Collector(SnapshotCollector):
    name = "st05"

    def __init__(self, source: SnapshotSource, top_n: int = 25) -> None:
        super().__init__(source)
        self.top_n = top_n

    @classmethod
    def from_settings(cls, source: SnapshotSource, settings) -> ST05Collector:
        return cls(source, top_n=settings.st05_top_n)

    def describe_families(self) -> Iterable[Metric]:
        return self._families(None)

    def families(self, snap: Snapshot) -> Iterable[Metric]:
        return self._families(snap)

    def _families(self, snap: Snapshot | None) -> Iterator[Metric]:
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
        if snap is not None:
            rows_by_stmt = statement_totals(snap)
            for r in rows_by_stmt[: self.top_n]:
                key = [snap.sid, r.statement, r.table, r.operation]
                execs.add_metric(key, r.executions)
                rows.add_metric(key, r.rows)
                elapsed.add_metric(key, r.elapsed)
            tables: dict[str, list[float]] = {}
            for r in rows_by_stmt:
                acc = tables.setdefault(r.table, [0.0, 0.0])
                acc[0] += r.elapsed
                acc[1] += r.executions
            for table in sorted(tables):
                table_elapsed.add_metric([snap.sid, table], tables[table][0])
                table_execs.add_metric([snap.sid, table], tables[table][1])
        yield from (execs, rows, elapsed, table_elapsed, table_execs)
