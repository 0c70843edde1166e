"""ST03 workload monitor: steps and time parts per instance and task type.

Mirrors the fields of ST03/STAD per dialog step, summed into counters so any mean is
`rate(x_seconds_total) / rate(sap_workload_steps_total)`. Sample::

    sap_workload_steps_total{sid="BMK",sap_instance="penguin2_D00",task_type="dialog"} 58131
    sap_workload_dispatcher_wait_seconds_total{sid="BMK",sap_instance="penguin2_D00",...} 0.41
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)

from exporters.collectors.base import SourceCollector
from landscape_model.terms import COMPONENTS, COMPONENTS_INFO, TASK_TYPES

# Transactions exported with their own label; others fold into "other".
TRANSACTION_ALLOW_LIST = ("VA01", "VL01N", "VA03", "VL02N", "VA05", "VF01")


@dataclass(frozen=True)
class Workload:
    """ST03/STAD totals since the system's start, and its SM50/ST02 state now.

    Arrays are indexed by instance (`instances`), task type (landscape_model.terms.TASK_TYPES),
    transaction (`transactions`) and time component (landscape_model.terms.COMPONENTS).
    """

    sid: str
    instances: Sequence[str]
    transactions: Sequence[str]
    steps: np.ndarray  # [instance, task_type]
    db_calls: np.ndarray  # [instance, task_type]
    seconds: np.ndarray  # [instance, task_type, component]
    # [instance, task_type, bucket]: steps per response-time bucket (not cumulative), the
    # buckets' upper bounds being `bucket_bounds` and +Inf
    response_buckets: np.ndarray
    bucket_bounds: Sequence[float]
    transaction_steps: np.ndarray  # [task_type, transaction]
    transaction_seconds: np.ndarray  # [task_type, transaction, component]
    work_processes: np.ndarray  # [instance, task_type]
    work_processes_busy: np.ndarray  # [instance, task_type]
    dispatcher_queue: np.ndarray  # [instance, task_type]
    roll_buffer_size: np.ndarray  # [instance] bytes
    roll_buffer_used: np.ndarray
    em_size: np.ndarray
    em_used: np.ndarray
    roll_file_bytes: np.ndarray  # [instance] bytes written since the start
    simulated_seconds: float | None = None  # the model's clock; None from a real system
    # [task_type, transaction, bucket], as `response_buckets`; None where the system keeps
    # no distribution per transaction
    transaction_response_buckets: np.ndarray | None = None


class WorkloadSource(Protocol):
    def workload(self) -> Workload: ...


def _tx_label(tx: str) -> str:
    return tx if tx in TRANSACTION_ALLOW_LIST else "other"


class ST03Collector(SourceCollector[WorkloadSource, Workload]):
    def read(self) -> Workload:
        return self.source.workload()

    def families(self, w: Workload | None) -> Iterator[Metric]:
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
        parts = [
            CounterMetricFamily(f"sap_workload_{c.key}_seconds", c.help, labels=inst_labels)
            for c in COMPONENTS_INFO
        ]
        tx_steps = CounterMetricFamily(
            "sap_workload_transaction_steps",
            "Steps per transaction (ST03 transaction profile), allow-listed transactions.",
            labels=tx_labels,
        )
        tx_parts = [
            CounterMetricFamily(
                f"sap_workload_transaction_{c.key}_seconds",
                f"Per transaction: {c.help}",
                labels=tx_labels,
            )
            for c in COMPONENTS_INFO
        ]
        hist = HistogramMetricFamily(
            "sap_workload_response_time_seconds",
            "Distribution of step response times (ST03 response time distribution).",
            labels=inst_labels,
        )
        # A family of its own rather than a transaction label on the one above: that one's
        # queries (dashboards, reports) sum it per instance and would not expect a new label.
        tx_hist = HistogramMetricFamily(
            "sap_workload_transaction_response_time_seconds",
            "Distribution of step response times per transaction, allow-listed transactions.",
            labels=tx_labels,
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
        if w is not None:
            self._fill(w, steps, calls, parts, tx_steps, tx_parts, hist)
            self._fill_tx_histogram(w, tx_hist)
            self._fill_state(
                w,
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
        yield from parts
        yield calls
        yield tx_steps
        yield from tx_parts
        yield from (
            hist,
            tx_hist,
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
        w: Workload,
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
        for i, inst in enumerate(w.instances):
            for k, task in enumerate(TASK_TYPES):
                labels = [w.sid, inst, task]
                wp_total.add_metric(labels, float(w.work_processes[i, k]))
                wp_busy.add_metric(labels, float(w.work_processes_busy[i, k]))
                queue.add_metric(labels, float(w.dispatcher_queue[i, k]))
            for fam, values in (
                (roll_size, w.roll_buffer_size),
                (roll_used, w.roll_buffer_used),
                (em_size, w.em_size),
                (em_used, w.em_used),
                (roll_file, w.roll_file_bytes),
            ):
                fam.add_metric([w.sid, inst], float(values[i]))
        if w.simulated_seconds is not None:
            model_time.add_metric([w.sid], float(w.simulated_seconds))

    @staticmethod
    def _fill(w: Workload, steps, calls, parts, tx_steps, tx_parts, hist) -> None:
        """Counters of steps and time parts, per instance and per transaction."""
        response = COMPONENTS.index("response")
        edges = [*(f"{b:g}" for b in w.bucket_bounds), "+Inf"]
        # Whole arrays to Python floats at once (tolist), not element by element.
        steps_v, calls_v = w.steps.tolist(), w.db_calls.tolist()
        seconds_v = w.seconds.tolist()
        cumulative_v = np.cumsum(w.response_buckets, axis=-1).tolist()
        for i, inst in enumerate(w.instances):
            for k, task in enumerate(TASK_TYPES):
                labels = [w.sid, inst, task]
                steps.add_metric(labels, float(steps_v[i][k]))
                calls.add_metric(labels, float(calls_v[i][k]))
                secs = seconds_v[i][k]
                for c, fam in enumerate(parts):
                    fam.add_metric(labels, float(secs[c]))
                hist.add_metric(
                    labels,
                    buckets=list(zip(edges, cumulative_v[i][k], strict=True)),
                    sum_value=float(secs[response]),
                )
        tx_steps_sum: dict[tuple[str, str], float] = {}
        tx_seconds: dict[tuple[str, str], np.ndarray] = {}
        for k, task in enumerate(TASK_TYPES):
            for j, tx in enumerate(w.transactions):
                key = (task, _tx_label(tx))
                tx_steps_sum[key] = tx_steps_sum.get(key, 0.0) + float(w.transaction_steps[k, j])
                tx_seconds[key] = tx_seconds.get(key, 0.0) + w.transaction_seconds[k, j]
        for (task, tx), n in sorted(tx_steps_sum.items()):
            tx_steps.add_metric([w.sid, task, tx], n)
            for c, fam in enumerate(tx_parts):
                fam.add_metric([w.sid, task, tx], float(tx_seconds[(task, tx)][c]))

    @staticmethod
    def _fill_tx_histogram(w: Workload, tx_hist) -> None:
        """Per task type and allow-listed transaction (the rest folded into "other"), the
        response-time buckets summed over the instances."""
        if w.transaction_response_buckets is None:
            return
        edges = [*(f"{b:g}" for b in w.bucket_bounds), "+Inf"]
        response = COMPONENTS.index("response")
        counts: dict[tuple[str, str], np.ndarray] = {}
        sums: dict[tuple[str, str], float] = {}
        for k, task in enumerate(TASK_TYPES):
            for j, tx in enumerate(w.transactions):
                key = (task, _tx_label(tx))
                counts[key] = counts.get(key, 0.0) + w.transaction_response_buckets[k, j]
                sums[key] = sums.get(key, 0.0) + float(w.transaction_seconds[k, j, response])
        for (task, tx), c in sorted(counts.items()):
            cumulative = np.cumsum(c).tolist()
            tx_hist.add_metric(
                [w.sid, task, tx],
                buckets=list(zip(edges, cumulative, strict=True)),
                sum_value=sums[(task, tx)],
            )
