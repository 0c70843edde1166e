"""A real database instead of the model: PostgreSQL's statistics views as the buffer-pool
source of the dbbuffer collector.

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

from collections.abc import Mapping
from typing import ClassVar

import psycopg

from exporters.collectors.dbbuffer import BufferPools

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
# The families of STATIO's columns, in order.
STATIO_FAMILIES = (
    "bufferpool_data_logical_reads",
    "bufferpool_data_physical_reads",
    "bufferpool_index_logical_reads",
    "bufferpool_index_physical_reads",
)


def _pages(setting: str, block_size: int) -> float:
    """shared_buffers as pages: the setting comes with a unit ('128MB') or in pages."""
    units = {"kB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4}
    for unit, factor in units.items():
        if setting.endswith(unit):
            return float(setting[: -len(unit)]) * factor / block_size
    return float(setting)


class PostgresBufferPools:
    """BufferPoolSource: one pool, shared_buffers, and the blocks of each database."""

    buffer_pool_help: ClassVar[Mapping[str, str]] = {
        "bufferpool_data_logical_reads": "PostgreSQL heap_blks_hit + heap_blks_read.",
        "bufferpool_data_physical_reads": "PostgreSQL heap_blks_read.",
        "bufferpool_index_logical_reads": "PostgreSQL idx_blks_hit + idx_blks_read.",
        "bufferpool_index_physical_reads": "PostgreSQL idx_blks_read.",
        "bufferpool_data_writes": (
            "PostgreSQL buffers written by checkpointer, bgwriter and backends."
        ),
        "bufferpool_async_data_writes": "PostgreSQL buffers written by checkpointer and bgwriter.",
        "bufferpool_pages": "shared_buffers in pages.",
        "bufferpool_page_size_bytes": "PostgreSQL block_size.",
        "database_blocks_read": "pg_stat_database.blks_read.",
        "database_blocks_hit": "pg_stat_database.blks_hit.",
    }

    def __init__(self, dsn: str, sid: str = "PG") -> None:
        self.dsn = dsn
        self.sid = sid

    def buffer_pools(self) -> BufferPools:
        with psycopg.connect(self.dsn, connect_timeout=5, autocommit=True) as conn:
            statio = conn.execute(STATIO).fetchone()
            bgw = conn.execute(BGWRITER).fetchone()
            setting, block_size = conn.execute(SETTINGS).fetchone()
            dbs = conn.execute(DATABASES).fetchall()
        checkpoint, clean, backend = (float(v) for v in bgw)
        pool = {
            **{key: float(v) for key, v in zip(STATIO_FAMILIES, statio, strict=True)},
            "bufferpool_data_writes": checkpoint + clean + backend,
            "bufferpool_async_data_writes": checkpoint + clean,
            "bufferpool_pages": _pages(setting, block_size),
            "bufferpool_page_size_bytes": float(block_size),
        }
        databases = {
            name: {"database_blocks_read": float(read), "database_blocks_hit": float(hit)}
            for name, read, hit in dbs
        }
        return BufferPools(self.sid, {POOL: pool}, databases)
