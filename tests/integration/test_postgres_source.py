"""The PostgreSQL source against a real PostgreSQL (Debian's package) started by the test."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from exporters.collectors.dbbuffer import DBBufferCollector
from exporters.sources.postgres import PostgresBufferPools
from tests.integration.helpers import eventually
from tests.promtool import promtool_path

pytestmark = pytest.mark.integration
BINDIR = Path(os.environ.get("WLMON_PG_BINDIR", "/usr/lib/postgresql/15/bin"))


def _as_postgres(argv: list[str]) -> list[str]:
    # initdb and postgres refuse to run as root; Debian's package brings the postgres user.
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


@pytest.fixture(scope="module")
def postgres() -> Iterator[str]:
    assert (BINDIR / "initdb").is_file(), f"{BINDIR}/initdb missing: apt-get install postgresql"
    # Not under pytest's tmp dir: that is private to root, and the server runs as postgres.
    data = Path(tempfile.mkdtemp(prefix="wlmon-pg-"))
    if os.geteuid() == 0:
        shutil.chown(data, "postgres", "postgres")
    initdb = [str(BINDIR / "initdb"), "-D", str(data / "db"), "-A", "trust", "-U", "postgres"]
    subprocess.run(_as_postgres(initdb), check=True, capture_output=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = [
        str(BINDIR / "postgres"),
        "-D",
        str(data / "db"),
        "-p",
        str(port),
        "-k",
        str(data),
        "-c",
        "listen_addresses=127.0.0.1",
        "-c",
        "shared_buffers=16MB",
    ]
    log_path = data / "server.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(_as_postgres(server), stdout=log, stderr=subprocess.STDOUT)
    dsn = f"host=127.0.0.1 port={port} user=postgres dbname=postgres"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                psycopg.connect(dsn, connect_timeout=2).close()
                break
            except psycopg.OperationalError:
                assert proc.poll() is None, f"postgres exited: {log_path.read_text()[-2000:]}"
                assert time.monotonic() < deadline, "postgres not accepting connections after 30 s"
                time.sleep(0.3)
        yield dsn
    finally:
        proc.terminate()
        proc.wait(30)
        shutil.rmtree(data, ignore_errors=True)


def _workload(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS vbak (vbeln int PRIMARY KEY, kunnr int, netwr numeric)"
        )
        conn.execute(
            "INSERT INTO vbak SELECT g, g % 977, g * 1.5 FROM generate_series(1, 50000) g "
            "ON CONFLICT DO NOTHING"
        )
        for k in range(0, 50000, 500):
            conn.execute(
                "SELECT count(*) FROM vbak WHERE vbeln BETWEEN %s AND %s", (k, k + 200)
            ).fetchone()
        conn.execute("CHECKPOINT")


def _exposition(dsn: str) -> str:
    registry = CollectorRegistry()
    collector = DBBufferCollector(PostgresBufferPools(dsn, sid="PG1"))

    class Only:
        def collect(self):
            return collector.families(collector.read())

    registry.register(Only())
    return generate_latest(registry).decode()


def test_postgres_statistics_become_buffer_pool_counters(postgres) -> None:
    _workload(postgres)

    def counters():
        fams = {f.name: f for f in text_string_to_metric_families(_exposition(postgres))}
        values = {
            name: fams[name].samples[0].value
            for name in fams
            if name.startswith("sap_db_bufferpool")
        }
        return values if values["sap_db_bufferpool_index_logical_reads"] > 0 else None

    values = eventually(counters, timeout=30)
    assert (
        values["sap_db_bufferpool_data_logical_reads"]
        >= values["sap_db_bufferpool_data_physical_reads"]
        > 0
    )
    assert (
        values["sap_db_bufferpool_data_writes"] >= values["sap_db_bufferpool_async_data_writes"] > 0
    )
    assert values["sap_db_bufferpool_pages"] == 16 * 1024 * 1024 / 8192
    hit = (
        1
        - values["sap_db_bufferpool_index_physical_reads"]
        / values["sap_db_bufferpool_index_logical_reads"]
    )
    assert 0.0 <= hit <= 1.0


def test_postgres_exposition_passes_promtool(postgres) -> None:
    text = _exposition(postgres)
    assert 'bufferpool="shared_buffers"' in text and 'database="postgres"' in text
    result = subprocess.run(
        [promtool_path(), "check", "metrics"], input=text, capture_output=True, text=True
    )
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout + result.stderr


def test_unreachable_postgres_reports_collector_failure_not_an_exception() -> None:
    from exporters.collectors.base import ExporterCollector
    from exporters.sources.model import ModelSource
    from landscape_model.engine import Simulation

    sim = Simulation("sd-benchmark-2003", seed=1)
    start = time.monotonic()
    registry = CollectorRegistry()
    pools = PostgresBufferPools("host=127.0.0.1 port=1")
    registry.register(
        ExporterCollector(ModelSource(sim.snapshot), {"dbbuffer": DBBufferCollector(pools)})
    )
    text = generate_latest(registry).decode()
    assert 'sap_scrape_collector_success{collector="dbbuffer"} 0.0' in text
    assert time.monotonic() - start < 10


def test_exporter_serves_postgres_in_place_of_the_model_pools(postgres) -> None:
    from pydantic import SecretStr

    from exporters.config import ExporterConfig, ExporterSettings
    from exporters.server import build_registry
    from landscape_model.engine import Simulation

    sim = Simulation("sd-benchmark-2003", seed=1)
    settings = ExporterSettings(postgres_dsn=SecretStr(postgres), postgres_sid="PG1")
    text = generate_latest(build_registry(_Live(sim), ExporterConfig(settings))).decode()
    assert (
        'sap_db_bufferpool_data_logical_reads_total{bufferpool="shared_buffers",sid="PG1"}' in text
    )
    assert 'bufferpool="MIX4K"' not in text
    assert 'sap_scrape_collector_success{collector="dbbuffer"} 1.0' in text
    assert "sap_workload_steps_total" in text  # the model's ST03 stays


class _Live:
    def __init__(self, sim) -> None:
        self.snapshot = sim.snapshot
