"""Runs the model in fast mode and records what a monitor would have stored: per-interval
series (ST03 sums, worst-instance indicators, OS counters per host) and the cumulative
counters at the start and end of the steady-state window (for ST05 and buffer pools)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from api.runs.record import INSTANCE_SERIES, Column, RunMeta, RunRecord, col, fault_windows
from api.runs.spec import RunSpec
from exporters.vocabulary import OS_COUNTER_KEYS
from landscape_model.catalog import Catalog
from landscape_model.engine import Snapshot, Totals
from landscape_model.engines import make_simulation
from landscape_model.results import BUCKETS
from landscape_model.terms import COMPONENTS, TASK_TYPES

# The response-time histogram's upper bounds as its columns name them (hist.dialog.0.5):
# the model's buckets and +Inf, as the exporter's `le` labels print them.
HISTOGRAM_BOUNDS: tuple[str, ...] = (*(f"{b:g}" for b in BUCKETS), "+Inf")


def _columns(snap: Snapshot) -> list[Column]:
    cols = []
    for task in TASK_TYPES:
        cols += [col("st03", task, f) for f in ("steps", *COMPONENTS)]
        for tx in snap.state.transactions:
            cols += [col("tx", task, tx, f) for f in ("steps", *COMPONENTS)]
        # Steps per response-time bucket (not cumulative), summed over the instances:
        # the distribution percentiles are read from, per task type and per transaction.
        cols += [col("hist", task, le) for le in HISTOGRAM_BOUNDS]
        for tx in snap.state.transactions:
            cols += [col("txhist", task, tx, le) for le in HISTOGRAM_BOUNDS]
    # Per instance, dialog steps and indicator sums: the report takes 5-minute means per
    # instance from these, as the alert rules do, before looking for the worst one.
    for inst in snap.state.instances:
        cols += [col("inst", inst, f) for f in ("steps", *INSTANCE_SERIES)]
    for host in snap.os_hosts:
        cols += [col("os", host, k) for k in OS_COUNTER_KEYS]
    # Last, so every column before keeps its place: the users at each interval's end.
    cols.append(col("load", "users"))
    return cols


def _row(before: Totals, snap: Snapshot, dt: float) -> list[float]:
    t = snap.totals
    d_steps = t.steps - before.steps
    d_secs = t.seconds - before.seconds
    # [task_type, transaction, bucket]
    d_buckets = (t.bucket_counts - before.bucket_counts).sum(axis=0)
    row: list[float] = []
    for k in range(len(TASK_TYPES)):
        row.append(float(d_steps[:, k].sum()))
        row += [float(x) for x in d_secs[:, k].sum(axis=(0, 1))]
        for j in range(len(snap.state.transactions)):
            row.append(float(d_steps[:, k, j].sum()))
            row += [float(x) for x in d_secs[:, k, j].sum(axis=0)]
        # The task type's counts are the sum of its transactions': they agree exactly.
        row += [float(x) for x in d_buckets[k].sum(axis=0)]
        for j in range(len(snap.state.transactions)):
            row += [float(x) for x in d_buckets[k, j]]
    inst_steps = d_steps[:, 0].sum(axis=1)
    inst_secs = d_secs[:, 0].sum(axis=1)  # [instance, component]
    for i in range(inst_steps.size):
        row.append(float(inst_steps[i]))
        row += [float(inst_secs[i, COMPONENTS.index(name)]) for name in INSTANCE_SERIES]
    busy = t.os_cpu_busy_seconds - before.os_cpu_busy_seconds
    pages = t.os_page_ops - before.os_page_ops
    queue = t.os_disk_queue_seconds - before.os_disk_queue_seconds
    for h in range(len(snap.os_hosts)):
        row += [
            100.0 * busy[h] / (snap.os_cpus[h] * dt),
            snap.os_available_bytes[h] / 2**20,
            pages[h] / dt,
            queue[h] / dt,
        ]
    return row


def record_fast_run(
    spec: RunSpec,
    progress: Callable[[float, float], None] | None = None,
    catalog: Catalog | None = None,
) -> RunRecord:
    catalog = catalog or Catalog()
    full_users = spec.users or catalog.scenario(spec.scenario).users
    dt = 1.0
    per = max(1, round(spec.resolution_s / dt))
    ticks = round(spec.duration_s / dt)
    ramp_ticks = round(spec.ramp_up_s / dt)

    def users_at(tick: int) -> int:
        return spec.users_at(tick * dt, full_users)

    def faults_at(tick: int) -> tuple[str, ...]:
        return spec.faults_at(tick * dt)

    # Start settled at the first ramp level: the model begins in its steady state.
    current_users = users_at(0)
    sim = make_simulation(
        spec.engine,
        spec.scenario,
        seed=spec.seed,
        catalog=catalog,
        dt=dt,
        overrides={"users": current_users},
    )
    sim.set_faults(faults_at(0))
    columns = _columns(sim.snapshot())
    rows, times = [], []
    before = sim.snapshot().totals.copy()
    steady_start = before.copy() if ramp_ticks == 0 else None
    for tick in range(ticks):
        users = users_at(tick)
        if users != current_users:
            sim.set_users(users)
            current_users = users
        faults = faults_at(tick)
        if faults != sim.faults:
            sim.set_faults(faults)
        if tick == ramp_ticks and ramp_ticks:
            steady_start = sim.snapshot().totals.copy()
        sim.step()
        if (tick + 1) % per == 0 or tick == ticks - 1:
            snap = sim.snapshot()
            elapsed = (tick + 1) * dt
            dt_s = elapsed - (times[-1] if times else 0.0)
            rows.append([*_row(before, snap, dt_s), float(current_users)])
            times.append(elapsed)
            before = snap.totals.copy()
            if progress:
                progress(elapsed, spec.duration_s)
    snap = sim.snapshot()
    meta = RunMeta(
        source="simulated",
        sid=snap.sid,
        interval_s=per * dt,
        time_zone="UTC (simulated time from the run's start)",
        fault_windows=fault_windows(spec.faults),
        transactions=list(snap.state.transactions),
        hosts=list(snap.os_hosts),
        details={
            "users": full_users,
            "think_time_s": snap.think_time_s,
            "host_cpus": snap.os_cpus,
            "host_memory_bytes": snap.os_memory_bytes,
            "dialog_steps": snap.dialog_steps,
            "line_items": snap.line_items,
            "statements": [list(s) for s in snap.state.statements],
            "statement_sql": snap.state.statement_sql,
            "bufferpools": snap.state.bufferpools,
            "sap_buffers": snap.state.sap_buffers,
        },
    )
    return RunRecord(
        np.array(times), columns, np.array(rows), steady_start, snap.totals.copy(), meta
    )
