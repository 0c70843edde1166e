"""What a performance engineer reads beside the averages (JMeter's dashboard, ST03N, the seed
001 report): throughput, percentiles and active users per sample interval, the
response-time distribution, APDEX per task type and transaction, the spread per
transaction, the faults the run injected, and its window in UTC and in the source's local
time. Everything comes from the run's histograms and series; nothing is estimated from
means."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo, available_timezones

import numpy as np

from api.imports.winzones import iana
from api.runs.percentiles import parse_bound, quantile
from api.runs.record import RunMeta, RunRecord, col
from api.runs.storage import RunRow

OVER_TIME_QUANTILES = {"p50": 0.5, "p95": 0.95, "p99": 0.99}
APDEX_TOLERATING = 4.0
DIALOG_INF = col(
    "hist", "dialog", "+Inf"
)  # APDEX: tolerating up to 4 T, frustrated beyond (apdex.org)


def _usable(bounds: list[float]) -> bool:
    """A finite bucket and +Inf: histogram_quantile answers NaN for less, and so do we."""
    return len(bounds) >= 2 and math.isinf(bounds[-1])


def _hist(data: RunRecord, kind: str, owner: tuple[str, ...]) -> tuple[list[float], np.ndarray]:
    """Upper bounds and the [sample, bucket] counts of one histogram, bounds ascending."""
    les = sorted(
        (c.last for c in data.of_kind(kind) if c.owner == owner),
        key=parse_bound,
    )
    counts = np.stack([np.nan_to_num(data.series(col(kind, *owner, le))) for le in les], axis=1)
    return [parse_bound(le) for le in les], counts


def _intervals(times: np.ndarray) -> np.ndarray:
    """Each sample's length: samples stamp the end of their interval."""
    return np.diff(np.concatenate([[0.0], times])) if times.size else times


def over_time(data: RunRecord) -> dict:
    """Per sample: throughput (steps/s over every task type), the dialog response's p50, p95
    and p99 from that interval's histogram, and the active users where the run records
    them. Missing where the run has no such series (an import of OS counters only)."""
    out: dict = {"t_s": data.times.tolist()}
    steps = [c for c in data.of_kind("st03") if c.last == "steps"]
    dt = _intervals(data.times)
    if steps and dt.size and float(dt.min()) > 0:
        total = sum(np.nan_to_num(data.series(c)) for c in steps)
        out["throughput_steps_per_s"] = (total / dt).tolist()
    bounds, counts = _hist(data, "hist", ("dialog",)) if data.has(DIALOG_INF) else ([], None)
    if _usable(bounds):
        for name, q in OVER_TIME_QUANTILES.items():
            values = []
            for row in counts:
                found = quantile(q, bounds, row) if row.sum() > 0 else None
                values.append(None if found is None else found.value)
            out[f"dialog_{name}_s"] = values
    if data.has(col("load", "users")):
        out["active_users"] = data.series(col("load", "users")).tolist()
    return out


def distribution(data: RunRecord, mask: np.ndarray, task: str = "dialog") -> list[dict]:
    """The steady state's steps per response-time bucket of a task type, with their share."""
    if not data.has(col("hist", task, "+Inf")):
        return []
    bounds, counts = _hist(data, "hist", (task,))
    if not _usable(bounds):
        return []
    per_bucket = counts[mask].sum(axis=0)
    total = float(per_bucket.sum())
    rows, lower = [], 0.0
    for upper, n in zip(bounds, per_bucket, strict=True):
        rows.append(
            {
                "lower_s": lower,
                "upper_s": None if math.isinf(upper) else upper,
                "steps": round(float(n)),
                "share_pct": round(100 * float(n) / total, 3) if total else 0.0,
            }
        )
        lower = upper
    return rows


def _below(t: float, bounds: list[float], counts: np.ndarray) -> float:
    """Steps of at most `t` seconds: exact at a bucket bound, linear inside a bucket
    otherwise (histogram_quantile's assumption), all of the +Inf bucket above `t`."""
    below, lower = 0.0, 0.0
    for upper, n in zip(bounds, counts, strict=True):
        if t >= upper:
            below += float(n)
        elif not math.isinf(upper) and t > lower:
            below += float(n) * (t - lower) / (upper - lower)
            break
        else:
            break
        lower = upper
    return below


def apdex_score(t: float, bounds: list[float], counts: np.ndarray) -> dict | None:
    """APDEX_T = (satisfied + tolerating / 2) / all: satisfied at most T, tolerating at most
    4 T. Exact where T and 4 T are bucket bounds (the default 0.5 s and 2 s are)."""
    total = float(counts.sum())
    if total <= 0:
        return None
    satisfied = _below(t, bounds, counts)
    tolerating = _below(APDEX_TOLERATING * t, bounds, counts) - satisfied
    exact = all(x in bounds for x in (t, APDEX_TOLERATING * t))
    return {
        "steps": round(total),
        "satisfied": round(satisfied, 1),
        "tolerating": round(tolerating, 1),
        "frustrated": round(total - satisfied - tolerating, 1),
        "apdex": round((satisfied + tolerating / 2) / total, 3),
        "exact": exact,
    }


def apdex(data: RunRecord, mask: np.ndarray, t: float) -> dict:
    """APDEX per task type and per transaction over the steady state, from the histograms."""
    rows = []
    for kind in ("hist", "txhist"):
        owners = dict.fromkeys(c.owner for c in data.of_kind(kind))
        for owner in owners:
            bounds, counts = _hist(data, kind, owner)
            if not _usable(bounds):
                continue
            score = apdex_score(t, bounds, counts[mask].sum(axis=0))
            if score is not None:
                tx = owner[1] if kind == "txhist" else None
                rows.append({"task_type": owner[0], "transaction": tx, **score})
    return {
        "t_s": t,
        "frustrated_above_s": APDEX_TOLERATING * t,
        "rows": rows,
        "missing": "" if rows else "No response-time histogram in this run: no APDEX.",
    }


def spread(data: RunRecord, mask: np.ndarray) -> list[dict]:
    """Per transaction: the median from its histogram, and the buckets of its fastest and
    slowest step (a histogram keeps no single step: min and max are known to a bucket)."""
    rows = []
    for owner in dict.fromkeys(c.owner for c in data.of_kind("txhist")):
        bounds, counts = _hist(data, "txhist", owner)
        if not _usable(bounds):
            continue
        per_bucket = counts[mask].sum(axis=0)
        filled = np.nonzero(per_bucket > 0)[0]
        if not filled.size:
            continue
        median = quantile(0.5, bounds, per_bucket)
        lo, hi = int(filled[0]), int(filled[-1])

        rows.append(
            {
                "task_type": owner[0],
                "transaction": owner[1],
                "steps": round(float(per_bucket.sum())),
                "min_bucket_s": _bucket(bounds, lo),
                "median_s": round(median.value, 4) if median else None,
                "max_bucket_s": _bucket(bounds, hi),
            }
        )
    return rows


def _bucket(bounds: list[float], k: int) -> list[float | None]:
    """[lower, upper] of bucket k; upper None for +Inf."""
    return [bounds[k - 1] if k else 0.0, None if math.isinf(bounds[k]) else bounds[k]]


def faults(meta: RunMeta, start: datetime, end_s: float) -> list[dict]:
    """The faults the run injected, each with its window in seconds and in UTC."""
    out = []
    for f in meta.fault_windows:
        stop = min(f.end_s if f.end_s is not None else end_s, end_s)
        if f.start_s >= end_s:
            continue  # planned after the run ended (a cancelled run)
        out.append(
            {
                "name": f.name,
                "start_s": f.start_s,
                "end_s": stop,
                "start": (start + timedelta(seconds=f.start_s)).isoformat(),
                "end": (start + timedelta(seconds=stop)).isoformat(),
            }
        )
    return out


def _zone(meta: RunMeta) -> ZoneInfo | None:
    """The source's zone where the run names one: a PDH header's Windows zone name, or an
    IANA key."""
    name = meta.time_zone or ""
    found = iana(name)
    if found is not None:
        return found
    # Only a key the zone database lists: the name comes from a file's header, and
    # ZoneInfo() of a directory or an overlong name raises OSError, not a "not found".
    return ZoneInfo(name) if name in _iana_keys() else None


@lru_cache(maxsize=1)
def _iana_keys() -> frozenset[str]:
    return frozenset(available_timezones())


def window(run: RunRow, meta: RunMeta) -> dict:
    """The run's window in UTC, and in the source's local time where the source names its
    zone (a PerfMon header does; an ST03 export is in the system's local time, zone unnamed,
    and its times are stored as they are written)."""
    start, end = run.start, run.end
    out: dict = {"start_utc": start.isoformat(), "end_utc": end.isoformat(), "zone": None}
    zone = _zone(meta)
    if meta.source in ("st03", "stad") and zone is None:
        # No zone given (--tz): the export's local times, as written.
        period = meta.period or {}
        out.update(
            start_utc=None,
            end_utc=None,
            zone="the SAP system's local time (not named in the export)",
            start_local=period.get("start"),
            end_local=period.get("end"),
        )
    elif zone is not None:
        out.update(
            zone=zone.key,
            start_local=start.astimezone(zone).isoformat(),
            end_local=end.astimezone(zone).isoformat(),
        )
    return out
