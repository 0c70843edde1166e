"""Imports of real data as runs the same report reads: a Windows PerfMon CSV (OS counters)
or an ST03 workload export (one interval of steps and times per task type and transaction).
A file that fails to parse stores nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import BinaryIO
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np

from api.imports import perfmon, plausible, st03, st03period, stad, targets, winzones
from api.imports.text import Digest
from api.runs.gaps import sample_gaps
from api.runs.record import Column, RunMeta, RunRecord, col
from api.runs.storage import RunRow
from api.services.errors import Invalid
from api.services.runs import get_run
from api.store import Store


def _perfmon_warnings(data: perfmon.PerfmonData) -> list[str]:
    """What the report's audit shows of how the capture was read."""
    out = list(data.notes)
    if data.damaged_lines:
        shown = ", ".join(map(str, data.damaged_lines[:10]))
        more = ", ..." if len(data.damaged_lines) > 10 else ""
        out.append(
            f"{len(data.damaged_lines)} line(s) of NUL bytes skipped (lines {shown}{more}): "
            "the file is damaged there"
        )
    return out


def _perfmon_zone(data: perfmon.PerfmonData, tz: str) -> tuple[datetime, list[str]]:
    """The capture's first sample in UTC when the user names the machine's zone (tz): a
    console capture's local stamps placed by it; a header's zone checked against it (two
    zones that disagree are refused, naming both). Parsing itself is unchanged."""
    zone = ZoneInfo(tz)
    if data.zone:
        named = winzones.iana(data.zone)
        offset = data.start.astimezone(zone).utcoffset()
        if named is not None and data.start.astimezone(named).utcoffset() != offset:
            raise Invalid(
                f"tz {tz!r} is UTC{_offset(offset)} at the capture's start but its header names "
                f"{data.zone!r} (UTC{_offset(data.start.astimezone(named).utcoffset())}): "
                "leave tz out (the header places the samples) or give the capture's zone"
            )
        return data.start, []
    start, notes = _to_utc(data.start.replace(tzinfo=None), tz, "the capture's first sample")
    end = data.start.replace(tzinfo=None) + timedelta(seconds=float(data.times[-1]))
    first, last = start.astimezone(zone).utcoffset(), end.replace(tzinfo=zone).utcoffset()
    if first != last:
        notes.append(
            f"clocks change in {tz} within the capture (UTC{_offset(first)} to "
            f"UTC{_offset(last)}): a console capture's local stamps do not say where; the "
            "samples are placed by the first offset"
        )
    return start, notes


def _offset(delta: timedelta | None) -> str:
    minutes = int((delta or timedelta()).total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def store_perfmon(
    store: Store, source: BinaryIO | bytes, label: str, tz: str | None = None
) -> RunRow:
    """Parse (streamed from `source`) and store as one run; the run. `tz`: the machine's
    time zone (IANA), for a console capture that names none."""
    digest = Digest(source)
    try:
        data = perfmon.parse(digest)
    except perfmon.PerfmonError as exc:
        raise Invalid(str(exc)) from exc
    start, zone_notes = _perfmon_zone(data, tz) if tz else (data.start, [])
    run = RunRecord(
        times=data.times,
        columns=data.columns,
        values=data.values,
        steady_start=None,  # a PerfMon log has no cumulative SAP counters
        steady_end=None,
        meta=RunMeta(
            source="perfmon",
            time_zone=(tz if tz and not data.zone else data.zone)
            or "none in the file (console output): local time as UTC",
            interval_s=float(np.median(np.diff(data.times))) if data.times.size > 1 else None,
            checksum=digest.hexdigest(),
            derivations=data.sources,
            warnings=_perfmon_warnings(data) + zone_notes,
            # Holes in the capture, found and listed as Prometheus gaps are: BAIT's 60
            # consecutive minutes and the report's gaps section read them.
            gaps=sample_gaps(data.times, data.start),
            hosts=data.hosts,
            details={
                "host_names": data.host_names,
                "counter_names": data.names,
                "localized_names": data.localized,
                "encoding": data.encoding,
                "status_lines": data.status_lines,
                "damaged_lines": data.damaged_lines,
            },
        ),
    )
    run_id = store.runs.add(
        kind="imported",
        scenario="perfmon",
        label=label,
        start=start,
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


MAX_TX_PARTS = 20_000  # transactions up to which every part is kept per transaction


def _st03_series(table: st03.ST03Table) -> tuple[np.ndarray, list[Column], np.ndarray, list[str]]:
    """(sample ends in s, columns, values per sample, transactions in the export's order):
    `st03.<task>.<field>` and `tx.<task>.<tx>.<field>` summed per sample by numpy, not row
    by row. A field the file does not hold has no column (absent, never 0)."""
    rows = len(table.task_types)
    if table.sample is not None and table.sample_ends_s is not None:
        sample, ends = table.sample, table.sample_ends_s
    else:
        # One interval: the period's length, or 0 when the export does not say (the report
        # then calls throughput, SAPS and BAIT "not measured").
        period = table.period.seconds if table.period else 0.0
        sample, ends = np.zeros(rows, dtype=np.int64), np.array([period])
    fields = {"steps": table.steps, **table.seconds, **table.counts, **table.sizes}
    columns: list[Column] = []
    values: list[np.ndarray] = []

    def add(prefix: tuple[str, ...], mine: np.ndarray) -> None:
        for name, v in fields.items():
            columns.append(col(*prefix, name))
            values.append(np.bincount(sample[mine], weights=v[mine], minlength=ends.size)[:, None])

    tasks = np.array(table.task_types)
    for task in dict.fromkeys(table.task_types):
        add(("st03", task), tasks == task)
    txs = np.array(table.transactions)
    groups: dict[tuple[str, str], None] = dict.fromkeys(
        (t, x) for t, x in zip(table.task_types, table.transactions, strict=True) if x
    )
    if groups:
        # One pass per group would be quadratic in transactions: group ids, then bincount.
        gid = {g: k for k, g in enumerate(groups)}
        ids = np.array([gid.get((t, x), -1) for t, x in zip(tasks, txs, strict=True)])
        keep = ids >= 0
        flat = ids[keep] * ends.size + sample[keep]
        # Every part per transaction while the export is of a usual size; beyond it only
        # steps and response (a month's export of every report has 10^5 of them: all parts
        # would be millions of columns). The run's meta says so.
        names = list(fields) if len(groups) <= MAX_TX_PARTS else ["steps", "response", "wp_time"]
        for name in names:
            if name not in fields:
                continue
            sums = np.bincount(flat, weights=fields[name][keep], minlength=len(groups) * ends.size)
            columns.extend(col("tx", task, tx, name) for task, tx in groups)
            values.append(sums.reshape(len(groups), ends.size).T)  # a block: one per field
    transactions = list(dict.fromkeys(tx for tx in table.transactions if tx))
    return ends, columns, np.hstack(values), transactions


def st03_meta(table: st03.ST03Table, ends: np.ndarray, checksum: str) -> RunMeta:
    """How the export was read: what the report's audit shows."""
    return RunMeta(
        source="st03",
        period=table.period.as_meta() if table.period else None,
        time_zone="the SAP system's local time (an ST03 export does not name its zone)",
        # A time profile's hours, else the period as one interval (none: no period).
        interval_s=float(np.diff(ends, prepend=0.0).max()) if ends[-1] else None,
        checksum=checksum,
        warnings=list(table.notes),
        details={
            "layout": table.layout,
            "file_format": table.file_format,
            "number_format": {
                "comma": "decimal comma",
                "point": "decimal point",
                "numbers": "number cells (XLSX): no decimal separator to read",
            }[table.number_format],
            "task_type_names": table.task_names,
            "columns": table.columns,
            "columns_not_read": table.not_read,
            # Fields the file does not hold, computed from two it does (the audit says how).
            "derived_fields": table.derived,
            # Decimals of each mean as the file shows it: the report shows no more.
            "precision": table.precision,
            "total_row": table.total_row,
        },
    )


def st03_options(
    start: str | None = None,
    end: str | None = None,
    period: str | None = None,
    task_type: str | None = None,
    decimal: str | None = None,
    tz: str | None = None,
) -> st03.Options:
    """What the user says about an export (its period, its task type, its number format,
    the SAP system's time zone), checked before the file is read; Invalid naming the
    option."""
    if tz:
        try:
            ZoneInfo(tz)
        except (ZoneInfoNotFoundError, ValueError, OSError):
            raise Invalid(
                f"tz {tz!r}: not a time zone of the IANA database (e.g. Europe/Berlin, "
                "America/New_York, UTC)"
            ) from None
    try:
        given = st03period.from_options(start or None, end or None, period or None)
    except st03period.PeriodError as exc:
        raise Invalid(str(exc)) from exc
    if decimal not in (None, "", "point", "comma"):
        raise Invalid(f"decimal {decimal!r}: give point or comma")
    return st03.Options(
        period=given, task_type=task_type or None, decimal=decimal or None, tz=tz or None
    )


def _to_utc(local: datetime, tz: str | None, what: str) -> tuple[datetime, list[str]]:
    """A local time of the SAP system in UTC: by its zone's rules when given (--tz), else
    taken as UTC (the export names no zone). A time the zone skips is refused; one it
    repeats is taken at its first occurrence, with a warning."""
    if not tz:
        return local.replace(tzinfo=UTC), []
    zone = ZoneInfo(tz)
    first, second = local.replace(tzinfo=zone, fold=0), local.replace(tzinfo=zone, fold=1)
    back = first.astimezone(UTC).astimezone(zone).replace(tzinfo=None)
    if back != local:
        raise Invalid(f"{what} {local:%Y-%m-%d %H:%M:%S} does not exist in {tz} (clocks skip it)")
    notes = []
    if first.utcoffset() != second.utcoffset():
        notes.append(
            f"{what} {local:%Y-%m-%d %H:%M:%S} occurs twice in {tz} (clocks go back): taken "
            "as the first, before the change"
        )
    return first.astimezone(UTC), notes


def _period_warning(period: st03period.Period, now: datetime, tz: str | None = None) -> list[str]:
    """An ST03 period before 1990 or after the import (its local time taken as UTC, or in
    its zone)."""
    for stamp in (period.start, period.end):
        if stamp is None:
            continue
        stamp, _ = _to_utc(stamp, tz, "the period")
        why = plausible.out_of_range(stamp, now)
        if why:
            return [plausible.clock_warning(f"the period ({period.source})", stamp, why, 0)]
    return []


def store_st03(
    store: Store,
    source: BinaryIO | bytes,
    label: str,
    options: st03.Options | None = None,
    perfmon_capture: BinaryIO | bytes | None = None,
) -> RunRow:
    """An ST03 export as a run over the period it covers (one interval, or one per hour of
    a time profile); the report's ST03 tables read it like a recorded run; a PerfMon capture
    of the same hours joined (`perfmon_capture`). The run."""
    digest = Digest(source)
    try:
        table = st03.parse_table(digest, options)
    except st03.ST03Error as exc:
        raise Invalid(str(exc)) from exc
    ends, columns, values, transactions = _st03_series(table)
    meta = st03_meta(table, ends, digest.hexdigest())
    meta.transactions = transactions
    if len(transactions) > MAX_TX_PARTS:
        meta.warnings.append(
            f"{len(transactions):,} transactions: per transaction only steps, response and time "
            "in work processes "
            f"are kept (every part up to {MAX_TX_PARTS:,})"
        )
    period = table.period
    tz = options.tz if options else None
    start = datetime.now(UTC)
    if tz:
        meta.time_zone = tz  # an IANA key: the report shows the window in UTC and in it
    if period and period.start:
        meta.warnings += _period_warning(period, datetime.now(UTC), tz)
        start, notes = _to_utc(period.start, tz, "the period's start")
        meta.warnings += notes
    if perfmon_capture is not None:
        if not (period and period.start and ends[-1]):
            raise Invalid(
                "the ST03 export has no period (give --from/--to): a PerfMon capture can only "
                "be joined to a window"
            )
        columns, values = _join_into(meta, columns, values, perfmon_capture, tz, start, ends)
    run = RunRecord(
        times=ends,
        columns=columns,
        values=values,
        steady_start=None,  # an export holds averages and totals, not counter readings
        steady_end=None,
        meta=meta,
    )
    # The period's start in UTC: by the zone given (--tz), else the system's local time
    # stored as UTC as PerfMon's zone-less captures are (the meta says so); without a
    # start, the import's own time.
    run_id = store.runs.add(
        kind="imported",
        scenario="st03",
        label=label,
        start=start,
        duration_s=float(ends[-1]),
        ramp_up_s=0.0,
        spec={"source": "st03", "rows": len(table.task_types), "layout": table.layout},
        data=run,
    )
    # What `wlmon runs` lists under "start (UTC)" is not UTC unless a zone was given: said
    # beside it, not left for the reader to guess.
    if not (period and period.start):
        store.runs.note(run_id, "no start in the file or given (--from): placed at the import")
    elif not tz:
        store.runs.note(run_id, "start is the SAP system's local time (no --tz)")
    return get_run(store, run_id)


def _join_perfmon(
    capture: BinaryIO | bytes, tz: str | None, start: datetime, ends: np.ndarray, what: str
) -> tuple[list[Column], np.ndarray, dict, list[str]]:
    """A PerfMon capture of the same hours on the run's intervals: each counter's mean over
    the samples in each interval (NaN where none). Refused, naming both windows, when the
    capture does not overlap the run's. (columns, values, details, warnings)."""
    digest = Digest(capture)
    try:
        data = perfmon.parse(digest)
    except perfmon.PerfmonError as exc:
        raise Invalid(f"the PerfMon capture: {exc}") from exc
    pm_start, notes = _perfmon_zone(data, tz) if tz else (data.start, [])
    pm_end = pm_start + timedelta(seconds=float(data.times[-1]))
    end = start + timedelta(seconds=float(ends[-1]))
    if pm_end < start or pm_start >= end:
        raise Invalid(
            f"the PerfMon capture covers {pm_start:%Y-%m-%d %H:%M:%S} to {pm_end:%Y-%m-%d %H:%M:%S}"
            f" UTC, the {what} export {start:%Y-%m-%d %H:%M:%S} to {end:%Y-%m-%d %H:%M:%S} UTC: "
            "they do not overlap; join a capture of the same hours (a console capture without "
            "a zone is placed by tz)"
        )
    offsets = (pm_start - start).total_seconds() + data.times
    k = np.searchsorted(ends, offsets, side="right")  # interval [ends[k-1], ends[k])
    inside = (offsets >= 0) & (k < ends.size)
    v, k = data.values[inside], k[inside]
    seen = ~np.isnan(v)
    sums = np.zeros((ends.size, v.shape[1]))
    counts = np.zeros_like(sums)
    np.add.at(sums, k, np.where(seen, v, 0.0))
    np.add.at(counts, k, seen)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    empty = int((counts.sum(axis=1) == 0).sum())
    notes.append(
        f"PerfMon capture joined ({len(data.columns)} counters, {len(data.hosts)} host(s), "
        f"{pm_start:%Y-%m-%d %H:%M:%S} to {pm_end:%Y-%m-%d %H:%M:%S} UTC): {int(inside.sum())} of "
        f"{data.times.size} samples lie in the run's window, averaged per interval"
        + (f"; {empty} interval(s) have no sample" if empty else "")
    )
    details = {
        "checksum": digest.hexdigest(),
        "start_utc": pm_start.isoformat(),
        "end_utc": pm_end.isoformat(),
        "hosts": data.hosts,
        "host_names": data.host_names,
        "counter_names": data.names,
        "samples_in_window": int(inside.sum()),
    }
    return list(data.columns), means, details, notes + _perfmon_warnings(data)


def _join_into(
    meta: RunMeta,
    columns: list[Column],
    values: np.ndarray,
    capture: BinaryIO | bytes,
    tz: str | None,
    start: datetime,
    ends: np.ndarray,
) -> tuple[list[Column], np.ndarray]:
    """One run from two files of the same hours: throughput beside CPU, memory, disk."""
    what = "STAD" if meta.source == "stad" else "ST03"
    os_columns, os_values, joined, notes = _join_perfmon(capture, tz, start, ends, what)
    meta.hosts = joined["hosts"]
    meta.details["perfmon"] = joined
    meta.details["counter_names"] = joined["counter_names"]
    meta.details["host_names"] = joined["host_names"]
    meta.warnings += notes
    return columns + os_columns, np.hstack([values, os_values])


def store_stad(
    store: Store,
    source: BinaryIO | bytes,
    label: str,
    options: st03.Options | None = None,
    target_sheet: bytes | None = None,
    perfmon_capture: BinaryIO | bytes | None = None,
) -> RunRow:
    """A STAD export (one record per dialog step) as a run: per minute, task type and
    transaction the steps and every part, as an ST03 export's; the exact percentiles of
    the response per task type and transaction (every step, nearest rank); the targets
    per transaction of `target_sheet` (an NFR sheet) judged in the report. The run."""
    digest = Digest(source)
    try:
        goals = targets.parse(target_sheet) if target_sheet is not None else []
        steps = stad.parse(digest, options)
    except st03.ST03Error as exc:
        raise Invalid(str(exc)) from exc
    table = steps.table
    ends, columns, values, transactions = _st03_series(table)
    meta = st03_meta(table, ends, digest.hexdigest())
    meta.source = "stad"
    meta.transactions = transactions
    meta.details["step_percentiles"] = steps.percentiles
    if goals:
        meta.details["targets"] = goals
    meta.details["servers"] = steps.servers
    meta.details["users_seen"] = steps.users
    tz = options.tz if options else None
    period = table.period
    start, notes = _to_utc(period.start, tz, "the period's start")
    meta.warnings += notes + _period_warning(period, datetime.now(UTC), tz)
    if tz:
        meta.time_zone = tz
    if perfmon_capture is not None:
        columns, values = _join_into(meta, columns, values, perfmon_capture, tz, start, ends)
    run = RunRecord(
        times=ends, columns=columns, values=values, steady_start=None, steady_end=None, meta=meta
    )
    run_id = store.runs.add(
        kind="imported",
        scenario="stad",
        label=label,
        start=start,
        duration_s=float(ends[-1]),
        ramp_up_s=0.0,
        spec={"source": "stad", "steps": steps.steps, "servers": steps.servers},
        data=run,
    )
    if not tz:
        store.runs.note(run_id, "start is the SAP system's local time (no --tz)")
    return get_run(store, run_id)
