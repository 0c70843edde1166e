"""A run's report for its steady-state window (ramp-up excluded), as the papers print it:
ST03 summary per task type and transaction, OS counters as average / minimum / maximum per
host (seed 003 Tables 2-3), breaches of the whitepaper thresholds with the paper's
diagnosis, expensive SQL and buffer-pool hit ratios, and the SD and BAIT benchmark checks;
response-time percentiles from the histogram, and ST03N's transaction and time profiles.
`figures()` names every number a check's SLA can bound or a comparison can put side by
side."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from api.runs import ionet, overtime
from api.runs.gaps import longest_clear
from api.runs.percentiles import QUANTILES, parse_bound, precision, quantile
from api.runs.record import Column, RunMeta, RunRecord, col, parse
from api.runs.storage import RunRow
from exporters.thresholds import Thresholds
from exporters.vocabulary import (
    AVAILABLE_MB,
    CPU_PCT,
    DIALOG_RESPONSE,
    DISK_QUEUE,
    INDICATOR_BY_COMPONENT,
    INDICATORS,
    OS_COUNTER_BY_KEY,
    OS_COUNTER_KEYS,
    Indicator,
)
from landscape_model.terms import REPORT_ORDER, TASK_TYPES

# The components a comparison (and the CLI's table) puts side by side: the response, the
# parts the whitepaper rules watch, and CPU; in the order reports print them.
COMPARED: tuple[str, ...] = tuple(
    c for c in REPORT_ORDER if c in {"response", "cpu", *INDICATOR_BY_COMPONENT}
)
MEAN_WINDOW_S = 300.0  # the alert rules' 5-minute per-step means
BAIT_WINDOW_S = 3600.0  # BAIT: 60 consecutive minutes measured
PROFILE_INTERVAL_S = 3600.0  # ST03N's time profile: per hour unless the user picks
TOP_TRANSACTIONS = 20  # ST03N's transaction profile lists the top N by total time


class Series:
    def __init__(self, data: RunRecord, ramp_up_s: float) -> None:
        self.data = data
        self.index = data.index
        # Recorded samples stamp the end of their interval: an interval counts when it starts
        # after the ramp-up (one straddling the ramp's end would mix in ramp levels).
        # Imported samples are instants, so without a ramp-up every sample counts.
        starts = np.concatenate([[0.0], data.times[:-1]])
        self.mask = (
            starts >= ramp_up_s - 1e-9 if ramp_up_s > 0 else np.ones(data.times.size, dtype=bool)
        )
        self.times = data.times[self.mask]
        self.start_s = float(starts[self.mask][0]) if self.times.size and ramp_up_s > 0 else 0.0
        self.window_s = float(self.times[-1] - self.start_s) if self.times.size else 0.0

    def col(self, key: Column) -> np.ndarray:
        return self.data.values[self.mask, self.index[key]]

    def has(self, key: Column) -> bool:
        return key in self.index


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


# ST03N fields an export may hold beyond the recorded components, shown when present.
ST03_EXTRA: tuple[str, ...] = (
    "wp_time",
    "roll_wait",
    "roll_in_wait",
    "load",
    "generation",
    "frontend_net",
    "db_procedure",
    "rfc",
)
# Sizes per step an export may hold (KB): `<field>_kb` in a row.
ST03_SIZES: dict[str, str] = {
    "memory": "memory_kb",
    "extended_memory": "extended_memory_kb",
    "kbytes": "transferred_kb",
}


def _mean_ms(s: Series, prefix: tuple, comp: str, steps: float, sel=None) -> float | None:
    """The mean per step of a component in ms; None when the run has no such column (an
    export without it): absent, never 0. `prefix`: the column's kind and owner."""
    name = col(*prefix, comp)
    if not s.has(name):
        return None
    v = s.col(name) if sel is None else s.col(name)[sel]
    return round(1000 * _ratio(float(v.sum()), steps), 3)


def _per_request_ms(s: Series, prefix: tuple, sel=None) -> float | None:
    """ST03N's 'Ø Time/DB Req.': DB time per database request, not per step."""
    if not s.has(col(*prefix, "db_per_request")):
        return None
    t, n = s.col(col(*prefix, "db_per_request")), s.col(col(*prefix, "db_per_request_n"))
    if sel is not None:
        t, n = t[sel], n[sel]
    return round(1000 * _ratio(float(t.sum()), float(n.sum())), 3)


def _st03_row(s: Series, prefix: tuple, steps: float, sel=None) -> dict:
    row = {f"{comp}_ms": _mean_ms(s, prefix, comp, steps, sel) for comp in REPORT_ORDER}
    for comp in ST03_EXTRA:
        if s.has(col(*prefix, comp)):
            row[f"{comp}_ms"] = _mean_ms(s, prefix, comp, steps, sel)
    if s.has(col(*prefix, "db_per_request")):
        row["db_time_per_request_ms"] = _per_request_ms(s, prefix, sel)
    for size, key in ST03_SIZES.items():
        if s.has(col(*prefix, size)):
            v = s.col(col(*prefix, size))
            total = float((v if sel is None else v[sel]).sum())
            row[key] = round(_ratio(total, steps), 3)
    if s.has(col(*prefix, "db_requests")):
        v = s.col(col(*prefix, "db_requests"))
        row["db_requests"] = round(float((v if sel is None else v[sel]).sum()))
    return row


def st03(s: Series) -> tuple[list[dict], list[dict]]:
    summary, tx_rows = [], []
    names = s.data.meta.details.get("task_type_names", {})
    for task in _tasks(s):
        steps = float(s.col(col("st03", task, "steps")).sum())
        row = {"task_type": task, "steps": round(steps)}
        if task in names and names[task] != task:
            row["as_exported"] = names[task]
        row.update(_st03_row(s, ("st03", task), steps))
        summary.append(row)
        for tx in s.data.meta.transactions:
            if not s.has(col("tx", task, tx, "steps")):
                continue
            n = float(s.col(col("tx", task, tx, "steps")).sum())
            if n:
                tx_rows.append(
                    {
                        "task_type": task,
                        "transaction": tx,
                        "steps": round(n),
                        "response_ms": _mean_ms(s, ("tx", task, tx), "response", n),
                    }
                )
    return summary, tx_rows


def _histograms(s: Series, kind: str) -> dict[tuple[str, ...], tuple[list[float], np.ndarray]]:
    """Per owner ((TASK,) for `hist`; (TASK, TX) for `txhist`), the upper bounds and the
    steps per bucket over the steady state."""
    out: dict[tuple[str, ...], list[str]] = {}
    for c in s.data.of_kind(kind):
        out.setdefault(c.owner, []).append(c.last)
    hists = {}
    for owner, les in out.items():
        les.sort(key=parse_bound)
        counts = np.array([float(np.nansum(s.col(col(kind, *owner, le)))) for le in les])
        hists[owner] = ([parse_bound(le) for le in les], counts)
    return hists


def _percentile_row(bounds: list[float], counts: np.ndarray) -> dict | None:
    """p50/p90/p95/p99 with the bucket each lies in; None without a usable histogram."""
    if len(bounds) < 2 or not np.isinf(bounds[-1]):
        return None  # no finite bucket or no +Inf: histogram_quantile answers NaN there too
    found = {name: quantile(q, bounds, counts) for name, q in QUANTILES.items()}
    if any(v is None for v in found.values()):
        return None
    row: dict = {"steps": round(float(counts.sum()))}
    for name, v in found.items():
        row[f"{name}_s"] = round(v.value, 4)
    row["buckets"] = {
        name: [v.lower, None if np.isinf(v.upper) else v.upper] for name, v in found.items()
    }
    row["precision"] = "; ".join(precision(name, v) for name, v in found.items())
    return row


def _task_order(names) -> list[str]:
    return [*[t for t in TASK_TYPES if t in names], *sorted(set(names) - set(TASK_TYPES))]


def percentiles(s: Series) -> dict:
    """p50/p90/p95/p99 per task type and per transaction from the recorded histograms
    (never from means), each with the bucket it lies in; a run of single steps (STAD) has
    them exact, from every step."""
    exact = s.data.meta.details.get("step_percentiles")
    if exact:
        return _exact_percentiles(exact)
    rows = []
    hists = {owner[0]: h for owner, h in _histograms(s, "hist").items()}
    for task in _task_order(hists):
        row = _percentile_row(*hists[task])
        if row is None:
            continue
        row = {"task_type": task, **row}
        steady = s.data.meta.details.get("histogram_quantile", {}).get(task)
        if steady:
            row["prometheus_steady_state_s"] = {k: round(v, 4) for k, v in steady.items()}
        rows.append(row)
    tx_hists = _histograms(s, "txhist")
    by_tx = []
    for task in _task_order({t for t, _ in tx_hists}):
        for key in sorted(k for k in tx_hists if k[0] == task):
            row = _percentile_row(*tx_hists[key])
            if row is not None:
                by_tx.append({"task_type": task, "transaction": key[1], **row})
    source = "the Prometheus" if s.data.meta.source == "prometheus" else "the recorded"
    return {
        "by_task_type": rows,
        "by_transaction": by_tx,
        "source": f"{source} response-time histograms, interpolated inside their buckets as "
        "histogram_quantile does",
        "missing": "" if rows else "No response-time histogram in this run: no percentiles.",
        "by_transaction_missing": ""
        if by_tx
        else "No response-time histogram per transaction in this run: none per transaction.",
    }


def _exact_percentiles(exact: dict) -> dict:
    def row(r: dict) -> dict:
        out = {k: v for k, v in r.items() if k not in QUANTILES}
        for name in QUANTILES:
            out[f"{name}_s"] = round(r[name], 6)
        out["buckets"] = {name: [r[name], r[name]] for name in QUANTILES}
        out["precision"] = f"exact: the nearest rank over {r['steps']:,} steps"
        return out

    by_task = [row(r) for r in exact["by_task_type"]]
    by_tx = [row(r) for r in exact["by_transaction"]]
    return {
        "by_task_type": by_task,
        "by_transaction": by_tx,
        "source": "every step of the statistical records (STAD): exact, the nearest rank",
        "missing": "" if by_task else "No response time in the records: no percentiles.",
        "by_transaction_missing": "",
    }


def transaction_profile(s: Series, top: int) -> list[dict]:
    """ST03N's transaction profile: per transaction and task type the steps, the total
    response time and its share, the mean of every part; the top N by total time."""
    rows = []
    for task in _tasks(s):
        for tx in s.data.meta.transactions:
            if not s.has(col("tx", task, tx, "steps")):
                continue
            n = float(s.col(col("tx", task, tx, "steps")).sum())
            if not n:
                continue
            # An export without a response time (nor the parts to derive it) has no total
            # response: the profile is ranked by steps and has no shares.
            has = s.has(col("tx", task, tx, "response"))
            total = float(s.col(col("tx", task, tx, "response")).sum()) if has else None
            row: dict = {
                "task_type": task,
                "transaction": tx,
                "steps": round(n),
                "total_response_s": None if total is None else round(total, 3),
            }
            row.update(_st03_row(s, ("tx", task, tx), n))
            rows.append(row)
    grand = sum(r["total_response_s"] or 0.0 for r in rows)
    rows.sort(key=lambda r: (-(r["total_response_s"] or 0.0), -r["steps"]))
    return [
        {
            "rank": k + 1,
            **{key: r[key] for key in ("task_type", "transaction", "steps", "total_response_s")},
            "share_pct": None
            if r["total_response_s"] is None
            else round(100 * _ratio(r["total_response_s"], grand), 2),
            **{key: v for key, v in r.items() if key.endswith(("_ms", "_kb"))},
        }
        for k, r in enumerate(rows[:top])
    ]


def _tasks(s: Series) -> list[str]:
    present = [c.part("task") for c in s.data.of_kind("st03") if c.last == "steps"]
    return [*[t for t in TASK_TYPES if t in present], *[t for t in present if t not in TASK_TYPES]]


def time_profile(s: Series, interval_s: float) -> list[dict]:
    """ST03N's time profile: per interval of the steady state (an hour unless picked) and
    task type, the steps and the mean response and parts per step."""
    if not s.times.size or interval_s <= 0:
        return []
    slot = np.floor((s.times - s.start_s - 1e-9) / interval_s).clip(min=0).astype(int)
    rows = []
    for k in np.unique(slot):
        sel = slot == k
        for task in _tasks(s):
            steps = float(s.col(col("st03", task, "steps"))[sel].sum())
            row: dict = {
                "start_s": round(s.start_s + k * interval_s, 1),
                "end_s": round(min(s.start_s + (k + 1) * interval_s, float(s.times[-1])), 1),
                "task_type": task,
                "steps": round(steps),
            }
            row.update(_st03_row(s, ("st03", task), steps, sel))
            rows.append(row)
    return rows


def indicator_peaks(s: Series, thresholds: Thresholds) -> list[dict]:
    """Per whitepaper indicator, the highest 5-minute mean of any instance in the steady
    state against its threshold: what the check judges, breached or not."""
    if not s.data.of_kind("inst") or not s.times.size:
        return []
    return [
        {
            "indicator": ind.component,
            "rule": ind.alert,
            "threshold_ms": 1000 * thresholds.seconds(ind),
            "peak_ms": _peak(worst_instance_means(s, ind.component)),
        }
        for ind in INDICATORS
    ]


def _peak(values: np.ndarray) -> float | None:
    """The highest full-window mean; None when the run holds no full window."""
    full = values[~np.isnan(values)]
    return round(float(full.max()), 3) if full.size else None


def os_counters(s: Series) -> list[dict]:
    """Average / minimum / maximum of every OS counter per host (seed 003 Tables 2-3)."""
    names = s.data.meta.details.get("counter_names", {})
    order = list(OS_COUNTER_KEYS)
    cols = s.data.of_kind("os")
    cols.sort(
        key=lambda c: (
            c.part("host"),
            order.index(c.last) if c.last in order else len(order),
            c.last,
        )
    )
    rows = []
    for c in cols:
        host, key, name = c.part("host"), c.last, str(c)  # the metadata names it as stored
        v = s.col(c)
        v = v[~np.isnan(v)]
        if v.size:
            rows.append(
                {
                    "host": host,
                    "key": key,
                    "counter": (
                        OS_COUNTER_BY_KEY[key].counter
                        if key in OS_COUNTER_BY_KEY
                        else names.get(name, key)
                    ),
                    # Unrounded: a check compares them (Avg. Disk sec/Read 0.00418 is not
                    # 0.004 under `max: 0.0041`); the page and the CLI round for display.
                    "avg": float(v.mean()),
                    "min": float(v.min()),
                    "max": float(v.max()),
                    "samples": int(v.size),
                }
            )
    return rows


def _trailing_sum(values: np.ndarray, width: int) -> np.ndarray:
    csum = np.cumsum(values, axis=0)
    out = csum.copy()
    out[width:] = csum[width:] - csum[:-width]
    return out


def _trailing_mean(seconds: np.ndarray, steps: np.ndarray, width: int) -> np.ndarray:
    """Per interval, the mean over the trailing `width` intervals (seconds per step), NaN
    where fewer than `width` intervals lie behind it: a 5-minute mean of the first few
    seconds of a run is the mean of a handful of steps, and is not judged (alerts wait
    with `for:` for the same reason)."""
    secs, n = _trailing_sum(seconds, width), _trailing_sum(steps, width)
    mean = np.divide(secs, n, out=np.zeros_like(secs, dtype=float), where=n > 0)
    mean[: width - 1] = np.nan
    return mean


def worst_instance_means(s: Series, indicator: str) -> np.ndarray:
    """Per interval, the highest 5-minute mean (ms per dialog step) of any instance; NaN
    until a full 5 minutes of data lie behind the interval."""
    insts = [c.part("instance") for c in s.data.of_kind("inst") if c.last == "steps"]
    if not insts:
        return np.zeros(s.times.size)
    step = float(np.diff(s.data.times).min()) if s.data.times.size > 1 else 1.0
    width = max(1, round(MEAN_WINDOW_S / step))
    steps = np.stack([s.data.series(col("inst", i, "steps")) for i in insts], axis=1)
    secs = np.stack([s.data.series(col("inst", i, indicator)) for i in insts], axis=1)
    mean = _trailing_mean(secs, steps, width)
    return 1000 * mean.max(axis=1)[s.mask]


def _breach(
    thresholds: Thresholds,
    indicator: Indicator,
    name: str,
    start_s: float,
    end_s: float,
    peak_ms: float,
) -> dict:
    return {
        "rule": indicator.alert,
        "indicator": name,
        "threshold_ms": 1000 * thresholds.seconds(indicator),
        "start_s": round(start_s, 1),
        "end_s": round(end_s, 1),
        "peak_ms": round(peak_ms, 3),
        "summary": indicator.summary,
        "diagnosis": indicator.diagnosis,
    }


def _spans(above: np.ndarray) -> list[tuple[int, int]]:
    """(first, last) index of every run of consecutive True values."""
    edges = np.diff(np.concatenate([[0], above.astype(np.int8), [0]]))
    starts, ends = np.nonzero(edges == 1)[0], np.nonzero(edges == -1)[0] - 1
    return list(zip(starts.tolist(), ends.tolist(), strict=True))


def breaches(s: Series, thresholds: Thresholds) -> list[dict]:
    """Each span in which the worst instance's 5-minute mean passes an indicator's threshold,
    and the span of dialog response at or above the benchmark bound, with their diagnoses."""
    out = []
    step = float(np.diff(s.data.times).min()) if s.data.times.size > 1 else 0.0
    for ind in INDICATORS:
        values = worst_instance_means(s, ind.component)
        for k, j in _spans(values > 1000 * thresholds.seconds(ind)):
            out.append(
                _breach(
                    thresholds,
                    ind,
                    ind.component,
                    float(s.times[k] - step),
                    float(s.times[j]),
                    float(values[k : j + 1].max()),
                )
            )
    if s.has(col("st03", "dialog", "steps")) and s.has(col("st03", "dialog", "response")):
        width = max(1, round(MEAN_WINDOW_S / step)) if step else 1
        mean = _trailing_mean(
            s.data.series(col("st03", "dialog", "response")),
            s.data.series(col("st03", "dialog", "steps")),
            width,
        )[s.mask]
        over = np.nonzero(mean >= thresholds.seconds(DIALOG_RESPONSE))[0]
        if over.size:
            out.append(
                _breach(
                    thresholds,
                    DIALOG_RESPONSE,
                    "dialog_response",
                    float(s.times[over[0]] - step),
                    float(s.times[over[-1]]),
                    1000 * float(np.nanmax(mean)),
                )
            )
    return sorted(out, key=lambda b: (b["start_s"], b["rule"]))


def sql_and_buffers(data: RunRecord) -> tuple[list[dict], list[dict]]:
    end, start = data.steady_end, data.steady_start
    details = data.meta.details
    if end is None or start is None or not details.get("statements"):
        return [], []
    d_exec = end.stmt_exec - start.stmt_exec
    d_secs = end.stmt_seconds - start.stmt_seconds
    d_rows = end.stmt_rows - start.stmt_rows
    merged: dict[str, dict] = {}
    for k, (_, _, table, op) in enumerate(details["statements"]):
        sql = details["statement_sql"][k]
        row = merged.setdefault(
            sql,
            {
                "table": table,
                "operation": op,
                "sql": sql,
                "executions": 0.0,
                "records": 0.0,
                "elapsed_s": 0.0,
            },
        )
        row["executions"] += float(d_exec[k])
        row["records"] += float(d_rows[k])
        row["elapsed_s"] += float(d_secs[k])
    top = sorted(merged.values(), key=lambda r: -r["elapsed_s"])[:10]
    for r in top:
        r["per_execution_ms"] = round(1000 * _ratio(r["elapsed_s"], r["executions"]), 3)
        r["elapsed_s"] = round(r["elapsed_s"], 3)
    pools = []
    for p, pool in enumerate(details.get("bufferpools", [])):
        dl = float(end.pool_data_logical[p] - start.pool_data_logical[p])
        dp = float(end.pool_data_physical[p] - start.pool_data_physical[p])
        il = float(end.pool_index_logical[p] - start.pool_index_logical[p])
        ip = float(end.pool_index_physical[p] - start.pool_index_physical[p])
        pools.append(
            {
                "bufferpool": pool,
                "data_hit_ratio": round(1 - _ratio(dp, dl), 5) if dl else None,
                "index_hit_ratio": round(1 - _ratio(ip, il), 5) if il else None,
            }
        )
    return top, pools


def benchmark(
    s: Series, meta: RunMeta, summary: list[dict], window_s: float, thresholds: Thresholds
) -> dict:
    dialog = next((r for r in summary if r["task_type"] == "dialog"), None)
    if dialog is None:
        return {}
    steps = dialog["steps"]
    # An export that does not say which period it covers has no duration: throughput,
    # SAPS and BAIT are not measured (never computed from a made-up interval).
    hours = window_s / 3600.0
    measured = window_s > 0
    x = steps / window_s if window_s else 0.0
    response_ms = dialog["response_ms"]
    details = meta.details
    # The think time is the run's (a model run's scenario) or none: an import does not
    # know it, and the SD verdict and the response-time law then are not measured.
    r = None if response_ms is None else response_ms / 1000
    z, n = details.get("think_time_s"), details.get("users", 0)
    law = n / (r + z) if (n and r is not None and z is not None and (r + z)) else None
    items = None
    if details.get("line_items"):
        items = 0.0
        for tx in meta.transactions:
            if s.has(col("tx", "dialog", tx, "steps")):
                per = details.get("dialog_steps", {}).get(tx, 1)
                items += (
                    float(s.col(col("tx", "dialog", tx, "steps")).sum())
                    / per
                    * details["line_items"].get(tx, 0)
                )
    # BAIT wants 60 consecutive measured minutes: a hole in the data breaks the stretch.
    end_s = float(s.times[-1]) if s.times.size else s.start_s
    clear = round(longest_clear(meta.gaps or [], s.start_s, end_s), 1)
    cpu = {
        h: round(float(np.mean(s.col(col("os", h, CPU_PCT)))), 2)
        for h in meta.hosts
        if s.has(col("os", h, CPU_PCT))
    }
    sd_not_measured = {}
    if not measured:
        sd_not_measured = {
            "not_measured": "no period: the export names none and none was given "
            "(--from/--to or --period; API: from, to, period)"
        }
    bait_not_measured = dict(sd_not_measured)
    if measured and meta.source in ("st03", "stad"):
        # Sums over the period (or per hour) cannot show that it was measured without a
        # break: 60 consecutive minutes need samples whose spacing shows continuity.
        bait_not_measured = {
            "not_measured": "an ST03 or STAD export holds work done, not measurements over "
            "time: a quiet minute and a missing one look alike, so it cannot show continuity"
        }
    return {
        "sd": {
            **sd_not_measured,
            **(
                {"response_not_measured": "the file has no response time (see the audit)"}
                if r is None
                else {}
            ),
            "dialog_response_s": None if r is None else round(r, 4),
            "dialog_response_below_2s": None
            if r is None
            else r < thresholds.seconds(DIALOG_RESPONSE),
            "think_time_s": z,
            "users": n,
            "dialog_steps_per_hour": round(steps / hours) if measured else None,
            "saps": round(steps / hours / 60) if measured else None,
            "line_items_per_hour": round(items / hours) if (hours and items is not None) else None,
            "line_items_vs_steps_over_3_pct": (
                round(100 * (_ratio(items, steps / 3) - 1), 2)
                if (steps and items is not None)
                else None
            ),
            "response_time_law": {
                "measured_steps_per_s": round(x, 3) if measured else None,
                "law_steps_per_s": round(law, 3) if law is not None else None,
                "residual_pct": round(100 * _ratio(x - law, law), 3)
                if (law and measured)
                else None,
                "holds_within_1pct": abs(_ratio(x - law, law)) <= 0.01
                if (law and measured)
                else None,
            },
        },
        "bait": {
            **bait_not_measured,
            "measured_window_s": window_s if measured else None,
            "longest_gap_free_s": None if bait_not_measured else clear,
            "sixty_consecutive_minutes": None if bait_not_measured else clear >= BAIT_WINDOW_S,
            "avg_cpu_pct_by_host": cpu,
            "avg_available_mb_by_host": {
                h: round(float(np.mean(s.col(col("os", h, AVAILABLE_MB)))), 1)
                for h in meta.hosts
                if s.has(col("os", h, AVAILABLE_MB))
            },
            "avg_disk_queue_by_host": {
                h: round(float(np.mean(s.col(col("os", h, DISK_QUEUE)))), 3)
                for h in meta.hosts
                if s.has(col("os", h, DISK_QUEUE))
            },
            "network": "not measured by the model; real hosts report it through Telegraf (net)",
        },
    }


def target_verdicts(report: dict, goals: list[dict]) -> list[dict]:
    """Each transaction's target (an NFR sheet's row) against its measured statistic: the
    mean from the transaction rows, a percentile from the exact ones; the dialog row of a
    transaction when it has one. A transaction without steps is not measured, not passed."""
    means = {}
    for r in report["transactions"]:
        means.setdefault(r["transaction"], {})[r["task_type"]] = r["response_ms"]
    pcts = {}
    for r in report["percentiles"].get("by_transaction", []):
        pcts.setdefault(r["transaction"], {})[r["task_type"]] = r
    out = []
    for g in goals:
        tx, stat = g["transaction"], g["statistic"]
        source = means.get(tx) if stat == "mean" else pcts.get(tx)
        task = ("dialog" if "dialog" in source else next(iter(source))) if source else None
        if task is None:
            measured = None
        elif stat == "mean":
            ms = source[task]
            measured = None if ms is None else ms / 1000
        else:
            measured = source[task][f"{stat}_s"]
        out.append(
            {
                "transaction": tx,
                "task_type": task,
                "statistic": stat,
                "target_s": g["target_s"],
                "measured_s": None if measured is None else round(measured, 6),
                "passed": None if measured is None else measured <= g["target_s"],
                "detail": f"targets line {g['line']}"
                + ("" if measured is not None else ": no steps of it in the run (not measured)"),
            }
        )
    return out


def apdex_default_s(thresholds: Thresholds) -> float:
    """APDEX's T unless set: a quarter of the SD benchmark's dialog bound (2 s -> 0.5 s), so
    a step over the bound counts as frustrated (over 4 T)."""
    return thresholds.seconds(DIALOG_RESPONSE) / overtime.APDEX_TOLERATING


def build_report(
    run: RunRow,
    data: RunRecord,
    *,
    thresholds: Thresholds,
    top: int = TOP_TRANSACTIONS,
    interval_s: float = PROFILE_INTERVAL_S,
    apdex_t_s: float | None = None,
) -> dict:
    """`thresholds`: the whitepaper bounds the report judges by (alerts/thresholds.yml, read
    at the edge); `top`: rows of the transaction profile; `interval_s`: the time profile's
    interval; `apdex_t_s`: APDEX's T (None: apdex_default_s)."""
    s = Series(data, run.ramp_up_s)
    window_s = s.window_s
    summary, transactions = st03(s)
    sql, pools = sql_and_buffers(data)
    report = {
        # How the data was read that a reader must see before any figure (a damaged line
        # skipped, task type 'all', a derived response, a print date): first, not last.
        "warnings": list(data.meta.warnings or []),
        "run": run,
        "steady_state": {
            "start_s": s.start_s,
            "end_s": float(s.times[-1]) if s.times.size else 0.0,
            "duration_s": window_s,
        },
        "st03": summary,
        "transactions": transactions,
        "percentiles": percentiles(s),
        "transaction_profile": transaction_profile(s, top),
        "time_profile": {"interval_s": interval_s, "rows": time_profile(s, interval_s)},
        "indicators": indicator_peaks(s, thresholds),
        "os_counters": os_counters(s),
        "breaches": breaches(s, thresholds),
        "top_sql": sql,
        "bufferpools": pools,
        "benchmark": benchmark(s, data.meta, summary, window_s, thresholds),
    }
    end_s = float(data.times[-1]) if data.times.size else 0.0
    report["window"] = overtime.window(run, data.meta)
    report["faults"] = overtime.faults(data.meta, run.start, end_s)
    report["over_time"] = overtime.over_time(data)
    report["distribution"] = overtime.distribution(data, s.mask)
    report["apdex"] = overtime.apdex(
        data, s.mask, apdex_t_s if apdex_t_s is not None else apdex_default_s(thresholds)
    )
    report["transaction_spread"] = overtime.spread(data, s.mask)
    # Only where the data has them: a run without disks or NICs has no such key at all.
    report.update(ionet.sections(data, s.mask))
    if data.meta.details.get("targets"):
        report["targets"] = target_verdicts(report, data.meta.details["targets"])
    if data.meta.gaps is not None:  # runs with a clock: where data is missing, and why
        report["gaps"] = data.meta.gaps
    if data.meta.source in ("st03", "stad", "perfmon"):  # how the file was read: the audit
        report["import"] = import_audit(data.meta)
    report["not_measured"] = not_measured(report)
    return report


# What an import's audit shows that only one kind of file has (the run's details).
IMPORT_DETAILS = (
    "layout",
    "file_format",
    "number_format",
    "task_type_names",
    "columns",
    "columns_not_read",
    "derived_fields",
    "precision",
    "total_row",
    "status_lines",
    "damaged_lines",
)


def import_audit(meta: RunMeta) -> dict:
    """How the file was read: its digest, zone, interval, period, derivations, warnings."""
    audit = {key: meta.details.get(key) for key in IMPORT_DETAILS}
    # Derivations by host and counter, not by stored column name.
    derived = {}
    for name, how in meta.derivations.items():
        c = parse(name)
        derived[f"{c.part('host')}: {c.last}" if c.kind == "os" else name] = how
    return {
        **audit,
        "sha256": meta.checksum,
        "period": meta.period,
        "time_zone": meta.time_zone,
        "interval_s": meta.interval_s,
        "standard_sources": derived or None,
        "warnings": meta.warnings,
    }


def not_measured(report: dict) -> dict[str, str]:
    """Figures a run could have but does not measure, with why: a check bounding one is
    skipped saying so, not failed and not passed."""
    why = (report["benchmark"].get("sd") or {}).get("not_measured")
    if not why and (report["steady_state"]["duration_s"] or not report["st03"]):
        return {}
    why = why or "the run has no duration"
    names = ["dialog_steps_per_hour", "saps", "throughput_steps_per_s"]
    names += [f"{row['task_type']}_steps_per_s" for row in report["st03"]]
    return dict.fromkeys(names, why)


class Figure(NamedTuple):
    """One figure of a report: its value, whether higher is better, and its unit."""

    value: float
    up: bool  # higher is better
    unit: str


# The unit a figure's measure ends in, first match: `dialog_p95_s`, an OS key `cpu_pct`.
UNIT_SUFFIXES = (
    ("steps_per_s", "steps/s"),
    ("per_hour", "/h"),
    ("pages_per_s", "pages/s"),
    ("_ms", "ms"),
    ("_s", "s"),
    ("_pct", "%"),
    ("_mb", "MB"),
)


def unit_of(measure: str) -> str:
    """The unit of a figure's measure (its name, or an OS counter's key), "" when none."""
    return next((unit for suffix, unit in UNIT_SUFFIXES if measure.endswith(suffix)), "")


FIGURES = {  # figure -> (path in the report, higher is better)
    "dialog_steps_per_hour": (("benchmark", "sd", "dialog_steps_per_hour"), True),
    "dialog_response_s": (("benchmark", "sd", "dialog_response_s"), False),
    "saps": (("benchmark", "sd", "saps"), True),
}
REPEATABLE_PCT = 5.0  # seed 001, certification criterion 8


def _get(doc: dict, path: tuple) -> float | None:
    for key in path:
        if not isinstance(doc, dict) or key not in doc:
            return None
        doc = doc[key]
    return doc


def figures(report: dict) -> dict[str, Figure]:
    """Every figure of a report by name (what an SLA names): its value, whether higher is
    better and its unit, the OS counters' `os.HOST.KEY.avg` included. The unit is taken
    from what the figure measures as it is made (an OS counter's key), so no reader splits
    the dotted name again."""
    out: dict[str, Figure] = {}
    for name, (path, up) in FIGURES.items():
        value = _get(report, path)
        if value is not None:
            out[name] = Figure(float(value), up, unit_of(name))
    window = report["steady_state"]["duration_s"]
    if window and report["st03"]:
        steps = sum(r["steps"] for r in report["st03"])
        out["throughput_steps_per_s"] = Figure(steps / window, True, unit_of("steps_per_s"))
    for row in report["st03"]:
        task = row["task_type"]
        if window:
            out[f"{task}_steps_per_s"] = Figure(row["steps"] / window, True, "steps/s")
        for key, value in row.items():
            # A component the run does not hold is no figure (absent, never 0).
            if key.endswith(("_ms", "_kb")) and value is not None:
                out[f"{task}_{key}"] = Figure(value, False, unit_of(key))
    for row in report["percentiles"]["by_task_type"]:
        for name in QUANTILES:
            out[f"{row['task_type']}_{name}_s"] = Figure(row[f"{name}_s"], False, "s")
    # TASK.TX_pNN_s (dialog.VA01_p95_s): the dot keeps a transaction apart from the name.
    for row in report["percentiles"].get("by_transaction", []):
        for name in QUANTILES:
            value = row[f"{name}_s"]
            out[f"{row['task_type']}.{row['transaction']}_{name}_s"] = Figure(value, False, "s")
    for row in report["indicators"]:
        if row["peak_ms"] is not None:  # None: no full 5-minute window in the run
            out[f"{row['indicator']}_peak_ms"] = Figure(row["peak_ms"], False, "ms")
    out["breaches"] = Figure(float(len(report["breaches"])), False, "")
    for row in report["os_counters"]:
        # More available memory is better; every other counter is a load.
        up = row["key"] == AVAILABLE_MB
        for stat in ("avg", "min", "max"):
            out[f"os.{row['host']}.{row['key']}.{stat}"] = Figure(
                row[stat], up, unit_of(row["key"])
            )
    # The I/O-wait and network rows add their p95 (mean and max are the avg and max above).
    for section in (ionet.IO_WAIT, ionet.NETWORK):
        for row in report.get(section) or []:
            up = row["key"].endswith("idle_time")  # an idle disk is the better one
            out[f"os.{row['host']}.{row['key']}.p95"] = Figure(row["p95"], up, unit_of(row["key"]))
    return out


def compare(base: dict, new: dict, tolerances: dict[str, float] | None = None) -> dict:
    """Per figure: both values, delta and a verdict within the figure's tolerance (5 %
    unless `tolerances` names it); repeatable: throughput and response within 5 %
    (seed 001)."""
    tolerances = tolerances or {}
    fb, fn = figures(base), figures(new)
    rows = {}
    for name in [n for n in fb if n in fn and n != "breaches"]:
        a, up, b = fb[name].value, fb[name].up, fn[name].value
        # From 0 to anything else is no percentage: no delta, and never "same" (a dispatcher
        # wait of 0 ms becoming 1.5 ms read "+0.00 %, same" before).
        delta = 100 * _ratio(b - a, a) if a else (0.0 if b == a else None)
        tol = tolerances.get(name, REPEATABLE_PCT)
        better = (b > a) if up else (b < a)
        within = delta is not None and abs(delta) <= tol
        verdict = "same" if within else ("better" if better else "worse")
        rows[name] = {
            "figure": name,
            "base": a,
            "new": b,
            "delta_pct": None if delta is None else round(delta, 2),
            "tolerance_pct": tol,
            "verdict": verdict,
        }
    thr, resp = rows.get("dialog_steps_per_hour"), rows.get("dialog_response_s")
    if thr and resp:
        repeatable = all(
            r["delta_pct"] is not None and abs(r["delta_pct"]) <= REPEATABLE_PCT
            for r in (thr, resp)
        )
        criterion = "throughput and response within 5 % (seed 001, certification criterion 8)"
    else:
        # Without dialog throughput and response in both (PerfMon captures, imports of
        # update or batch work) runs are repeatable when every figure both have agrees
        # within its tolerance; none in common: nothing to judge, not repeatable.
        shared = list(rows.values())
        repeatable = bool(shared) and all(r["verdict"] == "same" for r in shared)
        criterion = (
            "no dialog throughput and response in both runs: every figure both have within "
            "its tolerance"
            if shared
            else "no figure in both runs: nothing to compare"
        )
    # Figures only one run has are listed, never dropped without a word.
    only_base = sorted(n for n in fb if n not in fn and n != "breaches")
    only_new = sorted(n for n in fn if n not in fb and n != "breaches")
    return {
        "base": base["run"].id,
        "new": new["run"].id,
        "figures": list(rows.values()),
        "only_in_base": [{"figure": n, "value": fb[n].value} for n in only_base],
        "only_in_new": [{"figure": n, "value": fn[n].value} for n in only_new],
        "repeatable": repeatable,
        "criterion": criterion,
    }
