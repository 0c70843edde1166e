"""What the engines produce and every consumer reads: the operating point of a scenario.

The analytic solver (solver.py) and the discrete-event engine (des.py) both answer with an
`OperatingPoint`; the live sources, the recorder, the summaries and what-if read it. It lives
apart from either engine so a reader of results imports no engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from landscape_model.chains import ChainResult
from landscape_model.terms import COMPONENTS

# Column of each time component in the [..., component] arrays of an OperatingPoint.
COMPONENT_INDEX: dict[str, int] = {name: k for k, name in enumerate(COMPONENTS)}


@dataclass
class ClassSolution:
    """One class (an instance's dialog steps or its updates) at the operating point, and what
    the engine needs to move it through time: its flow-equivalent server and station queues
    at every number of busy work processes."""

    instance: int
    task: int  # DIALOG or UPDATE
    key: tuple  # equal keys: identical classes (symmetry), solved once
    stations: list[int]  # global station index of each inner station (-1: the delay)
    demand: np.ndarray  # [inner station] per step
    fes: np.ndarray  # [k] throughput with k busy, k = 0..K
    fes_queue: np.ndarray  # [inner station, k]
    users: int  # dialog: users; update: 0
    think: float  # dialog: think + GUI - roll-out
    arrival_rate: float  # update: offered steps/s
    chain: ChainResult = field(repr=False)
    scv: float = 1.0  # the work-process holding time's squared coefficient of variation

    @property
    def wps(self) -> int:
        return len(self.fes) - 1

    @property
    def throughput(self) -> float:
        return self.chain.throughput

    def state(self, chain: ChainResult) -> dict:
        """Means of a chain state: wait, busy work processes, stretch per global station."""
        x = chain.throughput
        q_station = self.fes_queue @ chain.busy
        stretch = np.divide(
            q_station,
            x * self.demand,
            out=np.ones_like(q_station),
            where=(self.demand > 0) & (x > 0),
        )
        return {
            "throughput": x,
            "wait": chain.mean_queue / x if x > 0 else 0.0,
            "queue": chain.mean_queue,
            "busy": float(np.dot(np.arange(self.wps + 1), chain.busy)),
            "stretch": stretch,
        }


@dataclass
class OperatingPoint:
    """Steady-state rates and per-step means; arrays are indexed as documented per field."""

    instances: list[str]
    hosts: list[str]  # application servers
    transactions: list[str]
    statements: list[tuple[str, str, str, str]]  # (transaction, task_type, table, op)
    statement_sql: list[str]  # the SQL text of each statement
    statement_ids: list[str]  # its hash, the id ST05 and Loki use (computed once here)
    instance_host: np.ndarray  # [instance] index of the instance's host in `hosts`
    bufferpools: list[str]
    # [instance, task_type, transaction]: steps per second
    step_rate: np.ndarray
    # [instance, task_type, transaction, component]: mean seconds per step
    means: np.ndarray
    # [instance, task_type, transaction]: response-time bucket probabilities over BUCKETS
    # (+Inf last), per transaction so a report can give its percentiles
    bucket_probs: np.ndarray
    # [instance, task_type]
    wp_total: np.ndarray
    wp_busy: np.ndarray
    dispatcher_queue: np.ndarray
    # [instance]: roll area
    roll_buffer_size: np.ndarray
    roll_buffer_used: np.ndarray
    em_size: np.ndarray
    em_used: np.ndarray
    roll_file_bytes_rate: np.ndarray
    # SAP buffers (ST02), [buffer] names and [instance, buffer] rates and sizes
    sap_buffers: list[str]
    sap_buffer_request_rate: np.ndarray
    sap_buffer_hit_rate: np.ndarray
    sap_buffer_swap_rate: np.ndarray
    sap_buffer_size: np.ndarray
    sap_buffer_used: np.ndarray
    # [statement]: executions/s, rows/s, elapsed seconds per execution
    stmt_exec_rate: np.ndarray
    stmt_rows_rate: np.ndarray
    stmt_time: np.ndarray
    # [bufferpool]: per second
    pool_data_logical: np.ndarray
    pool_data_physical: np.ndarray
    pool_index_logical: np.ndarray
    pool_index_physical: np.ndarray
    pool_data_writes: np.ndarray
    pool_async_data_writes: np.ndarray
    pool_index_writes: np.ndarray
    pool_async_index_writes: np.ndarray
    # utilisations 0..1
    host_cpu_util: np.ndarray  # [app host]: SAP work processes' share of the host's CPUs
    db_cpu_util: float  # the database's share of its host's CPUs
    disk_util: float
    log_util: float
    enqueue_util: float
    cs_cpu_util: float
    db_calls_per_step: np.ndarray  # [task_type, transaction]
    # [instance]: update steps/s by which the update backlog grows (0 unless overloaded)
    update_backlog_growth: np.ndarray = field(default_factory=lambda: np.zeros(0))
    classes: list[ClassSolution] = field(default_factory=list, repr=False)


# Response-time histogram bucket upper bounds in seconds; ST03's own distribution
# (STAD "response time distribution") uses a similar ladder up to and past 2 s.
BUCKETS = (0.05, 0.1, 0.2, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0)


def bucketize(samples: np.ndarray) -> np.ndarray:
    """Share of the samples (last axis) per bucket of BUCKETS and +Inf: [..., bucket]."""
    edges = np.array((*BUCKETS, np.inf))
    nb = len(edges)
    idx = np.minimum(np.searchsorted(edges, samples, side="left"), nb - 1)
    rows = (
        idx.reshape(-1, idx.shape[-1]) + nb * np.arange(idx.size // max(idx.shape[-1], 1))[:, None]
    )
    counts = np.bincount(rows.ravel(), minlength=rows.shape[0] * nb).astype(float)
    return counts.reshape(*idx.shape[:-1], nb) / max(samples.shape[-1], 1)
