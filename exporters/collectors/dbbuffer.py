"""DB2 buffer-pool snapshot counters per pool (seed 000 Table 4).

Counters as DB2's snapshot monitor names them (pool_data_l_reads, pool_data_p_reads,
pool_index_l_reads, pool_index_p_reads, pool_data_writes, pool_async_data_writes, ...), so
the hit ratio `1 - physical/logical` and the I/O-cleaner rule `pool_data_writes >
pool_async_data_writes` are PromQL over counters. Sample::

    sap_db_bufferpool_data_logical_reads_total{sid="BMK",bufferpool="MIX4K"} 2.1e+07
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from exporters.collectors.base import SnapshotCollector
from exporters.model.engine import Snapshot

# metric suffix -> (Totals field, DB2 snapshot element it mirrors)
COUNTERS = {
    "data_logical_reads": ("pool_data_logical", "pool_data_l_reads"),
    "data_physical_reads": ("pool_data_physical", "pool_data_p_reads"),
    "index_logical_reads": ("pool_index_logical", "pool_index_l_reads"),
    "index_physical_reads": ("pool_index_physical", "pool_index_p_reads"),
    "data_writes": ("pool_data_writes", "pool_data_writes"),
    "async_data_writes": ("pool_async_data_writes", "pool_async_data_writes"),
    "index_writes": ("pool_index_writes", "pool_index_writes"),
    "async_index_writes": ("pool_async_index_writes", "pool_async_index_writes"),
}


class DBBufferCollector(SnapshotCollector):
    name = "dbbuffer"

    def describe_families(self) -> Iterable[Metric]:
        return self._families(None)

    def families(self, snap: Snapshot) -> Iterable[Metric]:
        return self._families(snap)

    def _families(self, snap: Snapshot | None) -> Iterator[Metric]:
        labels = ["sid", "bufferpool"]
        counters = {
            suffix: CounterMetricFamily(
                f"sap_db_bufferpool_{suffix}",
                f"DB2 snapshot element {element} of the buffer pool.",
                labels=labels,
            )
            for suffix, (_, element) in COUNTERS.items()
        }
        pages = GaugeMetricFamily(
            "sap_db_bufferpool_pages", "Buffer pool size in pages (NPAGES).", labels=labels
        )
        page_size = GaugeMetricFamily(
            "sap_db_bufferpool_page_size_bytes",
            "Page size of the buffer pool (PAGESIZE).",
            labels=labels,
        )
        if snap is not None:
            for p, pool in enumerate(snap.state.bufferpools):
                key = [snap.sid, pool]
                for suffix, (field, _) in COUNTERS.items():
                    counters[suffix].add_metric(key, float(getattr(snap.totals, field)[p]))
                pages.add_metric(key, float(snap.pool_pages[p]))
                page_size.add_metric(key, float(snap.pool_page_bytes[p]))
        yield from counters.values()
        yield pages
        yield page_size
