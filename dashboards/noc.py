"""NOC overview: status first (the whitepaper indicators as traffic lights with their trend,
firing alerts by severity), then the instances, worst first. Every light links to the
dashboard that explains it, keeping the time range and the SID."""

from __future__ import annotations

from alerts.thresholds import threshold_seconds, thresholds
from dashboards.defaults import (
    DIALOG,
    EXCEPTED_BUFFERS,
    STEPS,
    floor,
    prom,
    stat_options,
    steps,
)
from dashboards.layout import Dashboard
from exporters.vocabulary import (
    DIALOG_RESPONSE,
    DIALOG_RESPONSE_MEAN,
    INDICATORS,
    Indicator,
    per_step_mean,
)

# Where an operator goes from each light (dashboards by uid; Grafana adds the slug).
KEEP = "${__url_time_range}&${sid:queryparam}"
ST03 = "/d/wlmon-st03?" + KEEP + "&var-task_type=dialog"
EXPLAINED_BY = {
    "dispatcher_wait": ("ST03 workload (dialog)", ST03),
    "db_request": ("ST05 database time and statements", "/d/wlmon-st05?" + KEEP),
    "enqueue": ("ST03 workload (dialog)", ST03),
    "roll_in": ("ST03 workload (dialog)", ST03),
    "roll_out": ("ST03 workload (dialog)", ST03),
}
ALERTS_PAGE = "/alerting/list?search=state:firing&view=list"


def _link(title: str, url: str) -> list[dict]:
    return [{"title": f"Open {title}", "url": url}]


def lights(i: Indicator) -> dict:
    """Green below the warning threshold, orange from it, red from the critical twin's:
    the light says what the alert says (alerts/thresholds.yml, exporters/vocabulary.py)."""
    warn = threshold_seconds(i) * 1000
    at = [(None, "green"), (warn, "orange")]
    if i.critical_multiple is not None:
        at.append((warn * i.critical_multiple, "red"))
    return steps(at)


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


def dashboard() -> Dashboard:
    # task_type: every panel here reads dialog steps (the whitepaper's indicators).
    d = Dashboard("wlmon-noc", "NOC overview", "NOC", ["noc"], hidden=("task_type",))
    for i in INDICATORS:
        warn = threshold_seconds(i) * 1000
        title, url = EXPLAINED_BY[i.component]
        crit = f", red from {warn * i.critical_multiple:g} ms" if i.critical_multiple else ""
        d.add(
            "stat",
            f"{i.label} (ms)",
            [prom(f"max(1000 * {per_step_mean(i.component)}{{{DIALOG}}})", legend=i.label)],
            w=4,
            h=5,
            unit="ms",
            thresholds=lights(i),
            decimals=0,
            description=(
                f"Worst instance, ms per dialog step (5-minute mean). Orange from the seed 000 "
                f"threshold of {warn:g} ms{crit}, as {i.alert} warns and pages. "
                f"Click for {title}."
            ),
            options=stat_options("background", "area"),
            links=_link(title, url),
        )
    bound = threshold_seconds(DIALOG_RESPONSE)
    d.add(
        "stat",
        "Dialog response (s)",
        [prom(f'{DIALOG_RESPONSE_MEAN}{{sid=~"$sid"}}', legend="dialog response")],
        w=4,
        h=5,
        unit="s",
        decimals=2,
        thresholds=steps([(None, "green"), (bound, "red")]),
        description=(
            f"Average dialog response; the SD benchmark passes below {bound:g} s (seed 000). "
            "Click for ST03."
        ),
        options=stat_options("background", "area"),
        links=_link("ST03 workload (dialog)", ST03),
    )
    d.add(
        "stat",
        "Critical alerts",
        [prom(_firing("critical"), instant=True)],
        w=4,
        h=4,
        decimals=0,
        thresholds=steps([(None, "green"), (1, "red")]),
        description="Alert rules firing at severity critical (each counted once, whatever the "
        "number of instances). Click for the list.",
        options=stat_options("background", "none"),
        links=_link("the firing alerts", ALERTS_PAGE),
    )
    d.add(
        "stat",
        "Warning alerts",
        [prom(_firing("warning"), instant=True)],
        w=4,
        h=4,
        decimals=0,
        thresholds=steps([(None, "green"), (1, "orange")]),
        description="Alert rules firing at severity warning (each counted once). "
        "Click for the list.",
        options=stat_options("background", "none"),
        links=_link("the firing alerts", ALERTS_PAGE),
    )
    ratio = thresholds()["sap_buffer_hit_ratio_min"]
    d.add(
        "stat",
        "Worst SAP buffer hit ratio",
        [prom(_worst_buffer(), legend="worst buffer")],
        w=4,
        h=4,
        unit="percentunit",
        decimals=2,
        thresholds=floor(ratio),
        description=f"R/3 buffers should hit {100 * ratio:g} % or better (seed 000, 4.3.1). "
        "Click for the buffers.",
        options=stat_options("background", "area"),
        links=_link("Database buffer pools", "/d/wlmon-dbbuffer?" + KEEP),
    )
    d.add(
        "stat",
        "Dialog steps/s",
        [prom(f"sum(max by (sid, sap_instance) ({STEPS}{{{DIALOG}}}))", legend="steps/s")],
        w=4,
        h=4,
        unit="reqps",
        decimals=0,
        thresholds=steps([(None, "blue")]),
        description="Dialog steps per second over all instances (5-minute rate).",
        options=stat_options("value", "area"),
    )
    d.add(
        "stat",
        "SAPS",
        [prom(f"60 * sum(max by (sid, sap_instance) ({STEPS}{{{DIALOG}}}))", legend="SAPS")],
        w=4,
        h=4,
        decimals=0,
        thresholds=steps([(None, "blue")]),
        description="Dialog steps per hour / 60 (seed 000 Table 5: 29,050).",
        options=stat_options("value", "area"),
    )
    d.add(
        "stat",
        "Instances reporting",
        [
            prom(
                f'count(count by (sap_instance) ({STEPS}{{sid=~"$sid"}}))',
                instant=True,
            )
        ],
        w=4,
        h=4,
        decimals=0,
        thresholds=steps([(None, "blue")]),
        description="SAP instances whose workload is being read (either source).",
        options=stat_options("value", "none"),
    )
    _instances_table(d)
    return d


def _instances_table(d: Dashboard) -> None:
    columns = {f"Value #{chr(ord('A') + n)}": f"{i.label} (ms)" for n, i in enumerate(INDICATORS)}
    worst = f"Value #{chr(ord('A') + len(INDICATORS))}"
    targets = [
        prom(f"1000 * {per_step_mean(i.component)}{{{DIALOG}}}", instant=True, fmt="table")
        for i in INDICATORS
    ]
    targets.append(prom(_worst_ratio(), instant=True, fmt="table"))
    overrides = [
        {
            "matcher": {"id": "byName", "options": columns[f"Value #{chr(ord('A') + n)}"]},
            "properties": [
                {"id": "thresholds", "value": lights(i)},
                {"id": "custom.cellOptions", "value": {"type": "color-background"}},
            ],
        }
        for n, i in enumerate(INDICATORS)
    ]
    overrides.append(
        {
            "matcher": {"id": "byName", "options": "Worst vs threshold"},
            "properties": [
                {"id": "unit", "value": "percentunit"},
                {"id": "decimals", "value": 0},
                {"id": "thresholds", "value": steps([(None, "green"), (1, "orange")])},
                {"id": "custom.cellOptions", "value": {"type": "color-text"}},
            ],
        }
    )
    overrides.append(
        {
            "matcher": {"id": "byName", "options": "Instance"},
            "properties": [
                {
                    "id": "links",
                    "value": [
                        {
                            "title": "Open this instance in ST03",
                            "url": "/d/wlmon-st03?var-sap_instance=${__value.raw}&"
                            + KEEP
                            + "&var-task_type=dialog",
                        }
                    ],
                }
            ],
        }
    )
    d.add(
        "table",
        f"Instances, worst first: the {len(INDICATORS)} indicators (ms per dialog step)",
        targets,
        w=24,
        h=22,
        unit="ms",
        decimals=0,
        description="Each instance's 5-minute mean per dialog step, coloured as the lights; "
        "'Worst vs threshold' is its worst indicator as a share of that indicator's threshold "
        "(100 % and more: an alert is due). Click an instance for its ST03.",
        options={
            "showHeader": True,
            "sortBy": [{"displayName": "Worst vs threshold", "desc": True}],
            "footer": {"show": False, "reducer": ["sum"], "fields": ""},
        },
        overrides=overrides,
        transformations=[
            {"id": "merge", "options": {}},
            {
                "id": "organize",
                "options": {
                    "excludeByName": {"Time": True, "__name__": True, "task_type": True},
                    "indexByName": {"sap_instance": 0, worst: 1, "sid": 7},
                    "renameByName": {
                        "sap_instance": "Instance",
                        "sid": "SID",
                        worst: "Worst vs threshold",
                        **columns,
                    },
                },
            },
        ],
    )
