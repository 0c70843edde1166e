"""Imports of real data as runs the same report reads: a Windows PerfMon CSV (OS counters)
or an ST03 workload export (one interval of steps and times per task type and transaction).
A file that fails to parse stores nothing."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import BinaryIO

import numpy as np

from api.imports import perfmon, st03
from api.runs.recorder import RunData
from api.services.errors import Invalid
from api.services.runs import get_run
from api.store import Store


def store_perfmon(store: Store, source: BinaryIO | bytes, label: str) -> dict:
    """Parse (streamed from `source`) and store as one run; the run."""
    try:
        data = perfmon.parse(source)
    except perfmon.PerfmonError as exc:
        raise Invalid(str(exc)) from exc
    run = RunData(
        times=data.times,
        columns=data.columns,
        values=data.values,
        steady_start=None,  # a PerfMon log has no cumulative SAP counters
        steady_end=None,
        meta={
            "source": "perfmon",
            "hosts": data.hosts,
            "host_names": data.host_names,
            "counter_names": data.names,
            "standard_sources": data.sources,
            "time_zone": data.zone or "none in the file (console output): local time as UTC",
            "status_lines": data.status_lines,
        },
    )
    run_id = store.runs.add(
        kind="imported",
        scenario="perfmon",
        label=label,
        start=data.start,
        duration_s=float(data.times[-1]),
        ramp_up_s=0.0,
        spec={
            "source": "perfmon",
            "samples": int(data.times.size),
            "counters": len(data.columns),
            "hosts": data.hosts,
        },
        data=run,
    )
    return get_run(store, run_id)


def _st03_totals(rows: list[st03.ST03Row]) -> tuple[dict[str, float], list[str]]:
    """Sums per column (`st03.<task>.<part>`, `tx.<task>.<tx>.steps|response`) and the
    transactions in the order the export lists them."""
    totals: dict[str, float] = {}
    transactions: dict[str, None] = {}  # ordered, and a lookup in O(1) (a list was O(n^2))

    def add(name: str, value: float) -> None:
        totals[name] = totals.get(name, 0.0) + value

    for r in rows:
        if r.transaction:
            transactions.setdefault(r.transaction)
            add(f"tx.{r.task_type}.{r.transaction}.steps", r.steps)
            add(f"tx.{r.task_type}.{r.transaction}.response", r.seconds.get("response", 0.0))
        add(f"st03.{r.task_type}.steps", r.steps)
        for part, secs in r.seconds.items():
            add(f"st03.{r.task_type}.{part}", secs)
    return totals, list(transactions)


def store_st03(store: Store, source: BinaryIO | bytes, label: str) -> dict:
    """An ST03 export as a run of one interval; the report's ST03 tables read it like a
    recorded run. The run."""
    try:
        rows = st03.parse(source)
    except st03.ST03Error as exc:
        raise Invalid(str(exc)) from exc
    totals, transactions = _st03_totals(rows)
    run = RunData(
        times=np.array([1.0]),
        columns=list(totals),
        values=np.array([list(totals.values())]),
        steady_start=None,  # an export holds averages and totals, not counter readings
        steady_end=None,
        meta={"source": "st03", "transactions": transactions},
    )
    run_id = store.runs.add(
        kind="imported",
        scenario="st03",
        label=label,
        start=datetime.now(UTC),
        duration_s=1.0,
        ramp_up_s=0.0,
        spec={"source": "st03", "rows": len(rows)},
        data=run,
    )
    return get_run(store, run_id)
