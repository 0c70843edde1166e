"""NOC overview: status first (the whitepaper indicators as traffic lights with their trend,
firing alerts by severity), then the instances, worst first. Every light links to the
dashboard that explains it, keeping the time range and the SID."""

from __future__ import annotations

from alerts.monitoring import LAST_NOTIFICATION
from alerts.settings import MonitoringConfig
from dashboards.defaults import (
    DIALOG,
    EXCEPTED_BUFFERS,
    STEPS,
    dialog_response_s,
    floor,
    indicator_ms,
    levels,
    page_ms,
    prom,
    traffic,
    variables,
    warning_ms,
)
from dashboards.model import Column, Dashboard, Format, Kind, Link, Panel, Unit, steps
from dashboards.sent import alert_lives, messages
from exporters.vocabulary import INDICATORS

# Where an operator goes from each light.
ST03 = Link("Open ST03 workload (dialog)", "wlmon-st03", set_vars=(("task_type", "dialog"),))
EXPLAINED_BY = {
    "dispatcher_wait": ST03,
    "db_request": Link("Open ST05 database time and statements", "wlmon-st05"),
    "enqueue": ST03,
    "roll_in": ST03,
    "roll_out": ST03,
}
ALERTS = Link("Open the firing alerts", path="alerts", pass_vars=())


def _worst_buffer() -> str:
    sel = f'sid=~"$sid",{EXCEPTED_BUFFERS}'
    return (
        f"min(sum by (sap_instance, buffer) (rate(sap_buffer_hits_total{{{sel}}}[5m]))"
        f" / sum by (sap_instance, buffer) (rate(sap_buffer_requests_total{{{sel}}}[5m])))"
    )


def _sent(severity: str) -> str:
    """Notifications out at this severity as Alertmanager groups them (dashboards/sent.py)."""
    return messages(f'{severity},sid=~"$sid"')


SENT = (
    "Counted as Alertmanager sends them: the watchdog's heartbeat and alerts its inhibit "
    "rules mute are left out (read from provisioning/alertmanager/alertmanager.yml), and "
    "alerts of one cause on one SID are one message (one per alert name where no cause). "
    "Silences are not seen. Click for the list."
)


def _worst_ratio(config: MonitoringConfig) -> str:
    """Per instance, its worst indicator as a share of that indicator's threshold."""
    parts = [
        f"label_replace({indicator_ms(i, by='sid, sap_instance, task_type')} / {warning_ms(config, i):g},"
        f' "indicator", "{i.component}", "", "")'
        for i in INDICATORS
    ]
    # By task_type too (always dialog): the table merges rows on every label they share.
    return "max by (sid, sap_instance, task_type) (" + " or ".join(parts) + ")"


def _page_multiple(config: MonitoringConfig) -> float:
    """The smallest multiple of its threshold at which an indicator pages."""
    return min(page / warning_ms(config, i) for i in INDICATORS if (page := page_ms(config, i)))


def dashboard(config: MonitoringConfig) -> Dashboard:
    # task_type: every panel here reads dialog steps (the whitepaper's indicators).
    d = Dashboard(
        "wlmon-noc",
        "NOC overview",
        "NOC",
        ("noc",),
        "The whitepaper indicators as lights, the alerts, throughput, the instances worst first.",
        variables("task_type"),
    )
    d.group("Status")
    for i in INDICATORS:
        link = EXPLAINED_BY[i.component]
        crit = f", red from its page level {page:g} ms" if (page := page_ms(config, i)) else ""
        d.add(
            Panel(
                Kind.STAT,
                f"{i.label} (ms)",
                f"Worst instance, ms per dialog step over the last minute: the series "
                f"{i.alert} pages on. Orange from seed 000's threshold of {warning_ms(config, i):g} ms"
                f"{crit} (alerts/thresholds.yml). Click for {link.title.removeprefix('Open ')}.",
                [prom(indicator_ms(i, by=""), legend=i.label)],
                width=4,
                height=5,
                format=Format(Unit.MS, 0),
                thresholds=levels(config, i),
                sparkline=True,
                links=(link,),
            )
        )
    bound = config.thresholds.dialog_response_seconds
    d.add(
        Panel(
            Kind.STAT,
            "Dialog response (s)",
            f"Average dialog response of the worst SID over 5 minutes (the series "
            f"SAPDialogResponseTimeHigh reads, whichever source recorded it); the SD benchmark "
            f"passes below {bound:g} s (seed 000), red from it. Click for ST03.",
            [prom(dialog_response_s(by=""), legend="dialog response")],
            width=4,
            height=5,
            format=Format(Unit.SECONDS, 2),
            thresholds=traffic(bound),
            sparkline=True,
            links=(ST03,),
        )
    )
    d.add(
        Panel(
            Kind.STAT,
            "Pages sent (on-call)",
            "Notifications of severity critical out to the on-call now. " + SENT,
            [prom(_sent('severity="critical"'), instant=True)],
            width=4,
            height=4,
            format=Format(Unit.NONE, 0),
            thresholds=steps((None, "green"), (1, "red")),
            links=(ALERTS,),
        )
    )
    d.add(
        Panel(
            Kind.STAT,
            "Warnings sent (NOC)",
            "Notifications of severity warning or info out to the NOC now. " + SENT,
            [prom(_sent('severity!="critical"'), instant=True)],
            width=4,
            height=4,
            format=Format(Unit.NONE, 0),
            # Orange for a warning, red from as many messages as causes a SID can have.
            thresholds=steps((None, "green"), (1, "orange"), (4, "red")),
            links=(ALERTS,),
        )
    )
    ratio = config.thresholds.sap_buffer_hit_ratio_min
    d.add(
        Panel(
            Kind.STAT,
            "Worst SAP buffer hit ratio",
            f"R/3 buffers should hit {100 * ratio:g} % or better (seed 000, 4.3.1). "
            "Click for the buffers.",
            [prom(_worst_buffer(), legend="worst buffer")],
            width=4,
            height=4,
            format=Format(Unit.RATIO, 2),
            thresholds=floor(ratio),
            sparkline=True,
            links=(Link("Open Database buffer pools", "wlmon-dbbuffer"),),
        )
    )
    throughput = f"sum(max by (sid, sap_instance) ({STEPS}{{{DIALOG}}}))"
    d.add(
        Panel(
            Kind.STAT,
            "Dialog steps/s",
            "Dialog steps per second over all instances (5-minute rate).",
            [prom(throughput, legend="steps/s")],
            width=4,
            height=4,
            format=Format(Unit.REQUESTS_PER_S, 0),
            thresholds=steps((None, "blue")),
            background=False,
            sparkline=True,
        )
    )
    d.add(
        Panel(
            Kind.STAT,
            "SAPS",
            "Dialog steps per hour / 60 (seed 000 Table 5: 29,050).",
            [prom(f"60 * {throughput}", legend="SAPS")],
            width=4,
            height=4,
            format=Format(Unit.NONE, 0),
            thresholds=steps((None, "blue")),
            background=False,
            sparkline=True,
        )
    )
    d.add(
        Panel(
            Kind.STAT,
            "Instances reporting",
            "SAP instances whose workload is being read (either source).",
            [prom(f'count(count by (sap_instance) ({STEPS}{{sid=~"$sid"}}))', instant=True)],
            width=4,
            height=4,
            format=Format(Unit.NONE, 0),
            thresholds=steps((None, "blue")),
            background=False,
        )
    )
    d.add(
        Panel(
            Kind.TABLE,
            "Last notification",
            "When Alertmanager last sent to each receiver, by integration (any SID; the "
            "heartbeat receiver left out), to within 15 s: the recording rule "
            f"{LAST_NOTIFICATION} (alerts/monitoring.py). No row: nothing sent to it since "
            "this Prometheus first ran.",
            [
                prom(
                    f"time() - max by (receiver_name, integration) ({LAST_NOTIFICATION})",
                    instant=True,
                    table=True,
                )
            ],
            width=16,
            height=5,
            format=Format(Unit.SECONDS, 0),
            columns=(
                Column("receiver_name", "Receiver"),
                Column("integration", "By"),
                Column("#0", "Sent ago", Format(Unit.SECONDS, 0)),
            ),
            sort_by=("Sent ago", False),
        )
    )
    d.add(alert_lives())
    d.group("Instances")
    d.add(_instances_table(config))
    return d


WORST = "Worst vs threshold"


def _instances_table(config: MonitoringConfig) -> Panel:
    queries = [
        prom(indicator_ms(i, by="sid, sap_instance, task_type"), instant=True, table=True)
        for i in INDICATORS
    ]
    queries.append(prom(_worst_ratio(config), instant=True, table=True))
    multiple = _page_multiple(config)
    return Panel(
        Kind.TABLE,
        f"Instances, worst first: the {len(INDICATORS)} indicators (ms per dialog step)",
        "Each instance's mean per dialog step over the last minute (what its alert pages "
        "on), coloured as the lights: orange from the paper's threshold, red from the page level; "
        f"'{WORST}' is its worst indicator as a share of that indicator's threshold "
        f"(100 % and more: an alert is due; {100 * multiple:g} %: the first page level). "
        "Click an instance for its ST03.",
        queries,
        width=24,
        height=22,
        format=Format(Unit.MS, 0),
        columns=(
            Column(
                "sap_instance",
                "Instance",
                link=Link(
                    "Open this instance in ST03",
                    "wlmon-st03",
                    set_vars=(("task_type", "dialog"),),
                    cell_var="sap_instance",
                ),
            ),
            Column(
                f"#{len(INDICATORS)}",
                WORST,
                Format(Unit.RATIO, 0),
                steps((None, "green"), (1, "orange"), (multiple, "red")),
                cell="text",
            ),
            *(
                Column(
                    f"#{n}", f"{i.label} (ms)", Format(Unit.MS, 0), levels(config, i), "background"
                )
                for n, i in enumerate(INDICATORS)
            ),
            Column("sid", "SID"),
        ),
        sort_by=(WORST, True),
        hide=("task_type",),
    )
