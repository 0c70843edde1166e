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


def _st03_totals(table: st03.ST03Table) -> tuple[dict[str, float], list[str]]:
    """Sums per column (`st03.<task>.<part>`, `tx.<task>.<tx>.steps|response`) and the
    transactions in the order the export lists them; summed by numpy, not row by row."""
    totals: dict[str, float] = {}
    groups: dict[tuple[str, str], int] = {}  # (task, transaction) -> group, in export order
    group = np.array(
        [
            groups.setdefault(key, len(groups))
            for key in zip(table.task_types, table.transactions, strict=True)
        ],
        dtype=np.int64,
    )
    response = table.seconds.get("response", np.zeros_like(table.steps))
    tx_steps = np.bincount(group, weights=table.steps, minlength=len(groups))
    tx_response = np.bincount(group, weights=response, minlength=len(groups))
    for (task, tx), g in groups.items():
        if tx:
            totals[f"tx.{task}.{tx}.steps"] = float(tx_steps[g])
            totals[f"tx.{task}.{tx}.response"] = float(tx_response[g])
    tasks = np.array(table.task_types)
    for task in dict.fromkeys(table.task_types):
        mine = tasks == task
        totals[f"st03.{task}.steps"] = float(table.steps[mine].sum())
        for part, secs in table.seconds.items():
            totals[f"st03.{task}.{part}"] = float(secs[mine].sum())
    transactions = list(dict.fromkeys(tx for tx in table.transactions if tx))
    return totals, transactions


def store_st03(store: Store, source: BinaryIO | bytes, label: str) -> dict:
    """An ST03 export as a run of one interval; the report's ST03 tables read it like a
    recorded run. The run."""
    try:
        table = st03.parse_table(source)
    except st03.ST03Error as exc:
        raise Invalid(str(exc)) from exc
    totals, transactions = _st03_totals(table)
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
        spec={"source": "st03", "rows": len(table.task_types)},
        data=run,
    )
    return get_run(store, run_id)
