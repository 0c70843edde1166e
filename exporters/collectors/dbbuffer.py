"""Database buffer-pool counters per pool, named after DB2's snapshot monitor (seed 000
Table 4): pool_data_l_reads, pool_data_p_reads, pool_index_l_reads, pool_index_p_reads,
pool_data_writes, pool_async_data_writes, ...

The hit ratio `1 - physical/logical` and the I/O-cleaner rule `pool_data_writes >
pool_async_data_writes` are PromQL over counters. Every source fills the families it has
a counter for and says in their HELP which counter that is (DB2 from the model, or
PostgreSQL's statistics views). Sample::

    sap_db_bufferpool_data_logical_reads_total{sid="BMK",bufferpool="MIX4K"} 2.1e+07
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from exporters.collectors.base import SourceCollector

# Every family a buffer-pool source may fill, in exposition order: key (the name after
# `sap_db_`), type, and what a row is (a buffer pool or a database).
FAMILIES: tuple[tuple[str, type[CounterMetricFamily | GaugeMetricFamily], str], ...] = (
    *(
        (f"bufferpool_{suffix}", CounterMetricFamily, "bufferpool")
        for suffix in (
            "data_logical_reads",
            "data_physical_reads",
            "index_logical_reads",
            "index_physical_reads",
            "data_writes",
            "async_data_writes",
            "index_writes",
            "async_index_writes",
        )
    ),
    ("bufferpool_pages", GaugeMetricFamily, "bufferpool"),
    ("bufferpool_page_size_bytes", GaugeMetricFamily, "bufferpool"),
    ("database_blocks_read", CounterMetricFamily, "database"),
    ("database_blocks_hit", CounterMetricFamily, "database"),
)


@dataclass(frozen=True)
class BufferPools:
    """Counters since the database's start and sizes now: row name -> family key -> value."""

    sid: str
    pools: Mapping[str, Mapping[str, float]]
    databases: Mapping[str, Mapping[str, float]] = field(default_factory=dict)


class BufferPoolSource(Protocol):
    @property
    def buffer_pool_help(self) -> Mapping[str, str]:
        """Family key -> HELP saying which counter of this database the family mirrors;
        the source fills exactly these families."""
        ...

    def buffer_pools(self) -> BufferPools: ...


class DBBufferCollector(SourceCollector[BufferPoolSource, BufferPools]):
    def read(self) -> BufferPools:
        return self.source.buffer_pools()

    def families(self, reading: BufferPools | None) -> Iterator[Metric]:
        help_texts = self.source.buffer_pool_help
        for key, family_type, row in FAMILIES:
            if key not in help_texts:
                continue
            family = family_type(f"sap_db_{key}", help_texts[key], labels=["sid", row])
            if reading is not None:
                rows = reading.pools if row == "bufferpool" else reading.databases
                for name, values in rows.items():
                    family.add_metric([reading.sid, name], float(values[key]))
            yield family
