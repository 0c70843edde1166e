"""ST03 workload monitor: steps and time parts per instance and task type.

Mirrors the fields of ST03/STAD per dialog step, summed into counters so any mean is
`rate(x_seconds_total) / rate(sap_workload_steps_total)`. Sample::

    sap_workload_steps_total{sid="BMK",sap_instance="penguin2_D00",task_type="dialog"} 58131
    sap_workload_dispatcher_wait_seconds_total{sid="BMK",sap_instance="penguin2_D00",...} 0.41
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)

from exporters.collectors.base import SnapshotCollector
from exporters.model.engine import Snapshot
from exporters.model.solver import BUCKETS, COMPONENTS, TASK_TYPES

# Time parts exported as `sap_workload_<part>_seconds_total`, with the ST03 field each
# mirrors for HELP.
TIME_PARTS = {
    "response": "Response time (ST03 'Response time'): from dispatcher entry to answer sent.",
    "dispatcher_wait": "Wait in the dispatcher queue for a free work process (ST03 'Wait time').",
    "roll_in": "Roll-in time: user context copied into the work process (ST03 'Roll in time').",
    "roll_out": "Roll-out time: user context saved after the step (ST03 'Roll out time').",
    "load_gen": "Program load and generation time (ST03 'Load+gen time').",
    "processing": "Processing time: ABAP work including CPU wait (ST03 'Processing time').",
    "cpu": "CPU time of the work process (ST03 'CPU time').",
    "db_request": "Database request time (ST03 'DB time' / 'DB req. time').",
    "enqueue": "Enqueue time: lock requests to the enqueue server (ST03 'Enqueue time').",
    "gui": "GUI time: front-end round trips counted in the response (ST03 'GUI time').",
}
# Transactions exported with their own label; others would fold into "other".
TRANSACTION_ALLOW_LIST = ("VA01", "VL01N", "VA03", "VL02N", "VA05", "VF01")


def _tx_label(tx: str) -> str:
    return tx if tx in TRANSACTION_ALLOW_LIST else "other"


class ST03Collector(SnapshotCollector):
    name = "st03"

    def describe_families(self) -> Iterable[Metric]:
        return self._families(None)

    def families(self, snap: Snapshot) -> Iterable[Metric]:
        return self._families(snap)

    def _families(self, snap: Snapshot | None) -> Iterator[Metric]:
        inst_labels = ["sid", "sap_instance", "task_type"]
        tx_labels = ["sid", "task_type", "transaction"]
        steps = CounterMetricFamily(
            "sap_workload_steps",
            "Dialog steps completed (ST03 'Number of steps'), from the wlmon model.",
            labels=inst_labels,
        )
        calls = CounterMetricFamily(
            "sap_workload_db_calls",
            "Database calls issued by the steps (STAD 'DB calls').",
            labels=inst_labels,
        )
        parts = {
            p: CounterMetricFamily(f"sap_workload_{p}_seconds", help_text, labels=inst_labels)
            for p, help_text in TIME_PARTS.items()
        }
        tx_steps = CounterMetricFamily(
            "sap_workload_transaction_steps",
            "Steps per transaction (ST03 transaction profile), allow-listed transactions.",
            labels=tx_labels,
        )
        tx_parts = {
            p: CounterMetricFamily(
                f"sap_workload_transaction_{p}_seconds",
                f"Per transaction: {help_text}",
                labels=tx_labels,
            )
            for p, help_text in TIME_PARTS.items()
        }
        hist = HistogramMetricFamily(
            "sap_workload_response_time_seconds",
            "Distribution of step response times (ST03 response time distribution).",
            labels=inst_labels,
        )
        wp_total = GaugeMetricFamily(
            "sap_workload_work_processes",
            "Configured work processes (SM50/SM66).",
            labels=inst_labels,
        )
        wp_busy = GaugeMetricFamily(
            "sap_workload_work_processes_busy",
            "Work processes busy with a request now (SM66).",
            labels=inst_labels,
        )
        queue = GaugeMetricFamily(
            "sap_workload_dispatcher_queue_length",
            "Requests waiting in the dispatcher queue for a work process (dpmon).",
            labels=inst_labels,
        )
        roll_labels = ["sid", "sap_instance"]
        roll_size = GaugeMetricFamily(
            "sap_roll_buffer_size_bytes",
            "Roll buffer in shared memory, rdisp/ROLL_SHM (ST02).",
            labels=roll_labels,
        )
        roll_used = GaugeMetricFamily(
            "sap_roll_buffer_used_bytes",
            "Roll buffer in use (ST02 'Roll area').",
            labels=roll_labels,
        )
        em_size = GaugeMetricFamily(
            "sap_extended_memory_size_bytes",
            "Extended memory, em/initial_size_MB (ST02).",
            labels=roll_labels,
        )
        em_used = GaugeMetricFamily(
            "sap_extended_memory_used_bytes",
            "Extended memory in use (ST02 'Extended Memory').",
            labels=roll_labels,
        )
        roll_file = CounterMetricFamily(
            "sap_roll_file_written_bytes",
            "Bytes rolled out to the roll file on disk (ST02 roll file); should stay 0.",
            labels=roll_labels,
        )
        model_time = CounterMetricFamily(
            "wlmon_model_simulated_seconds",
            "Simulated time the landscape model has advanced.",
            labels=["sid"],
        )
        if snap is not None:
            self._fill(snap, steps, calls, parts, tx_steps, tx_parts, hist)
            self._fill_state(
                snap,
                wp_total,
                wp_busy,
                queue,
                roll_size,
                roll_used,
                em_size,
                em_used,
                roll_file,
                model_time,
            )
        yield steps
        yield from parts.values()
        yield calls
        yield tx_steps
        yield from tx_parts.values()
        yield from (
            hist,
            wp_total,
            wp_busy,
            queue,
            roll_size,
            roll_used,
            em_size,
            em_used,
            roll_file,
            model_time,
        )

    @staticmethod
    def _fill_state(
        snap,
        wp_total,
        wp_busy,
        queue,
        roll_size,
        roll_used,
        em_size,
        em_used,
        roll_file,
        model_time,
    ) -> None:
        """Gauges of the current state and the roll area, per instance."""
        t, st, sid = snap.totals, snap.state, snap.sid
        for i, inst in enumerate(st.instances):
            for k, task in enumerate(TASK_TYPES):
                labels = [sid, inst, task]
                wp_total.add_metric(labels, float(st.wp_total[i, k]))
                wp_busy.add_metric(labels, float(st.wp_busy[i, k]))
                queue.add_metric(labels, float(st.dispatcher_queue[i, k]))
            for fam, values in (
                (roll_size, st.roll_buffer_size),
                (roll_used, st.roll_buffer_used),
                (em_size, st.em_size),
                (em_used, st.em_used),
                (roll_file, t.roll_file_bytes),
            ):
                fam.add_metric([sid, inst], float(values[i]))
        model_time.add_metric([sid], float(t.sim_time))

    @staticmethod
    def _fill(snap, steps, calls, parts, tx_steps, tx_parts, hist) -> None:
        """Counters of steps and time parts, per instance and per transaction."""
        t, st, sid = snap.totals, snap.state, snap.sid
        idx = {name: COMPONENTS.index(name) for name in TIME_PARTS}
        by_inst_steps = t.steps.sum(axis=2)
        by_inst_secs = t.seconds.sum(axis=2)
        by_inst_calls = t.db_calls.sum(axis=2)
        edges = [*(f"{b:g}" for b in BUCKETS), "+Inf"]
        for i, inst in enumerate(st.instances):
            for k, task in enumerate(TASK_TYPES):
                labels = [sid, inst, task]
                steps.add_metric(labels, float(by_inst_steps[i, k]))
                calls.add_metric(labels, float(by_inst_calls[i, k]))
                for p, fam in parts.items():
                    fam.add_metric(labels, float(by_inst_secs[i, k, idx[p]]))
                cumulative = np.cumsum(t.bucket_counts[i, k])
                hist.add_metric(
                    labels,
                    buckets=list(zip(edges, (float(c) for c in cumulative), strict=True)),
                    sum_value=float(by_inst_secs[i, k, idx["response"]]),
                )
        tx_totals: dict[tuple[str, str], np.ndarray] = {}
        tx_steps_sum: dict[tuple[str, str], float] = {}
        for k, task in enumerate(TASK_TYPES):
            for j, tx in enumerate(st.transactions):
                key = (task, _tx_label(tx))
                tx_steps_sum[key] = tx_steps_sum.get(key, 0.0) + float(t.steps[:, k, j].sum())
                tx_totals[key] = tx_totals.get(key, 0.0) + t.seconds[:, k, j].sum(axis=0)
        for (task, tx), n in sorted(tx_steps_sum.items()):
            tx_steps.add_metric([sid, task, tx], n)
            for p, fam in tx_parts.items():
                fam.add_metric([sid, task, tx], float(tx_totals[(task, tx)][idx[p]]))
