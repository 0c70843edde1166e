"""The HTML report as a reader sees it. Headless Chromium (Debian's package, which `make
test` installs) loads the self-contained page; the DOM it builds must show every section
with its heading, the report's key numbers, and charts with tick labels and a legend; its
screenshot must show those charts drawn in their colours. Imported runs say in one line
what they lack, and a run label is shown as text, never run as markup."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient
from matplotlib.image import imread

from api.config import Settings
from api.main import create_app
from api.runs.html import LINE_COLOURS, OS_UNITS, STEADY_COLOUR
from landscape_model.terms import COMPONENT_BY_KEY, REPORT_ORDER, RESPONSE_PARTS

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--force-color-profile=srgb",  # screenshot colours as the page wrote them
    "--force-device-scale-factor=1",
    "--hide-scrollbars",
]
AUTH = {"Authorization": "Bearer t"}
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
HEADINGS = [
    "Benchmark checks",
    "Faults injected",
    "Gaps in the data",
    "ST03 workload by task type",
    "Response-time percentiles",
    "Throughput, percentiles and users over time",
    "Response-time distribution (dialog)",
    "APDEX per task type and transaction",
    "Median, fastest and slowest step per transaction",
    "Transaction profile (ST03N)",
    "Time profile (ST03N)",
    "By transaction",
    "Threshold breaches",
    "Alerts that fired",
    "Response parts and OS counters on one time axis",
    "Charts",
    "OS counters: average / minimum / maximum",
    "Expensive SQL (elapsed DB time)",
    "Buffer pools",
    "Audit: how the file was read",
]
HOSTILE_LABEL = '<script>document.title="owned"</script><b>bold</b> & co'
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
NUMBER = re.compile(r"^[−-]?[\d,]+(\.\d+)?$")


def shown(value: float) -> str:
    """How the page prints a measured number: three decimals below 1,000, one above."""
    return f"{value:,.3f}" if abs(value) < 1000 else f"{value:,.1f}"


# --- the DOM Chromium built, as a small tree -------------------------------------------


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node] = field(default_factory=list)
    text: list[str] = field(default_factory=list)  # own text pieces, in order

    def all(self, tag: str = "", **attrs: str) -> list[Node]:
        """Every descendant with `tag` (any if empty) whose attributes contain the given
        substrings (`id="legend_"` matches "chart-dialog-legend_1")."""
        out = []
        for child in self.children:
            if (not tag or child.tag == tag) and all(
                v in child.attrs.get(k, "") for k, v in attrs.items()
            ):
                out.append(child)
            out += child.all(tag, **attrs)
        return out

    def one(self, tag: str = "", **attrs: str) -> Node:
        found = self.all(tag, **attrs)
        assert len(found) == 1, f"expected one <{tag} {attrs}>, found {len(found)}"
        return found[0]

    def content(self) -> str:
        """All text below this node, whitespace collapsed."""
        parts = [*self.text, *(c.content() for c in self.children)]
        return " ".join(" ".join(parts).split())


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Node(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        if data.strip():
            self.stack[-1].text.append(data)


def parse(markup: str) -> Node:
    builder = _TreeBuilder()
    builder.feed(markup)
    builder.close()
    return builder.root


# --- Chromium ---------------------------------------------------------------------------


def _chromium(args: list[str], profile: Path) -> subprocess.CompletedProcess:
    assert Path(CHROMIUM).is_file(), "chromium missing: apt-get install chromium"
    result = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result


def dump_dom(page: Path, profile: Path) -> Node:
    """The DOM after Chromium parsed the page (and would have run any script in it)."""
    return parse(_chromium(["--dump-dom", page.as_uri()], profile).stdout)


def screenshot(url: str, shot: Path, profile: Path, size: tuple[int, int]) -> np.ndarray:
    """The viewport as 8-bit RGB [row, column, channel]."""
    _chromium([f"--window-size={size[0]},{size[1]}", f"--screenshot={shot}", url], profile)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return np.rint(imread(shot)[..., :3] * 255).astype(np.int16)


def _rgb(hex_colour: str) -> np.ndarray:
    return np.array([int(hex_colour[k : k + 2], 16) for k in (1, 3, 5)])


def near(image: np.ndarray, hex_colour: str, tolerance: int) -> np.ndarray:
    return (np.abs(image - _rgb(hex_colour)) <= tolerance).all(axis=-1)


def runs_of(flags: np.ndarray, bridge: int) -> list[tuple[int, int]]:
    """[start, end) of the runs of True, joining runs less than `bridge` apart."""
    runs: list[tuple[int, int]] = []
    for k in np.flatnonzero(flags):
        if runs and k - runs[-1][1] < bridge:
            runs[-1] = (runs[-1][0], k + 1)
        else:
            runs.append((k, k + 1))
    return runs


# --- fixtures ---------------------------------------------------------------------------


@dataclass
class Page:
    html: str
    doc: dict  # the JSON report of the same run
    path: Path


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    settings = Settings(db_path=tmp_path_factory.mktemp("api") / "db.sqlite", token="t")
    with TestClient(create_app(settings)) as c:
        yield c


def _page(client: TestClient, run_id: str, path: Path) -> Page:
    r = client.get(f"/runs/{run_id}/report", params={"format": "html"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    path.write_text(r.text, encoding="utf-8")
    return Page(r.text, client.get(f"/runs/{run_id}/report").json(), path)


@pytest.fixture(scope="module")
def simulated(client, tmp_path_factory) -> Page:
    body = {
        "duration_s": 900,
        "ramp_up_s": 120,
        "label": "html",
        "faults": [{"name": "slow-enqueue-link", "start_s": 300, "end_s": 600}],
    }
    run = client.post("/runs", json=body, headers=AUTH).json()
    return _page(client, run["id"], tmp_path_factory.mktemp("page") / "report.html")


@pytest.fixture(scope="module")
def imported(client, tmp_path_factory) -> Page:
    """A PerfMon import (OS counters only), labelled with markup a browser would run."""
    r = client.post(
        "/imports/perfmon",
        content=(FIXTURES / "perfmon" / "typeperf-utf16.csv").read_bytes(),
        params={"label": HOSTILE_LABEL},
        headers=AUTH,
    )
    assert r.status_code == 201, r.text
    return _page(client, r.json()["id"], tmp_path_factory.mktemp("page") / "imported.html")


@pytest.fixture(scope="module")
def dom(simulated: Page, tmp_path_factory) -> Node:
    return dump_dom(simulated.path, tmp_path_factory.mktemp("profile"))


@pytest.fixture(scope="module")
def imported_dom(imported: Page, tmp_path_factory) -> Node:
    return dump_dom(imported.path, tmp_path_factory.mktemp("profile"))


def _figures(dom: Node) -> list[Node]:
    return dom.one("section", id="charts").all("figure")


def _section(dom: Node, heading: str) -> Node:
    return next(s for s in dom.all("section") if s.one("h2").content() == heading)


def _rows(table: Node) -> list[list[str]]:
    return [[td.content() for td in tr.all("td")] for tr in table.one("tbody").all("tr")]


# --- the page ---------------------------------------------------------------------------


def test_page_fetches_nothing_and_runs_nothing(simulated: Page) -> None:
    assert "<script" not in simulated.html
    assert not re.search(r'(src|href)="(https?:)?//', simulated.html), "the page fetches"
    assert not re.search(r"@import|url\((?!#)", simulated.html), "the CSS fetches"
    assert "<?xml" not in simulated.html and "<!DOCTYPE svg" not in simulated.html


def test_every_section_is_shown_under_its_heading(dom: Node) -> None:
    assert [h.content() for h in dom.all("h2")] == HEADINGS
    ids = {s.attrs["id"] for s in dom.all("section")}
    assert [a.attrs["href"].lstrip("#") for a in dom.one("nav").all("a")] == [
        s.attrs["id"] for s in dom.all("section")
    ]
    assert len(ids) == len(HEADINGS)
    for heading in HEADINGS:
        section = _section(dom, heading)
        assert section.all("table") or section.all("figure") or section.all("p"), heading


def test_key_numbers_of_the_report_are_shown_formatted(dom: Node, simulated: Page) -> None:
    doc = simulated.doc
    checks = _rows(_section(dom, "Benchmark checks").one("table"))
    dialog_response = doc["benchmark"]["sd"]["dialog_response_s"]
    assert checks[0][0].startswith("average dialog response < 2 s")
    assert checks[0][1] == f"{dialog_response:.3f} s"
    assert checks[0][2] == ("yes" if dialog_response < 2 else "no")
    assert checks[2][1] == f"{doc['benchmark']['sd']['saps']:,} SAPS"

    st03 = _section(dom, "ST03 workload by task type").one("table")
    headings = [th.content() for th in st03.all("th")]
    labels = [f"{COMPONENT_BY_KEY[c].label} (ms)" for c in REPORT_ORDER]
    assert headings == ["Task type", "Steps", *labels]
    dialog = next(r for r in doc["st03"] if r["task_type"] == "dialog")
    row = next(r for r in _rows(st03) if r[0] == "dialog")
    assert row[1] == f"{dialog['steps']:,}"
    assert row[2] == shown(dialog["response_ms"])
    assert row[2 + REPORT_ORDER.index("enqueue")] == shown(dialog["enqueue_ms"])

    breach = next(b for b in doc["breaches"] if b["rule"] == "SAPEnqueueTimeHigh")
    rows = _rows(_section(dom, "Threshold breaches").one("table"))
    row = next(r for r in rows if r[0] == "SAPEnqueueTimeHigh")
    assert row[1] == shown(breach["start_s"]) and row[2] == shown(breach["end_s"])
    assert row[3] == shown(breach["peak_ms"])
    assert row[5] == breach["diagnosis"]


def test_each_chart_is_an_svg_with_tick_labels_axis_labels_and_a_legend(
    dom: Node, simulated: Page
) -> None:
    figures = _figures(dom)
    assert [f.attrs["id"] for f in figures] == [
        "chart-dialog",
        "chart-cpu-pct",
        "chart-available-mb",
        "chart-pages-per-s",
        "chart-disk-queue",
    ]
    hosts = {row["host"] for row in simulated.doc["os_counters"]}
    for figure in figures:
        svg = figure.one("svg")
        ticks = [g.content() for g in svg.all("g", id="ytick_") if g.content()]
        assert len(ticks) >= 3 and all(NUMBER.match(t) for t in ticks), ticks
        values = [float(t.replace(",", "").replace("−", "-")) for t in ticks]
        assert values == sorted(values) and len(set(values)) == len(values), ticks
        # The time axis in clock time (UTC): HH:MM within the run's window.
        start = datetime.fromisoformat(simulated.doc["window"]["start_utc"]).astimezone(UTC)
        end = datetime.fromisoformat(simulated.doc["window"]["end_utc"]).astimezone(UTC)
        ticks = [g.content() for g in svg.all("g", id="xtick_") if g.content()]
        assert len(ticks) >= 3 and all(re.fullmatch(r"\d\d:\d\d", t) for t in ticks), ticks
        shown = {
            f"{start + timedelta(minutes=m):%H:%M}"
            for m in range(int((end - start).total_seconds() // 60) + 2)
        }
        assert set(ticks) <= shown, (ticks, start, end)
        caption = figure.one("figcaption").one("span").content().strip("()")
        unit, note = caption.split("; ", 1)
        assert unit in svg.one("g", id="matplotlib.axis_2").content()
        assert note.startswith("every sample drawn")  # what the points are, said
        axis = svg.one("g", id="matplotlib.axis_1").content()
        assert f"clock time, UTC, from {start:%Y-%m-%d}" in axis
        legend = [t.content() for t in svg.one("g", id="legend_").all("text")]
        assert legend[-1] == "fault: slow-enqueue-link"  # the run's fault, named
        legend = legend[:-1]
        assert legend[-1] == "steady state"
        if figure.attrs["id"] == "chart-dialog":
            assert legend[:-2] == [COMPONENT_BY_KEY[c].label for c in REPORT_ORDER]
            assert legend[-2].startswith("benchmark bound")
        else:
            assert legend[:-1] and all(e.split()[0] in hosts for e in legend[:-1]), legend


def test_percentiles_and_st03n_profiles_are_shown(dom: Node, simulated: Page) -> None:
    doc = simulated.doc
    by_task, by_tx = _section(dom, "Response-time percentiles").all("table")
    rows = _rows(by_task)
    dialog = next(r for r in doc["percentiles"]["by_task_type"] if r["task_type"] == "dialog")
    row = next(r for r in rows if r[0] == "dialog")
    assert row[2:6] == [shown(dialog[f"{p}_s"]) for p in ("p50", "p90", "p95", "p99")]
    assert row[6] == dialog["precision"] and " lies in " in row[6]
    va01 = next(
        r
        for r in doc["percentiles"]["by_transaction"]
        if (r["task_type"], r["transaction"]) == ("dialog", "VA01")
    )
    row = next(r for r in _rows(by_tx) if r[:2] == ["dialog", "VA01"])
    assert row[3:7] == [shown(va01[f"{p}_s"]) for p in ("p50", "p90", "p95", "p99")]
    profile = _section(dom, "Transaction profile (ST03N)").one("table")
    top = doc["transaction_profile"][0]
    assert _rows(profile)[0][:3] == ["1", top["task_type"], top["transaction"]]
    assert _rows(profile)[0][5] == shown(top["share_pct"])
    times = _rows(_section(dom, "Time profile (ST03N)").one("table"))
    assert len(times) == len(doc["time_profile"]["rows"]) > 0


def test_the_timeline_puts_response_parts_and_os_counters_on_one_axis(dom: Node) -> None:
    svg = _section(dom, "Response parts and OS counters on one time axis").one("svg")
    # One shared time axis: only the bottom panel labels it.
    texts = [t.content() for t in svg.all("text")]
    assert sum("clock time, UTC" in t for t in texts) == 1
    parts = [COMPONENT_BY_KEY[c].label for c in RESPONSE_PARTS]
    assert all(p in texts for p in parts), texts
    assert any("Processor Time" in t for t in texts) and any("Queue" in t for t in texts)


def test_screenshot_shows_each_chart_drawn_in_its_colours(
    dom: Node, simulated: Page, tmp_path: Path
) -> None:
    shot = Path(__file__).resolve().parents[1] / "artifacts" / "report.png"
    shot.parent.mkdir(exist_ok=True)
    # Tall enough for the page down to the end of the charts (a screenshot does not scroll).
    image = screenshot(simulated.path.as_uri(), shot, tmp_path / "profile", (1280, 11000))
    white = near(image, "#ffffff", 0)
    assert white.mean() < 0.9, "the page is (nearly) blank"
    rgb = image.astype(np.int32)
    packed = (rgb[..., 0] << 16) | (rgb[..., 1] << 8) | rgb[..., 2]
    assert len(np.unique(packed)) > 50, "the page has hardly any colour"
    # Each plot area is the steady-state shade with lines drawn over it.
    shade = near(image, STEADY_COLOUR, 2)
    # Within a plot area the lines may hide the shade: twelve hosts' CPU between 50 and 75 %
    # (every step simulated, the discrete-event engine) leave 0-20 of its pixels per row over
    # 24 rows of the timeline's panel and 40 of the CPU chart; plot areas are at least 58 rows
    # apart (axis labels, titles), so a hole under 50 rows is inside one.
    bands = [b for b in runs_of(shade.sum(axis=1) > 200, bridge=50) if b[1] - b[0] > 50]
    # The charts over time (throughput, percentiles, users), the timeline's panels (the
    # stacked response and one per OS counter), then the charts.
    panels = 1 + len(OS_UNITS)
    over_time = len(dom.one("section", id="over_time").all("figure"))
    assert over_time == 3
    assert len(bands) == over_time + panels + len(_figures(dom)), f"plot areas at rows {bands}"
    # The timeline's response panel is the stack of its parts, each in its own colour,
    # drawn above the OS panels: the largest parts show as filled areas.
    top, bottom = bands[over_time]
    stack = image[top : bottom + 200]
    for part in ("gui", "db_request"):
        colour = LINE_COLOURS[RESPONSE_PARTS.index(part)]
        assert near(stack, colour, 3).sum() > 5000, f"{part} not drawn as an area"
    for top, bottom in bands:
        band = shade[top:bottom]
        # The steady state's shade, interrupted where the fault's red band lies over it.
        spans = runs_of(band.sum(axis=0) > (bottom - top) / 4, bridge=12)
        left, right = spans[0][0], spans[-1][1]
        area = image[top:bottom, left:right]
        drawn = {c: int(near(area, c, 40).sum()) for c in LINE_COLOURS}
        assert max(drawn.values()) > 300, f"no line drawn in the plot area at row {top}: {drawn}"
        assert near(area, STEADY_COLOUR, 2).mean() < 0.99, "a plot area without lines"


def test_charts_are_reproducible(client: TestClient, simulated: Page) -> None:
    run_id = simulated.doc["run"]["id"]
    again = client.get(f"/runs/{run_id}/report", params={"format": "html"}).text
    svgs = re.findall(r"<svg.*?</svg>", simulated.html, flags=re.S)
    # 3 over time, the distribution, the timeline, 5 charts.
    assert len(svgs) == 10 and svgs == re.findall(r"<svg.*?</svg>", again, flags=re.S)


def test_an_imported_run_says_in_one_line_what_it_lacks(imported_dom: Node) -> None:
    assert [h.content() for h in imported_dom.all("h2")] == HEADINGS
    lacking = {
        "Benchmark checks": "Not applicable: no dialog steps in this run's data.",
        "ST03 workload by task type": "No ST03 data in this run.",
        "Threshold breaches": "Not checked: no ST03 data in this run.",
        "Expensive SQL (elapsed DB time)": "No ST05 statement data in this run.",
        "Buffer pools": "No buffer-pool data in this run.",
        "Transaction profile (ST03N)": "No per-transaction ST03 data in this run.",
        "Time profile (ST03N)": "No ST03 data in this run: no time profile.",
    }
    for heading, line in lacking.items():
        section = _section(imported_dom, heading)
        assert not section.all("table"), heading
        assert [p.content() for p in section.all("p")] == [line]
    # How the file was read: its zone and how each standard row was derived.
    audit = _section(imported_dom, "Audit: how the file was read").one("table").content()
    assert "W. Europe Standard Time" in audit and "Processor(_Total)" in audit
    counters = _section(imported_dom, "OS counters: average / minimum / maximum").one("table")
    assert ["miihost", "Memory\\Pages/sec", "50.567", "0.000", "151.500", "3"] in _rows(counters)
    assert len(_figures(imported_dom)) == 4  # one per OS counter, no ST03 chart
    percentiles = _section(imported_dom, "Response-time percentiles")
    assert not percentiles.all("table")
    assert [p.content() for p in percentiles.all("p")] == [
        "No response-time histogram in this run: no percentiles.",
        "No response-time histogram per transaction in this run: none per transaction.",
    ]
    # The timeline still lines up the OS counters the file has, without a response panel.
    timeline = _section(imported_dom, "Response parts and OS counters on one time axis")
    labels = [t.content() for t in timeline.one("svg").all("text")]
    assert not any("dialog ms" in t for t in labels)


def test_a_label_with_markup_is_shown_as_text(imported: Page, imported_dom: Node) -> None:
    assert not imported_dom.all("script") and not imported_dom.all("b")
    assert imported_dom.one("title").content() != "owned"
    assert HOSTILE_LABEL in imported_dom.one("h1").content()
    assert "&lt;script&gt;" in imported.html


def test_the_fault_is_named_in_the_summary_and_on_every_time_chart(
    dom: Node, simulated: Page
) -> None:
    (fault,) = simulated.doc["faults"]
    assert fault["name"] == "slow-enqueue-link"
    summary = dom.one("p", id="fault-summary").content()
    assert "slow-enqueue-link" in summary and "300–600 s" in summary
    assert fault["start"] in summary and fault["end"] in summary
    time_charts = [
        *dom.one("section", id="over_time").all("figure"),
        dom.one("section", id="timeline").one("figure"),
        *_figures(dom),
    ]
    assert len(time_charts) >= 8
    for figure in time_charts:
        svg = figure.one("svg")
        # Shaded: a patch in the fault's group; named: its text in the plot.
        assert svg.all("g", id="fault-0"), figure.attrs["id"]
        assert "slow-enqueue-link" in svg.content(), figure.attrs["id"]
    # The distribution is no time chart: nothing to shade there.
    assert not dom.one("section", id="distribution").all("g", id="fault-0")
