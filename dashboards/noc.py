"""NOC overview: status first (the whitepaper indicators as traffic lights with their trend,
firing alerts by severity), then the instances, worst first. Every light links to the
dashboard that explains it, keeping the time range and the SID."""

from __future__ import annotations

from alerts.thresholds import threshold_seconds, thresholds
from dashboards.defaults import DIALOG, EXCEPTED_BUFFERS, STEPS, floor, prom, variables
from dashboards.model import Column, Dashboard, Format, Kind, Link, Panel, Thresholds, Unit, steps
from exporters.vocabulary import (
    DIALOG_RESPONSE,
    DIALOG_RESPONSE_MEAN,
    INDICATORS,
    Indicator,
    per_step_mean,
)

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


def page_ms(i: Indicator) -> float | None:
    """Where the indicator's alert pages (alerts/thresholds.yml `*_page_seconds`), in ms."""
    return thresholds()[i.page_key] * 1000 if i.page_key else None


def lights(i: Indicator) -> Thresholds:
    """Green below the warning threshold, orange from it, red from the page level: the
    light says what the alert says (alerts/thresholds.yml, exporters/vocabulary.py)."""
    warn = threshold_seconds(i) * 1000
    at: list[tuple[float | None, str]] = [(None, "green"), (warn, "orange")]
    if (page := page_ms(i)) is not None:
        at.append((page, "red"))
    return steps(*at)


def _worst_buffer() -> str:
    sel = f'sid=~"$sid",{EXCEPTED_BUFFERS}'
    return (
        f"min(sum by (sap_instance, buffer) (rate(sap_buffer_hits_total{{{sel}}}[5m]))"
        f" / sum by (sap_instance, buffer) (rate(sap_buffer_requests_total{{{sel}}}[5m])))"
    )


def _firing(severity: str) -> str:
    """Rules firing at this severity (one per alert name, however many instances)."""
    sel = f'alertstate="firing",severity="{severity}",sid=~"$sid"'
    return f"count(count by (alertname) (ALERTS{{{sel}}})) or vector(0)"


def _worst_ratio() -> str:
    """Per instance, its worst indicator as a share of that indicator's threshold."""
    parts = [
        f"label_replace(1000 * {per_step_mean(i.component)}{{{DIALOG}}} / {threshold_seconds(i) * 1000:g},"
        f' "indicator", "{i.component}", "", "")'
        for i in INDICATORS
    ]
    # By task_type too (always dialog): the table merges rows on every label they share.
    return "max by (sid, sap_instance, task_type) (" + " or ".join(parts) + ")"


def _page_multiple() -> float:
    """The smallest multiple of its threshold at which an indicator pages."""
    return min(page / (threshold_seconds(i) * 1000) for i in INDICATORS if (page := page_ms(i)))


def dashboard() -> Dashboard:
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
        warn = threshold_seconds(i) * 1000
        link = EXPLAINED_BY[i.component]
        crit = f", red from {page:g} ms" if (page := page_ms(i)) else ""
        d.add(
            Panel(
                Kind.STAT,
                f"{i.label} (ms)",
                f"Worst instance, ms per dialog step (5-minute mean). Orange from the seed 000 "
                f"threshold of {warn:g} ms{crit}, as {i.alert} warns and pages. "
                f"Click for {link.title.removeprefix('Open ')}.",
                [prom(f"max(1000 * {per_step_mean(i.component)}{{{DIALOG}}})", legend=i.label)],
                width=4,
                height=5,
                format=Format(Unit.MS, 0),
                thresholds=lights(i),
                sparkline=True,
                links=(link,),
            )
        )
    bound = threshold_seconds(DIALOG_RESPONSE)
    d.add(
        Panel(
            Kind.STAT,
            "Dialog response (s)",
            f"Average dialog response; the SD benchmark passes below {bound:g} s (seed 000). "
            "Click for ST03.",
            [prom(f'{DIALOG_RESPONSE_MEAN}{{sid=~"$sid"}}', legend="dialog response")],
            width=4,
            height=5,
            format=Format(Unit.SECONDS, 2),
            thresholds=steps((None, "green"), (bound, "red")),
            sparkline=True,
            links=(ST03,),
        )
    )
    d.add(
        Panel(
            Kind.STAT,
            "Critical alerts",
            "Alert rules firing at severity critical (each counted once, whatever the "
            "number of instances). Click for the list.",
            [prom(_firing("critical"), instant=True)],
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
            "Warning alerts",
            "Alert rules firing at severity warning (each counted once). Click for the list.",
            [prom(_firing("warning"), instant=True)],
            width=4,
            height=4,
            format=Format(Unit.NONE, 0),
            thresholds=steps((None, "green"), (1, "orange")),
            links=(ALERTS,),
        )
    )
    ratio = thresholds()["sap_buffer_hit_ratio_min"]
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
    d.group("Instances")
    d.add(_instances_table())
    return d


WORST = "Worst vs threshold"


def _instances_table() -> Panel:
    queries = [
        prom(f"1000 * {per_step_mean(i.component)}{{{DIALOG}}}", instant=True, table=True)
        for i in INDICATORS
    ]
    queries.append(prom(_worst_ratio(), instant=True, table=True))
    multiple = _page_multiple()
    return Panel(
        Kind.TABLE,
        f"Instances, worst first: the {len(INDICATORS)} indicators (ms per dialog step)",
        "Each instance's 5-minute mean per dialog step, coloured as the lights; "
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
                Column(f"#{n}", f"{i.label} (ms)", Format(Unit.MS, 0), lights(i), "background")
                for n, i in enumerate(INDICATORS)
            ),
            Column("sid", "SID"),
        ),
        sort_by=(WORST, True),
        hide=("task_type",),
    )
