"""An external run's series, read back from Prometheus over its window: the same columns a
recorded run has, so the same report reads a real system monitored by the stack."""

from __future__ import annotations

from datetime import datetime

import httpx
import numpy as np
import yaml

from api.runs.gaps import gaps
from api.runs.percentiles import QUANTILES, parse_bound
from api.runs.record import Column, ColumnKind, RunMeta, RunRecord, col
from api.runs.recorder import INSTANCE_SERIES
from exporters.durations import parse_duration
from exporters.vocabulary import AVAILABLE_MB, CPU_PCT, DISK_QUEUE, PAGES_PER_S
from landscape_model.terms import COMPONENTS

HISTOGRAM = "sap_workload_response_time_seconds"
TX_HISTOGRAM = "sap_workload_transaction_response_time_seconds"


class PrometheusError(RuntimeError):
    pass


def label_value(value: str) -> str:
    """`value` as a PromQL string literal: backslash, quote and line breaks escaped, so a
    label value can only ever be matched, never close the matcher."""
    escaped = (
        value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    )
    return f'"{escaped}"'


def _range(url: str, query: str, start: datetime, end: datetime, step: float) -> list[dict]:
    try:
        r = httpx.get(
            f"{url}/api/v1/query_range",
            timeout=60,
            params={
                "query": query,
                "start": start.timestamp(),
                "end": end.timestamp(),
                "step": f"{step:g}s",
            },
        )
        r.raise_for_status()
    except httpx.HTTPError as exc:
        raise PrometheusError(f"cannot query Prometheus at {url}: {exc}") from exc
    return r.json()["data"]["result"]


def per_step(by: str, counter: str, step: float) -> str:
    """The increase of `counter` (a selector) in each step, summed by `by`: the counter's
    last sample in the step less its last sample in the step before. So a step is measured
    from the sample before it (the first step's from the sample before the window), nothing
    is extrapolated and the steps add up to the window's increase exactly. increase() over
    the step alone counts from the step's first sample and extrapolates to its edges, so a
    step in which the series begins (an exporter started inside it) read about a third low
    and was reported as if the system had been quiet. A series with no sample in the step
    before has no value for the step (no sample of a workload counter at all: a "no data"
    gap, not a guess). Range selectors, not instant ones: a failed scrape's staleness
    marker must not hide the samples around it. Where the counter was reset (a restart) in
    either step, increase()'s own reset handling is used instead."""
    w = f"{step:g}s"
    reset = f"resets({counter}[{2 * step:g}s]) > 0"
    delta = f"last_over_time({counter}[{w}]) - last_over_time({counter}[{w}] offset {w})"
    return f"sum by ({by}) ((({delta}) unless {reset}) or (increase({counter}[{w}]) and {reset}))"


def _per_bucket(series: dict[Column, np.ndarray], cumulative: dict[Column, np.ndarray]) -> None:
    """Cumulative bucket increases (`cumulative`, named as hist/txhist columns) -> steps in
    that bucket alone, into `series`, as the recorder stores them."""
    groups: dict[tuple[str, tuple[str, ...]], list[tuple[float, Column]]] = {}
    for c in cumulative:
        groups.setdefault((c.kind, c.owner), []).append((parse_bound(c.last), c))
    for (kind, owner), cols in groups.items():
        cols.sort(key=lambda bc: (bc[0], str(bc[1])))
        below = 0.0
        for bound, name in cols:
            cum = np.nan_to_num(cumulative[name])
            le = "+Inf" if np.isinf(bound) else f"{bound:g}"
            series[col(kind, *owner, le)] = np.clip(cum - below, 0.0, None)
            below = cum


def window_quantiles(
    url: str, sid: str, start: datetime, end: datetime
) -> dict[str, dict[str, float]]:
    """Per task type, Prometheus's own histogram_quantile over [start, end] evaluated at
    `end`: given the steady state, the figure a Grafana panel over it shows, beside the
    report's own from the same buckets."""
    window = max(1, round((end - start).total_seconds()))
    out: dict[str, dict[str, float]] = {}
    for name, q in QUANTILES.items():
        query = (
            f"histogram_quantile({q}, sum by (task_type, le) "
            f"(increase({HISTOGRAM}_bucket{{sid={label_value(sid)}}}[{window}s])))"
        )
        for item in _instant(url, query, end):
            value = float(item["value"][1])
            if value == value:  # NaN: no steps of that task type in the window
                out.setdefault(item["metric"].get("task_type", ""), {})[name] = value
    return out


def _instant(url: str, query: str, at: datetime) -> list[dict]:
    try:
        r = httpx.get(
            f"{url}/api/v1/query", timeout=60, params={"query": query, "time": at.timestamp()}
        )
        r.raise_for_status()
    except httpx.HTTPError as exc:
        raise PrometheusError(f"cannot query Prometheus at {url}: {exc}") from exc
    return r.json()["data"]["result"]


def read_window(
    url: str,
    sid: str,
    start: datetime,
    end: datetime,
    step: float,
    users: int | None,
    think_time_s: float | None,
    speed: float = 1.0,
    steady_from: datetime | None = None,
) -> RunRecord:
    """Per step: increases of the ST03 counters, per-instance dialog sums, OS counters.

    `speed`: simulated seconds per wall second of the system watched (the live model may run
    faster than real time); times and per-second rates are given in the system's own time.
    `steady_from`: where the steady state starts (after the ramp-up; `start` without one),
    the window Prometheus's own percentiles are asked over.
    """
    n = int((end - start).total_seconds() // step)
    if n < 1:
        raise PrometheusError("the window is shorter than one resolution step")
    grid = start.timestamp() + step * np.arange(1, n + 1)
    series: dict[Column, np.ndarray] = {}
    cumulative: dict[Column, np.ndarray] = {}

    def put(kind: str, labels: tuple[str, ...], last: str, result: list[dict], into=series) -> None:
        """One column per series of `result`: kind, its labels' values, then `last` (a
        label's name in braces: the bucket bound)."""
        for item in result:
            m = item["metric"]
            tail = m[last[1:-1]] if last.startswith("{") else last
            name = col(kind, *(m.get(label, "") for label in labels), tail)
            arr = into.setdefault(name, np.full(n, np.nan))
            for ts, value in item["values"]:
                k = round((float(ts) - start.timestamp()) / step) - 1
                if 0 <= k < n:
                    arr[k] = float(value)

    sel = f"sid={label_value(sid)}"
    win = f"{step:g}s"
    put(
        "st03",
        ("task_type",),
        "steps",
        _range(
            url,
            per_step("task_type", f"sap_workload_steps_total{{{sel}}}", step),
            start,
            end,
            step,
        ),
    )
    for comp in COMPONENTS:
        put(
            "st03",
            ("task_type",),
            comp,
            _range(
                url,
                per_step("task_type", f"sap_workload_{comp}_seconds_total{{{sel}}}", step),
                start,
                end,
                step,
            ),
        )
    put(
        "tx",
        ("task_type", "transaction"),
        "steps",
        _range(
            url,
            per_step(
                "task_type, transaction", f"sap_workload_transaction_steps_total{{{sel}}}", step
            ),
            start,
            end,
            step,
        ),
    )
    for comp in COMPONENTS:
        put(
            "tx",
            ("task_type", "transaction"),
            comp,
            _range(
                url,
                per_step(
                    "task_type, transaction",
                    f"sap_workload_transaction_{comp}_seconds_total{{{sel}}}",
                    step,
                ),
                start,
                end,
                step,
            ),
        )
    # Cumulative bucket increases per step (le as the exporter prints it); made
    # per-bucket below, as the recorder stores them.
    put(
        "hist",
        ("task_type",),
        "{le}",
        _range(
            url,
            per_step("task_type, le", f"{HISTOGRAM}_bucket{{{sel}}}", step),
            start,
            end,
            step,
        ),
        into=cumulative,
    )
    put(
        "txhist",
        ("task_type", "transaction"),
        "{le}",
        _range(
            url,
            per_step("task_type, transaction, le", f"{TX_HISTOGRAM}_bucket{{{sel}}}", step),
            start,
            end,
            step,
        ),
        into=cumulative,
    )
    dialog = f'{sel},task_type="dialog"'
    put(
        "inst",
        ("sap_instance",),
        "steps",
        _range(
            url,
            per_step("sap_instance", f"sap_workload_steps_total{{{dialog}}}", step),
            start,
            end,
            step,
        ),
    )
    for ind in INSTANCE_SERIES:
        put(
            "inst",
            ("sap_instance",),
            ind,
            _range(
                url,
                per_step("sap_instance", f"sap_workload_{ind}_seconds_total{{{dialog}}}", step),
                start,
                end,
                step,
            ),
        )
    put(
        "os",
        ("host",),
        CPU_PCT,
        _range(
            url,
            f'100 * (1 - sum by (host) (rate(windows_cpu_time_total{{{sel},mode="idle"}}[{win}])) / '
            f'count by (host) (windows_cpu_time_total{{{sel},mode="idle"}}) / {speed:g})',
            start,
            end,
            step,
        ),
    )
    put(
        "os",
        ("host",),
        AVAILABLE_MB,
        _range(url, f"windows_memory_available_bytes{{{sel}}} / 1048576", start, end, step),
    )
    put(
        "os",
        ("host",),
        PAGES_PER_S,
        _range(
            url,
            f"rate(windows_memory_swap_page_operations_total{{{sel}}}[{win}]) / {speed:g}",
            start,
            end,
            step,
        ),
    )
    put(
        "os",
        ("host",),
        DISK_QUEUE,
        _range(
            url,
            f"sum by (host) (rate(windows_physical_disk_read_seconds_total{{{sel}}}[{win}]) + "
            f"rate(windows_physical_disk_write_seconds_total{{{sel}}}[{win}])) / {speed:g}",
            start,
            end,
            step,
        ),
    )
    _per_bucket(series, cumulative)
    if not any(c.kind == ColumnKind.ST03 for c in series):
        raise PrometheusError(f"no sap_workload_* data for sid {sid!r} in the window")
    # Before the NaNs become zeros: steps without any workload sample, and steps in which a
    # scrape of a target of this sid failed (`up` carries the target's sid label).
    missing = np.all(np.isnan([v for c, v in series.items() if c.kind == ColumnKind.ST03]), axis=0)
    down = np.zeros(n, dtype=bool)
    for item in _range(url, f"min_over_time(up{{{sel}}}[{win}])", start, end, step):
        for ts, value in item["values"]:
            k = round((float(ts) - start.timestamp()) / step) - 1
            if 0 <= k < n and float(value) < 0.5:  # up is 0 or 1
                down[k] = True
    columns = sorted(series, key=str)  # the stored names' order, as before keys were typed
    values = np.stack(
        [np.nan_to_num(series[c]) if c.kind != ColumnKind.OS else series[c] for c in columns],
        axis=1,
    )
    meta = RunMeta(
        source="prometheus",
        sid=sid,
        interval_s=step * speed,
        time_zone="UTC (Prometheus stores UTC)",
        gaps=gaps(grid, step, down, missing, speed),
        transactions=sorted({c.part("transaction") for c in columns if c.kind == ColumnKind.TX}),
        hosts=sorted({c.part("host") for c in columns if c.kind == ColumnKind.OS}),
        details={
            "users": users or 0,
            "think_time_s": think_time_s or 0.0,
            "dialog_steps": {},
            "line_items": {},
            "histogram_quantile": window_quantiles(url, sid, steady_from or start, end),
        },
    )
    return RunRecord(
        times=(grid - start.timestamp()) * speed,
        columns=columns,
        values=values,
        steady_start=None,  # statement and buffer-pool counters are not read back
        steady_end=None,
        meta=meta,
    )


def sid_scrape_interval_s(url: str, sid: str) -> float:
    """How often Prometheus scrapes the targets of `sid` (their `sid` label), the longest
    if they differ; the global interval when no target carries it (yet)."""
    try:
        r = httpx.get(f"{url}/api/v1/targets", params={"state": "active"}, timeout=10)
        r.raise_for_status()
        intervals = [
            parse_duration(t["scrapeInterval"])
            for t in r.json()["data"]["activeTargets"]
            if t.get("labels", {}).get("sid") == sid and "scrapeInterval" in t
        ]
    except (httpx.HTTPError, KeyError, ValueError) as exc:
        raise PrometheusError(f"cannot read Prometheus targets at {url}: {exc}") from exc
    return max(intervals) if intervals else scrape_interval_s(url)


def scrape_interval_s(url: str, target_url: str = "") -> float:
    """How often Prometheus scrapes `target_url` (a step of a range query must span a few
    scrapes for increase() to see anything). Before its first scrape round a target is not
    listed yet; then the global interval of Prometheus's loaded configuration answers."""
    try:
        r = httpx.get(f"{url}/api/v1/targets", params={"state": "active"}, timeout=10)
        r.raise_for_status()
        targets = r.json()["data"]["activeTargets"]
        if target_url:
            mine = [t for t in targets if t.get("scrapeUrl", "").startswith(target_url.rstrip("/"))]
            targets = mine or targets
        intervals = [parse_duration(t["scrapeInterval"]) for t in targets if "scrapeInterval" in t]
        if intervals:
            return max(intervals)
        r = httpx.get(f"{url}/api/v1/status/config", timeout=10)
        r.raise_for_status()
        config = yaml.safe_load(r.json()["data"]["yaml"]) or {}
        # Prometheus's own default when the configuration names none.
        return parse_duration(str(config.get("global", {}).get("scrape_interval", "1m")))
    except (httpx.HTTPError, KeyError, ValueError, yaml.YAMLError) as exc:
        raise PrometheusError(f"cannot read Prometheus targets at {url}: {exc}") from exc
