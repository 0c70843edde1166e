"""The report as one self-contained HTML page: Jinja2 templates (autoescaped) with inline
CSS and matplotlib charts as inline SVG, no script and nothing fetched, so it opens
offline and can be mailed or archived as it is."""

from __future__ import annotations

import io
import re
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from itertools import pairwise
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from api.runs import ionet
from api.runs.record import RunRecord, col
from exporters.thresholds import Thresholds
from exporters.vocabulary import DIALOG_RESPONSE, OS_COUNTER_BY_KEY, OS_COUNTERS
from landscape_model.terms import COMPONENT_BY_KEY, REPORT_ORDER, RESPONSE_PARTS

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# The unit each OS counter of the charts is read in (the vocabulary's, as their names).
OS_UNITS = {c.key: c.unit for c in OS_COUNTERS}
# Chart colours, also asserted by the screenshot test: tab10 for the lines, a light blue
# for the steady-state window, black for the bound a line must stay under.
LINE_COLOURS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
LINE_STYLES = ("-", "--", ":")  # past ten series the colours repeat with another dash
STEADY_COLOUR = "#e6f0fb"
BOUND_COLOUR = "#000000"
# A fault's window: light red under the lines, its name written at the top of the window
# (the browser test finds both in the SVG).
FAULT_COLOUR = "#f8d0d0"
FAULT_TEXT = "#a31515"
ENVELOPE_ALPHA = 0.25  # the min-max band around bucket means
# A chart is about 1000 px wide: more points than two per pixel column only make the
# page heavier and matplotlib slower (a 4-hour run at 5 s has 2,880 samples per series).
MAX_BUCKETS = 500
CHART_SIZE = (11.0, 3.2)  # inches; the page scales the SVG to its width
# Below this many samples each one gets a dot: a sample between two gaps (NaN) is then
# still seen, as in imported files with blank samples.
DOTS_BELOW = 100
LOG_FLOOR = 0.1  # ms: the log axis ends here; smaller values (and 0) fall below it
LEGEND_ROWS = 14  # entries per legend column that fit beside a chart of that height
CHART_STYLE = {
    "svg.fonttype": "none",  # text stays text: selectable, searchable, tested in the DOM
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#e6e6e6",
    "grid.linewidth": 0.6,
    "axes.edgecolor": "#666666",
    "legend.frameon": False,
    "legend.fontsize": 8,
    "lines.linewidth": 1.3,
}
# matplotlib's rcParams are process-wide and the API renders in a thread pool; the SVG
# ids depend on svg.hashsalt, so one chart at a time keeps every page reproducible.
_MATPLOTLIB = threading.Lock()
# Section id -> heading, in page order; the page's table of contents reads it too.
SECTIONS = {
    "checks": "Benchmark checks",
    "faults": "Faults injected",
    "gaps": "Gaps in the data",
    "st03": "ST03 workload by task type",
    "percentiles": "Response-time percentiles",
    "over_time": "Throughput, percentiles and users over time",
    "distribution": "Response-time distribution (dialog)",
    "apdex": "APDEX per task type and transaction",
    "transaction_spread": "Median, fastest and slowest step per transaction",
    "transaction_profile": "Transaction profile (ST03N)",
    "time_profile": "Time profile (ST03N)",
    "transactions": "By transaction",
    "breaches": "Threshold breaches",
    "alerts": "Alerts that fired",
    "timeline": "Response parts and OS counters on one time axis",
    "charts": "Charts",
    "os_counters": "OS counters: average / minimum / maximum",
    "io_wait": "I/O wait: disks, privileged and interrupt time",
    "network": "Network",
    "top_sql": "Expensive SQL (elapsed DB time)",
    "bufferpools": "Buffer pools",
    "audit": "Audit: how the file was read",
}
DIALOG_STEPS = col("st03", "dialog", "steps")
ACRONYMS = {"sap", "sql", "os", "cpu", "db", "id"}
UNIT_SUFFIXES = {"_ms": "ms", "_s": "s", "_pct": "%", "_mb": "MB", "_kb": "KB"}


@dataclass(frozen=True)
class Chart:
    slug: str  # the figure's id in the page; also salts its SVG ids
    title: str
    unit: str
    svg: Markup | None  # None: nothing to draw, `missing` says why
    missing: str = ""
    note: str = ""  # how the points were made (bucket means, envelopes)


@dataclass(frozen=True)
class Line:
    label: str
    values: np.ndarray
    steps: bool = False  # a level held until the next sample (users logged on)


# Imported fields whose key does not read as their name.
FIELD_NAMES = {"wp_time": "Time in WPs", "roll_in_wait": "Roll-in + wait", "kbytes": "kBytes"}


def heading(key: str) -> str:
    """A column heading from a report key: component labels from the vocabulary, the unit
    suffix in brackets ("dispatcher_wait_ms" -> "Dispatcher wait (ms)")."""
    unit = next((u for s, u in UNIT_SUFFIXES.items() if key.endswith(s)), None)
    stem = key[: key.rindex("_")] if unit else key
    if stem in COMPONENT_BY_KEY:
        name = COMPONENT_BY_KEY[stem].label
    elif stem in FIELD_NAMES:
        name = FIELD_NAMES[stem]
    else:
        words = [w.upper() if w in ACRONYMS else w for w in stem.split("_")]
        name = " ".join(words)
        name = name[:1].upper() + name[1:]
    return f"{name} ({unit})" if unit else name


class Shown(float):
    """A figure read from a file, with the decimals the file shows it with: the page shows
    no more (a mean of 1.0 ms in the export is not "1.000")."""

    decimals: int = 3

    def __new__(cls, value: float, decimals: int) -> Shown:
        out = super().__new__(cls, value)
        out.decimals = decimals
        return out


def number(value: object) -> str:
    """Thousands separators; three decimals below 1,000, one above (a figure read from a
    file: the decimals it shows); a dash for none."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, Shown):
        return f"{value:,.{value.decimals}f}"
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 1000 else f"{value:,.1f}"
    return str(value)


def as_shown(report: dict) -> dict:
    """The report with each ST03 mean an import read as the file shows it (its decimals,
    the audit's `precision`); other runs' figures as they are."""
    precision = (report.get("import") or {}).get("precision") or {}
    if not precision:
        return report

    def rows(items: list[dict]) -> list[dict]:
        return [
            {
                k: Shown(v, precision[k[:-3]])
                if isinstance(v, float) and k.endswith("_ms") and k[:-3] in precision
                else v
                for k, v in r.items()
            }
            for r in items
        ]

    shown = dict(report)
    shown["st03"] = rows(report["st03"])
    shown["transaction_profile"] = rows(report["transaction_profile"])
    shown["time_profile"] = {**report["time_profile"], "rows": rows(report["time_profile"]["rows"])}
    return shown


def is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@lru_cache
def _templates() -> Environment:
    env = Environment(
        loader=PackageLoader("api", "templates"),
        autoescape=True,
        undefined=StrictUndefined,  # a misspelt field fails the render instead of vanishing
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(heading=heading, number=number)
    env.tests["number"] = is_number
    return env


def _envelope(times: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """At most MAX_BUCKETS buckets, each drawn as its minimum and maximum, so a one-sample
    spike still shows after downsampling (a bucket of NaN only stays a gap)."""
    if times.size <= 2 * MAX_BUCKETS:
        return times, values
    edges = np.linspace(0, times.size, MAX_BUCKETS + 1).astype(int)[:-1]
    lows, highs = np.fmin.reduceat(values, edges), np.fmax.reduceat(values, edges)
    last = np.append(edges[1:] - 1, times.size - 1)
    return (
        np.column_stack([times[edges], times[last]]).ravel(),
        np.column_stack([lows, highs]).ravel(),
    )


def _time_axis(times: np.ndarray) -> tuple[float, str]:
    """Divisor and unit for the time axis, so ticks read 0-240 min rather than 0-14,400 s."""
    span = float(times[-1]) if times.size else 0.0
    if span <= 1200:
        return 1.0, "s"
    if span <= 6 * 3600:
        return 60.0, "min"
    return 3600.0, "h"


def _svg(fig: Figure, salt: str) -> Markup:
    """The figure as an inline <svg> element: no XML prolog or doctype, no date, and ids
    unique within the page (several charts share one document). Called with
    svg.hashsalt set to `salt`, which makes the clip-path and marker ids."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue()
    text = text[text.index("<svg") :]
    # matplotlib numbers its groups figure_1, axes_1, ... in every SVG; nothing refers to
    # them (clip paths and markers use the salted ids), so a prefix makes them unique.
    return Markup(re.sub(r'<g id="', f'<g id="{salt}-', text))


def _buckets_note(size: int) -> str:
    """What a time chart's points are when a run has more samples than fit."""
    if size <= 2 * MAX_BUCKETS:
        return f"every sample drawn ({size:,})"
    return (
        f"{size:,} samples in {MAX_BUCKETS} buckets of about {size / MAX_BUCKETS:,.1f}: "
        "each bucket drawn as its minimum and maximum, so peaks stay"
    )


def _shade_faults(
    ax, faults: list[dict], scale: float, label: bool = True, prefix: str = ""
) -> None:
    """Each fault's window shaded, its name written at the window's top left; `prefix`
    keeps the SVG ids of a figure's several panels apart."""
    for k, f in enumerate(faults):
        ax.axvspan(
            f["start_s"] / scale,
            f["end_s"] / scale,
            color=FAULT_COLOUR,
            lw=0,
            gid=f"{prefix}fault-{k}",
        )
        if label:
            ax.text(
                f["start_s"] / scale,
                1.0,
                f" {f['name']}",
                transform=ax.get_xaxis_transform(),
                va="top",
                ha="left",
                fontsize=8,
                color=FAULT_TEXT,
                gid=f"{prefix}fault-name-{k}",
            )


GAP_COLOUR = "#d9d9d9"
GAP_TEXT = "#444444"


@dataclass(frozen=True)
class Clock:
    """The run's start in UTC and the source's zone (None: only UTC is known, or for an
    export without --tz only its local time, taken as written): a time axis in clock time."""

    start: datetime
    zone: ZoneInfo | None
    local_only: bool = False  # an ST03/STAD export without a zone: its own clock


def clock(report: dict) -> Clock | None:
    """The report's window as a Clock, None when it has no start."""
    w = report.get("window") or {}
    if w.get("start_utc"):
        start = datetime.fromisoformat(w["start_utc"])
        try:
            zone = ZoneInfo(w["zone"]) if w.get("zone") else None
        except (ZoneInfoNotFoundError, ValueError):
            zone = None
        return Clock(start, zone if zone is not None and zone.key != "UTC" else None)
    if w.get("start_local"):
        return Clock(datetime.fromisoformat(w["start_local"]).replace(tzinfo=None), None, True)
    return None


def _clock_axis(ax, when: Clock, scale: float) -> str:
    """Ticks in clock time: UTC, with the source's local time under it; the axis label."""
    from matplotlib.ticker import FuncFormatter

    def label(x: float, _) -> str:
        at = when.start + timedelta(seconds=x * scale)
        if when.local_only:
            return f"{at:%H:%M}"
        text = f"{at.astimezone(UTC):%H:%M}"
        if when.zone is not None:
            text += f"\n{at.astimezone(when.zone):%H:%M}"
        return text

    ax.xaxis.set_major_formatter(FuncFormatter(label))
    if when.local_only:
        return (
            f"clock time, the SAP system's local time (zone not given), from {when.start:%Y-%m-%d}"
        )
    zone = f" / {when.zone.key} (below)" if when.zone is not None else ""
    return f"clock time, UTC{zone}, from {when.start.astimezone(UTC):%Y-%m-%d}"


def _shade_gaps(ax, gaps: list[dict], scale: float, prefix: str = "") -> None:
    """Each hole in the data shaded grey and named with its length."""
    for k, g in enumerate(gaps):
        ax.axvspan(
            g["start_s"] / scale, g["end_s"] / scale, color=GAP_COLOUR, lw=0, gid=f"{prefix}gap-{k}"
        )
        ax.text(
            g["start_s"] / scale,
            0.0,
            f" gap {gap_name(g)}",
            transform=ax.get_xaxis_transform(),
            va="bottom",
            ha="left",
            fontsize=8,
            color=GAP_TEXT,
            gid=f"{prefix}gap-name-{k}",
        )


def gap_name(g: dict) -> str:
    minutes = (g["end_s"] - g["start_s"]) / 60
    return f"{minutes:,.0f} min" if minutes >= 1 else f"{g['end_s'] - g['start_s']:,.0f} s"


def line_chart(
    slug: str,
    title: str,
    unit: str,
    times: np.ndarray,
    lines: list[Line],
    window: tuple[float, float],
    bound: tuple[float, str] | None = None,
    log: bool = False,
    faults: list[dict] | None = None,
    gaps: list[dict] | None = None,
    when: Clock | None = None,
    buckets: bool = False,
) -> Chart:
    """Lines over time with the steady-state `window` shaded, each of `faults` shaded and
    named, each of `gaps` (holes in the data) shaded grey and named, an optional horizontal
    `bound` (value, label), for lines orders of magnitude apart a `log` value axis; the time
    axis in clock time when the run's start is known (`when`). `buckets`: each sample is
    the sum or mean of the interval before it (an ST03 hour, a STAD minute), drawn as a
    level over that interval, not as a point at its end."""
    faults, gaps = faults or [], [g for g in gaps or [] if "start_s" in g and "end_s" in g]
    if times.size < 2 or not lines:
        return Chart(slug, title, unit, None, "Fewer than two samples: nothing to draw.")
    # Imported lazily: only a page with charts pays for loading matplotlib, not every
    # `wlmon` command or API start that imports this module.
    import matplotlib
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch
    from matplotlib.ticker import FuncFormatter, NullFormatter

    note = _buckets_note(times.size)  # the samples the run holds, not the points drawn
    if buckets:
        times = np.r_[_bucket_starts(times)[:1], times]
        lines = [Line(x.label, np.r_[x.values[:1], x.values], steps=True) for x in lines]
    scale, time_unit = _time_axis(times)
    entries = len(lines) + 1 + (bound is not None)
    columns = 1 + (entries - 1) // LEGEND_ROWS
    with _MATPLOTLIB, matplotlib.rc_context({**CHART_STYLE, "svg.hashsalt": slug}):
        fig = Figure(figsize=CHART_SIZE)
        # Fixed margins, not a layout engine: every chart's time axis then lines up under
        # the one above it, and laying out costs nothing.
        # Two lines of tick labels (UTC, local) need room above the axis label.
        two = when is not None and when.zone is not None
        fig.subplots_adjust(
            left=0.07, right=0.8 - 0.11 * (columns - 1), top=0.95, bottom=0.22 if two else 0.16
        )
        ax = fig.add_subplot()
        ax.axvspan(window[0] / scale, window[1] / scale, color=STEADY_COLOUR, lw=0, gid="steady")
        _shade_faults(ax, faults, scale)
        _shade_gaps(ax, gaps, scale)
        for k, line in enumerate(lines):
            x, y = _envelope(times, line.values)
            ax.plot(
                x / scale,
                y,
                color=LINE_COLOURS[k % len(LINE_COLOURS)],
                linestyle=LINE_STYLES[k // len(LINE_COLOURS) % len(LINE_STYLES)],
                marker="o" if times.size < DOTS_BELOW else None,
                markersize=3,
                label=line.label,
                # A level is drawn as steps, wider: a flat line must not vanish in its
                # anti-aliasing.
                drawstyle="steps-pre" if line.steps else "default",
                lw=2.0 if line.steps else None,
            )
        if bound is not None:
            ax.axhline(bound[0], color=BOUND_COLOUR, linestyle="--", lw=1, label=bound[1])
        # The shade goes last in the legend, after the series it is drawn under.
        handles, labels = ax.get_legend_handles_labels()
        handles.append(Patch(color=STEADY_COLOUR, label="steady state"))
        labels.append("steady state")
        for f in faults:
            handles.append(Patch(color=FAULT_COLOUR, label=f"fault: {f['name']}"))
            labels.append(f"fault: {f['name']}")
        if gaps:
            handles.append(Patch(color=GAP_COLOUR, label=f"no data ({len(gaps)} gap(s))"))
            labels.append(f"no data ({len(gaps)} gap(s))")
        ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), ncols=columns)
        ax.set_xlim(0, float(times[-1]) / scale)
        ax.set_xlabel(
            _clock_axis(ax, when, scale)
            if when is not None
            else f"time since the run's start ({time_unit})"
        )
        if log:
            ax.set_yscale("log")
            # Autoscaling would add its margin in decades down to the smallest value.
            top = max(float(np.nanmax(line.values, initial=LOG_FLOOR)) for line in lines)
            ax.set_ylim(LOG_FLOOR, 2 * max(top, bound[0] if bound else 0))
            # Plain numbers (0.1, 1, 10) rather than 10^n, which would be mathtext.
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,g}"))
            ax.yaxis.set_minor_formatter(NullFormatter())
            ax.set_ylabel(f"{unit}, log scale")
        else:
            ax.set_ylim(bottom=0)
            ax.set_ylabel(unit)
        return Chart(slug, title, unit, _svg(fig, slug), note=note)


def _bucket_starts(ends: np.ndarray) -> np.ndarray:
    """Where each bucket of an ST03/STAD run begins: its series hold the sum or mean of
    the interval before each sample (the samples are the buckets' ends, on one grid)."""
    if ends.size < 2:
        return np.zeros_like(ends)
    return np.r_[max(float(ends[0] - (ends[1] - ends[0])), 0.0), ends[:-1]]


def _per_step(data: RunRecord, comps: tuple[str, ...] = REPORT_ORDER) -> list[Line]:
    """Each of `comps` (every time component unless given) of a dialog step in ms per
    step, in the order given."""
    steps = data.series(DIALOG_STEPS)
    lines = []
    for comp in comps:
        name = col("st03", "dialog", comp)
        if data.has(name):
            per_step = np.divide(
                1000 * data.series(name),
                steps,
                out=np.full_like(steps, np.nan),
                where=steps > 0,
            )
            lines.append(Line(COMPONENT_BY_KEY[comp].label, per_step))
    return lines


def _natural(name: str) -> list:
    """penguin2 before penguin10."""
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


def _per_host(data: RunRecord, key: str) -> list[Line]:
    """One line per host; hosts with exactly the same series share one line, else the
    legend would list colours that lie hidden under another line."""
    groups: dict[bytes, list[str]] = {}
    columns: dict[bytes, np.ndarray] = {}
    for c in data.of_kind("os"):
        if c.last == key:
            values = data.series(c)
            groups.setdefault(values.tobytes(), []).append(c.part("host"))
            columns[values.tobytes()] = values
    lines = []
    for raw, hosts in groups.items():
        hosts.sort(key=_natural)
        label = hosts[0] if len(hosts) == 1 else f"{hosts[0]} and {len(hosts) - 1} more (equal)"
        lines.append(Line(label, columns[raw]))
    return sorted(lines, key=lambda line: _natural(line.label))


def _marks(report: dict, data: RunRecord) -> dict:
    """What every time chart shows besides its lines: the gaps in the data, shaded and
    named, and the clock its axis is in."""
    return {
        "gaps": report.get("gaps") or data.meta.gaps or [],
        "when": clock(report),
        "buckets": data.meta.source in ("st03", "stad"),
    }


def charts(report: dict, data: RunRecord, thresholds: Thresholds) -> list[Chart]:
    ss = report["steady_state"]
    window = (ss["start_s"], ss["end_s"])
    faults = report.get("faults") or []
    out = []
    if data.has(DIALOG_STEPS):
        bound = 1000 * thresholds.seconds(DIALOG_RESPONSE)
        out.append(
            line_chart(
                "chart-dialog",
                "Dialog response time and its parts per step",
                "ms",
                data.times,
                _per_step(data),
                window,
                bound=(bound, f"benchmark bound ({bound / 1000:g} s)"),
                # A 1 ms enqueue time and a 2,000 ms response share the chart: on a
                # linear axis every part but the largest lies flat on zero.
                log=True,
                faults=faults,
                **_marks(report, data),
            )
        )
    for key, unit in OS_UNITS.items():
        lines = _per_host(data, key)
        if lines:
            slug = "chart-" + key.replace("_", "-")
            out.append(
                line_chart(
                    slug,
                    OS_COUNTER_BY_KEY[key].counter,
                    unit,
                    data.times,
                    lines,
                    window,
                    faults=faults,
                    **_marks(report, data),
                )
            )
    return out


# How the page shows a base unit: disk latencies in ms (4.18 ms, not 0.004 s), network
# bytes in MB/s of 10^6 bytes (1.39, not 1,389,500 or an axis offset "1e6").
SHOWN_IN = {"s": ("ms", 1000.0), "bytes/s": ("MB/s", 1e-6)}


def _shown_in(unit: str) -> tuple[str, float]:
    """The page's unit and factor for a row or chart in `unit`."""
    return SHOWN_IN.get(unit, (unit, 1.0))


def io_net_rows(rows: list[dict]) -> list[dict]:
    """The section's rows in the page's units (the report's stay in base units)."""
    out = []
    for r in rows:
        unit, k = _shown_in(r["unit"])
        out.append({**r, "unit": unit, **{f: k * r[f] for f in ("mean", "p95", "max")}})
    return out


def io_net_charts(report: dict, data: RunRecord, section: str) -> list[Chart]:
    """One chart per counter of the section (Avg. Disk sec/Read, Bytes Total/sec...), a line
    per host and instance, drawn as the other time charts are (steady state and faults
    shaded, bucket envelopes past 1,000 samples)."""
    if not report.get(section):
        return []
    ss = report["steady_state"]
    names = data.meta.details.get("counter_names", {})
    out = []
    for (name, base), columns in ionet.chart_groups(data, section).items():
        unit, factor = _shown_in(base)
        lines = []
        for c in columns:
            m = ionet.PATH.match(names.get(str(c), ""))
            inst = f" ({m['instance']})" if m and m["instance"] is not None else ""
            lines.append(Line(f"{c.part('host')}{inst}", factor * data.series(c)))
        lines.sort(key=lambda line: _natural(line.label))
        slug = f"chart-{section.replace('_', '-')}-" + re.sub(r"[^a-z0-9]+", "-", name.lower())
        out.append(
            line_chart(
                slug.strip("-"),
                name,
                unit,
                data.times,
                lines,
                (ss["start_s"], ss["end_s"]),
                faults=report.get("faults") or [],
                **_marks(report, data),
            )
        )
    return out


def _nan(values: list) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def over_time_charts(report: dict, data: RunRecord, thresholds: Thresholds) -> list[Chart]:
    """Throughput, the dialog response's p50/p95/p99 and the active users, per interval."""
    ss, ot = report["steady_state"], report.get("over_time") or {}
    window, faults = (ss["start_s"], ss["end_s"]), report.get("faults") or []
    times = data.times
    out = []
    if ot.get("throughput_steps_per_s"):
        line = Line("all task types", _nan(ot["throughput_steps_per_s"]))
        out.append(
            line_chart(
                "chart-throughput",
                "Throughput",
                "steps/s",
                times,
                [line],
                window,
                faults=faults,
                **_marks(report, data),
            )
        )
    if ot.get("dialog_p50_s"):
        lines = [Line(name, 1000 * _nan(ot[f"dialog_{name}_s"])) for name in ("p50", "p95", "p99")]
        bound = 1000 * thresholds.seconds(DIALOG_RESPONSE)
        out.append(
            line_chart(
                "chart-percentiles",
                "Dialog response percentiles per interval (from its histogram)",
                "ms",
                times,
                lines,
                window,
                bound=(bound, f"benchmark bound ({bound / 1000:g} s)"),
                faults=faults,
                **_marks(report, data),
            )
        )
    if ot.get("active_users"):
        line = Line("users logged on", _nan(ot["active_users"]), steps=True)
        out.append(
            line_chart(
                "chart-users",
                "Active users",
                "users",
                times,
                [line],
                window,
                faults=faults,
                **_marks(report, data),
            )
        )
    return out


def distribution_chart(report: dict) -> Chart:
    """The steady state's dialog steps per response-time bucket, as bars of equal width
    (the buckets are not: 0.05 s to 30 s), each labelled by its bounds."""
    rows = report.get("distribution") or []
    slug, title = "chart-distribution", SECTIONS["distribution"]
    if not rows or not sum(r["steps"] for r in rows):
        return Chart(slug, title, "% of steps", None, "No dialog response-time histogram.")
    import matplotlib
    from matplotlib.figure import Figure

    labels = [
        f"{r['lower_s']:g}–{r['upper_s']:g}" if r["upper_s"] is not None else f">{r['lower_s']:g}"
        for r in rows
    ]
    with _MATPLOTLIB, matplotlib.rc_context({**CHART_STYLE, "svg.hashsalt": slug}):
        fig = Figure(figsize=CHART_SIZE)
        fig.subplots_adjust(left=0.07, right=0.8, top=0.95, bottom=0.2)
        ax = fig.add_subplot()
        ax.bar(range(len(rows)), [r["share_pct"] for r in rows], color=LINE_COLOURS[0])
        ax.set_xticks(range(len(rows)), labels, rotation=30, ha="right")
        ax.set_xlabel("dialog response time bucket (s)")
        ax.set_ylabel("% of steps")
        return Chart(slug, title, "% of the steady state's dialog steps", _svg(fig, slug))


def _means(values: np.ndarray, size: int) -> np.ndarray:
    """At most MAX_BUCKETS bucket means (stacked areas need values, not envelopes)."""
    if size <= 2 * MAX_BUCKETS:
        return values
    edges = np.linspace(0, size, MAX_BUCKETS + 1).astype(int)
    return np.array(
        [
            np.nanmean(values[a:b]) if np.isfinite(values[a:b]).any() else np.nan
            for a, b in pairwise(edges)
        ]
    )


def _bucket_extremes(values: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Per bucket of _means, its minimum and maximum (NaN for a bucket without data)."""
    edges = np.linspace(0, size, MAX_BUCKETS + 1).astype(int)
    low, high = [], []
    for a, b in pairwise(edges):
        chunk = values[a:b]
        ok = np.isfinite(chunk).any()
        low.append(np.nanmin(chunk) if ok else np.nan)
        high.append(np.nanmax(chunk) if ok else np.nan)
    return np.array(low), np.array(high)


TIMELINE_PANEL_IN = 2.0  # inches per panel of the timeline


def timeline(report: dict, data: RunRecord, thresholds: Thresholds) -> Chart:
    """One figure, one time axis: the dialog response stacked from its parts (ms per
    step) above each host's CPU, paging, disk queue and available memory, so a bend in
    the response lines up with the counter that moved with it."""
    slug, title = "chart-timeline", SECTIONS["timeline"]
    # The parts that add up to the dialog response.
    parts = _per_step(data, RESPONSE_PARTS) if data.has(DIALOG_STEPS) else []
    counters = [(key, unit, _per_host(data, key)) for key, unit in OS_UNITS.items()]
    counters = [(key, unit, lines) for key, unit, lines in counters if lines]
    if data.times.size < 2 or not (parts or counters):
        return Chart(slug, title, "ms, OS units", None, "")
    import matplotlib
    from matplotlib.figure import Figure

    ss = report["steady_state"]
    marks = _marks(report, data)
    scale, time_unit = _time_axis(data.times)
    size = data.times.size
    edges = np.linspace(0, size, min(size, MAX_BUCKETS) + 1).astype(int)
    x = (
        data.times[np.clip(edges[1:] - 1, 0, size - 1)] / scale
        if size > 2 * MAX_BUCKETS
        else (data.times / scale)
    )
    # An ST03 hour or a STAD minute is a level over [start, end), drawn as two points per
    # bucket (its start and its end), not a point at its end joined to the next.
    levels = marks["buckets"]
    if levels:
        starts = _bucket_starts(data.times)
        if size > 2 * MAX_BUCKETS:
            starts = starts[edges[:-1]]
        x = np.column_stack([starts / scale, x]).ravel()

    def drawn(values: np.ndarray) -> np.ndarray:
        return np.repeat(values, 2) if levels else values

    panels = int(bool(parts)) + len(counters)
    with _MATPLOTLIB, matplotlib.rc_context({**CHART_STYLE, "svg.hashsalt": slug}):
        # The response panel twice as tall: it is what the others explain.
        ratios = [2] * bool(parts) + [1] * len(counters)
        fig = Figure(figsize=(CHART_SIZE[0], TIMELINE_PANEL_IN * sum(ratios)))
        axes = fig.subplots(
            panels, 1, sharex=True, squeeze=False, gridspec_kw={"height_ratios": ratios}
        )[:, 0]
        fig.subplots_adjust(left=0.07, right=0.8, top=0.98, bottom=0.5 / sum(ratios), hspace=0.3)
        faults = report.get("faults") or []
        k = 0
        if parts:
            ax = axes[0]
            ax.axvspan(
                ss["start_s"] / scale,
                ss["end_s"] / scale,
                color=STEADY_COLOUR,
                lw=0,
                gid="p0-steady",
            )
            _shade_faults(ax, faults, scale, prefix="p0-")
            _shade_gaps(ax, marks["gaps"], scale, prefix="p0-")
            means = [_means(line.values, size) for line in parts]
            ys = [np.nan_to_num(m) for m in means]
            if levels:
                # A bucket without a dialog step has no time per step: a gap, not a zero.
                empty = np.all(np.isnan(means), axis=0)
                ys = [np.where(empty, np.nan, y) for y in ys]
            stack = ax.stackplot(
                x,
                *(drawn(y) for y in ys),
                labels=[line.label for line in parts],
                colors=[LINE_COLOURS[n % len(LINE_COLOURS)] for n in range(len(parts))],
            )
            for n, area in enumerate(stack):
                area.set_gid(f"p0-part-{n}")
            bound = 1000 * thresholds.seconds(DIALOG_RESPONSE)
            ax.axhline(bound, color=BOUND_COLOUR, linestyle="--", lw=1, label=f"{bound:g} ms bound")
            ax.set_ylabel("dialog ms per step, stacked")
            # Headroom above the stack and the bound, where the steady-state shade shows.
            top = max(float(np.nanmax(sum(ys), initial=0.0)), bound)
            ax.set_ylim(0, 1.5 * top)
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)
            k = 1
        for key, unit, lines in counters:
            ax = axes[k]
            ax.axvspan(
                ss["start_s"] / scale,
                ss["end_s"] / scale,
                color=STEADY_COLOUR,
                lw=0,
                gid=f"p{k}-steady",
            )
            # Named once, in the top panel; shaded in every one.
            _shade_faults(ax, faults, scale, label=not parts and k == 0, prefix=f"p{k}-")
            _shade_gaps(ax, marks["gaps"], scale, prefix=f"p{k}-")
            for n, line in enumerate(lines):
                colour = LINE_COLOURS[n % len(LINE_COLOURS)]
                if size > 2 * MAX_BUCKETS:  # the bucket's min-max band keeps its peaks
                    low, high = _bucket_extremes(line.values, size)
                    ax.fill_between(
                        x, drawn(low), drawn(high), color=colour, alpha=ENVELOPE_ALPHA, lw=0
                    )
                ax.plot(
                    x,
                    drawn(_means(line.values, size)),
                    color=colour,
                    linestyle=LINE_STYLES[n // len(LINE_COLOURS) % len(LINE_STYLES)],
                    label=line.label,
                )
            ax.set_ylabel(f"{OS_COUNTER_BY_KEY[key].name} ({unit})", fontsize=8)
            ax.set_ylim(bottom=0)
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)
            k += 1
        axes[-1].set_xlim(0, float(data.times[-1]) / scale)
        axes[-1].set_xlabel(
            _clock_axis(axes[-1], marks["when"], scale)
            if marks["when"] is not None
            else f"time since the run's start ({time_unit})"
        )
        note = (
            f"{size:,} samples in {MAX_BUCKETS} buckets of about {size / MAX_BUCKETS:,.1f}: "
            "bucket means, the OS counters' minimum-maximum band shaded around them"
            if size > 2 * MAX_BUCKETS
            else f"every sample drawn ({size:,})"
        )
        return Chart(
            slug, title, "ms per step; OS counters in their units", _svg(fig, slug), note=note
        )


def benchmark_checks(report: dict, thresholds: Thresholds) -> list[dict]:
    """The SD and BAIT pass criteria with the measured value and its unit."""
    sd, bait = report["benchmark"].get("sd", {}), report["benchmark"].get("bait", {})
    if not sd:
        return []
    law = sd["response_time_law"]
    items = sd["line_items_vs_steps_over_3_pct"]
    bound = thresholds.seconds(DIALOG_RESPONSE)
    # The think time the verdict was judged at (the run's own; seed 000's is 10 s): named as
    # it was, never the benchmark's when the run had another or none.
    # 0: a window read from Prometheus without one given (fromprom), unknown as in checks.py.
    think = sd.get("think_time_s") or None
    at = f"at {think:g} s think time" if think is not None else "think time not known"
    return [
        {
            "check": f"average dialog response < {bound:g} s, {at} (seed 000)",
            "value": sd["dialog_response_s"],
            "unit": "s",
            "passed": sd["dialog_response_below_2s"],
            # Judged only on a measured response at a known think time (an import knows
            # neither by itself: `wlmon check --think-time` judges it).
            **(
                {"value": "not measured", "unit": sd["response_not_measured"], "passed": None}
                if sd.get("response_not_measured")
                else {"unit": "s; think time unknown: not judged", "passed": None}
                if think is None
                else {}
            ),
        },
        {
            "check": "X = N / (R + Z) within 1 %",
            "value": law["residual_pct"],
            "unit": "%",
            "passed": law["holds_within_1pct"],
        },
        {
            "check": "SAPS (dialog steps per hour / 60)",
            "value": sd["saps"] if sd["saps"] is not None else "not measured",
            "unit": "SAPS" if sd["saps"] is not None else sd.get("not_measured", ""),
            # A figure, not a criterion: nothing to pass (and nothing when not measured).
            "passed": None,
        },
        {
            "check": "line items per hour vs steps / 3",
            "value": items,
            "unit": "%",
            "passed": abs(items) < 1 if items is not None else None,
        },
        {
            "check": "BAIT: 60 consecutive minutes measured (longest stretch without a gap)",
            "value": bait.get("longest_gap_free_s", bait.get("measured_window_s")),
            "unit": "s",
            "passed": bait.get("sixty_consecutive_minutes", False),
            **(
                {"value": "not measured", "unit": bait["not_measured"]}
                if bait.get("not_measured")
                else {}
            ),
        },
    ]


# A run's source in words (RunMeta.source), for lines that say where its data came from.
SOURCE_WORDS = {
    "simulated": "a simulated run",
    "prometheus": "a window read from Prometheus",
    "perfmon": "a PerfMon capture",
    "st03": "an ST03 export",
    "stad": "an STAD export",
}


def empty_lines(report: dict, data: RunRecord) -> dict[str, str]:
    """Per section, the one line shown when it has no rows: imported runs lack whole
    sources (a PerfMon file has no ST03, an ST03 export no OS counters or SQL)."""
    has_st03 = bool(report["st03"])
    per_instance = bool(data.of_kind("inst"))
    if not has_st03:
        breaches = "Not checked: no ST03 data in this run."
    elif per_instance:
        breaches = "None: every indicator stayed under its threshold in the steady state."
    else:
        breaches = (
            "None: the average dialog response stayed under its bound; the other indicators"
            " need per-instance series, which this run has not."
        )
    return {
        "checks": "Not applicable: no dialog steps in this run's data.",
        "st03": "No ST03 data in this run.",
        "transactions": "No per-transaction ST03 data in this run.",
        "breaches": breaches,
        "alerts": (
            "None fired in the run's window."
            if report.get("alerts_fired") is not None
            else "Not recorded: only monitored runs collect the monitored system's alerts."
        ),
        "charts": "No time series in this run.",
        "percentiles": report["percentiles"]["missing"],
        "gaps": (
            "None: every step of the window has data."
            if "gaps" in report
            else "Not looked for: this run's data has no clock of its own (it is "
            f"{SOURCE_WORDS.get(data.meta.source, f'of source {data.meta.source!r}')})."
        ),
        "transaction_profile": "No per-transaction ST03 data in this run.",
        "time_profile": "No ST03 data in this run: no time profile.",
        "timeline": "No dialog response or OS counter series in this run.",
        "os_counters": "No OS counters in this run.",
        "top_sql": "No ST05 statement data in this run.",
        "bufferpools": "No buffer-pool data in this run.",
        "audit": "Not an imported file: nothing to audit.",
        "faults": "None: the run injected no fault (only simulated and real-time runs do).",
        "over_time": "No ST03 series or histogram in this run: nothing over time.",
        "distribution": "No dialog response-time histogram in this run.",
        "apdex": report.get("apdex", {}).get("missing", ""),
        "transaction_spread": "No response-time histogram per transaction in this run.",
    }


def render(report: dict, data: RunRecord, thresholds: Thresholds) -> str:
    # I/O wait and network are shown only where the data has them: no empty section.
    shown = {k: v for k, v in SECTIONS.items() if k not in ionet.SECTIONS or report.get(k)}
    return (
        _templates()
        .get_template("report.html")
        .render(
            doc=as_shown(report),
            run=report["run"],
            steady=report["steady_state"],
            sections=shown,
            empty=empty_lines(report, data),
            io_net={k: io_net_charts(report, data, k) for k in ionet.SECTIONS},
            io_net_rows={k: io_net_rows(report.get(k) or []) for k in ionet.SECTIONS},
            checks=benchmark_checks(report, thresholds),
            charts=charts(report, data, thresholds),
            over_time=over_time_charts(report, data, thresholds),
            distribution=distribution_chart(report),
            timeline=timeline(report, data, thresholds),
            made=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        )
    )


def render_compare(base: dict, new: dict, doc: dict) -> str:
    """Two runs side by side: every figure both share, the delta and the verdict within the
    tolerance (5 % unless given: seed 001's repeatability), the window and faults of each."""
    return (
        _templates()
        .get_template("compare.html")
        .render(
            base=base,
            new=new,
            doc=doc,
            counts={
                v: sum(1 for f in doc["figures"] if f["verdict"] == v)
                for v in ("same", "better", "worse")
            },
            made=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        )
    )
