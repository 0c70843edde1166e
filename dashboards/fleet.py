"""Fleet overview (NOC): one row per SID with the whitepaper lights, throughput, firing
alerts, the exporter and sapstartsrv health; the SID opens that system's NOC overview.

The queries aggregate `by (sid)`, so the table grows a row per SID the fleet file adds;
they read the `sid` variable like every dashboard (Thanos query answers for the fleet).
bench/fleet.py times exactly these queries (`queries()`), through Thanos and directly.
"""

from __future__ import annotations

from alerts.settings import MonitoringConfig
from dashboards.defaults import (
    STEPS,
    dialog_response_s,
    indicator_ms,
    levels,
    prom,
    traffic,
    variables,
)
from dashboards.model import (
    Column,
    Dashboard,
    Format,
    Kind,
    Link,
    Panel,
    Thresholds,
    Unit,
    ValueText,
    steps,
)
from dashboards.sent import messages_by_sid
from exporters.vocabulary import INDICATORS

UID = "wlmon-fleet"
SID = 'sid=~"$sid"'
DIALOG = SID + ',task_type="dialog"'
ALERTS_SEL = 'sid!="",' + SID
UP = (ValueText("0", "DOWN", "red"), ValueText("1", "UP", "green"))
# sapstartsrv's dispstatus of the worst instance: 1 gray, 2 green, 3 yellow, 4 red (0: none).
DISPSTATUS = (
    ValueText("0", "not read", "gray"),
    ValueText("1", "GRAY", "gray"),
    ValueText("2", "GREEN", "green"),
    ValueText("3", "YELLOW", "yellow"),
    ValueText("4", "RED", "red"),
)


def columns(config: MonitoringConfig) -> list[tuple[str, str, Thresholds | None, Format]]:
    """(column, PromQL by sid, thresholds, format) in table order."""
    cols: list[tuple[str, str, Thresholds | None, Format]] = [
        (
            f"{i.label} (ms)",
            indicator_ms(i, sel=DIALOG, by="sid"),
            levels(config, i),
            Format(Unit.MS, 1),
        )
        for i in INDICATORS
    ]
    cols += [
        (
            "Dialog response (s)",
            dialog_response_s(SID),
            traffic(config.thresholds.dialog_response_seconds),
            Format(Unit.SECONDS, 2),
        ),
        (
            "Dialog steps/s",
            f"sum by (sid) (max by (sid, sap_instance) ({STEPS}{{{DIALOG}}}))",
            None,
            Format(Unit.REQUESTS_PER_S, 1),
        ),
        (
            "Notifications out",
            # sid!="": the stack's own alerts (the watchdog, a server down) belong to no SID;
            # inhibited alerts are left out and one cause is one message, as Alertmanager
            # sends them (dashboards/sent.py): the NOC's counts, per SID.
            messages_by_sid(ALERTS_SEL)
            + f' or on (sid) (0 * max by (sid) (up{{job="wlmon-exporter",{SID}}}))',
            steps((None, "green"), (1, "red")),
            Format(Unit.NONE, 0),
        ),
        (
            "Exporter up",
            f'max by (sid) (up{{job="wlmon-exporter",{SID}}})',
            steps((None, "red"), (1, "green")),
            Format(Unit.NONE, 0),
        ),
        (
            "sapstartsrv",
            # The worst instance's light; 0 ("not read") where the SID has no sapstartsrv
            # reading (the fleet profile's model exporters run none): a row is never blank
            # because one source is not configured.
            f"max by (sid) (sap_instance_status{{{SID}}})"
            f' or on (sid) (0 * max by (sid) (up{{job="wlmon-exporter",{SID}}}))',
            steps((None, "gray"), (2, "green"), (3, "yellow"), (4, "red")),
            Format(Unit.NONE, 0),
        ),
    ]
    return cols


def queries(config: MonitoringConfig, sid: str = ".*") -> dict[str, str]:
    """The panel's queries with the variable filled (bench/fleet.py, tests)."""
    return {name: expr.replace("$sid", sid) for name, expr, _, _ in columns(config)}


def _mappings(name: str) -> tuple[ValueText, ...]:
    """Lights read as words."""
    return {"sapstartsrv": DISPSTATUS, "Exporter up": UP}.get(name, ())


def dashboard(config: MonitoringConfig) -> Dashboard:
    # Only the sid picker of the shared variables shows: the rows follow $sid; instance and
    # task type pickers would filter nothing here.
    d = Dashboard(
        UID,
        "Fleet overview",
        "NOC",
        ("noc", "fleet"),
        "One row per SID: its worst instance's indicators, throughput, alerts and sources.",
        variables("sap_instance", "task_type"),
    )
    cols = columns(config)
    d.group("Systems")
    d.add(
        Panel(
            Kind.TABLE,
            "Systems: one row per SID (click a SID for its NOC overview)",
            "Worst instance of each SID for the whitepaper indicators (ms per dialog step "
            "over the last minute, the series their alerts page on: orange from the seed 000 "
            "threshold, red from the page level of alerts/thresholds.yml); throughput of all "
            "its instances; the notifications Alertmanager has out for it (one per cause, "
            "inhibited alerts and the watchdog left out, as the NOC counts them); whether its exporter is scraped; sapstartsrv: its worst instance's light, "
            "'not read' where the SID's sapstartsrv is not read (the fleet profile's model "
            "exporters run none).",
            [prom(expr, legend=name, instant=True, table=True) for name, expr, _, _ in cols],
            width=24,
            height=16,
            format=Format(Unit.NONE, 1),
            columns=(
                Column(
                    "sid",
                    "sid",
                    # Three letters: the room goes to the columns' headers.
                    width=90,
                    link=Link(
                        "NOC overview of this SID", "wlmon-noc", pass_vars=(), cell_var="sid"
                    ),
                ),
                *(
                    Column(
                        f"#{k}",
                        name,
                        fmt,
                        th,
                        "background" if th else "plain",
                        mappings=_mappings(name),
                    )
                    for k, (name, _, th, fmt) in enumerate(cols)
                ),
            ),
        )
    )
    return d
