"""ST05 expensive SQL: statements and tables by elapsed DB time, the trace lines from Loki."""

from __future__ import annotations

from dashboards.defaults import loki, prom, steps
from dashboards.layout import Dashboard


def dashboard() -> Dashboard:
    d = Dashboard("wlmon-st05", "ST05 expensive SQL", "SAP", ["st05"])
    d.add(
        "table",
        "Top statements by elapsed DB time",
        [
            prom(
                "topk(15, sum by (statement, table, operation) (increase(sap_st05_statement_elapsed_seconds_total"
                '{sid=~"$sid"}[$__range])))',
                instant=True,
                fmt="table",
            )
        ],
        w=12,
        h=10,
        unit="s",
        decimals=1,
        description="Seed 000 4.3.5.2: sort the compressed summary by elapsed DB time. The SQL text is in the "
        "trace lines beside.",
        transformations=[
            {"id": "organize", "options": {"excludeByName": {"Time": True}}},
            {"id": "sortBy", "options": {"sort": [{"field": "Value", "desc": True}]}},
        ],
    )
    d.add(
        "bargauge",
        "Tables by elapsed DB time",
        [
            prom(
                'topk(10, sum by (table) (rate(sap_st05_table_elapsed_seconds_total{sid=~"$sid"}[5m])))',
                legend="{{table}}",
                instant=True,
            )
        ],
        w=12,
        h=10,
        unit="s",
        thresholds=steps([(None, "blue")]),
        options={
            "orientation": "horizontal",
            "displayMode": "gradient",
            "reduceOptions": {"calcs": ["lastNotNull"]},
        },
    )
    d.add(
        "timeseries",
        "Elapsed DB seconds per second, top tables",
        [
            prom(
                'topk(5, sum by (table) (rate(sap_st05_table_elapsed_seconds_total{sid=~"$sid"}[5m])))',
                legend="{{table}}",
            )
        ],
        w=12,
        h=8,
        unit="s",
    )
    d.add(
        "logs",
        "SQL trace summaries (Loki)",
        [loki('{source="st05", sid=~"$sid", sap_instance=~"$sap_instance"} | logfmt')],
        w=12,
        h=8,
        options={"showTime": True, "wrapLogMessage": True, "sortOrder": "Descending"},
    )
    return d
