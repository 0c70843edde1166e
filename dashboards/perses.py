"""Perses resources from the dashboard model: one `Dashboard` per wlmon dashboard, in the
project `wlmon`, read by the Perses server wlmon runs (v0.54, its plugins from the npm
registry). Plugin specs follow the CUE schemas of github.com/perses/plugins (StatChart,
TimeSeriesChart, Table, BarChart, Markdown, LogsTable (a heatmap as its quantiles); PrometheusTimeSeriesQuery,
VictoriaLogsLogQuery; PrometheusLabelValuesVariable); tests/dashboards lints the output
with percli against those schemas.

The datasources are the project's, by name: `prometheus` (Prometheus or Thanos query) and
`logs` (VictoriaLogs); the dashboards embed none.
"""

from __future__ import annotations

import re

from dashboards.model import (
    COLOURS,
    Column,
    Dashboard,
    Format,
    Kind,
    Lang,
    Link,
    Panel,
    Query,
    Thresholds,
    Unit,
    ValueText,
    Variable,
)

PROJECT = "wlmon"
PROMETHEUS = {"kind": "PrometheusDatasource", "name": "prometheus"}
# The plugin versions the specs follow: those the stack's Perses loads (the npm registry's
# for v0.54; tests/dashboards lints against the archives of the perses component).
PLUGIN_VERSIONS = {
    "@perses-dev/stat-chart-plugin": "0.10.0",  # no colorMode: the value takes the colour
    "@perses-dev/timeseries-chart-plugin": "0.10.2",
    "@perses-dev/table-plugin": "0.8.1",  # no per-column cell colours nor data links
    "@perses-dev/bar-chart-plugin": "0.10.0",  # no thresholds, no orientation
    "@perses-dev/markdown-plugin": "0.9.1",
    "@perses-dev/prometheus-plugin": "0.53.4",  # no instant queries: stats take the last
}
# The logs panel, its query and datasource plugin kinds, in ONE place: which logs plugin the
# Perses server carries is settled with its build (provisioning/). VictoriaLogs' own plugin
# (@perses-dev/victorialogs-plugin 0.4.0 with the logs table of @perses-dev/logs-table-plugin)
# reads LogsQL; @perses-dev/loki-plugin 0.2.0 (LogsTable, LokiLogQuery, LokiDatasource) is
# the one the npm registry serves here, and sends LogQL to a Loki query API.
LOGS_VICTORIALOGS = {
    # The logs table the stack's Perses carries is the Loki plugin's (0.2.0: `time`, `wrap`);
    # VictoriaLogs' plugin (0.1.0, built from source) adds its datasource and query.
    "panel": "LogsTable",
    "panel_spec": {"time": True, "wrap": True},
    "query": "VictoriaLogsLogQuery",
    "datasource": {"kind": "VictoriaLogsDatasource", "name": "logs"},
}
LOGS_LOKI_PLUGIN = {
    "panel": "LogsTable",  # the loki plugin's own logs table, of other field names
    "panel_spec": {"time": True, "wrap": True},
    "query": "LokiLogQuery",
    "datasource": {"kind": "LokiDatasource", "name": "logs"},
}
LOGS = LOGS_VICTORIALOGS

UNITS = {
    Unit.NONE: "decimal",
    # Not "milliseconds": Perses' time units rescale (2,086 ms with 0 decimals prints "2s");
    # a plain number keeps every digit, and each ms panel or column says "(ms" in its title.
    Unit.MS: "decimal",
    Unit.SECONDS: "seconds",
    Unit.RATIO: "percent-decimal",
    Unit.PERCENT: "percent",
    Unit.BYTES: "bytes",
    Unit.BYTES_PER_S: "bytes/sec",
    Unit.REQUESTS_PER_S: "requests/sec",
    Unit.OPS_PER_S: "ops/sec",
    Unit.READS_PER_S: "reads/sec",
    Unit.WRITES_PER_S: "writes/sec",
    Unit.SECONDS_PER_S: "decimal",  # Perses has no busy-time unit: the title says s/s
    Unit.DATETIME: "datetime-iso",
}
# Bytes are left to shorten (4.03 GB): 4,026,531,840 bytes cut the legend to "4,026,53...".
SHORTENABLE = {
    "decimal",
    "requests/sec",
    "ops/sec",
    "reads/sec",
    "writes/sec",
}


def fmt(f: Format) -> dict:
    unit = UNITS[f.unit]
    out: dict = {"unit": unit}
    if f.unit is Unit.DATETIME:
        return out  # a date has no decimals in Perses' format
    if f.decimals is not None:
        out["decimalPlaces"] = f.decimals
    if unit in SHORTENABLE:
        # 2,086 stays 2,086, not "2.09K": the digits are the reading.
        out["shortValues"] = False
    return out


def hex_of(colour: str) -> str:
    return COLOURS[colour]


def thresholds(t: Thresholds) -> dict:
    return {
        "mode": "absolute",
        "defaultColor": hex_of(t.steps[0].colour),
        "steps": [{"value": s.value, "color": hex_of(s.colour)} for s in t.steps[1:]],
    }


def mappings(values: tuple[ValueText, ...]) -> list[dict]:
    return [
        {
            "kind": "Value",
            "spec": {"value": v.value, "result": {"value": v.text, "color": hex_of(v.colour)}},
        }
        for v in values
    ]


def _var_param(name: str) -> str:
    """Perses reads `var-<name>=a,b` (dashboards' query-params.ts); its `queryparam` format
    would write `<name>=a&<name>=b`, without the prefix."""
    return f"var-{name}=${{{name}:csv}}"


def url(link: Link) -> str:
    """A Perses path: the dashboard in the project, the time range and variables kept."""
    params = ["start=$__from", "end=$__to"] if link.keep_time else []
    params += [_var_param(v) for v in link.pass_vars]
    params += [f"var-{k}={v}" for k, v in link.set_vars]
    name = link.dashboard.removeprefix("wlmon-")
    return f"/projects/{PROJECT}/dashboards/{name}?" + "&".join(params)


def panel_link(link: Link) -> dict:
    return {"name": link.title, "url": url(link), "renderVariables": True}


def query(q: Query) -> dict:
    if q.lang is Lang.LOGSQL:
        return {
            "kind": "LogQuery",
            "spec": {
                "plugin": {
                    "kind": LOGS["query"],
                    "spec": {"datasource": LOGS["datasource"], "query": q.expr},
                }
            },
        }
    spec: dict = {"datasource": PROMETHEUS, "query": q.expr}
    if q.legend:
        spec["seriesNameFormat"] = q.legend
    return {
        "kind": "TimeSeriesQuery",
        "spec": {"plugin": {"kind": "PrometheusTimeSeriesQuery", "spec": spec}},
    }


def _unsupported(p: Panel) -> dict:
    """Perses has no InfluxDB plugin: the panel says where its data is, with its query."""
    text = (
        f"{p.description}\n\nThis panel reads InfluxDB (Flux), which Perses has no plugin "
        "for: open it in Grafana (dashboards/grafana/), or run the query in InfluxDB:\n\n"
        f"```\n{p.queries[0].expr}\n```"
    )
    return {"kind": "Markdown", "spec": {"text": text}}


def _stat(p: Panel, metric_label: str = "") -> dict:
    spec: dict = {"calculation": "last-number", "format": fmt(p.format)}
    if p.thresholds:
        spec["thresholds"] = thresholds(p.thresholds)
    if p.sparkline:
        spec["sparkline"] = {}
    if p.mappings:
        spec["mappings"] = mappings(p.mappings)
    if metric_label:
        spec["metricLabel"] = metric_label
    return {"kind": "StatChart", "spec": spec}


def _legend_label(p: Panel) -> str:
    """The label a `{{label}}` legend names (one tile or bar per value of it)."""
    m = re.fullmatch(r"\{\{(\w+)\}\}", p.queries[0].legend)
    return m.group(1) if m else ""


def _timeseries(p: Panel) -> dict:
    spec: dict = {}
    if p.legend:
        spec["legend"] = {
            "position": "right" if p.legend.table else "bottom",
            "mode": "table" if p.legend.table else "list",
            "values": list(p.legend.values),
        }
    axis: dict = {"format": fmt(p.format)}
    if p.min is not None:
        axis["min"] = p.min
    if p.max is not None:
        axis["max"] = p.max
    spec["yAxis"] = axis
    if p.thresholds:
        spec["thresholds"] = thresholds(p.thresholds)
    # connectNulls: the chart lays every series on one time grid, and a point between two
    # nulls is drawn as nothing at all without a symbol (lines missing, legends full).
    visual: dict = {"display": "line", "lineWidth": 1.25, "connectNulls": True}
    if p.stacked:
        visual["stack"] = "all"
    if p.fill is not None:
        visual["areaOpacity"] = p.fill
    spec["visual"] = visual
    fixed = dict(p.series_colours)
    settings = [
        {"queryIndex": n, "colorMode": "fixed-single", "colorValue": hex_of(fixed[q.legend])}
        for n, q in enumerate(p.queries)
        if q.legend in fixed
    ]
    if settings:
        spec["querySettings"] = settings
    return {"kind": "TimeSeriesChart", "spec": spec}


def _value_column(p: Panel, c: Column) -> str:
    """Perses names an instant query's value `value`, or `value #k` (1-based) for many."""
    k = int(c.field[1:])
    return "value" if len(p.queries) == 1 else f"value #{k + 1}"


def _cells(t: Thresholds, cell: str) -> list[dict]:
    """Per-cell colours: a range condition per threshold step (each cell by its own value)."""
    key = "textColor" if cell == "text" else "backgroundColor"
    out = []
    bounds = [*t.limits, None]
    lower: float | None = None
    for step, upper in zip(t.steps, bounds, strict=True):
        rng: dict = {}
        if lower is not None:
            rng["min"] = lower
        if upper is not None:
            rng["max"] = upper
        out.append({"condition": {"kind": "Range", "spec": rng}, key: hex_of(step.colour)})
        lower = upper
    return out


def _column(p: Panel, c: Column) -> dict:
    value = c.field.startswith("#")
    name = _value_column(p, c) if value else c.field
    out: dict = {"name": name, "header": c.header}
    f = c.format or (p.format if value else None)
    if f is not None:
        out["format"] = fmt(f)
    if c.thresholds and c.cell in ("background", "text"):
        # Each cell coloured by its own value against this column's thresholds: the table
        # plugin (0.8.1) colours cells only table-wide, so the cell is drawn by a stat.
        stat: dict = {"calculation": "last-number", "thresholds": thresholds(c.thresholds)}
        if f is not None:
            stat["format"] = fmt(f)
        if c.mappings:
            stat["mappings"] = mappings(c.mappings)
        out["plugin"] = {"kind": "StatChart", "spec": stat}
    if c.width:
        out["width"] = c.width
    if p.sort_by and p.sort_by[0] == c.header:
        out["sort"] = "desc" if p.sort_by[1] else "asc"
    return out


def _table(p: Panel) -> dict:
    spec: dict = {"density": "compact"}
    settings = [_column(p, c) for c in p.columns]
    settings += [{"name": h, "hide": True} for h in (*p.hide, "timestamp", "__name__")]
    spec["columnSettings"] = settings
    if p.mappings:
        # Every cell a light (sapstartsrv's codes as words in their colours).
        spec["cellSettings"] = [
            {
                "condition": {"kind": "Value", "spec": {"value": v.value}},
                "text": v.text,
                "backgroundColor": hex_of(v.colour),
            }
            for v in p.mappings
        ]
    labels = [c.field for c in p.columns if not c.field.startswith("#")]
    if len(p.queries) > 1 and labels:
        # One row per key, the queries' values side by side: the table names query k's
        # labels `label #k`; MergeSeries drops the index, the join then meets on the labels.
        spec["transforms"] = [
            {"kind": "MergeSeries", "spec": {}},
            {"kind": "JoinByColumnValue", "spec": {"columns": labels}},
        ]
    return {"kind": "Table", "spec": spec}


def _bars(p: Panel) -> dict:
    """Each item against the thresholds: Perses' BarChart (v0.10) colours bars only by
    series name (`colorOverrides`), so items with a threshold are stat tiles, one per item,
    each coloured by its own value; a bar chart where no threshold colours them."""
    if p.thresholds and len(p.thresholds.steps) > 1:
        # No metricLabel: StatChart would print the label's value (VA01) in place of the
        # number; each tile is titled by its series name (the legend) over its own value.
        return _stat(p)
    return {
        "kind": "BarChart",
        "spec": {"calculation": "last-number", "format": fmt(p.format), "sort": "desc"},
    }


def plugin(p: Panel) -> dict:
    if p.lang is Lang.FLUX:
        return _unsupported(p)
    match p.kind:
        case Kind.STAT:
            return _stat(p, _legend_label(p) if p.show_name else "")
        case Kind.TIMESERIES:
            return _timeseries(p)
        case Kind.TABLE:
            return _table(p)
        case Kind.BARS:
            return _bars(p)
        case Kind.HEATMAP:
            # No heatmap plugin on the npm registry for this Perses: the same buckets drawn
            # as their quantiles (heatmap_quantiles), the distribution's shape as lines.
            return _timeseries(p)
        case Kind.LOGS:
            return {"kind": LOGS["panel"], "spec": dict(LOGS["panel_spec"])}
        case Kind.MARKDOWN:
            return {"kind": "Markdown", "spec": {"text": p.text}}
    raise AssertionError(p.kind)


# What a heatmap's `le` buckets become where no heatmap can be drawn.
HEATMAP_QUANTILES = (0.5, 0.9, 0.99)


def heatmap_quantiles(q: Query) -> list[Query]:
    """The bucket query (`sum by (le) (...)`) as p50/p90/p99 lines of the same buckets."""
    return [
        Query(f"histogram_quantile({x:g}, {q.expr})", legend=f"p{round(x * 100)}")
        for x in HEATMAP_QUANTILES
    ]


def panel(p: Panel) -> dict:
    spec: dict = {
        "display": {"name": p.title, "description": p.description},
        "plugin": plugin(p),
    }
    if p.lang is not Lang.FLUX and p.queries:
        queries = p.queries
        if p.kind is Kind.HEATMAP:
            queries = [x for q in queries for x in heatmap_quantiles(q)]
            spec["display"]["description"] += " Drawn here as p50, p90 and p99 of the same bands."
        spec["queries"] = [query(q) for q in queries]
    # Links to another dashboard only: Perses has no page of firing alerts (`path`), and a
    # link from a row's fields (row_vars, row_time) needs a data link.
    links = [lk for lk in p.links if lk.dashboard and not (lk.row_vars or lk.row_time)]
    # A table's per-row links (the clicked instance, SID or run) need data links the table
    # plugin 0.8.1 lacks: the panel links to the target with the variables kept instead.
    links += [
        Link(
            c.link.title,
            c.link.dashboard,
            c.link.path,
            c.link.keep_time,
            tuple(
                dict.fromkeys(
                    (*c.link.pass_vars, c.link.cell_var) if c.link.cell_var else c.link.pass_vars
                )
            ),
            c.link.set_vars,
        )
        for c in p.columns
        if c.link
    ]
    if links:
        spec["links"] = [panel_link(link) for link in links]
    return {"kind": "Panel", "spec": spec}


def variable(v: Variable) -> dict:
    display = {"name": v.label or v.name, "hidden": v.hidden}
    if v.description:
        display["description"] = v.description
    if v.flux:
        # No InfluxDB plugin in Perses: the run is typed, or set by a link (the Runs table).
        return {
            "kind": "TextVariable",
            "spec": {"name": v.name, "display": display, "value": ""},
        }
    return {
        "kind": "ListVariable",
        "spec": {
            "name": v.name,
            "display": display,
            "allowAllValue": v.multi,
            "allowMultiple": v.multi,
            "customAllValue": ".*",
            "defaultValue": "$__all" if v.multi else "",
            "sort": "alphabetical-asc",
            "plugin": {
                "kind": "PrometheusLabelValuesVariable",
                "spec": {"datasource": PROMETHEUS, "labelName": v.name, "matchers": [v.matcher]},
            },
        },
    }


def key(title: str, taken: set[str]) -> str:
    """A panel's key in `spec.panels`: its title in [a-z0-9_], unique in the dashboard."""
    base = re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_")[:48] or "panel"
    k, n = base, 2
    while k in taken:
        k, n = f"{base}_{n}", n + 1
    taken.add(k)
    return k


def dashboard(d: Dashboard) -> dict:
    panels: dict = {}
    layouts = []
    taken: set[str] = set()
    for g in d.groups:
        items = []
        for p in g.panels:
            k = key(p.title, taken)
            panels[k] = panel(p)
            items.append(
                {
                    "x": p.x,
                    "y": p.y,
                    "width": p.width,
                    "height": p.height,
                    "content": {"$ref": f"#/spec/panels/{k}"},
                }
            )
        layouts.append(
            {
                "kind": "Grid",
                "spec": {
                    "display": {"title": g.title, "collapse": {"open": not g.collapsed}},
                    "items": items,
                },
            }
        )
    return {
        "kind": "Dashboard",
        "metadata": {"name": d.name, "project": PROJECT},
        "spec": {
            "display": {"name": d.title, "description": d.description},
            "duration": d.duration,
            "refreshInterval": d.refresh,
            "variables": [variable(v) for v in d.variables],
            "panels": panels,
            "layouts": layouts,
        },
    }
