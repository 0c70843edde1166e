"""The report's figures over time, its distribution, APDEX, spread per transaction, faults and
window (issue 23 item 4), each checked against a value computed here another way: APDEX by
counting samples, throughput by summing the steps, users from the run's plan, the local
window from the zone database."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from alerts.thresholds import load_thresholds
from api.runs import overtime
from api.runs.record import RunMeta, RunRecord, col
from api.runs.report import apdex_default_s, build_report
from api.runs.spec import RunSpec
from api.schemas import Report
from api.services import imports, reports, runs
from api.store import Store
from tests.api.rows import run_row

BOUNDS = [0.05, 0.1, 0.2, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0, np.inf]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _les() -> list[str]:
    return [f"{b:g}" if np.isfinite(b) else "+Inf" for b in BOUNDS]


def _record(samples: list[np.ndarray], dt: float = 60.0) -> RunRecord:
    """A run of one dialog histogram per interval from the response times given."""
    rows = []
    for s in samples:
        counts = np.bincount(np.searchsorted(BOUNDS, s, side="left"), minlength=len(BOUNDS))
        rows.append([float(len(s)), float(s.sum()), *counts.astype(float)])
    columns = [col("st03", "dialog", "steps"), col("st03", "dialog", "response")]
    columns += [col("hist", "dialog", le) for le in _les()]
    times = dt * np.arange(1, len(samples) + 1)
    return RunRecord(times, columns, np.array(rows), None, None, RunMeta(source="simulated"))


@pytest.fixture(scope="module")
def samples() -> list[np.ndarray]:
    rng = np.random.default_rng(23)
    return [rng.lognormal(np.log(0.4 + 0.1 * k), 0.9, 2000) for k in range(6)]


def test_apdex_counts_satisfied_and_tolerating_steps(samples) -> None:
    t = apdex_default_s(load_thresholds())
    assert t == 0.5  # a quarter of the 2 s SD bound: over the bound is frustrated
    data = _record(samples)
    got = overtime.apdex(data, np.ones(len(samples), dtype=bool), t)["rows"][0]
    every = np.concatenate(samples)
    satisfied = int((every <= t).sum())
    tolerating = int(((every > t) & (every <= 4 * t)).sum())
    assert got["exact"] and got["steps"] == every.size
    assert (got["satisfied"], got["tolerating"]) == (satisfied, tolerating)
    assert got["apdex"] == pytest.approx((satisfied + tolerating / 2) / every.size, abs=5e-4)


def test_apdex_with_t_inside_a_bucket_interpolates_and_says_so(samples) -> None:
    data = _record(samples)
    got = overtime.apdex(data, np.ones(len(samples), dtype=bool), 0.3)["rows"][0]
    every = np.concatenate(samples)
    assert not got["exact"]
    # Linear inside 0.2-0.5 s: within that bucket's steps of the true count.
    in_bucket = int(((every > 0.2) & (every <= 0.5)).sum())
    assert abs(got["satisfied"] - (every <= 0.3).sum()) <= in_bucket


def test_throughput_and_percentiles_per_interval(samples) -> None:
    data = _record(samples, dt=60.0)
    ot = overtime.over_time(data)
    assert ot["throughput_steps_per_s"] == pytest.approx([len(s) / 60.0 for s in samples])
    for k, s in enumerate(samples):
        # A percentile from a histogram lies in the bucket of the true one.
        for name, q in overtime.OVER_TIME_QUANTILES.items():
            true = float(np.quantile(s, q))
            b = int(np.searchsorted(BOUNDS, true, side="left"))
            lower, upper = (BOUNDS[b - 1] if b else 0.0), BOUNDS[b]
            assert lower - 1e-9 <= ot[f"dialog_{name}_s"][k] <= upper + 1e-9, (name, k)
    assert "active_users" not in ot  # not recorded: absent, never 0


def test_distribution_and_spread_from_the_histogram(samples) -> None:
    data = _record(samples)
    mask = np.ones(len(samples), dtype=bool)
    rows = overtime.distribution(data, mask)
    every = np.concatenate(samples)
    assert sum(r["steps"] for r in rows) == every.size
    first = rows[0]
    assert (first["lower_s"], first["upper_s"]) == (0.0, 0.05)
    assert first["steps"] == int((every <= 0.05).sum())
    assert rows[-1]["upper_s"] is None


@pytest.fixture(scope="module")
def fault_run(tmp_path_factory) -> tuple[Store, dict, dict, RunSpec]:
    store = Store(tmp_path_factory.mktemp("db") / "db.sqlite")
    spec = RunSpec(
        duration_s=600,
        ramp_up_s=120,
        label="fault",
        faults=[{"name": "db-bottleneck", "start_s": 300, "end_s": 450}],
    )
    run = runs.record_fast(store, spec)
    return store, run, reports.report(store, run.id, load_thresholds()), spec


def test_a_fault_run_lists_its_fault_with_its_window(fault_run) -> None:
    _store, run, rep, _ = fault_run
    start = run.start
    (fault,) = rep["faults"]
    assert (fault["name"], fault["start_s"], fault["end_s"]) == ("db-bottleneck", 300.0, 450.0)
    assert datetime.fromisoformat(fault["end"]) - start == timedelta(seconds=450)
    Report.model_validate(rep)  # every new key is in the answer's schema


def test_throughput_sums_to_the_steps_and_users_follow_the_plan(fault_run) -> None:
    store, run, rep, spec = fault_run
    data = store.runs.data(run.id)
    ot = rep["over_time"]
    dt = np.diff(np.concatenate([[0.0], data.times]))
    steps = sum(r["steps"] for r in rep["st03"])  # the steady state's (after 120 s)
    steady = data.times > 120
    assert float((np.array(ot["throughput_steps_per_s"]) * dt)[steady].sum()) == pytest.approx(
        steps, abs=len(rep["st03"])
    )
    full = max(ot["active_users"])
    want = [spec.users_at(t - 1.0, int(full)) for t in data.times]  # at each interval's end
    assert ot["active_users"] == want


def test_a_perfmon_window_is_shown_in_its_zone_too(tmp_path) -> None:
    store = Store(tmp_path / "db.sqlite")
    raw = (FIXTURES / "perfmon" / "typeperf-utf16.csv").read_bytes()
    run = imports.store_perfmon(store, raw, "zone")
    w = reports.report(store, run.id, load_thresholds())["window"]
    assert w["zone"] == "Europe/Berlin"  # the header's W. Europe Standard Time
    utc = datetime.fromisoformat(w["start_utc"])
    assert datetime.fromisoformat(w["start_local"]) == utc
    assert w["start_local"] == utc.astimezone(ZoneInfo("Europe/Berlin")).isoformat()


def test_an_st03_window_is_the_exports_local_period_without_utc(tmp_path) -> None:
    store = Store(tmp_path / "db.sqlite")
    text = "Period: 25.11.2026 10:00:00 - 25.11.2026 11:00:00\r\n\r\n"
    text += "Task Type Name\t# Steps\tØ Time (ms)\r\nDIALOG\t3600\t500.0\r\n"
    run = imports.store_st03(store, text.encode(), "st03")
    w = reports.report(store, run.id, load_thresholds())["window"]
    assert w["start_utc"] is None and w["start_local"].startswith("2026-11-25T10:00")
    assert "not named" in w["zone"]


def test_a_record_of_one_sample_reports_its_window_and_apdex() -> None:
    # Every report is of a run row now (typed, with its window): none without one.
    rep = build_report(run_row(), _record([np.array([0.1])]), thresholds=load_thresholds())
    assert rep["window"]["start_utc"] == "2026-11-23T07:00:00+00:00"
    assert rep["window"]["end_utc"] == "2026-11-23T08:00:00+00:00"
    assert rep["apdex"]["rows"][0]["steps"] == 1


@pytest.mark.parametrize("zone", ["Europe", "a" * 300, "../etc/x", "", "x\x00y", "Mars/Olympus"])
def test_a_zone_name_no_database_lists_gives_no_local_time_and_no_error(zone) -> None:
    w = overtime.window(run_row(), RunMeta(source="perfmon", time_zone=zone))
    assert w["zone"] is None and "start_local" not in w
    assert w["start_utc"] == "2026-11-23T07:00:00+00:00"
