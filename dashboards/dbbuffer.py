"""Database buffer pools: DB2 hit ratios and writes (seed 000 4.2.3, Table 3), SAP buffers."""

from __future__ import annotations

from alerts.settings import MonitoringConfig
from dashboards.defaults import SEL, limit_line, prom, variables
from dashboards.model import INSTANCE_LEGEND, Dashboard, Format, Kind, Panel, Unit


def dashboard(config: MonitoringConfig) -> Dashboard:
    d = Dashboard(
        "wlmon-dbbuffer",
        "Database buffer pools",
        "Database",
        ("db2",),
        "DB2 buffer pool hit ratios, physical reads and writes; the SAP buffers.",
        # Buffer pools are per database, not per task type: that picker would filter nothing.
        variables("task_type"),
    )
    t = config.thresholds
    d.group("DB2 buffer pools")
    for kind in ("data", "index"):
        floor = t.db2_hit_ratio_min(kind)
        d.add(
            Panel(
                Kind.TIMESERIES,
                f"{kind.capitalize()} hit ratio per pool",
                f"Should stay at or above the dashed line, {100 * floor:g} % (seed 000 4.2.3).",
                [
                    prom(
                        f'sid_bufferpool:sap_db_bufferpool_{kind}_hit_ratio:ratio5m{{sid=~"$sid"}}',
                        legend="{{bufferpool}}",
                    )
                ],
                format=Format(Unit.RATIO, 1),
                thresholds=limit_line(floor),
                min=0.8,
                max=1,
                legend=INSTANCE_LEGEND,
            )
        )
    per_step = t.db_physical_reads_per_step_max
    d.add(
        Panel(
            Kind.TIMESERIES,
            "Physical reads per dialog step (all pools)",
            "Pages read from disk (data and index, every pool) per dialog step over the last "
            "minute: the load-independent evidence of pools that miss, the series "
            f"SAPDatabasePhysicalReadsHigh reads; it warns above the dashed red line, "
            f"{per_step:g} (db_physical_reads_per_step_max in alerts/thresholds.yml).",
            [
                prom(
                    'sid:sap_db_physical_reads_per_dialog_step:rate1m{sid=~"$sid"}',
                    legend="{{sid}}",
                )
            ],
            format=Format(Unit.NONE, 2),
            thresholds=limit_line(per_step),
            min=0,
        )
    )
    d.add(
        Panel(
            Kind.TIMESERIES,
            "Physical reads per pool",
            "Pages read from disk per second because the pool did not hold them: what a low "
            "hit ratio costs.",
            [
                prom(
                    'sum by (bufferpool) (rate(sap_db_bufferpool_data_physical_reads_total{sid=~"$sid"}[5m]) + '
                    'rate(sap_db_bufferpool_index_physical_reads_total{sid=~"$sid"}[5m]))',
                    legend="{{bufferpool}}",
                )
            ],
            format=Format(Unit.READS_PER_S),
        )
    )
    d.add(
        Panel(
            Kind.TIMESERIES,
            "Page writes: asynchronous (I/O cleaners) vs synchronous",
            "Synchronous writes mean the I/O cleaners fall behind (seed 000 Table 3).",
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
            format=Format(Unit.WRITES_PER_S),
            fill=0.1,
            # Fixed colours: the good kind blue, the bad kind red.
            series_colours=(("asynchronous", "blue"), ("synchronous", "red")),
        )
    )
    d.group("SAP buffers")
    floor = t.sap_buffer_hit_ratio_min
    d.add(
        Panel(
            Kind.TIMESERIES,
            "SAP buffer hit ratio",
            f"{100 * floor:g} % or better, except program, single-record and export/import.",
            [
                prom(
                    f"sum by (buffer) (rate(sap_buffer_hits_total{{{SEL}}}[5m])) / "
                    f"sum by (buffer) (rate(sap_buffer_requests_total{{{SEL}}}[5m]))",
                    legend="{{buffer}}",
                )
            ],
            format=Format(Unit.RATIO, 1),
            thresholds=limit_line(floor),
            min=0.9,
            max=1,
            legend=INSTANCE_LEGEND,
        )
    )
    d.add(
        Panel(
            Kind.TIMESERIES,
            "SAP buffer swaps",
            "There should be no swaps (seed 000, 4.3.1): a line above 0 is a buffer too small "
            "for what it holds.",
            [
                prom(
                    f"sum by (buffer) (rate(sap_buffer_swaps_total{{{SEL}}}[5m]))",
                    legend="{{buffer}}",
                )
            ],
            format=Format(Unit.OPS_PER_S),
            min=0,
            legend=INSTANCE_LEGEND,
        )
    )
    return d
