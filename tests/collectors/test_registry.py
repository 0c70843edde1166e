"""The registry: every collector has its flag, the flags switch collectors off, and the
settings choose the sources (PostgreSQL for the buffer pools) with no special case."""

from __future__ import annotations

import pytest
from prometheus_client import generate_latest
from pydantic import SecretStr

from exporters.config import ExporterConfig, ExporterSettings
from exporters.registry import COLLECTORS, Sources
from exporters.server import build_registry
from exporters.sources.model import ModelSource
from exporters.sources.postgres import PostgresBufferPools

NAMES = [r.name for r in COLLECTORS]
# Collectors reading something the exporter does not run by itself: off unless configured.
OFF_BY_DEFAULT = {"sapcontrol"}
ON_BY_DEFAULT = [n for n in NAMES if n not in OFF_BY_DEFAULT]


def test_every_registered_collector_has_a_flag_and_every_flag_a_collector() -> None:
    flags = {name for name in ExporterSettings.model_fields if name.startswith("collector_")}
    assert flags == {r.flag for r in COLLECTORS}
    for r in COLLECTORS:
        field = ExporterSettings.model_fields[r.flag]
        assert field.annotation is bool
        assert field.default is (r.name not in OFF_BY_DEFAULT), r.flag


@pytest.mark.parametrize("name", NAMES)
def test_a_collector_switched_off_in_the_environment_is_not_scraped(
    sim, monkeypatch, name: str
) -> None:
    monkeypatch.setenv(f"WLMON_EXPORTER_COLLECTOR_{name.upper()}", "false")
    text = generate_latest(build_registry(sim, ExporterConfig(ExporterSettings()))).decode()
    scraped = {
        line.split('collector="')[1].split('"')[0]
        for line in text.splitlines()
        if line.startswith("sap_scrape_collector_success{")
    }
    assert scraped == set(ON_BY_DEFAULT) - {name}


def test_the_model_serves_every_source_unless_postgres_is_configured(sim) -> None:
    default = Sources.from_settings(
        sim.snapshot, ExporterConfig(ExporterSettings(postgres_dsn=None))
    )
    assert all(isinstance(s, ModelSource) for k, s in vars(default).items() if k != "sapcontrol")
    assert default.sapcontrol is None  # the sapcontrol collector is off: no source built
    settings = ExporterSettings(postgres_dsn=SecretStr("host=127.0.0.1 port=1"), postgres_sid="PG1")
    with_pg = Sources.from_settings(sim.snapshot, ExporterConfig(settings))
    assert isinstance(with_pg.buffer_pools, PostgresBufferPools)
    assert with_pg.buffer_pools.sid == "PG1"
    assert all(
        isinstance(s, ModelSource)
        for k, s in vars(with_pg).items()
        if k not in {"buffer_pools", "sapcontrol"}
    )


def test_an_unreachable_postgres_fails_only_the_buffer_pool_collector(sim) -> None:
    settings = ExporterSettings(postgres_dsn=SecretStr("host=127.0.0.1 port=1 connect_timeout=2"))
    text = generate_latest(build_registry(sim, ExporterConfig(settings))).decode()
    assert 'sap_scrape_collector_success{collector="dbbuffer"} 0.0' in text
    assert 'sap_scrape_collector_success{collector="st03"} 1.0' in text
    assert "sap_db_bufferpool_data_logical_reads_total{" not in text
    assert 'sap_up{sid="BMK"} 1.0' in text
