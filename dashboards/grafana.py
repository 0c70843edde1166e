"""Grafana dashboard JSON from the dashboard model, for a user's own Grafana (11.x), built
with grafana-foundation-sdk (Apache-2.0), the builders Grafana publishes for its schema.

Each file is an export with `__inputs`: Grafana's import asks for the data sources
(`DS_PROMETHEUS`: Prometheus or Thanos query; `DS_LOGS`: VictoriaLogs through its
Grafana plugin, LogsQL; `DS_INFLUXDB`: InfluxDB with Flux, for the panels that read
Telegraf and the run events) and fills them in. docs/dashboards.md says how.
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from typing import Any

from grafana_foundation_sdk.builders import (
    bargauge,
    heatmap,
    loki,
    prometheus,
    stat,
    table,
    text,
    timeseries,
)
from grafana_foundation_sdk.builders import (
    common as common_b,
)
from grafana_foundation_sdk.builders import (
    dashboard as dash_b,
)
from grafana_foundation_sdk.builders import (
    logs as logs_b,
)
from grafana_foundation_sdk.cog import builder as cogbuilder
from grafana_foundation_sdk.cog import variants
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import common
from grafana_foundation_sdk.models import dashboard as dash_m
from grafana_foundation_sdk.models import prometheus as prom_m

from dashboards.model import (
    Column,
    Dashboard,
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

# The SDK's schema line: Grafana 11.6's dashboard schema (schemaVersion 41).
GRAFANA_VERSION = "11.6.0"
# Import-time inputs: name -> (label, plugin id, plugin name, description).
INPUTS = {
    Lang.PROMQL: (
        "DS_PROMETHEUS",
        "Prometheus",
        "prometheus",
        "Prometheus",
        "Prometheus or Thanos query holding wlmon's series",
    ),
    Lang.LOGSQL: (
        "DS_LOGS",
        "Logs (VictoriaLogs)",
        "victoriametrics-logs-datasource",
        "VictoriaLogs",
        "VictoriaLogs holding wlmon's log lines (LogsQL)",
    ),
    Lang.FLUX: (
        "DS_INFLUXDB",
        "InfluxDB (Flux)",
        "influxdb",
        "InfluxDB",
        "InfluxDB with Flux: Telegraf's measurements and the run events",
    ),
}

# With `--logs loki` (python -m dashboards.build --grafana-loki DIR): the log panels and
# annotations read a Loki data source, in LogQL (each LogsQL query carries its LogQL twin).
LOKI_INPUT = (
    "DS_LOGS",
    "Logs (Loki)",
    "loki",
    "Loki",
    "Loki holding wlmon's log lines (LogQL)",
)
_LOKI: ContextVar[bool] = ContextVar("loki", default=False)


def _inputs() -> dict[Lang, tuple[str, str, str, str, str]]:
    return {**INPUTS, Lang.LOGSQL: LOKI_INPUT} if _LOKI.get() else INPUTS


def _logs_expr(q: Query) -> str:
    return q.logql if _LOKI.get() else q.expr


UNITS = {
    Unit.NONE: "none",
    # A suffix, not Grafana's "ms": its time units rescale, 2,086 ms would print as "2 s".
    Unit.MS: "suffix: ms",
    Unit.SECONDS: "s",
    Unit.RATIO: "percentunit",
    Unit.PERCENT: "percent",
    Unit.BYTES: "bytes",
    Unit.BYTES_PER_S: "Bps",
    Unit.REQUESTS_PER_S: "reqps",
    Unit.OPS_PER_S: "ops",
    Unit.READS_PER_S: "rps",
    Unit.WRITES_PER_S: "wps",
    Unit.SECONDS_PER_S: "suffix: s/s",
    Unit.DATETIME: "dateTimeAsIso",
}


def ds(lang: Lang) -> dash_m.DataSourceRef:
    name, _, plugin_id, _, _ = _inputs()[lang]
    return dash_m.DataSourceRef(type_val=plugin_id, uid=f"${{{name}}}")


class FluxQuery(cogbuilder.Builder[variants.Dataquery], variants.Dataquery):
    """A Flux target: the SDK has no InfluxDB query type, and Grafana's InfluxDB data
    source reads `query` as Flux when the data source is set to Flux."""

    def __init__(self, query: str, ref_id: str) -> None:
        self._query, self._ref_id = query, ref_id

    def build(self) -> FluxQuery:
        return self

    def to_json(self) -> dict[str, Any]:
        return {"refId": self._ref_id, "query": self._query, "datasource": ds(Lang.FLUX)}


def target(q: Query, n: int) -> cogbuilder.Builder:
    ref = chr(ord("A") + n)
    if q.lang is Lang.FLUX:
        return FluxQuery(q.expr, ref)
    if q.lang is Lang.LOGSQL:
        return (
            loki.Dataquery()
            .expr(_logs_expr(q))
            .ref_id(ref)
            .query_type("range")
            .datasource(ds(q.lang))
        )
    t = (
        prometheus.Dataquery()
        .expr(q.expr)
        .ref_id(ref)
        .legend_format(q.legend)
        .datasource(ds(q.lang))
    )
    if q.table:
        t = t.format(prom_m.PromQueryFormat.TABLE)
    elif q.heatmap:
        t = t.format(prom_m.PromQueryFormat.HEATMAP)
    return t.instant() if q.instant else t.range()


def thresholds(t: Thresholds) -> dash_b.ThresholdsConfig:
    return (
        dash_b.ThresholdsConfig()
        .mode(dash_m.ThresholdsMode.ABSOLUTE)
        .steps([dash_m.Threshold(value=s.value, color=s.colour) for s in t.steps])
    )


def mappings(values: tuple[ValueText, ...]) -> list[dash_m.ValueMap]:
    return [
        dash_m.ValueMap(
            options={
                v.value: dash_m.ValueMappingResult(text=v.text, color=v.colour, index=n)
                for n, v in enumerate(values)
            }
        )
    ]


def url(link: Link) -> str:
    """A Grafana path: /d/<uid>, the time range and variables kept."""
    if link.path == "alerts":
        return "/alerting/list?search=state:firing&view=list"
    if link.path:
        return link.path
    params = []
    if link.cell_var:
        params.append(f"var-{link.cell_var}=${{__value.raw}}")
    params += [f"var-{k}=${{__data.fields.{f}}}" for k, f in link.row_vars]
    if link.row_time:
        start, end = link.row_time
        params += [f"from=${{__data.fields.{start}}}", f"to=${{__data.fields.{end}}}"]
    elif link.keep_time:
        params.append("${__url_time_range}")
    params += [f"${{{v}:queryparam}}" for v in link.pass_vars]
    params += [f"var-{k}={v}" for k, v in link.set_vars]
    return f"/d/{link.dashboard}?" + "&".join(params)


def link(lk: Link) -> dash_b.DashboardLink:
    # A data link: the SDK's DashboardLink builder carries title and url as Grafana's
    # field links read them.
    return dash_b.DashboardLink(lk.title).url(url(lk))


def _common(b: Any, p: Panel) -> Any:
    b = (
        b.title(p.title)
        .description(p.description)
        .grid_pos(dash_m.GridPos(h=p.height, w=p.width, x=p.x, y=p.y))
        .datasource(ds(p.lang))
    )
    for n, q in enumerate(p.queries):
        b = b.with_target(target(q, n))
    f = p.format
    if f.unit is not Unit.NONE or p.kind is not Kind.TIMESERIES:
        b = b.unit(UNITS[f.unit])
    if f.decimals is not None:
        b = b.decimals(f.decimals)
    if p.min is not None:
        b = b.min(p.min)
    if p.max is not None:
        b = b.max(p.max)
    if p.thresholds:
        b = b.thresholds(thresholds(p.thresholds))
    if p.mappings:
        b = b.mappings(mappings(p.mappings))
    if p.no_value:
        b = b.no_value(p.no_value)
    if p.links:
        b = b.data_links([link(lk) for lk in p.links])
    return b


def _colour_by_thresholds(b: Any) -> Any:
    return b.color_scheme(dash_b.FieldColor().mode(dash_m.FieldColorModeId.THRESHOLDS))


def _stat(p: Panel) -> Any:
    b = _common(stat.Panel(), p)
    b = b.color_mode(
        common.BigValueColorMode.BACKGROUND if p.background else common.BigValueColorMode.VALUE
    )
    b = b.graph_mode(
        common.BigValueGraphMode.AREA if p.sparkline else common.BigValueGraphMode.NONE
    )
    b = b.reduce_options(common_b.ReduceDataOptions().calcs(["lastNotNull"]))
    if p.show_name:
        b = b.text_mode(common.BigValueTextMode.VALUE_AND_NAME)
    return _colour_by_thresholds(b)


def _legend(p: Panel) -> common_b.VizLegendOptions:
    lg = p.legend
    assert lg is not None
    calcs = {"last": "lastNotNull", "max": "max", "mean": "mean", "min": "min"}
    out = (
        common_b.VizLegendOptions()
        .show_legend(True)
        .display_mode(common.LegendDisplayMode.TABLE if lg.table else common.LegendDisplayMode.LIST)
        .placement(common.LegendPlacement.RIGHT if lg.table else common.LegendPlacement.BOTTOM)
        .calcs([calcs[v] for v in lg.values])
    )
    if lg.table:
        out = out.sort_by(lg.sort_by.capitalize()).sort_desc(True)
    return out


def _timeseries(p: Panel) -> Any:
    b = _common(timeseries.Panel(), p)
    if p.legend:
        b = b.legend(_legend(p))
    if p.thresholds and p.thresholds.lines:
        # Dashed lines only: shading would paint healthy data in the alarm colour.
        b = b.thresholds_style(
            common_b.GraphThresholdsStyleConfig().mode(common.GraphThresholdsStyleMode.DASHED)
        )
    if p.stacked:
        b = b.stacking(common_b.StackingConfig().mode(common.StackingMode.NORMAL))
    if p.fill is not None:
        b = b.fill_opacity(round(100 * p.fill))
    for name, colour in p.series_colours:
        b = b.override_by_name(
            name,
            [
                dash_m.DynamicConfigValue(
                    id_val="color", value={"mode": "fixed", "fixedColor": colour}
                )
            ],
        )
    return b


def _bars(p: Panel) -> Any:
    """A bar gauge: each item a bar coloured by its own value against the thresholds (the
    bar chart colours all bars by one value)."""
    b = _common(bargauge.Panel(), p)
    b = b.orientation(
        common.VizOrientation.HORIZONTAL if p.horizontal else common.VizOrientation.VERTICAL
    )
    b = b.display_mode(common.BarGaugeDisplayMode.BASIC)
    b = b.reduce_options(common_b.ReduceDataOptions().calcs(["lastNotNull"]))
    return _colour_by_thresholds(b)


CELLS = {
    "background": common.TableCellDisplayMode.COLOR_BACKGROUND,
    "text": common.TableCellDisplayMode.COLOR_TEXT,
}


def _cell_options(cell: str) -> dict:
    if cell == "gauge":
        return {"type": "gauge", "mode": "basic"}
    return {"type": str(CELLS[cell])}


def _override(c: Column, name: str) -> list[dash_m.DynamicConfigValue]:
    props = []
    if c.format is not None:
        props.append(dash_m.DynamicConfigValue(id_val="unit", value=UNITS[c.format.unit]))
        if c.format.decimals is not None:
            props.append(dash_m.DynamicConfigValue(id_val="decimals", value=c.format.decimals))
    if c.thresholds:
        props.append(
            dash_m.DynamicConfigValue(id_val="thresholds", value=thresholds(c.thresholds).build())
        )
        props.append(
            dash_m.DynamicConfigValue(
                id_val="color", value={"mode": str(dash_m.FieldColorModeId.THRESHOLDS)}
            )
        )
    if c.cell != "plain":
        props.append(
            dash_m.DynamicConfigValue(id_val="custom.cellOptions", value=_cell_options(c.cell))
        )
    if c.max is not None:
        props.append(dash_m.DynamicConfigValue(id_val="max", value=c.max))
    if c.mappings:
        props.append(dash_m.DynamicConfigValue(id_val="mappings", value=mappings(c.mappings)))
    if c.width:
        props.append(dash_m.DynamicConfigValue(id_val="custom.width", value=c.width))
    if c.link:
        props.append(dash_m.DynamicConfigValue(id_val="links", value=[link(c.link).build()]))
    return props


def _value_name(p: Panel, c: Column) -> str:
    """Grafana names query k's value `Value #<refId>` once tables are merged."""
    k = int(c.field[1:])
    return f"Value #{chr(ord('A') + k)}" if len(p.queries) > 1 else "Value"


def _table(p: Panel) -> Any:
    b = _common(table.Panel(), p)
    if p.mappings:
        b = b.cell_options(common.TableColoredBackgroundCellOptions())
        b = _colour_by_thresholds(b)
    transforms: list[dash_m.DataTransformerConfig] = []
    if len(p.queries) > 1:
        transforms.append(dash_m.DataTransformerConfig(id_val="merge", options={}))
    if p.pivot:
        row, col = p.pivot
        transforms.append(
            dash_m.DataTransformerConfig(
                id_val="groupingToMatrix",
                options={"columnField": col, "rowField": row, "valueField": "Value"},
            )
        )
    if p.columns:
        source = {
            c.field: _value_name(p, c) if c.field.startswith("#") else c.field for c in p.columns
        }
        hidden = {h: True for h in ("Time", "__name__", *p.hide)}
        transforms.append(
            dash_m.DataTransformerConfig(
                id_val="organize",
                options={
                    "excludeByName": hidden,
                    "indexByName": {source[c.field]: n for n, c in enumerate(p.columns)},
                    "renameByName": {
                        source[c.field]: c.header for c in p.columns if c.header != source[c.field]
                    },
                },
            )
        )
        for c in p.columns:
            # After the rename: overrides match the header a person reads.
            props = _override(c, c.header)
            if props:
                b = b.override_by_name(c.header, props)
    elif not p.pivot:
        transforms.append(
            dash_m.DataTransformerConfig(
                id_val="organize", options={"excludeByName": {"Time": True}}
            )
        )
    if p.pivot and p.thresholds:
        # Every number of the matrix is a light: coloured by its own value.
        cells = dash_m.DynamicConfigValue(
            id_val="custom.cellOptions", value=_cell_options("background")
        )
        b = b.override_by_field_type("number", [cells])
    if p.sort_by:
        b = b.sort_by(
            [common_b.TableSortByFieldState().display_name(p.sort_by[0]).desc(p.sort_by[1])]
        )
    for t in transforms:
        b = b.with_transformation(t)
    return b


def _logs(p: Panel) -> Any:
    b = _common(logs_b.Panel(), p)
    return b.show_time(True).wrap_log_message(True).sort_order(common.LogsSortOrder.DESCENDING)


def _heatmap(p: Panel) -> Any:
    b = _common(heatmap.Panel(), p)
    return b.calculate(False).cell_gap(1)


def _markdown(p: Panel) -> Any:
    return (
        text.Panel()
        .title(p.title)
        .description(p.description)
        .grid_pos(dash_m.GridPos(h=p.height, w=p.width, x=p.x, y=p.y))
        .content(p.text)
    )


BUILD = {
    Kind.STAT: _stat,
    Kind.TIMESERIES: _timeseries,
    Kind.TABLE: _table,
    Kind.BARS: _bars,
    Kind.LOGS: _logs,
    Kind.HEATMAP: _heatmap,
    Kind.MARKDOWN: _markdown,
}


def variable(v: Variable) -> dash_b.QueryVariable:
    if v.flux:
        query: Any = v.flux
        source = ds(Lang.FLUX)
    else:
        query = f"label_values({v.matcher}, {v.name})"
        source = ds(Lang.PROMQL)
    b = (
        dash_b.QueryVariable(v.name)
        .label(v.label or v.name)
        .datasource(source)
        .query(query)
        .refresh(dash_m.VariableRefresh.ON_TIME_RANGE_CHANGED)
        .sort(dash_m.VariableSort.ALPHABETICAL_ASC if not v.flux else dash_m.VariableSort.DISABLED)
    )
    if v.description:
        b = b.description(v.description)
    if v.multi:
        b = b.multi(True).include_all(True).all_value(".*")
        b = b.current(dash_m.VariableOption(selected=True, text=["All"], value=["$__all"]))
    if v.hidden:
        b = b.hide(dash_m.VariableHide.HIDE_VARIABLE)
    return b


def annotation(a: Any) -> dash_b.AnnotationQuery:
    b = dash_b.AnnotationQuery().name(a.name).enable(True).icon_color(a.colour)
    if a.run_tags:
        # Grafana's own annotations tagged with the picked run (the API writes them).
        return b.datasource(dash_m.DataSourceRef(type_val="grafana", uid="-- Grafana --")).target(
            dash_b.AnnotationTarget()
            .type("tags")
            .tags([f"${a.run_tags}"])
            .match_any(False)
            .limit(100)
        )
    # Grafana 11 keeps a data source annotation's query in `target`, as that data source's
    # query (the SDK's AnnotationTarget is the built-in tags query only): set below.
    return b.datasource(ds(a.query.lang))


def build_dashboard(d: Dashboard) -> dash_m.Dashboard:
    b = (
        dash_b.Dashboard(d.title)
        .uid(d.uid)
        .tags(["wlmon", *d.tags])
        .description(d.description)
        .timezone("browser")
        .editable()
        .readonly()
        .tooltip(dash_m.DashboardCursorSync.CROSSHAIR)
        .refresh(d.refresh)
        .time(f"now-{d.duration}", "now")
    )
    for v in d.variables:
        b = b.with_variable(variable(v))
    for a in d.annotations:
        b = b.annotation(annotation(a))
    y = 0
    ids = iter(range(1, 1000))
    for g in d.groups:
        row = dash_b.Row(g.title).id(next(ids)).grid_pos(dash_m.GridPos(h=1, w=24, x=0, y=y))
        panels = []
        for p in g.panels:
            panel = BUILD[p.kind](p).id(next(ids))
            panel = panel.grid_pos(dash_m.GridPos(h=p.height, w=p.width, x=p.x, y=y + 1 + p.y))
            panels.append(panel)
        height = max(p.y + p.height for p in g.panels)
        if g.collapsed:
            for panel in panels:
                row = row.with_panel(panel)
            b = b.with_row(row.collapsed(True))
        else:
            b = b.with_row(row)
            for panel in panels:
                b = b.with_panel(panel)
        y += 1 + height
    return b.build()


def dashboard(d: Dashboard, logs_in_loki: bool = False) -> dict:
    """The export Grafana's import reads: the model with `__inputs` for its data sources;
    its logs read from Loki in LogQL with `logs_in_loki`, else VictoriaLogs in LogsQL."""
    token = _LOKI.set(logs_in_loki)
    try:
        return _export(d)
    finally:
        _LOKI.reset(token)


def _export(d: Dashboard) -> dict:
    inputs = _inputs()
    model = json.loads(json.dumps(build_dashboard(d), cls=JSONEncoder))
    model["id"] = None
    for v in model["templating"]["list"]:
        # The SDK writes an interval variable's fields on every variable; Grafana's schema
        # has them on none (tests/dashboards checks against it).
        for k in ("auto", "auto_count", "auto_min"):
            v.pop(k, None)
    for a, out in zip(d.annotations, model["annotations"].get("list", []), strict=True):
        if a.query is not None:
            expr = _logs_expr(a.query)
            out["target"] = {"refId": "Anno", "expr": expr, "queryType": "range"}
    used = {p.lang for p in d.panels if p.lang} | {
        Lang.FLUX if v.flux else Lang.PROMQL for v in d.variables
    }
    used |= {a.query.lang for a in d.annotations if a.query}
    order = [lang for lang in inputs if lang in used]
    model["__inputs"] = [
        {
            "name": inputs[lang][0],
            "label": inputs[lang][1],
            "description": inputs[lang][4],
            "type": "datasource",
            "pluginId": inputs[lang][2],
            "pluginName": inputs[lang][3],
        }
        for lang in order
    ]
    model["__requires"] = [
        {"type": "grafana", "id": "grafana", "name": "Grafana", "version": GRAFANA_VERSION},
        *({"type": "datasource", "id": inputs[lang][2], "name": inputs[lang][3]} for lang in order),
    ]
    return model
