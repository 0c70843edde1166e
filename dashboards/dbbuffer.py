"""Database buffer pools: DB2 hit ratios and writes (seed 000 4.2.3, Table 3), SAP buffers."""

from __future__ import annotations

from alerts.thresholds import thresholds
from dashboards.defaults import INSTANCE_LEGEND, SEL, limit_line, prom
from dashboards.layout import Dashboard


def dashboard() -> Dashboard:
    d = Dashboard(
        "wlmon-dbbuffer",
        "Database buffer pools",
        "Database",
        ["db2"],
        # Buffer pools are per database, not per task type: that picker would filter nothing.
        hidden=("task_type",),
    )
    t = thresholds()
    for kind in ("data", "index"):
        d.add(
            "timeseries",
            f"{kind.capitalize()} hit ratio per pool",
            [
                prom(
                    f'sid_bufferpool:sap_db_bufferpool_{kind}_hit_ratio:ratio5m{{sid=~"$sid"}}',
                    legend="{{bufferpool}}",
                )
            ],
            unit="percentunit",
            decimals=1,
            thresholds=limit_line(t[f"db2_{kind}_hit_ratio_min"]),
            show_thresholds=True,
            min_=0.8,
            max_=1,
            description=f"Should stay at or above the dashed line, "
            f"{100 * t[f'db2_{kind}_hit_ratio_min']:g} % (seed 000 4.2.3).",
            options={"legend": INSTANCE_LEGEND},
        )
    d.add(
        "timeseries",
        "Physical reads per pool",
        [
            prom(
                'sum by (bufferpool) (rate(sap_db_bufferpool_data_physical_reads_total{sid=~"$sid"}[5m]) + '
                'rate(sap_db_bufferpool_index_physical_reads_total{sid=~"$sid"}[5m]))',
                legend="{{bufferpool}}",
            )
        ],
        unit="rps",
        description="Pages read from disk per second because the pool did not hold them: what a low hit ratio costs.",
    )
    d.add(
        "timeseries",
        "Page writes: asynchronous (I/O cleaners) vs synchronous",
        [
            prom(
                'sum(rate(sap_db_bufferpool_async_data_writes_total{sid=~"$sid"}[5m]) + '
                'rate(sap_db_bufferpool_async_index_writes_total{sid=~"$sid"}[5m]))',
                legend="asynchronous",
            ),
            prom(
                'sum(rate(sap_db_bufferpool_data_writes_total{sid=~"$sid"}[5m]) + rate(sap_db_bufferpool_'
                'index_writes_total{sid=~"$sid"}[5m])) - sum(rate(sap_db_bufferpool_async_data_writes_total'
                '{sid=~"$sid"}[5m]) + rate(sap_db_bufferpool_async_index_writes_total{sid=~"$sid"}[5m]))',
                legend="synchronous",
            ),
        ],
        unit="wps",
        custom={"fillOpacity": 10, "lineWidth": 2},
        # Fixed colours: the good kind blue, the bad kind red.
        overrides=[
            {
                "matcher": {"id": "byName", "options": name},
                "properties": [{"id": "color", "value": {"mode": "fixed", "fixedColor": colour}}],
            }
            for name, colour in (("asynchronous", "blue"), ("synchronous", "red"))
        ],
        description="Synchronous writes mean the I/O cleaners fall behind (seed 000 Table 3).",
    )
    d.add(
        "timeseries",
        "SAP buffer hit ratio",
        [
            prom(
                f"sum by (buffer) (rate(sap_buffer_hits_total{{{SEL}}}[5m])) / "
                f"sum by (buffer) (rate(sap_buffer_requests_total{{{SEL}}}[5m]))",
                legend="{{buffer}}",
            )
        ],
        unit="percentunit",
        decimals=1,
        thresholds=limit_line(t["sap_buffer_hit_ratio_min"]),
        show_thresholds=True,
        min_=0.9,
        max_=1,
        options={"legend": INSTANCE_LEGEND},
        description=f"{100 * t['sap_buffer_hit_ratio_min']:g} % or better, except program, "
        "single-record and export/import.",
    )
    d.add(
        "timeseries",
        "SAP buffer swaps",
        [prom(f"sum by (buffer) (rate(sap_buffer_swaps_total{{{SEL}}}[5m]))", legend="{{buffer}}")],
        unit="ops",
        min_=0,
        description="There should be no swaps (seed 000, 4.3.1): a line above 0 is a buffer "
        "too small for what it holds.",
        options={"legend": INSTANCE_LEGEND},
    )
    return d
