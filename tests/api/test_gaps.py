"""A monitored run's holes (exporter down, no data) reach its data, report and message."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from alerts.thresholds import load_thresholds
from api.runs import fromprom
from api.runs.checks import evaluate
from api.runs.gaps import describe, gaps, spans
from api.runs.report import build_report
from api.schemas import Report
from tests.api.rows import run_row
from tests.integration.helpers import unexpected_run_message as judge

START = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)
STEP = 60.0
STEPS = 10


def test_spans_are_runs_of_true() -> None:
    mask = np.array([0, 1, 1, 0, 0, 1, 0, 1], dtype=bool)
    assert spans(mask) == [(1, 2), (5, 5), (7, 7)]
    assert spans(np.zeros(3, dtype=bool)) == []


def test_missing_data_the_outage_explains_is_listed_once() -> None:
    grid = START.timestamp() + STEP * np.arange(1, 6)
    down = np.array([0, 1, 1, 0, 0], dtype=bool)
    missing = np.array([0, 1, 1, 0, 1], dtype=bool)
    found = gaps(grid, STEP, down, missing)
    assert [(g["kind"], g["start"], g["duration_s"]) for g in found] == [
        ("exporter_down", (START + timedelta(minutes=1)).isoformat(), pytest.approx(120.0)),
        ("no_data", (START + timedelta(minutes=4)).isoformat(), pytest.approx(60.0)),
    ]
    assert describe(found).startswith("gaps: exporter down 120 s from 2026-11-23T10:01:00")
    assert describe([]) == ""


def _prometheus(down_steps: set[int], empty_steps: set[int], steps: int = STEPS):
    """Prometheus's answers: `up` 0 at down_steps, no workload sample at empty_steps."""

    def answer(url, query, start, end, step) -> list[dict]:
        stamps = start.timestamp() + step * np.arange(1, steps + 1)
        if query.startswith("min_over_time(up"):
            values = [[t, "0" if k in down_steps else "1"] for k, t in enumerate(stamps)]
            return [{"metric": {"instance": "exporter:9300"}, "values": values}]
        labels = {
            "task_type": "dialog",
            "transaction": "VA01",
            "sap_instance": "a",
            "host": "h",
            "le": "+Inf",  # the response-time histogram's buckets carry it
        }
        keep = [[t, "1"] for k, t in enumerate(stamps) if k not in empty_steps | down_steps]
        return [{"metric": labels, "values": keep}]

    return answer


def test_a_window_read_from_prometheus_reports_its_gaps(monkeypatch) -> None:
    monkeypatch.setattr(fromprom, "_range", _prometheus(down_steps={2, 3}, empty_steps={7}))
    monkeypatch.setattr(fromprom, "_instant", lambda url, query, at: [])
    data = fromprom.read_window(
        "http://prometheus", "BMK", START, START + timedelta(minutes=STEPS), STEP, None, None
    )
    found = data.meta.gaps
    assert [(g["kind"], g["start"], g["end"]) for g in found] == [
        (
            "exporter_down",
            (START + timedelta(minutes=2)).isoformat(),
            (START + timedelta(minutes=4)).isoformat(),
        ),
        (
            "no_data",
            (START + timedelta(minutes=7)).isoformat(),
            (START + timedelta(minutes=8)).isoformat(),
        ),
    ]
    run = run_row("r1", kind="external", scenario="BMK", start=START, duration_s=60.0 * STEPS)
    report = Report.model_validate(build_report(run, data, thresholds=load_thresholds()))
    assert [g.kind for g in report.gaps] == ["exporter_down", "no_data"]
    assert [(g.start_s, g.end_s) for g in report.gaps] == [(120.0, 240.0), (420.0, 480.0)]


def _window(monkeypatch, down: set[int], minutes: int = 70, ramp_up_s: float = 300.0) -> dict:
    monkeypatch.setattr(fromprom, "_range", _prometheus(down, set(), steps=minutes))
    monkeypatch.setattr(fromprom, "_instant", lambda url, query, at: [])
    end = START + timedelta(minutes=minutes)
    data = fromprom.read_window("http://prometheus", "BMK", START, end, STEP, None, None)
    run = run_row("b", ramp_up_s=ramp_up_s, start=START, duration_s=60.0 * minutes)
    return build_report(run, data, thresholds=load_thresholds())


@pytest.mark.parametrize(
    ("down", "clear_s", "status"),
    [
        (set(), 3900.0, "passed"),  # 65 minutes of steady state, whole
        ({30}, 2340.0, "failed"),  # minute 31 missing: 25 and 39 minutes either side
        ({66}, 3660.0, "passed"),  # a hole near the end leaves 61 minutes
    ],
)
def test_bait_judges_the_longest_stretch_without_a_gap(monkeypatch, down, clear_s, status):
    report = _window(monkeypatch, down)
    assert report["steady_state"]["duration_s"] == pytest.approx(3900.0)
    assert report["benchmark"]["bait"]["longest_gap_free_s"] == pytest.approx(clear_s)
    bait = next(
        c for c in evaluate(report, load_thresholds())["criteria"] if c["name"].startswith("BAIT")
    )
    assert bait["status"] == status and bait["value"] == pytest.approx(clear_s)
    if down:
        assert "gap-free" in bait["detail"]


def test_a_complete_window_has_no_gaps(monkeypatch) -> None:
    monkeypatch.setattr(fromprom, "_range", _prometheus(down_steps=set(), empty_steps=set()))
    monkeypatch.setattr(fromprom, "_instant", lambda url, query, at: [])
    data = fromprom.read_window(
        "http://prometheus", "BMK", START, START + timedelta(minutes=STEPS), STEP, None, None
    )
    assert data.meta.gaps == []


def _gap(kind: str, start_s: float, end_s: float) -> dict:
    at = (START + timedelta(seconds=start_s / 10)).isoformat()
    return {
        "kind": kind,
        "start": at,
        "duration_s": (end_s - start_s) / 10,
        "start_s": start_s,
        "end_s": end_s,
    }


def test_a_realtime_run_may_lose_a_scrape_and_nothing_else() -> None:
    """tests/integration/test_realtime_run.py's judge of a run's message: it accepts no
    message or one-step holes the report names, and fails on anything else."""
    one = [_gap("exporter_down", 120, 180)]
    two = [_gap("no_data", 120, 180), _gap("exporter_down", 600, 660)]
    assert judge("", [], 60) is None
    assert judge(describe(one), one, 60) is None
    assert judge(describe(two), two, 60) is None
    longer = [_gap("exporter_down", 120, 240)]
    assert "one 60 s step" in judge(describe(longer), longer, 60)
    three = [*two, _gap("no_data", 900, 960)]
    assert "more than 2" in judge(describe(three), three, 60)
    failed = "the exporter did not hold the plan from 10:00:00 UTC to the end (faults)"
    assert "not (only) the report's gaps" in judge(failed, [], 60)
    assert "not (only)" in judge(f"{describe(one)}; {failed}", one, 60)
    assert "not (only)" in judge(describe(one), [], 60)  # a gap the report does not show
