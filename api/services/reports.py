"""Reports of stored runs (JSON-ready or as one HTML page) and comparisons of two runs."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

from api.runs.html import render, render_compare
from api.runs.record import RunRecord
from api.runs.report import build_report, compare
from api.runs.storage import RunRow, StoredRunError
from api.schemas import Report
from api.services.errors import Conflict, Invalid
from api.services.runs import MONITORED, get_run
from api.store import Store
from exporters.thresholds import Thresholds


def load(store: Store, run_id: str) -> tuple[RunRow, RunRecord]:
    """The run and its data; a run still running or one that failed has none yet."""
    run = get_run(store, run_id)
    try:
        data = store.runs.data(run_id)
    except StoredRunError as exc:
        raise Conflict(f"run {run_id}: {exc}") from exc
    if data is None and run.status == "running":
        raise Conflict(f"run {run_id} is still running; it ends at {run.end.isoformat()}")
    if data is None:
        raise Conflict(f"run {run_id} has no data ({run.status}: {run.message})")
    return run, data


def report_of(
    store: Store, run: RunRow, data: RunRecord, thresholds: Thresholds, **options: float
) -> dict:
    """`options`: build_report's `top`, `interval_s` and `apdex_t_s`; `thresholds` from the
    edge."""
    report = build_report(run, data, thresholds=thresholds, **options)
    if run.kind in MONITORED:
        # The monitored system's own alerts over the run's window, as Alertmanager sent them.
        report["alerts_fired"] = store.fired_between(run.start, run.end, data.meta.sid)
    return report


def answer(doc: dict) -> Report:
    """The report as GET /runs/{id}/report and `wlmon report --json` send it: the answer
    model reads the typed run row and writes its times as the API always has."""
    return Report.model_validate(doc)


def report(store: Store, run_id: str, thresholds: Thresholds, **options: float) -> dict:
    return report_of(store, *load(store, run_id), thresholds, **options)


def write_series_csv(run: RunRow, data: RunRecord, out: io.TextIOBase) -> None:
    """Every series of the run as CSV: seconds from the start, the UTC time, then one
    column per series by its stored name, values unrounded (an empty cell: no sample)."""
    start = run.start
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["t_s", "utc", *(str(c) for c in data.columns)])
    for t, row in zip(data.times.tolist(), data.values.tolist(), strict=True):
        writer.writerow(
            [
                repr(t),
                (start + timedelta(seconds=t)).isoformat(),
                *("" if v != v else repr(v) for v in row),
            ]
        )


def series_csv(store: Store, run_id: str) -> str:
    buf = io.StringIO()
    write_series_csv(*load(store, run_id), buf)
    return buf.getvalue()


def page(store: Store, run_id: str, thresholds: Thresholds, **options: float) -> str:
    """The report as one self-contained HTML page."""
    run, data = load(store, run_id)
    return render(report_of(store, run, data, thresholds, **options), data, thresholds)


def parse_tolerances(items: list[str]) -> dict[str, float]:
    """FIGURE=PCT pairs (dialog_p95_s=10), an error naming the one that is wrong."""
    out = {}
    for item in items:
        figure, sep, pct = item.partition("=")
        try:
            value = float(pct)
        except ValueError:
            value = -1.0
        if not sep or not figure.strip() or value < 0:
            raise Invalid(f"tolerance {item!r}: give FIGURE=PERCENT, e.g. dialog_p95_s=10")
        out[figure.strip()] = value
    return out


def _what(rep: dict) -> str:
    """A run in a few words, for an error that says why two runs cannot be compared."""
    run: RunRow = rep["run"]
    return f"{run.id} ({run.kind}, {run.scenario})"


def compare_reports(
    store: Store,
    base: str,
    new: str,
    thresholds: Thresholds,
    tolerances: dict[str, float] | None = None,
    **options: float,
) -> tuple[dict, dict, dict]:
    """Both reports and their comparison; Conflict when the runs share no figure (a PerfMon
    import beside an ST03 export: OS counters against workload, nothing side by side)."""
    if base == new:
        raise Invalid(f"base and new are the same run ({base}): give two runs")
    a, b = report(store, base, thresholds, **options), report(store, new, thresholds, **options)
    doc = compare(a, b, tolerances)
    if not doc["figures"]:
        raise Conflict(
            f"runs {_what(a)} and {_what(b)} share no figure: nothing to compare "
            "(compare runs of the same kind of data: workload with workload, OS counters "
            "with the same hosts)"
        )
    return a, b, doc


def compare_runs(
    store: Store,
    base: str,
    new: str,
    thresholds: Thresholds,
    tolerances: dict[str, float] | None = None,
    **options: float,
) -> dict:
    return compare_reports(store, base, new, thresholds, tolerances, **options)[2]


def compare_page(
    store: Store,
    base: str,
    new: str,
    thresholds: Thresholds,
    tolerances: dict[str, float] | None = None,
    **options: float,
) -> str:
    """The comparison as one self-contained HTML page."""
    a, b, doc = compare_reports(store, base, new, thresholds, tolerances, **options)
    return render_compare(a, b, doc)
