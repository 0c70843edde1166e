"""A real database instead of the model: PostgreSQL's statistics views as buffer-pool counters.

PostgreSQL has one buffer pool, shared_buffers; its statistics map onto the DB2 snapshot
counters wlmon exports, so the buffer-pool dashboard and alerts work unchanged:

- data logical / physical reads: pg_statio_all_tables heap_blks_hit + heap_blks_read /
  heap_blks_read;
- index logical / physical reads: idx_blks_hit + idx_blks_read / idx_blks_read;
- data writes: pg_stat_bgwriter buffers_checkpoint + buffers_clean + buffers_backend, of
  which asynchronous: buffers_checkpoint + buffers_clean (backends write synchronously,
  DB2's pool_data_writes > pool_async_data_writes);
- per database: pg_stat_database blks_read and blks_hit.

PostgreSQL does not count index-page writes apart, so index writes are not exported.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import psycopg
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from exporters.collectors.base import SnapshotCollector, SnapshotSource

POOL = "shared_buffers"

STATIO = """
SELECT coalesce(sum(heap_blks_hit + heap_blks_read), 0), coalesce(sum(heap_blks_read), 0),
       coalesce(sum(coalesce(idx_blks_hit, 0) + coalesce(idx_blks_read, 0)), 0),
       coalesce(sum(coalesce(idx_blks_read, 0)), 0)
FROM pg_statio_all_tables
"""
BGWRITER = "SELECT buffers_checkpoint, buffers_clean, buffers_backend FROM pg_stat_bgwriter"
SETTINGS = "SELECT current_setting('shared_buffers', true), current_setting('block_size')::int"
DATABASES = "SELECT datname, blks_read, blks_hit FROM pg_stat_database WHERE datname IS NOT NULL"


def _pages(setting: str, block_size: int) -> float:
    """shared_buffers as pages: the setting comes with a unit ('128MB') or in pages."""
    units = {"kB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4}
    for unit, factor in units.items():
        if setting.endswith(unit):
            return float(setting[: -len(unit)]) * factor / block_size
    return float(setting)


class PostgresCollector(SnapshotCollector):
    name = "postgres"

    def __init__(self, source: SnapshotSource | None, dsn: str, sid: str = "PG") -> None:
        super().__init__(source)
        self.dsn = dsn
        self.sid = sid

    def describe_families(self) -> Iterable[Metric]:
        return self._families(None)

    def families(self, snap) -> Iterable[Metric]:
        with psycopg.connect(self.dsn, connect_timeout=5, autocommit=True) as conn:
            statio = conn.execute(STATIO).fetchone()
            bgw = conn.execute(BGWRITER).fetchone()
            setting, block_size = conn.execute(SETTINGS).fetchone()
            dbs = conn.execute(DATABASES).fetchall()
        return self._families((statio, bgw, setting, block_size, dbs))

    def _families(self, data) -> Iterator[Metric]:
        labels = ["sid", "bufferpool"]

        def counter(suffix: str, element: str) -> CounterMetricFamily:
            return CounterMetricFamily(
                f"sap_db_bufferpool_{suffix}", f"PostgreSQL {element}.", labels=labels
            )

        fams = {
            "data_logical_reads": counter("data_logical_reads", "heap_blks_hit + heap_blks_read"),
            "data_physical_reads": counter("data_physical_reads", "heap_blks_read"),
            "index_logical_reads": counter("index_logical_reads", "idx_blks_hit + idx_blks_read"),
            "index_physical_reads": counter("index_physical_reads", "idx_blks_read"),
            "data_writes": counter(
                "data_writes", "buffers written by checkpointer, bgwriter and backends"
            ),
            "async_data_writes": counter(
                "async_data_writes", "buffers written by checkpointer and bgwriter"
            ),
        }
        pages = GaugeMetricFamily(
            "sap_db_bufferpool_pages", "shared_buffers in pages.", labels=labels
        )
        page_size = GaugeMetricFamily(
            "sap_db_bufferpool_page_size_bytes", "PostgreSQL block_size.", labels=labels
        )
        db_read = CounterMetricFamily(
            "sap_db_database_blocks_read", "pg_stat_database.blks_read.", labels=["sid", "database"]
        )
        db_hit = CounterMetricFamily(
            "sap_db_database_blocks_hit", "pg_stat_database.blks_hit.", labels=["sid", "database"]
        )
        if data is not None:
            statio, bgw, setting, block_size, dbs = data
            key = [self.sid, POOL]
            for name, value in zip(
                (
                    "data_logical_reads",
                    "data_physical_reads",
                    "index_logical_reads",
                    "index_physical_reads",
                ),
                statio,
                strict=True,
            ):
                fams[name].add_metric(key, float(value))
            checkpoint, clean, backend = (float(v) for v in bgw)
            fams["data_writes"].add_metric(key, checkpoint + clean + backend)
            fams["async_data_writes"].add_metric(key, checkpoint + clean)
            pages.add_metric(key, _pages(setting, block_size))
            page_size.add_metric(key, float(block_size))
            for name, read, hit in dbs:
                db_read.add_metric([self.sid, name], float(read))
                db_hit.add_metric([self.sid, name], float(hit))
        yield from fams.values()
        yield from (pages, page_size, db_read, db_hit)
