"""What the dashboards share: datasources by uid, template selectors, targets, thresholds."""

from __future__ import annotations

# Datasources by the fixed uids provisioning/grafana gives them.
PROM = {"type": "prometheus", "uid": "prometheus"}
LOKI = {"type": "loki", "uid": "loki"}
INFLUX = {"type": "influxdb", "uid": "influxdb"}
# The template variables every dashboard has (layout.VARIABLES).
SEL = 'sid=~"$sid",sap_instance=~"$sap_instance"'
SEL_TT = SEL + ',task_type=~"$task_type"'
DIALOG = SEL + ',task_type="dialog"'
# Steps/s per instance as recorded from either source (the model or sapcontrol); max by
# instance keeps one where both read the same instance.
STEPS = "sap_instance_task_type:sap_workload_steps:rate5m"
# The buffers the paper lets run below the hit-ratio floor (seed 000, 4.3.1 guideline 1).
EXCEPTED_BUFFERS = 'buffer!~"program|single_record|export_import"'


# A legend for one line per instance (30 and more): a table beside the plot, worst first,
# so every line is named and the ones that matter are on top.
INSTANCE_LEGEND = {
    "displayMode": "table",
    "placement": "right",
    "calcs": ["lastNotNull", "max"],
    "sortBy": "Max",
    "sortDesc": True,
}


def prom(expr: str, legend: str = "", instant: bool = False, fmt: str = "time_series") -> dict:
    return {
        "datasource": PROM,
        "expr": expr,
        "legendFormat": legend,
        "range": not instant,
        "instant": instant,
        "format": fmt,
    }


def loki(expr: str) -> dict:
    return {"datasource": LOKI, "expr": expr, "queryType": "range"}


def flux(query: str) -> dict:
    return {"datasource": INFLUX, "query": query}


def steps(color_at: list[tuple[float | None, str]]) -> dict:
    return {"mode": "absolute", "steps": [{"value": v, "color": c} for v, c in color_at]}


def traffic(limit: float) -> dict:
    """Green below the whitepaper threshold, red at or above it."""
    return steps([(None, "green"), (limit, "red")])


def floor(limit: float) -> dict:
    """Red below a hit-ratio floor, green at or above it."""
    return steps([(None, "red"), (limit, "green")])


def limit_line(limit: float) -> dict:
    """One dashed red line at the limit on a time series, nothing else coloured: the
    series keep their own colours, and no healthy stretch is shaded as an alarm."""
    return steps([(None, "transparent"), (limit, "red")])


def stat_options(color_mode: str = "background", graph_mode: str = "none") -> dict:
    return {
        "colorMode": color_mode,
        "graphMode": graph_mode,
        "reduceOptions": {"calcs": ["lastNotNull"]},
    }


def ms(component: str, sel: str = SEL_TT, by: str = "") -> str:
    """Mean milliseconds per step of one ST03 time component over the selection, summed
    `by` these labels (none: the whole selection)."""
    agg = f"sum by ({by}) " if by else "sum"
    return (
        f"1000 * {agg}(rate(sap_workload_{component}_seconds_total{{{sel}}}[5m]))"
        f" / {agg}(rate(sap_workload_steps_total{{{sel}}}[5m]))"
    )
