"""NOC overview: the whitepaper indicators as traffic lights, throughput, firing alerts."""

from __future__ import annotations

from dashboards.defaults import (
    DIALOG,
    EXCEPTED_BUFFERS,
    STEPS,
    floor,
    prom,
    stat_options,
    steps,
    traffic,
)
from dashboards.layout import Dashboard
from exporters.vocabulary import (
    DIALOG_RESPONSE,
    DIALOG_RESPONSE_MEAN,
    INDICATORS,
    per_step_mean,
    threshold_seconds,
    thresholds,
)


def _worst_buffer() -> str:
    sel = f'sid=~"$sid",{EXCEPTED_BUFFERS}'
    return (
        f"min(sum by (sap_instance, buffer) (rate(sap_buffer_hits_total{{{sel}}}[5m]))"
        f" / sum by (sap_instance, buffer) (rate(sap_buffer_requests_total{{{sel}}}[5m])))"
    )


def dashboard() -> Dashboard:
    d = Dashboard("wlmon-noc", "NOC overview", "NOC", ["noc"])
    for i in INDICATORS:
        limit_ms = threshold_seconds(i) * 1000
        d.add(
            "stat",
            f"{i.label} (ms)",
            [prom(f"max(1000 * {per_step_mean(i.component)}{{{DIALOG}}})", instant=True)],
            w=4,
            h=6,
            unit="ms",
            thresholds=traffic(limit_ms),
            decimals=1,
            description=f"Worst instance, dialog steps; red at the seed 000 threshold of {limit_ms:g} ms.",
            options={**stat_options(), "textMode": "value"},
        )
    bound = threshold_seconds(DIALOG_RESPONSE)
    d.add(
        "stat",
        "Dialog response (s)",
        [prom(f'{DIALOG_RESPONSE_MEAN}{{sid=~"$sid"}}', instant=True)],
        w=4,
        h=6,
        unit="s",
        decimals=2,
        thresholds=traffic(bound),
        description=f"Average dialog response; the SD benchmark passes below {bound:g} s (seed 000).",
        options=stat_options("background", "none"),
    )
    ratio = thresholds()["sap_buffer_hit_ratio_min"]
    d.add(
        "stat",
        "Worst SAP buffer hit ratio",
        [prom(_worst_buffer(), instant=True)],
        w=4,
        h=6,
        unit="percentunit",
        decimals=2,
        thresholds=floor(ratio),
        description=f"R/3 buffers should hit {100 * ratio:g} % or better (seed 000, 4.3.1).",
        options=stat_options("background", "none"),
    )
    d.add(
        "stat",
        "Firing alerts",
        [prom('count(ALERTS{alertstate="firing",sid=~"$sid"}) or vector(0)', instant=True)],
        w=4,
        h=6,
        thresholds=steps([(None, "green"), (1, "red")]),
        options=stat_options("background", "none"),
    )
    d.add(
        "stat",
        "Dialog steps/s",
        [prom(f"sum(max by (sid, sap_instance) ({STEPS}{{{DIALOG}}}))", instant=True)],
        w=4,
        h=6,
        unit="reqps",
        decimals=0,
        thresholds=steps([(None, "blue")]),
        options=stat_options("value", "area"),
    )
    d.add(
        "stat",
        "SAPS",
        [prom(f"60 * sum(max by (sid, sap_instance) ({STEPS}{{{DIALOG}}}))", instant=True)],
        w=4,
        h=6,
        decimals=0,
        thresholds=steps([(None, "blue")]),
        description="Dialog steps per hour / 60 (seed 000 Table 5: 29,050).",
        options=stat_options("value", "none"),
    )
    d.add(
        "table",
        "Instances: the four whitepaper indicators (ms per dialog step)",
        [
            prom(
                f"1000 * {per_step_mean(i.component)}{{{DIALOG}}}",
                legend=f"{i.label} ms",
                instant=True,
                fmt="table",
            )
            for i in INDICATORS
        ],
        w=24,
        h=12,
        decimals=1,
        transformations=[
            {"id": "merge", "options": {}},
            {
                "id": "organize",
                "options": {"excludeByName": {"Time": True, "__name__": True, "task_type": True}},
            },
        ],
    )
    return d
