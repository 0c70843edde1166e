"""Lines of the HTML report that name what the run is: the source a run without a clock
came from (an STAD run's page said "an ST03 export"), and the think time the SD verdict
was judged at (the page said "at 10 s think time" whatever the run had, or when unknown)."""

from __future__ import annotations

import pytest

from alerts.thresholds import load_thresholds
from api.runs.html import benchmark_checks, empty_lines
from api.runs.report import build_report
from api.services import imports, reports
from api.store import Store
from tests.api.test_import_st03_fields import OVERVIEW_EN
from tests.api.test_import_stad import _steps, _text


@pytest.fixture
def store(tmp_path) -> Store:
    return Store(tmp_path / "db.sqlite")


def _sd_title(doc: dict) -> str:
    (sd,) = [c for c in benchmark_checks(doc, load_thresholds()) if "dialog response" in c["check"]]
    return sd["check"]


def test_a_run_without_a_clock_names_its_own_source(store) -> None:
    stad = imports.store_stad(store, _text(_steps(5, 300)).encode(), "stad")
    st03 = imports.store_st03(store, OVERVIEW_EN.encode(), "st03")
    for run, words, other in ((stad, "an STAD export", "ST03"), (st03, "an ST03 export", "STAD")):
        doc = reports.report(store, run.id, load_thresholds())
        assert "gaps" not in doc  # neither kind of export has a clock to find gaps by
        line = empty_lines(doc, store.runs.data(run.id))["gaps"]
        assert line.startswith("Not looked for") and words in line, line
        assert other not in line, line
        assert words in reports.page(store, run.id, load_thresholds())


def test_the_sd_title_states_the_think_time_it_was_judged_at(store) -> None:
    run = imports.store_st03(store, OVERVIEW_EN.encode(), "st03")
    levels = load_thresholds()
    unknown = reports.report(store, run.id, levels)
    assert unknown["benchmark"]["sd"]["think_time_s"] is None
    title = _sd_title(unknown)
    assert "think time not known" in title and "10 s" not in title, title
    page = reports.page(store, run.id, levels)
    # (The page still says elsewhere what the benchmark defines: 2 s at 10 s think time.)
    assert "response &lt; 2 s at 10 s think time" not in page
    assert "response &lt; 2 s, think time not known (seed 000)" in page
    # The same run had it recorded a think time of its own (a model run's scenario does):
    # that one is named, not the benchmark's 10 s.
    row, data = reports.load(store, run.id)
    data.meta.details["think_time_s"] = 7.5
    known = build_report(row, data, thresholds=levels)
    assert known["benchmark"]["sd"]["think_time_s"] == 7.5
    title = _sd_title(known)
    assert "at 7.5 s think time" in title and "10 s" not in title, title
