"""Percentiles from histograms and ST03N's transaction and time profiles.

Percentiles are checked against numpy.quantile of the very samples the histogram was
built from: interpolation inside a bucket cannot be nearer than the bucket's width, so
that is the tolerance, and the true quantile must lie in the bucket the report names."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from alerts.thresholds import load_thresholds
from api.runs import fromprom
from api.runs.percentiles import QUANTILES, quantile
from api.runs.record import col
from api.runs.recorder import HISTOGRAM_BOUNDS, record_fast_run
from api.runs.report import build_report, compare, figures
from api.runs.spec import RunSpec
from tests.api.rows import run_row

BOUNDS = [float(b) if b != "+Inf" else math.inf for b in HISTOGRAM_BOUNDS]


def _histogram(samples: np.ndarray) -> np.ndarray:
    """Steps per bucket (le: upper bound inclusive, as Prometheus counts)."""
    idx = np.searchsorted(np.array(BOUNDS), samples, side="left")
    return np.bincount(idx, minlength=len(BOUNDS)).astype(float)


@pytest.mark.parametrize(
    ("shape", "scale"), [(4.0, 0.3), (1.5, 1.0), (9.0, 0.2)], ids=["gamma", "skewed", "narrow"]
)
def test_percentiles_lie_within_the_bucket_of_the_true_quantile(shape, scale) -> None:
    samples = np.random.default_rng(7).gamma(shape, scale, 200_000)
    counts = _histogram(samples)
    for name, q in QUANTILES.items():
        got = quantile(q, BOUNDS, counts)
        true = float(np.quantile(samples, q))
        assert got.lower <= true <= got.upper, (name, true, got)
        assert abs(got.value - true) <= got.upper - got.lower, (name, true, got)


def test_interpolation_is_prometheus_s() -> None:
    """histogram_quantile: linear inside the bucket, the first from 0, +Inf -> last bound."""
    counts = np.zeros(len(BOUNDS))
    counts[0], counts[1] = 10, 30  # 10 in (0, 0.05], 30 in (0.05, 0.1]
    assert quantile(0.125, BOUNDS, counts).value == pytest.approx(0.025)
    assert quantile(0.625, BOUNDS, counts).value == pytest.approx(0.075)
    counts[-1] = 60  # most steps above 30 s: the value is only a floor, said so
    top = quantile(0.99, BOUNDS, counts)
    assert top.value == pytest.approx(30.0) and math.isinf(top.upper)
    assert quantile(0.5, BOUNDS, np.zeros(len(BOUNDS))) is None
    with pytest.raises(ValueError, match="\\+Inf"):
        quantile(0.5, [1.0, 2.0], np.ones(2))


@pytest.fixture(scope="module")
def run_data():
    return record_fast_run(RunSpec(duration_s=1500, ramp_up_s=300, seed=2))


@pytest.fixture(scope="module")
def report(run_data) -> dict:
    return build_report(
        run_row("p", ramp_up_s=300.0),
        run_data,
        top=50,
        interval_s=300.0,
        thresholds=load_thresholds(),
    )


def test_a_runs_percentiles_come_from_its_histogram_and_say_their_bucket(report) -> None:
    rows = {r["task_type"]: r for r in report["percentiles"]["by_task_type"]}
    st03 = {r["task_type"]: r for r in report["st03"]}
    assert set(rows) == set(st03) == {"dialog", "update"}
    for task, row in rows.items():
        # The histogram counted every step of the steady state, no more.
        assert row["steps"] == st03[task]["steps"]
        values = [row[f"{n}_s"] for n in QUANTILES]
        assert values == sorted(values)
        for name in QUANTILES:
            low, high = row["buckets"][name]
            assert low <= row[f"{name}_s"] <= (high if high is not None else math.inf)
            assert f"{name} lies in {low:g}–{high:g} s" in row["precision"]
    print({t: {n: r[f"{n}_s"] for n in QUANTILES} for t, r in rows.items()})
    assert report["percentiles"]["by_transaction_missing"] == ""


def test_per_transaction_histograms_add_up_to_the_task_type_s(report, run_data) -> None:
    """Counts per bucket: the task type's are the sum of its transactions', exactly."""
    data = run_data
    idx = {c: i for i, c in enumerate(data.columns)}
    for task in ("dialog", "update"):
        for le in HISTOGRAM_BOUNDS:
            whole = data.values[:, idx[col("hist", task, le)]]
            parts = sum(
                data.values[:, idx[col("txhist", task, tx, le)]] for tx in data.meta.transactions
            )
            assert np.array_equal(whole, parts), (task, le)
    by_tx = report["percentiles"]["by_transaction"]
    steps = {r["task_type"]: r["steps"] for r in report["percentiles"]["by_task_type"]}
    for task, n in steps.items():
        assert sum(r["steps"] for r in by_tx if r["task_type"] == task) == n
    # The profile's steps per transaction are the histogram's.
    profile = {
        (r["task_type"], r["transaction"]): r["steps"] for r in report["transaction_profile"]
    }
    assert {(r["task_type"], r["transaction"]): r["steps"] for r in by_tx} == profile


def test_a_transaction_s_percentile_is_the_one_its_bucket_counts_give(report, run_data) -> None:
    """Recomputed here from the bucket counts by hand (cumulative counts, the bucket that
    holds the rank, linear inside it), not through percentiles.quantile."""
    data = run_data
    idx = {c: i for i, c in enumerate(data.columns)}
    steady = data.times - 300.0 > 1e-9  # intervals after the 300 s ramp-up
    row = next(
        r
        for r in report["percentiles"]["by_transaction"]
        if (r["task_type"], r["transaction"]) == ("dialog", "VA05")
    )
    counts = [
        float(data.values[steady, idx[col("txhist", "dialog", "VA05", le)]].sum())
        for le in HISTOGRAM_BOUNDS
    ]
    for name, q in QUANTILES.items():
        rank, below, lower = q * sum(counts), 0.0, 0.0
        for bound, n in zip(BOUNDS, counts, strict=True):
            if below + n >= rank:
                expected = lower + (bound - lower) * (rank - below) / n
                break
            below, lower = below + n, bound
        assert row[f"{name}_s"] == pytest.approx(expected, abs=1e-4), name
        assert row["buckets"][name] == [lower, bound]
    figures_ = figures(report)
    assert figures_["dialog.VA05_p95_s"][0] == row["p95_s"]
    # VA05 (a list report) is the slowest dialog transaction; its p95 is above the average.
    dialog = next(r for r in report["percentiles"]["by_task_type"] if r["task_type"] == "dialog")
    assert row["p50_s"] > dialog["p50_s"]


def test_transaction_profile_is_sorted_by_total_time_with_shares_and_parts(report) -> None:
    rows = report["transaction_profile"]
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    totals = [r["total_response_s"] for r in rows]
    assert totals == sorted(totals, reverse=True)
    assert sum(r["share_pct"] for r in rows) == pytest.approx(100, abs=0.1)
    for r in rows:
        assert r["response_ms"] == pytest.approx(1000 * r["total_response_s"] / r["steps"], 1e-3)
        assert r["db_request_ms"] is not None and r["gui_ms"] is not None
    # Per task type the transactions add up to ST03's workload overview.
    st03 = {r["task_type"]: r for r in report["st03"]}
    for task in st03:
        mine = [r for r in rows if r["task_type"] == task]
        assert sum(r["steps"] for r in mine) == pytest.approx(st03[task]["steps"], abs=len(mine))
        mean = sum(r["db_request_ms"] * r["steps"] for r in mine) / sum(r["steps"] for r in mine)
        assert mean == pytest.approx(st03[task]["db_request_ms"], rel=1e-3)


def test_top_n_keeps_the_largest(report) -> None:
    data = record_fast_run(RunSpec(duration_s=600, seed=2))
    two = build_report(run_row("t"), data, top=2, thresholds=load_thresholds())[
        "transaction_profile"
    ]
    assert [r["rank"] for r in two] == [1, 2]


def test_time_profile_splits_the_steady_state_into_the_chosen_intervals(report) -> None:
    profile = report["time_profile"]
    assert profile["interval_s"] == 300.0
    dialog = [r for r in profile["rows"] if r["task_type"] == "dialog"]
    assert [r["start_s"] for r in dialog] == [300.0, 600.0, 900.0, 1200.0]
    assert dialog[-1]["end_s"] == 1500.0
    st03 = next(r for r in report["st03"] if r["task_type"] == "dialog")
    assert sum(r["steps"] for r in dialog) == st03["steps"]
    mean = sum(r["response_ms"] * r["steps"] for r in dialog) / st03["steps"]
    assert mean == pytest.approx(st03["response_ms"], rel=1e-4)


def test_a_comparison_has_the_percentiles_with_a_tolerance_per_figure(report) -> None:
    other = {**report, "run": run_row("q")}
    other["percentiles"] = {
        **report["percentiles"],
        "by_task_type": [
            {**r, "p95_s": r["p95_s"] * 1.08} for r in report["percentiles"]["by_task_type"]
        ],
    }
    default = {f["figure"]: f for f in compare(report, other)["figures"]}
    assert default["dialog_p95_s"]["verdict"] == "worse"
    assert default["dialog_p95_s"]["delta_pct"] == pytest.approx(8.0, abs=0.01)
    assert default["dialog_p50_s"]["verdict"] == "same"
    loose = {f["figure"]: f for f in compare(report, other, {"dialog_p95_s": 10})["figures"]}
    assert loose["dialog_p95_s"]["verdict"] == "same"
    assert loose["dialog_p95_s"]["tolerance_pct"] == 10


def test_a_prometheus_window_reads_the_histogram_and_histogram_quantile(monkeypatch) -> None:
    """Cumulative bucket increases become steps per bucket; the window's own
    histogram_quantile is asked for over increase(...[window])."""
    start = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)
    cumulative = {"0.5": 10.0, "1.0": 30.0, "+Inf": 40.0}  # le as prometheus_client prints
    asked: list[str] = []

    def answer(url, query, start, end, step) -> list[dict]:
        stamps = start.timestamp() + step * np.arange(1, 5)
        base = {"task_type": "dialog", "transaction": "VA01", "sap_instance": "a", "host": "h"}
        if "_bucket" in query:
            return [
                {"metric": {**base, "le": le}, "values": [[t, str(n)] for t in stamps]}
                for le, n in cumulative.items()
            ]
        return [{"metric": base, "values": [[t, "1"] for t in stamps]}]

    def instant(url, query, at) -> list[dict]:
        asked.append(query)
        return [{"metric": {"task_type": "dialog"}, "value": [at.timestamp(), "0.7"]}]

    monkeypatch.setattr(fromprom, "_range", answer)
    monkeypatch.setattr(fromprom, "_instant", instant)
    data = fromprom.read_window(
        "http://prometheus", "BMK", start, start + timedelta(minutes=4), 60, None, None
    )
    idx = {c: i for i, c in enumerate(data.columns)}
    assert [data.values[0, idx[col("hist", "dialog", le)]] for le in ("0.5", "1", "+Inf")] == [
        10.0,
        20.0,
        10.0,
    ]
    assert "histogram_quantile(0.95, sum by (task_type, le) (increase(" in asked[2]
    assert "[240s]" in asked[2]
    assert [
        data.values[0, idx[col("txhist", "dialog", "VA01", le)]] for le in ("0.5", "1", "+Inf")
    ] == [
        10.0,
        20.0,
        10.0,
    ]
    rep = build_report(run_row("w"), data, thresholds=load_thresholds())
    row = rep["percentiles"]["by_task_type"][0]
    assert row["steps"] == 160
    assert row["p50_s"] == pytest.approx(0.5 + 0.5 * (80 - 40) / 80)
    assert row["prometheus_steady_state_s"]["p95"] == 0.7
    assert rep["percentiles"]["by_transaction"][0]["transaction"] == "VA01"


def test_prometheus_s_own_percentiles_cover_the_steady_state_only(monkeypatch) -> None:
    """Asked over the steady state and evaluated at its end, as the report's own are."""
    start = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)
    asked: list[tuple[str, float]] = []

    def instant(url, query, at) -> list[dict]:
        asked.append((query, at.timestamp()))
        return []

    monkeypatch.setattr(fromprom, "_instant", instant)
    end = start + timedelta(minutes=70)
    fromprom.window_quantiles("http://p", "BMK", start + timedelta(minutes=10), end)
    assert all("[3600s]" in q and at == end.timestamp() for q, at in asked)
