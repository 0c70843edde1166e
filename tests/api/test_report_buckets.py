"""The report's timeline draws each STAD minute over [start, end) in clock time, and a
minute without a dialog step as a hole (issue 32, item 6).

What is drawn is read back from the SVG the page carries: the clock of the x axis from
its tick labels and tick positions (not from the renderer's scale), the drawn x-extent of
the stacked response from its path vertices. The minutes are computed here from the steps
written to the file."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from tests.api.test_import_stad import AUTH, _steps, _text, api  # noqa: F401 (fixture)

SVG = "{http://www.w3.org/2000/svg}"
HOLE = range(10 * 60 + 20, 10 * 60 + 23)  # 10:20-10:23: no step in these minutes


def _timeline(html: str) -> ET.Element:
    m = re.search(r'<figure id="chart-timeline".*?(<svg.*?</svg>)', html, re.S)
    assert m, "no timeline chart on the page"
    return ET.fromstring(m.group(1))


def _clock(svg: ET.Element) -> tuple[float, float]:
    """Seconds of the day per pixel and at pixel 0, from two labelled x ticks."""
    ticks = []
    for g in svg.iter(f"{SVG}g"):
        if not re.fullmatch(r"chart-timeline-xtick_\d+", g.get("id", "")):
            continue
        x = float(next(g.iter(f"{SVG}use")).get("x"))
        label = "".join(next(g.iter(f"{SVG}text")).itertext()).split()[0]
        h, m = (int(v) for v in label.split(":"))
        ticks.append((x, 3600 * h + 60 * m))
    assert len(ticks) >= 2, ticks
    (x0, t0), (x1, t1) = ticks[0], ticks[-1]
    per_px = (t1 - t0) / (x1 - x0)
    return per_px, t0 - x0 * per_px


def _polygons(svg: ET.Element, gid: str) -> list[list[float]]:
    """The x of every vertex, per path of the group `gid`, in pixels."""
    group = next(g for g in svg.iter(f"{SVG}g") if g.get("id") == gid)
    out = []
    for path in group.iter(f"{SVG}path"):
        nums = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", path.get("d"))]
        out.append(nums[0::2])
    return out


def test_the_timeline_draws_each_minute_over_its_interval_and_a_hole_as_a_gap(api) -> None:  # noqa: F811
    steps = [s for s in _steps(7, 400) if s["t"] // 60 not in HOLE]
    r = api.post(
        "/imports/stad",
        files={"file": ("stad.txt", _text(steps).encode("utf-8"), "text/plain")},
        headers=AUTH,
    )
    assert r.status_code == 201, r.text
    page = api.get(f"/runs/{r.json()['id']}/report", params={"format": "html"})
    assert page.status_code == 200, page.text
    svg = _timeline(page.text)
    per_px, zero = _clock(svg)
    # The minutes with a dialog step, as the file has them: each drawn from its start to
    # its end; the runs of consecutive minutes are separate areas, the hole between them.
    minutes = sorted({s["t"] // 60 for s in steps if s["typ"] == "DIA"})
    runs: list[list[int]] = []
    for m in minutes:
        if runs and runs[-1][-1] == m - 1:
            runs[-1].append(m)
        else:
            runs.append([m])
    drawn = _polygons(svg, "chart-timeline-p0-part-0")
    assert len(drawn) == len(runs), (len(drawn), [(r[0], r[-1]) for r in runs])
    for xs, run in zip(sorted(drawn, key=min), runs, strict=True):
        seconds = {round((zero + x * per_px) / 60) * 60 for x in xs}
        for x in xs:  # every vertex on a minute boundary (to within a second)
            assert (zero + x * per_px) == pytest.approx(round((zero + x * per_px) / 60) * 60, abs=1)
        assert min(seconds) == 60 * run[0] and max(seconds) == 60 * (run[-1] + 1)
        assert seconds == {60 * m for m in range(run[0], run[-1] + 2)}
    # Nothing drawn inside the hole.
    inside = [
        x for xs in drawn for x in xs if 60 * HOLE[0] < zero + x * per_px < 60 * (HOLE[-1] + 1)
    ]
    assert not inside
