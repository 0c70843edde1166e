"""The dashboards as typed values, UI-neutral: what each panel asks, reads and colours.

The dashboard modules (noc.py, st03.py, ...) fill these; emitters turn them into a UI's
format: `dashboards.perses` (the Perses server wlmon runs) and `dashboards.grafana` (JSON
for a user's own Grafana). Nothing here names a UI's field: units, colours, links and
layout are said once, each emitter maps them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum

# The colours a threshold step may take, by name; the emitters map them (Grafana takes the
# names, Perses hex codes). The hex values are Grafana's default palette, so a colour looks
# the same in both UIs.
COLOURS = {
    "green": "#73bf69",
    "orange": "#ff9830",
    "red": "#f2495c",
    "blue": "#5794f2",
    "yellow": "#fade2a",
    "gray": "#808080",
    "purple": "#b877d9",
    "transparent": "#00000000",
}
GRID_COLUMNS = 24


class ModelError(ValueError):
    """A definition that no UI could draw as meant (named by dashboard and panel)."""


class Lang(StrEnum):
    PROMQL = "promql"  # Prometheus / Thanos query
    LOGSQL = "logsql"  # VictoriaLogs
    FLUX = "flux"  # InfluxDB (Telegraf's and the run events' measurements)


class Kind(StrEnum):
    STAT = "stat"  # one value per series, coloured by its own value
    TIMESERIES = "timeseries"
    TABLE = "table"
    BARS = "bars"  # one bar per item, each coloured by its own value
    LOGS = "logs"
    MARKDOWN = "markdown"
    HEATMAP = "heatmap"


class Unit(StrEnum):
    NONE = "none"  # a plain number
    MS = "ms"
    SECONDS = "s"
    RATIO = "ratio"  # 0..1, shown as a percentage
    PERCENT = "percent"  # 0..100
    BYTES = "bytes"
    BYTES_PER_S = "bytes/s"
    REQUESTS_PER_S = "requests/s"
    OPS_PER_S = "ops/s"
    READS_PER_S = "reads/s"
    WRITES_PER_S = "writes/s"
    SECONDS_PER_S = "s/s"  # busy time per second of wall clock
    DATETIME = "datetime"  # epoch milliseconds shown as an ISO date and time


@dataclass(frozen=True)
class Step:
    """From `value` upwards (None: from minus infinity) the item is drawn in `colour`."""

    value: float | None
    colour: str


@dataclass(frozen=True)
class Thresholds:
    steps: tuple[Step, ...]
    # On a time series: drawn as dashed lines at the step values (the series keep their
    # colours); elsewhere the item takes its step's colour.
    lines: bool = False

    def __post_init__(self) -> None:
        if not self.steps or self.steps[0].value is not None:
            raise ModelError("thresholds: the first step starts at minus infinity (value None)")
        values = [s.value for s in self.steps[1:]]
        if any(v is None or not math.isfinite(v) for v in values):
            raise ModelError("thresholds: only the first step may have no value")
        if values != sorted(values) or len(set(values)) != len(values):  # type: ignore[type-var]
            raise ModelError(f"thresholds: step values must rise, got {values}")
        unknown = [s.colour for s in self.steps if s.colour not in COLOURS]
        if unknown:
            raise ModelError(f"thresholds: unknown colour {unknown[0]!r} (one of {list(COLOURS)})")

    def colour_of(self, value: float) -> str:
        colour = self.steps[0].colour
        for s in self.steps[1:]:
            if value >= s.value:  # type: ignore[operator]
                colour = s.colour
        return colour

    @property
    def limits(self) -> list[float]:
        return [s.value for s in self.steps[1:]]  # type: ignore[misc]


def steps(*at: tuple[float | None, str], lines: bool = False) -> Thresholds:
    return Thresholds(tuple(Step(v, c) for v, c in at), lines)


@dataclass(frozen=True)
class Format:
    unit: Unit = Unit.NONE
    decimals: int | None = None


@dataclass(frozen=True)
class Query:
    expr: str
    lang: Lang = Lang.PROMQL
    legend: str = ""  # series name; {{label}} placeholders
    instant: bool = False  # one value at the range's end, not a line
    table: bool = False  # one row per series, its labels as columns
    heatmap: bool = False  # histogram buckets by `le`
    # The same question in LogQL, for a user whose log store is Loki (Grafana exports built
    # with `--logs loki`); LogsQL queries only.
    logql: str = ""


@dataclass(frozen=True)
class Link:
    """To another wlmon dashboard (by uid) or to a path of the UI (`path`), keeping the
    time range and passing on the variables named; `set_vars` fixes variables, `cell_var`
    sets one from the clicked table cell, `row_vars` from named fields of the clicked row,
    `row_time` the time range from two fields of the row (epoch ms)."""

    title: str
    dashboard: str = ""
    path: str = ""
    keep_time: bool = True
    pass_vars: tuple[str, ...] = ("sid",)
    set_vars: tuple[tuple[str, str], ...] = ()
    cell_var: str = ""
    row_vars: tuple[tuple[str, str], ...] = ()
    row_time: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        if bool(self.dashboard) == bool(self.path):
            raise ModelError(f"link {self.title!r}: a dashboard uid or a path, not both")


@dataclass(frozen=True)
class ValueText:
    """A number shown as a word (sapstartsrv's 2 as GREEN), in a colour."""

    value: str
    text: str
    colour: str


@dataclass(frozen=True)
class Column:
    """A table column: a label of the rows, or `#k` for the value of query k (0-based)."""

    field: str
    header: str
    format: Format | None = None
    thresholds: Thresholds | None = None
    cell: str = "plain"  # plain | background | text | gauge
    link: Link | None = None
    mappings: tuple[ValueText, ...] = ()
    width: int | None = None
    max: float | None = None


@dataclass(frozen=True)
class Legend:
    """Beside the plot as a table (worst first, every line named), or a list below."""

    table: bool = True
    values: tuple[str, ...] = ("last", "max")
    sort_by: str = "max"


INSTANCE_LEGEND = Legend()


@dataclass
class Panel:
    kind: Kind
    title: str
    description: str
    queries: list[Query] = field(default_factory=list)
    width: int = 12
    height: int = 8
    format: Format = Format()
    thresholds: Thresholds | None = None
    min: float | None = None
    max: float | None = None
    links: tuple[Link, ...] = ()
    legend: Legend | None = None
    stacked: bool = False
    fill: float | None = None  # area opacity 0..1 of lines (bars: of the bars)
    series_colours: tuple[tuple[str, str], ...] = ()  # series name -> fixed colour
    mappings: tuple[ValueText, ...] = ()
    no_value: str = ""
    # Stats: the background takes the colour (else the value), a trend line under it, and
    # the series name beside the value (one tile per instance).
    background: bool = True
    sparkline: bool = False
    show_name: bool = False
    # Tables: the columns in order (labels not named are hidden), the sort, labels hidden,
    # and a pivot (rows by one label, columns by another, the value in the cells).
    columns: tuple[Column, ...] = ()
    sort_by: tuple[str, bool] | None = None  # (header, descending)
    hide: tuple[str, ...] = ()
    pivot: tuple[str, str] | None = None
    horizontal: bool = True  # bars
    text: str = ""  # markdown
    # Where the flow layout put it (Dashboard.add sets these).
    x: int = 0
    y: int = 0

    def __post_init__(self) -> None:
        where = f"panel {self.title!r}"
        if not self.description:
            raise ModelError(f"{where}: says nothing of what it answers (description)")
        if not 1 <= self.width <= GRID_COLUMNS:
            raise ModelError(f"{where}: width {self.width} not in 1..{GRID_COLUMNS}")
        if self.kind is Kind.MARKDOWN:
            if not self.text:
                raise ModelError(f"{where}: a markdown panel without text")
        elif not self.queries:
            raise ModelError(f"{where}: no query")
        langs = {q.lang for q in self.queries}
        if len(langs) > 1:
            raise ModelError(f"{where}: queries of one language per panel, got {sorted(langs)}")
        if (self.kind is Kind.LOGS) != (langs == {Lang.LOGSQL}):
            raise ModelError(f"{where}: logs panels, and only they, read LogsQL")
        if any(q.lang is Lang.LOGSQL and not q.logql for q in self.queries):
            raise ModelError(f"{where}: a LogsQL query without its LogQL twin (for Loki)")
        if self.thresholds and self.thresholds.lines and self.kind is not Kind.TIMESERIES:
            raise ModelError(f"{where}: threshold lines are for time series")

    @property
    def lang(self) -> Lang | None:
        return self.queries[0].lang if self.queries else None


@dataclass(frozen=True)
class Variable:
    """A picker of a label's values, from the series `matcher` selects (PromQL), or of the
    values a Flux query returns (`flux`). All and many by default, as a regex."""

    name: str
    label: str = ""
    matcher: str = ""
    flux: str = ""
    description: str = ""
    hidden: bool = False
    multi: bool = True

    def __post_init__(self) -> None:
        if bool(self.matcher) == bool(self.flux):
            raise ModelError(f"variable {self.name!r}: a PromQL matcher or a Flux query")


@dataclass(frozen=True)
class Annotation:
    """Events drawn over the time series: log lines (LogsQL) or a run's own tags."""

    name: str
    colour: str
    query: Query | None = None
    title_field: str = ""
    tag_fields: tuple[str, ...] = ()
    run_tags: str = ""  # the variable whose value tags the run's annotations


@dataclass
class Group:
    title: str
    collapsed: bool = False
    panels: list[Panel] = field(default_factory=list)


@dataclass
class Dashboard:
    uid: str  # wlmon-<name>
    title: str
    folder: str  # NOC, SAP, Database, Hosts, Forensics
    tags: tuple[str, ...]
    description: str
    variables: tuple[Variable, ...]
    groups: list[Group] = field(default_factory=list)
    annotations: tuple[Annotation, ...] = ()
    refresh: str = "30s"
    duration: str = "1h"

    @property
    def name(self) -> str:
        return self.uid.removeprefix("wlmon-")

    @property
    def panels(self) -> list[Panel]:
        return [p for g in self.groups for p in g.panels]

    def group(self, title: str, collapsed: bool = False) -> Group:
        g = Group(title, collapsed)
        self.groups.append(g)
        return g

    def add(self, panel: Panel) -> Panel:
        """Into the last group, left to right in rows of 24 columns (a row as tall as its
        tallest panel), positions counted from the group's top."""
        if not self.groups:
            raise ModelError(f"{self.uid}: add a group before its panels")
        g = self.groups[-1]
        if g.panels:
            last = g.panels[-1]
            row = [p for p in g.panels if p.y == last.y]
            x, y = last.x + last.width, last.y
            if x + panel.width > GRID_COLUMNS:
                x, y = 0, y + max(p.height for p in row)
        else:
            x, y = 0, 0
        panel.x, panel.y = x, y
        g.panels.append(panel)
        return panel

    def check(self) -> None:
        """What no emitter can fix: unique titles, variables read by someone, links to
        dashboards that exist are checked by the build (dashboards.build.check)."""
        titles = [p.title for p in self.panels]
        dup = {t for t in titles if titles.count(t) > 1}
        if dup:
            raise ModelError(f"{self.uid}: panel titles twice: {sorted(dup)}")
