"""ST03 workload: the response split into its components, the indicators per instance,
transactions, work processes, the roll area."""

from __future__ import annotations

from alerts.settings import MonitoringConfig
from dashboards.defaults import (
    SEL,
    SEL_TT,
    indicator_ms,
    levels,
    ms,
    page_ms,
    prom,
    traffic,
    variables,
    warning_ms,
)
from dashboards.model import (
    INSTANCE_LEGEND,
    Dashboard,
    Format,
    Kind,
    Panel,
    Query,
    Unit,
    steps,
)
from dashboards.sent import alert_lives
from exporters.vocabulary import DIALOG_RESPONSE, INDICATORS_BY_THRESHOLD
from landscape_model.terms import COMPONENT_BY_KEY, RESPONSE_PARTS

PER_TRANSACTION = (
    'sum by (transaction) (rate(sap_workload_transaction_response_seconds_total{sid=~"$sid",'
    'task_type="dialog"}[5m])) / sum by (transaction) (rate(sap_workload_transaction_steps_total'
    '{sid=~"$sid",task_type="dialog"}[5m]))'
)


def _indicator_panels(config: MonitoringConfig, d: Dashboard) -> None:
    """One panel per threshold: indicators that share one (roll-in, roll-out) share a panel."""
    for group in INDICATORS_BY_THRESHOLD.values():
        labels = [i.label for i in group]
        title = " and ".join([labels[0], *(label.lower() for label in labels[1:])])
        legend = "{{sap_instance}}"
        first = group[0]
        d.add(
            Panel(
                Kind.TIMESERIES,
                f"{title} (ms per dialog step)",
                f"Per instance, dialog steps over the last minute: the series "
                f"{' and '.join(i.alert for i in group)} page on. Dashed lines: orange at "
                f"seed 000's {warning_ms(config, first):g} ms (warning), red at the page level "
                f"{page_ms(config, first):g} ms (alerts/thresholds.yml). The whitepaper's 5-minute "
                "mean is the split of the response time above.",
                [
                    # Dialog steps only, whatever task_type is picked: the threshold is a
                    # dialog threshold (update tasks wait far longer, by design).
                    prom(
                        indicator_ms(i, by="sap_instance"),
                        legend=legend if len(group) == 1 else f"{legend} {i.label.lower()}",
                    )
                    for i in group
                ],
                format=Format(Unit.MS, 0),
                thresholds=levels(config, first, lines=True),
                legend=INSTANCE_LEGEND,
            )
        )


def dashboard(config: MonitoringConfig) -> Dashboard:
    d = Dashboard(
        "wlmon-st03",
        "ST03 workload",
        "SAP",
        ("st03",),
        "Response time and its parts, the whitepaper indicators per instance, transactions, "
        "work processes and the roll area.",
        variables(),
    )
    d.group("Response time and the indicators")
    labels = [COMPONENT_BY_KEY[p].label for p in RESPONSE_PARTS]
    d.add(
        Panel(
            Kind.TIMESERIES,
            "Response time split into its parts (ms per step)",
            f"Stacked, they make up the response time: {', '.join(labels)}. Roll-out "
            "comes after the answer and CPU lies within processing, so neither is stacked.",
            [prom(ms(p), legend=label) for p, label in zip(RESPONSE_PARTS, labels, strict=True)],
            width=24,
            height=9,
            format=Format(Unit.MS),
            stacked=True,
            fill=0.4,
        )
    )
    d.add(alert_lives())
    _indicator_panels(config, d)
    d.group("Transactions and work processes")
    bound = config.thresholds.seconds(DIALOG_RESPONSE)
    d.add(
        Panel(
            Kind.BARS,
            "Dialog response per transaction (s per step)",
            "Dialog steps of each transaction, each bar coloured by its own value: red bars "
            f"miss the SD benchmark's {bound:g} s bound.",
            [prom(PER_TRANSACTION, legend="{{transaction}}", instant=True)],
            format=Format(Unit.SECONDS, 2),
            # Coloured against the SD benchmark's 2 s bound on the dialog response.
            thresholds=traffic(bound),
        )
    )
    d.add(
        Panel(
            Kind.HEATMAP,
            "Response time distribution",
            "How many steps fell into each response-time band: a fault shows as a second "
            "band, a slow tail as a smear upwards.",
            [
                Query(
                    "sum by (le) (increase(sap_workload_response_time_seconds_bucket"
                    f"{{{SEL_TT}}}[$__rate_interval]))",
                    legend="{{le}}",
                    heatmap=True,
                )
            ],
            format=Format(Unit.SECONDS),
        )
    )
    d.add(
        Panel(
            Kind.TIMESERIES,
            "Work processes busy vs configured",
            "Busy work processes against those configured, per task type: busy reaching "
            "configured means requests queue at the dispatcher.",
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
        )
    )
    d.add(
        Panel(
            Kind.TIMESERIES,
            "Dispatcher queue",
            "Requests waiting for a free work process, per instance: should stay near 0.",
            [
                prom(
                    f"sum by (sap_instance) (sap_workload_dispatcher_queue_length{{{SEL_TT}}})",
                    legend="{{sap_instance}}",
                )
            ],
            legend=INSTANCE_LEGEND,
        )
    )
    d.group("Roll area")
    d.add(
        Panel(
            Kind.TIMESERIES,
            "Roll area and extended memory in use",
            "Share of the roll buffer and the extended memory in use: near 100 % contexts "
            "start spilling to the roll file.",
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
            format=Format(Unit.RATIO),
            min=0,
            max=1,
        )
    )
    d.add(
        Panel(
            Kind.STAT,
            "Roll file writes",
            "Should stay 0 (seed 000, 4.3.1): anything written means roll buffer and "
            "extended memory are full and contexts spill to disk.",
            [prom(f"sum(rate(sap_roll_file_written_bytes_total{{{SEL}}}[5m]))", legend="bytes/s")],
            format=Format(Unit.BYTES_PER_S, 0),
            thresholds=steps((None, "green"), (1, "red")),
            sparkline=True,
        )
    )
    return d
