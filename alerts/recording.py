"""recording.rules.yml: the 5-minute mean per step of each component the alerts read."""

from __future__ import annotations

from alerts.rules import RuleFile, number, record
from alerts.settings import MonitoringConfig
from exporters.vocabulary import (
    DIALOG_RESPONSE,
    DIALOG_RESPONSE_MEAN,
    INDICATORS,
    Indicator,
    per_step_mean,
)

STEPS = "sap_instance_task_type:sap_workload_steps:rate5m"
STEPS_GUARDED = f"{STEPS}_guarded"
# The pages' fast window: four 15 s scrapes, so a page comes within two minutes.
FAST = "1m"
STEPS_FAST = f"sap_instance_task_type:sap_workload_steps:rate{FAST}"
STEPS_FAST_GUARDED = f"{STEPS_FAST}_guarded"
# The source label of the per-step series sapcontrol.rules.yml records (the model's have none).
SAPCONTROL_SOURCE = "sapcontrol"
BY = "sum by (sid, sap_instance, task_type)"
DIALOG = '{task_type="dialog"}'
# The indicators' components, and the response (the dialog-response bound, dashboards).
MEANS = (*(i.component for i in INDICATORS), DIALOG_RESPONSE.component)
# The thresholds as series, so a dashboard draws the warning and the page level of an
# indicator from the same numbers its alert reads (alerts/thresholds.yml):
# sap_workload_threshold_seconds{component="db_request", level="warning"|"page"}.
LEVELS = "sap_workload_threshold_seconds"
# A SID's dialog throughput over 2 minutes (steps/s; SAPS = 60 x this, SD steps), and what
# it is expected to be now: the same time yesterday, else a week ago, else the mean of the
# hour before the last quarter (a fresh stack, or one whose history is gone).
THROUGHPUT = "sid:sap_workload_dialog_steps:rate2m"
THROUGHPUT_EXPECTED = "sid:sap_workload_dialog_steps:expected"

WHY = """
Per-step means over 5 minutes, idle-safe and reset-safe: the rate of a time counter over
the rate of steps, only where at least min_steps_per_second steps ran (no traffic, no
series; rate() absorbs counter resets). Values in seconds per step: the 5-minute mean is
the whitepaper's (what ST03 shows). The indicators also get a 1-minute mean, what their
alerts page on so a page comes within two minutes (docs/alerts.md). Each indicator's
warning (the paper's) and page level are recorded as sap_workload_threshold_seconds, so a
dashboard draws them from alerts/thresholds.yml as the alert reads them. A SID's dialog
throughput and the throughput expected at this time feed SAPDialogThroughputLow.
"""


def levels(indicator: Indicator, config: MonitoringConfig) -> list[dict]:
    """The warning and the page level of an indicator as constant series."""
    t = config.thresholds
    seconds = {"warning": t.seconds(indicator), "page": t.page_seconds(indicator)}
    return [
        {
            "record": LEVELS,
            "expr": f"vector({number(at)})",
            "labels": {"component": indicator.component, "level": level},
        }
        for level, at in seconds.items()
        if at is not None
    ]


def throughput() -> list[dict]:
    return [
        record(THROUGHPUT, f"sum by (sid) (rate(sap_workload_steps_total{DIALOG}[2m]))"),
        record(
            THROUGHPUT_EXPECTED,
            # A stack without a day's history: the median of the hour before the last
            # 15 minutes, not its mean, which a fresh stack's first rates (the 2-minute
            # rate of a series a minute old: 168 of 484 steps/s) and an earlier fault in
            # the hour pulled down by 11 % (430 at the bench's too-few-work-processes,
            # whose 398 steps/s then stayed over 90 % of it and never fired; issue 37).
            # Only rates over a whole window (the series 2 minutes old) count: a stack
            # 15 minutes old has an expectation from its third minute on, not its first.
            f"{THROUGHPUT} offset 1d\n  or {THROUGHPUT} offset 1w\n"
            f"  or quantile_over_time(\n    0.5, ({THROUGHPUT} and {THROUGHPUT} offset 2m)"
            "[1h:1m] offset 15m\n  )\n",
        ),
    ]


def rule_file(config: MonitoringConfig) -> RuleFile:
    guard = number(config.thresholds.min_steps_per_second)
    response = DIALOG_RESPONSE.component
    rules = [
        record(STEPS, f"{BY} (rate(sap_workload_steps_total[5m]))"),
        record(STEPS_GUARDED, f"{STEPS} >= {guard}"),
        *(
            record(
                per_step_mean(c),
                f"{BY} (rate(sap_workload_{c}_seconds_total[5m]))\n  / {STEPS_GUARDED}\n",
            )
            for c in dict.fromkeys(MEANS)
        ),
        record(STEPS_FAST, f"{BY} (rate(sap_workload_steps_total[{FAST}]))"),
        record(STEPS_FAST_GUARDED, f"{STEPS_FAST} >= {guard}"),
        *(
            record(
                per_step_mean(c, FAST),
                f"{BY} (rate(sap_workload_{c}_seconds_total[{FAST}]))\n  / {STEPS_FAST_GUARDED}\n",
            )
            for c in dict.fromkeys(i.component for i in INDICATORS)
        ),
        # The SD benchmark bound is on the system's average dialog response.
        record(
            DIALOG_RESPONSE_MEAN,
            f"sum by (sid) (rate(sap_workload_{response}_seconds_total{DIALOG}[5m]))\n"
            f"  / (sum by (sid) (rate(sap_workload_steps_total{DIALOG}[5m])) >= {guard})\n",
        ),
        *throughput(),
        *(r for i in (*INDICATORS, DIALOG_RESPONSE) for r in levels(i, config)),
    ]
    return RuleFile(
        "recording.rules.yml", WHY, [{"name": "sap-workload-recording", "rules": rules}]
    )
