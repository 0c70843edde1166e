"""ST03 workload: the response split into its components, the indicators per instance,
transactions, work processes, the roll area."""

from __future__ import annotations

from alerts.thresholds import threshold_seconds
from dashboards.defaults import (
    DIALOG,
    INSTANCE_LEGEND,
    SEL,
    SEL_TT,
    ms,
    prom,
    stat_options,
    steps,
    traffic,
)
from dashboards.layout import Dashboard
from exporters.vocabulary import (
    COMPONENT_BY_KEY,
    DIALOG_RESPONSE,
    INDICATORS_BY_THRESHOLD,
    RESPONSE_PARTS,
)


def _indicator_panels(d: Dashboard) -> None:
    """One panel per threshold: indicators that share one (roll-in, roll-out) share a panel."""
    for group in INDICATORS_BY_THRESHOLD.values():
        labels = [i.label for i in group]
        title = " and ".join([labels[0], *(label.lower() for label in labels[1:])])
        legend = "{{sap_instance}}"
        limit_ms = threshold_seconds(group[0]) * 1000
        d.add(
            "timeseries",
            f"{title} (ms per dialog step)",
            [
                # Dialog steps only, whatever task_type is picked: the threshold is a
                # dialog threshold (update tasks wait far longer, by design).
                prom(
                    ms(i.component, sel=DIALOG, by="sap_instance"),
                    legend=legend if len(group) == 1 else f"{legend} {i.label.lower()}",
                )
                for i in group
            ],
            w=12,
            h=8,
            unit="ms",
            thresholds=traffic(limit_ms),
            show_thresholds=True,
            description=f"Per instance, dialog steps (as the alert); the dashed line is seed "
            f"000's {limit_ms:g} ms.",
            options={"legend": INSTANCE_LEGEND},
        )


def dashboard() -> Dashboard:
    d = Dashboard("wlmon-st03", "ST03 workload", "SAP", ["st03"])
    labels = [COMPONENT_BY_KEY[p].label for p in RESPONSE_PARTS]
    d.add(
        "timeseries",
        "Response time split into its parts (ms per step)",
        [prom(ms(p), legend=label) for p, label in zip(RESPONSE_PARTS, labels, strict=True)],
        w=24,
        h=9,
        unit="ms",
        custom={"stacking": {"mode": "normal"}, "fillOpacity": 40, "lineWidth": 1},
        description=f"Stacked, they make up the response time: {', '.join(labels)}. Roll-out "
        "comes after the answer and CPU lies within processing, so neither is stacked.",
    )
    _indicator_panels(d)
    d.add(
        "barchart",
        "Dialog response per transaction (s per step)",
        [
            prom(
                'sum by (transaction) (rate(sap_workload_transaction_response_seconds_total{sid=~"$sid",'
                'task_type="dialog"}[5m])) / sum by (transaction) (rate(sap_workload_transaction_steps_total'
                '{sid=~"$sid",task_type="dialog"}[5m]))',
                legend="{{transaction}}",
                instant=True,
                fmt="table",
            )
        ],
        w=12,
        h=8,
        unit="s",
        decimals=2,
        # Coloured against the SD benchmark's 2 s bound on the dialog response.
        thresholds=traffic(threshold_seconds(DIALOG_RESPONSE)),
        description="Dialog steps of each transaction; red bars miss the SD benchmark's "
        f"{threshold_seconds(DIALOG_RESPONSE):g} s bound.",
        options={
            "xField": "transaction",
            "orientation": "horizontal",
            "showValue": "always",
            "legend": {"showLegend": False, "displayMode": "list", "placement": "bottom"},
        },
        custom={"fillOpacity": 80},
        transformations=[
            {"id": "organize", "options": {"renameByName": {"Value": "s per dialog step"}}}
        ],
    )
    d.add(
        "heatmap",
        "Response time distribution",
        [
            prom(
                f"sum by (le) (increase(sap_workload_response_time_seconds_bucket{{{SEL_TT}}}[$__rate_interval]))",
                legend="{{le}}",
                fmt="heatmap",
            )
        ],
        w=12,
        h=8,
        options={"calculate": False, "yAxis": {"unit": "s"}, "cellGap": 1},
        description="How many steps fell into each response-time band: a fault shows as a second band, a slow tail as a smear upwards.",
    )
    d.add(
        "timeseries",
        "Work processes busy vs configured",
        [
            prom(
                f"sum by (task_type) (sap_workload_work_processes_busy{{{SEL_TT}}})",
                legend="{{task_type}} busy",
            ),
            prom(
                f"sum by (task_type) (sap_workload_work_processes{{{SEL_TT}}})",
                legend="{{task_type}} configured",
            ),
        ],
        w=12,
        h=8,
        description="Busy work processes against those configured, per task type: busy reaching configured means requests queue at the dispatcher.",
    )
    d.add(
        "timeseries",
        "Dispatcher queue",
        [
            prom(
                f"sum by (sap_instance) (sap_workload_dispatcher_queue_length{{{SEL_TT}}})",
                legend="{{sap_instance}}",
            )
        ],
        w=12,
        h=8,
        options={"legend": INSTANCE_LEGEND},
        description="Requests waiting for a free work process, per instance: should stay near 0.",
    )
    d.add(
        "timeseries",
        "Roll area and extended memory in use",
        [
            prom(
                f"sum(sap_roll_buffer_used_bytes{{{SEL}}}) / sum(sap_roll_buffer_size_bytes{{{SEL}}})",
                legend="roll buffer",
            ),
            prom(
                f"sum(sap_extended_memory_used_bytes{{{SEL}}}) / sum(sap_extended_memory_size_bytes{{{SEL}}})",
                legend="extended memory",
            ),
        ],
        w=12,
        h=8,
        unit="percentunit",
        min_=0,
        max_=1,
        description="Share of the roll buffer and the extended memory in use: near 100 % contexts start spilling to the roll file.",
    )
    d.add(
        "stat",
        "Roll file writes",
        [prom(f"sum(rate(sap_roll_file_written_bytes_total{{{SEL}}}[5m]))", legend="bytes/s")],
        w=12,
        h=8,
        unit="Bps",
        decimals=0,
        thresholds=steps([(None, "green"), (1, "red")]),
        description="Should stay 0 (seed 000, 4.3.1): anything written means roll buffer and "
        "extended memory are full and contexts spill to disk.",
        options=stat_options("background", "area"),
    )
    return d
