"""recording.rules.yml: the 5-minute mean per step of each component the alerts read."""

from __future__ import annotations

from collections.abc import Mapping

from alerts.rules import RuleFile, number, record
from exporters.vocabulary import DIALOG_RESPONSE, DIALOG_RESPONSE_MEAN, INDICATORS, per_step_mean

STEPS = "sap_instance_task_type:sap_workload_steps:rate5m"
STEPS_GUARDED = f"{STEPS}_guarded"
# The critical twins' fast window: four 15 s scrapes, so a page comes within two minutes.
FAST = "1m"
STEPS_FAST = f"sap_instance_task_type:sap_workload_steps:rate{FAST}"
STEPS_FAST_GUARDED = f"{STEPS_FAST}_guarded"
# The source label of the per-step series sapcontrol.rules.yml records (the model's have none).
SAPCONTROL_SOURCE = "sapcontrol"
BY = "sum by (sid, sap_instance, task_type)"
DIALOG = '{task_type="dialog"}'
# The indicators' components, and the response (the dialog-response bound, dashboards).
MEANS = (*(i.component for i in INDICATORS), DIALOG_RESPONSE.component)

WHY = """
Per-step means over 5 minutes, idle-safe and reset-safe: the rate of a time counter over
the rate of steps, only where at least min_steps_per_second steps ran (no traffic, no
series; rate() absorbs counter resets). Values in seconds per step. The indicators also get
a 1-minute mean, read by their critical twins so a page comes within two minutes.
"""


def rule_file(limits: Mapping[str, float]) -> RuleFile:
    guard = number(limits["min_steps_per_second"])
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
    ]
    return RuleFile(
        "recording.rules.yml", WHY, [{"name": "sap-workload-recording", "rules": rules}]
    )
