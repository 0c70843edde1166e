"""Fleet overview (NOC): one row per SID with the whitepaper lights, throughput, firing
alerts, the exporter and sapstartsrv health; the SID opens that system's NOC overview.

The queries aggregate `by (sid)`, so the table grows a row per SID the fleet file adds;
they read the `sid` variable like every dashboard (Thanos query answers for the fleet).
bench/fleet.py times exactly these queries (`queries()`), through Thanos and directly.
"""

from __future__ import annotations

from alerts.thresholds import threshold_seconds
from dashboards.defaults import STEPS, prom, steps, traffic
from dashboards.layout import VARIABLES, Dashboard
from exporters.vocabulary import DIALOG_RESPONSE, DIALOG_RESPONSE_MEAN, INDICATORS, per_step_mean

UID = "wlmon-fleet"
NOC = "/d/wlmon-noc/noc-overview"
SID = 'sid=~"$sid"'
DIALOG = SID + ',task_type="dialog"'
# sapstartsrv's dispstatus of the worst instance: 1 gray, 2 green, 3 yellow, 4 red (0: none).
UP = {"0": {"text": "DOWN", "color": "red"}, "1": {"text": "UP", "color": "green"}}
DISPSTATUS = [
    (1, "gray", "GRAY"),
    (2, "green", "GREEN"),
    (3, "yellow", "YELLOW"),
    (4, "red", "RED"),
]


def columns() -> list[tuple[str, str, dict | None, str]]:
    """(column, PromQL by sid, thresholds, unit) in table order."""
    cols: list[tuple[str, str, dict | None, str]] = [
        (
            f"{i.label} (ms)",
            f"max by (sid) (1000 * {per_step_mean(i.component)}{{{DIALOG}}})",
            traffic(threshold_seconds(i) * 1000),
            "ms",
        )
        for i in INDICATORS
    ]
    cols += [
        (
            "Dialog response (s)",
            f"max by (sid) ({DIALOG_RESPONSE_MEAN}{{{SID}}})",
            traffic(threshold_seconds(DIALOG_RESPONSE)),
            "s",
        ),
        (
            "Dialog steps/s",
            f"sum by (sid) (max by (sid, sap_instance) ({STEPS}{{{DIALOG}}}))",
            None,
            "reqps",
        ),
        (
            "Firing alerts",
            # sid!="": the stack's own alerts (the watchdog, a server down) belong to no SID.
            f'count by (sid) (ALERTS{{alertstate="firing",sid!="",{SID}}})'
            f' or on (sid) (0 * max by (sid) (up{{job="wlmon-exporter",{SID}}}))',
            steps([(None, "green"), (1, "red")]),
            "",
        ),
        (
            "Exporter up",
            f'max by (sid) (up{{job="wlmon-exporter",{SID}}})',
            steps([(None, "red"), (1, "green")]),
            "",
        ),
        (
            "sapstartsrv",
            # The worst instance's light; 0 ("not read") where the SID has no sapstartsrv
            # reading (the fleet profile's model exporters run none): a row is never blank
            # because one source is not configured. An empty query does not drop the column
            # in Grafana 10.1's merged table: it leaves a column of blank grey cells.
            f"max by (sid) (sap_instance_status{{{SID}}})"
            f' or on (sid) (0 * max by (sid) (up{{job="wlmon-exporter",{SID}}}))',
            steps([(None, "gray"), (2, "green"), (3, "yellow"), (4, "red")]),
            "",
        ),
    ]
    return cols


def queries(sid: str = ".*") -> dict[str, str]:
    """The panel's queries with the variable filled (bench/fleet.py, tests)."""
    return {name: expr.replace("$sid", sid) for name, expr, _, _ in columns()}


def _colored(name: str, thresholds: dict | None, unit: str) -> dict:
    props: list[dict] = [{"id": "unit", "value": unit}] if unit else []
    if thresholds:
        props += [
            {"id": "thresholds", "value": thresholds},
            {"id": "custom.cellOptions", "value": {"type": "color-background"}},
        ]
    # Lights read as words, counts as whole numbers (the table's 1 decimal is for the ms).
    if name.startswith("sapstartsrv"):
        props.append(
            {
                "id": "mappings",
                "value": [
                    {"type": "value", "options": {str(v): {"text": t, "color": c}}}
                    for v, c, t in [(0, "gray", "not read"), *DISPSTATUS]
                ],
            }
        )
    elif name == "Exporter up":
        props.append({"id": "mappings", "value": [{"type": "value", "options": UP}]})
    elif name in ("Firing alerts",):
        props.append({"id": "decimals", "value": 0})
    return {"matcher": {"id": "byName", "options": name}, "properties": props}


def dashboard() -> Dashboard:
    # Only the sid picker of the shared variables shows: the rows follow $sid; instance and
    # task type pickers would filter nothing here.
    d = Dashboard(
        UID,
        "Fleet overview",
        "NOC",
        ["noc", "fleet"],
        variables=VARIABLES,
        hidden=("sap_instance", "task_type"),
    )
    cols = columns()
    d.add(
        "table",
        "Systems: one row per SID (click a SID for its NOC overview)",
        [prom(expr, legend=name, instant=True, fmt="table") for name, expr, _, _ in cols],
        w=24,
        h=16,
        decimals=1,
        description="Worst instance of each SID for the whitepaper indicators (dialog steps, "
        "red at the seed 000 thresholds); throughput of all its instances; its firing alerts; "
        "whether its exporter is scraped; sapstartsrv: its worst instance's light, 'not read' "
        "where the SID's sapstartsrv is not read (the fleet profile's model exporters run none).",
        transformations=[
            {"id": "merge", "options": {}},
            {
                "id": "organize",
                "options": {
                    "excludeByName": {"Time": True},
                    "renameByName": {
                        f"Value #{chr(ord('A') + k)}": c[0] for k, c in enumerate(cols)
                    },
                    "indexByName": {"sid": 0},
                },
            },
        ],
        overrides=[
            {
                "matcher": {"id": "byName", "options": "sid"},
                "properties": [
                    # Three letters: the room goes to the columns' headers.
                    {"id": "custom.width", "value": 90},
                    {
                        "id": "links",
                        "value": [
                            {
                                "title": "NOC overview of ${__value.raw}",
                                "url": f"{NOC}?var-sid=${{__value.raw}}&${{__url_time_range}}",
                            }
                        ],
                    },
                ],
            },
            *[_colored(name, th, unit) for name, _, th, unit in cols],
        ],
    )
    return d
