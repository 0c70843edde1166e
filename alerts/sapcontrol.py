"""sapcontrol.rules.yml: the per-step series the whitepaper alerts read, from the sapcontrol
source (sapstartsrv's SAPControl web service) instead of the model's ST03 counters."""

from __future__ import annotations

from collections.abc import Mapping

from alerts.recording import STEPS
from alerts.rules import RuleFile, number, record
from exporters.vocabulary import DIALOG_RESPONSE_MEAN, per_step_mean

BY = "sum by (sid, sap_instance)"
CCMS_STEPS = "sap_ccms_dialog_steps_per_second"
DIA_WRITES = 'sap_dispatcher_queue_writes_total{queue="ABAP/DIA"}'
# Dialog steps per second per instance: CCMS DialogSteps, or where a system's alert tree
# has no such node, the rate of ABAP/DIA dispatcher queue writes (one per dialog step).
STEP_RATE = "sap_instance:sap_dialog_steps_per_second:ccms_or_dia_writes"
# Series of one instance's dialog work, labelled like the model's so the same alerts read them.
DIALOG = {"task_type": "dialog", "source": "sapcontrol"}
# Components CCMS reports as per-step averages over its own interval: component -> CCMS value.
CCMS_AVERAGES = {
    "dispatcher_wait": "queue_time",
    "db_request": "db_request_time",
    "load_gen": "load_gen_time",
    "response": "response_time",
}
# Components read by Little's law from the SM50 work-process table: component -> activity.
WP_ACTIVITIES = {"enqueue": "enqueue", "roll_in": "roll_in", "roll_out": "roll_out"}

WHY = """
Per-step series from the sapcontrol source (sapstartsrv's SAPControl web service), under
the names workload.rules.yml and the NOC dashboard read, labelled source="sapcontrol" so
a system read both ways keeps two distinguishable series. docs/sapcontrol.md derives them.

- Dispatcher wait, DB request, load+gen and response time: CCMS R3Services/Dialog
  QueueTime, DBRequestTime, Load+GenTime and ResponseTime. CCMS reports each as an
  average over its own last interval, not as a counter, so the 5-minute value is the
  average of those averages weighted by the interval's dialog steps (CCMS DialogSteps):
  avg_over_time(value * steps) / avg_over_time(steps).
- Enqueue, roll-in and roll-out time: CCMS has no per-step figure for them. By Little's
  law, work processes found on hold for ENQ (or rolling in, rolling out) in the SM50
  table, averaged over 5 minutes, divided by the dialog steps per second (CCMS
  DialogSteps, in the system's own time: the model may run faster than the wall clock),
  is the time a step spends there.
- Where a system's CCMS tree has no Dialog/DialogSteps node, the step rate (weights and
  divisor above) falls back to the rate of ABAP/DIA dispatcher queue writes, one per
  dialog step, in wall-clock time.
- Dialog steps per second for the NOC: the rate of requests written into the ABAP/DIA
  dispatcher queue (GetQueueStatistic Writes, a real counter, so rate() absorbs resets).
Idle-safe as recording.rules.yml: no series below min_steps_per_second dialog steps per second.
"""


def _labelled(name: str, expr: str, labels: Mapping[str, str]) -> dict:
    return {**record(name, expr), "labels": dict(labels)}


def _weighted(value: str) -> str:
    return f"sap_instance:sap_ccms_dialog_{value}_seconds:weighted"


def _per_step(numerator: str, guard: str, by: str = BY) -> str:
    return (
        f"{by} (avg_over_time({numerator}[5m]))\n"
        f"  / ({by} (avg_over_time({STEP_RATE}[5m])) >= {guard})\n"
    )


def rule_file(limits: Mapping[str, float]) -> RuleFile:
    guard = number(limits["min_steps_per_second"])
    rules = [
        _labelled(
            STEPS,
            f"{BY} (rate({DIA_WRITES}[5m]))",
            DIALOG,
        ),
        record(
            STEP_RATE,
            f"{BY} ({CCMS_STEPS})\n  or on(sid, sap_instance)\n  {BY} (rate({DIA_WRITES}[5m]))\n",
        ),
        *(
            record(
                _weighted(value),
                f"sap_ccms_dialog_{value}_seconds * on(sid, sap_instance) {STEP_RATE}",
            )
            for value in CCMS_AVERAGES.values()
        ),
        *(
            _labelled(per_step_mean(c), _per_step(_weighted(value), guard), DIALOG)
            for c, value in CCMS_AVERAGES.items()
        ),
        *(
            _labelled(
                per_step_mean(c),
                _per_step(f'sap_work_processes_activity{{type="DIA",activity="{a}"}}', guard),
                DIALOG,
            )
            for c, a in WP_ACTIVITIES.items()
        ),
        # The SD benchmark bound is on the system's average dialog response.
        _labelled(
            DIALOG_RESPONSE_MEAN,
            _per_step(_weighted(CCMS_AVERAGES["response"]), guard, by="sum by (sid)"),
            {"source": "sapcontrol"},
        ),
    ]
    return RuleFile(
        "sapcontrol.rules.yml", WHY, [{"name": "sap-sapcontrol-recording", "rules": rules}]
    )
