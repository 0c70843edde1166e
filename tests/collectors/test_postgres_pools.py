"""PostgreSQL's statistics as the dbbuffer collector's source, on canned query results
(tests/integration/test_postgres_source.py runs it against a real PostgreSQL)."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from exporters.collectors.dbbuffer import DBBufferCollector
from exporters.sources import postgres
from exporters.sources.model import ModelSource
from exporters.sources.postgres import PostgresBufferPools
from tests.collectors.exposition import scrape

ROWS = {
    postgres.STATIO: [(1000, 40, 500, 5)],
    postgres.BGWRITER: [(7, 2, 3)],
    postgres.SETTINGS: [("16MB", 8192)],
    postgres.DATABASES: [("postgres", 40, 960), ("erp", 4, 6)],
}


class _Conn:
    def __enter__(self) -> _Conn:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def execute(self, query: str) -> _Conn:
        self.rows = ROWS[query]
        return self

    def fetchone(self) -> tuple:
        return self.rows[0]

    def fetchall(self) -> list[tuple]:
        return self.rows


@pytest.fixture
def samples(monkeypatch, sim) -> dict[str, dict[tuple, float]]:
    monkeypatch.setattr(postgres.psycopg, "connect", lambda *a, **k: _Conn())
    text = scrape(
        ModelSource(sim.snapshot), {"dbbuffer": DBBufferCollector(PostgresBufferPools("", "PG1"))}
    )
    return {
        f.name: {tuple(sorted(s.labels.items())): s.value for s in f.samples}
        for f in text_string_to_metric_families(text)
        if f.name.startswith("sap_db_")
    }


def test_statistics_become_the_db2_named_counters_of_one_pool(samples) -> None:
    pool = (("bufferpool", "shared_buffers"), ("sid", "PG1"))
    assert {name: values[pool] for name, values in samples.items() if pool in values} == {
        "sap_db_bufferpool_data_logical_reads": 1000,
        "sap_db_bufferpool_data_physical_reads": 40,
        "sap_db_bufferpool_index_logical_reads": 500,
        "sap_db_bufferpool_index_physical_reads": 5,
        "sap_db_bufferpool_data_writes": 12,  # checkpointer + bgwriter + backends
        "sap_db_bufferpool_async_data_writes": 9,  # checkpointer + bgwriter
        "sap_db_bufferpool_pages": 2048,  # 16MB of 8 kB blocks
        "sap_db_bufferpool_page_size_bytes": 8192,
    }


def test_databases_get_their_blocks_and_index_writes_are_not_invented(samples) -> None:
    assert samples["sap_db_database_blocks_hit"] == {
        (("database", "postgres"), ("sid", "PG1")): 960,
        (("database", "erp"), ("sid", "PG1")): 6,
    }
    assert "sap_db_bufferpool_index_writes" not in samples


@pytest.mark.parametrize(
    ("setting", "pages"), [("128MB", 16384), ("1GB", 131072), ("512kB", 64), ("4096", 4096)]
)
def test_shared_buffers_setting_in_pages(setting: str, pages: float) -> None:
    assert postgres._pages(setting, 8192) == pages
