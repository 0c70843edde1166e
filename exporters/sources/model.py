"""The landscape model as the source of every collector: each reading takes a snapshot.

Collectors read one after the other, so in a real-time run two of them may see snapshots
a tick apart, as two transactions of a real monitor would; each reading is consistent in
itself, and every counter stays monotonic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import ClassVar

from exporters.collectors.dbbuffer import BufferPools
from exporters.collectors.oscounters import HostCounters, OSCounters
from exporters.collectors.sapbuffer import SAPBuffers
from exporters.collectors.st03 import Workload
from exporters.collectors.st05 import SQLTrace, StatementTotals, longest_first
from landscape_model.engine import Snapshot
from landscape_model.results import BUCKETS

# Buffer-pool family -> (Totals field, DB2 snapshot element it mirrors)
DB2_COUNTERS = {
    f"bufferpool_{suffix}": (field, element)
    for suffix, field, element in (
        ("data_logical_reads", "pool_data_logical", "pool_data_l_reads"),
        ("data_physical_reads", "pool_data_physical", "pool_data_p_reads"),
        ("index_logical_reads", "pool_index_logical", "pool_index_l_reads"),
        ("index_physical_reads", "pool_index_physical", "pool_index_p_reads"),
        ("data_writes", "pool_data_writes", "pool_data_writes"),
        ("async_data_writes", "pool_async_data_writes", "pool_async_data_writes"),
        ("index_writes", "pool_index_writes", "pool_index_writes"),
        ("async_index_writes", "pool_async_index_writes", "pool_async_index_writes"),
    )
}


def statement_totals(snap: Snapshot) -> list[StatementTotals]:
    """The model's statements merged by SQL text (as ST05 merges identical statements),
    longest elapsed DB time first."""
    t, st = snap.totals, snap.state
    merged: dict[str, StatementTotals] = {}
    # Python floats of whole arrays (tolist): indexing numpy element by element was most of
    # the scrape's time in ST05. The sums are the same, added in the same order.
    execs, rows, seconds = t.stmt_exec.tolist(), t.stmt_rows.tolist(), t.stmt_seconds.tolist()
    for k, (_, _, table, op) in enumerate(st.statements):
        key = st.statement_ids[k]
        row = merged.get(key)
        if row is None:
            row = merged[key] = StatementTotals(key, st.statement_sql[k], table, op)
        row.executions += execs[k]
        row.rows += rows[k]
        row.elapsed += seconds[k]
    return longest_first(merged.values())


class ModelSource:
    """Serves SystemSource, WorkloadSource, SQLTraceSource, BufferPoolSource (the model's
    DB2), SAPBufferSource and OSCounterSource from the model's snapshots."""

    buffer_pool_help: ClassVar[Mapping[str, str]] = {
        **{
            key: f"DB2 snapshot element {element} of the buffer pool."
            for key, (_, element) in DB2_COUNTERS.items()
        },
        "bufferpool_pages": "Buffer pool size in pages (NPAGES).",
        "bufferpool_page_size_bytes": "Page size of the buffer pool (PAGESIZE).",
    }

    def __init__(self, snapshot: Callable[[], Snapshot]) -> None:
        self.snapshot = snapshot

    def sid(self) -> str:
        return self.snapshot().sid

    def workload(self) -> Workload:
        snap = self.snapshot()
        t, st = snap.totals, snap.state
        return Workload(
            sid=snap.sid,
            instances=st.instances,
            transactions=st.transactions,
            steps=t.steps.sum(axis=2),
            db_calls=t.db_calls.sum(axis=2),
            seconds=t.seconds.sum(axis=2),
            response_buckets=t.bucket_counts.sum(axis=2),
            bucket_bounds=BUCKETS,
            transaction_steps=t.steps.sum(axis=0),
            transaction_seconds=t.seconds.sum(axis=0),
            work_processes=st.wp_total,
            work_processes_busy=st.wp_busy,
            dispatcher_queue=st.dispatcher_queue,
            roll_buffer_size=st.roll_buffer_size,
            roll_buffer_used=st.roll_buffer_used,
            em_size=st.em_size,
            em_used=st.em_used,
            roll_file_bytes=t.roll_file_bytes,
            simulated_seconds=t.sim_time,
            transaction_response_buckets=t.bucket_counts.sum(axis=0),
        )

    def sql_trace(self) -> SQLTrace:
        snap = self.snapshot()
        return SQLTrace(snap.sid, statement_totals(snap))

    def buffer_pools(self) -> BufferPools:
        snap = self.snapshot()
        return BufferPools(
            snap.sid,
            {
                pool: {
                    **{key: getattr(snap.totals, f)[p] for key, (f, _) in DB2_COUNTERS.items()},
                    "bufferpool_pages": snap.pool_pages[p],
                    "bufferpool_page_size_bytes": snap.pool_page_bytes[p],
                }
                for p, pool in enumerate(snap.state.bufferpools)
            },
        )

    def sap_buffers(self) -> SAPBuffers:
        snap = self.snapshot()
        t, st = snap.totals, snap.state
        return SAPBuffers(
            sid=snap.sid,
            instances=st.instances,
            buffers=st.sap_buffers,
            requests=t.sap_buffer_requests,
            hits=t.sap_buffer_hits,
            swaps=t.sap_buffer_swaps,
            size_bytes=st.sap_buffer_size,
            used_bytes=st.sap_buffer_used,
        )

    def os_counters(self) -> OSCounters:
        snap = self.snapshot()
        return OSCounters(snap.sid, [_host(snap, h) for h in range(len(snap.os_hosts))])


def _host(snap: Snapshot, h: int) -> HostCounters:
    """Host h as its OS would count it. The model knows busy CPU time per host: it is
    spread evenly over the CPUs, split into user and system time by the landscape's share.
    Each host shows one disk: the roll-file disk on application servers, the data array
    (one LUN) on the database server, the last host."""
    t = snap.totals
    cpus = snap.os_cpus[h]
    busy = t.os_cpu_busy_seconds[h] / cpus
    share = snap.os_system_cpu_share
    modes = {
        "idle": max(0.0, t.sim_time - busy),
        "user": busy * (1 - share),
        "system": busy * share,
    }
    reads, writes = float(t.os_disk_reads[h]), float(t.os_disk_writes[h])
    queue = float(t.os_disk_queue_seconds[h])
    read_share = reads / (reads + writes) if reads + writes else 0.5
    disk, device = ("1", "sdb") if h == len(snap.os_hosts) - 1 else ("0 C:", "sda")
    return HostCounters(
        host=snap.os_hosts[h],
        cpu_seconds=[modes] * cpus,
        memory_bytes=float(snap.os_memory_bytes[h]),
        available_bytes=snap.os_available_bytes[h],
        pages_in=float(t.os_page_ops[h] // 2),
        pages_out=float(t.os_page_ops[h] - t.os_page_ops[h] // 2),
        disk=disk,
        device=device,
        disk_reads=reads,
        disk_writes=writes,
        disk_read_seconds=queue * read_share,
        disk_write_seconds=queue * (1 - read_share),
        disk_weighted_seconds=queue,
        role=snap.os_roles[h] if snap.os_roles else "",
    )
