"""A fault run's HTML report as a browser lays it out (issue 23 item 6): Debian's Chromium,
driven by selenium through chromium-driver as tests/integration/test_browser.py does, opens
the page of a simulated run with a fault and reads the rendered SVG: every time chart has
the fault's band, filled in the fault colour, spanning the fault's share of the run where
the run puts it, and its name written on it; the summary names it with its window. No
stack: the page is self-contained, opened from a file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from alerts.thresholds import load_thresholds
from api.runs.html import FAULT_COLOUR
from api.runs.spec import RunSpec
from api.services import reports, runs
from api.store import Store

selenium = pytest.importorskip("selenium", reason="selenium is a dev dependency (make install)")
from selenium import webdriver  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

from tests.chromium import headless_chrome  # noqa: E402

DURATION_S, FAULT = 600.0, ("db-bottleneck", 240.0, 420.0)
# Time charts: the three over time, the timeline's panels, the per-counter charts.
TIME_CHARTS = "#over_time figure, #timeline figure, #charts figure"
# Per chart, each axes' steady-state band and fault band as laid out (CSS pixels), the fill
# the browser computed for the fault, and the fault names written in the chart.
GEOMETRY = """
return [...document.querySelectorAll(arguments[0])].map(fig => ({
  id: fig.id,
  steady: [...fig.querySelectorAll('g[id$="-steady"] path')].map(p => {
    const r = p.getBoundingClientRect(); return [r.left, r.right]; }),
  fault: [...fig.querySelectorAll('g[id$="-fault-0"] path')].map(p => {
    const r = p.getBoundingClientRect(); return [r.left, r.right]; }),
  fill: [...fig.querySelectorAll('g[id$="-fault-0"] path')].map(
    p => getComputedStyle(p).fill),
  names: [...fig.querySelectorAll('g[id*="-fault-name-"] text')].map(t => t.textContent.trim()),
}));
"""


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    """A simulated run without ramp-up (the steady band spans the whole axis), a fault in it."""
    path = tmp_path_factory.mktemp("report")
    store = Store(path / "db.sqlite")
    name, start, end = FAULT
    spec = RunSpec(
        duration_s=DURATION_S,
        label="fault",
        faults=[{"name": name, "start_s": start, "end_s": end}],
    )
    run = runs.record_fast(store, spec)
    out = path / "report.html"
    out.write_text(reports.page(store, run.id, load_thresholds()), encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    driver = headless_chrome(1400, 1000)
    try:
        yield driver
    finally:
        driver.quit()


def _rgb(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[k : k + 2], 16) for k in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


def test_the_fault_is_named_and_shaded_where_it_happened_on_every_time_chart(page, browser) -> None:
    browser.get(page.as_uri())
    name, start, end = FAULT
    summary = browser.find_element(By.ID, "fault-summary").text
    assert name in summary and "240–420 s" in summary
    charts = browser.execute_script(GEOMETRY, TIME_CHARTS)
    assert len(charts) >= 8, [c["id"] for c in charts]  # 3 over time, timeline, 4 counters
    for chart in charts:
        assert chart["fault"], f"{chart['id']}: no fault band"
        assert len(chart["fault"]) == len(chart["steady"]), chart["id"]  # one per panel
        assert set(chart["fill"]) == {_rgb(FAULT_COLOUR)}, chart["id"]
        assert chart["names"] == [name], chart["id"]  # named once per chart
        for (s_left, s_right), (f_left, f_right) in zip(
            chart["steady"], chart["fault"], strict=True
        ):
            width = s_right - s_left  # the whole time axis: no ramp-up
            assert width > 300
            # Where the run put it: 240 s and 420 s of 600, to a pixel and a half.
            assert f_left - s_left == pytest.approx(width * start / DURATION_S, abs=1.5)
            assert f_right - s_left == pytest.approx(width * end / DURATION_S, abs=1.5)
