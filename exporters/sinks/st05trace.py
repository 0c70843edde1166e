"""ST05 compressed summaries per instance and interval, pushed to the log store as logfmt lines.

Each interval, per instance, the statements with the longest elapsed DB time in that
interval: statement hash, table, operation, executions, records, elapsed and time per
execution, and the SQL text (here, not in a metric label). Labels: sid, sap_instance,
source="st05". Instances get the statements of their own steps, in proportion.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

from exporters.sinks.loki import LokiSink
from landscape_model.engine import Snapshot, Totals
from landscape_model.terms import TASK_TYPES


def _logfmt_value(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def trace_lines(before: Totals | None, snap: Snapshot, top: int = 10) -> dict[str, list[str]]:
    """sap_instance -> ST05 summary lines for the interval between two snapshots."""
    t, st = snap.totals, snap.state
    if before is None or before.stmt_exec.shape != t.stmt_exec.shape:
        d_exec, d_rows, d_secs, d_steps = t.stmt_exec, t.stmt_rows, t.stmt_seconds, t.steps
    else:
        d_exec = t.stmt_exec - before.stmt_exec
        d_rows = t.stmt_rows - before.stmt_rows
        d_secs = t.stmt_seconds - before.stmt_seconds
        d_steps = t.steps - before.steps
    tx_index = {tx: j for j, tx in enumerate(st.transactions)}
    task_index = {task: k for k, task in enumerate(TASK_TYPES)}
    out: dict[str, list[str]] = {}
    per_inst: list[dict[str, list]] = [{} for _ in st.instances]
    for s, (tx, task, table, op) in enumerate(st.statements):
        k, j = task_index[task], tx_index[tx]
        steps = d_steps[:, k, j]
        total = steps.sum()
        if total <= 0 or d_exec[s] <= 0:
            continue
        share = steps / total
        text, key = st.statement_sql[s], st.statement_ids[s]
        for i in np.nonzero(share)[0]:
            row = per_inst[i].setdefault(key, [text, table, op, 0.0, 0.0, 0.0])
            row[3] += d_exec[s] * share[i]
            row[4] += d_rows[s] * share[i]
            row[5] += d_secs[s] * share[i]
    for i, inst in enumerate(st.instances):
        rows = sorted(per_inst[i].items(), key=lambda kv: -kv[1][5])[:top]
        out[inst] = [_line(key, *row) for key, row in rows if row[3] >= 0.5]
    return out


def _line(key: str, text: str, table: str, op: str, execs: float, recs: float, secs: float) -> str:
    return (
        f"statement={key} table={table} operation={op} executions={round(execs)} "
        f"records={round(recs)} elapsed_ms={secs * 1000:.1f} "
        f"per_execution_ms={secs * 1000 / execs:.3f} sql={_logfmt_value(text)}"
    )


class TracePublisher:
    """Every `interval_s` (wall clock), the interval's ST05 summary of every instance to the
    log store."""

    def __init__(
        self,
        source: Callable[[], Snapshot],
        sink: LokiSink,
        interval_s: float = 60.0,
        top: int = 10,
    ) -> None:
        self.source = source
        self.sink = sink
        self.interval_s = interval_s
        self.top = top
        self._before: Totals | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="wlmon-st05", daemon=True)

    def start(self) -> None:
        self._before = self.source().totals.copy()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)

    def publish_once(self) -> int:
        snap = self.source()
        lines = trace_lines(self._before, snap, self.top)
        self._before = snap.totals.copy()
        count = 0
        for inst, inst_lines in lines.items():
            for line in inst_lines:
                self.sink.emit({"sid": snap.sid, "sap_instance": inst, "source": "st05"}, line)
                count += 1
        return count

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.publish_once()
