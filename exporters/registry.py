"""The one place collectors are registered: each with its name (the `collector` label), its
default, and how it is built on the sources. Its enable flag
(`WLMON_EXPORTER_COLLECTOR_<NAME>`, `wlmon exporter --collector/--no-collector NAME`) is
made from the registration (exporters.config).

A new collector is its file and an entry in `COLLECTORS`; one reading a new kind of source
also adds that source to `Sources`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

from pydantic import SecretStr

from exporters.collectors.base import AnySourceCollector, ExporterCollector, SystemSource
from exporters.collectors.dbbuffer import BufferPoolSource, DBBufferCollector
from exporters.collectors.oscounters import OSCountersCollector, OSCounterSource
from exporters.collectors.sapbuffer import SAPBufferCollector, SAPBufferSource
from exporters.collectors.sapcontrol import SAPControlCollector, SAPControlSource
from exporters.collectors.st03 import ST03Collector, WorkloadSource
from exporters.collectors.st05 import SQLTraceSource, ST05Collector
from exporters.sapcontrol.settings import SAPControlSettings
from exporters.sources.model import ModelSource
from exporters.sources.postgres import PostgresBufferPools
from exporters.sources.sapcontrol import SAPControlScraper
from exporters.sources.sapcontrol_syslog import LineSink
from landscape_model.engine import Snapshot


# What the registrations read of the exporter's settings, as a shape: exporters.config makes
# its ExporterSettings (one enable flag per registration) from COLLECTORS below, so this
# module names no type of it and the two import one way (config -> registry).
class ExporterSettings(Protocol):
    @property
    def st05_top_n(self) -> int: ...
    @property
    def postgres_dsn(self) -> SecretStr | None: ...
    @property
    def postgres_sid(self) -> str: ...
    @property
    def collector_sapcontrol(self) -> bool: ...


class ExporterConfig(Protocol):
    """exporters.config.ExporterConfig, as far as the sources read it."""

    @property
    def exporter(self) -> ExporterSettings: ...
    @property
    def sapcontrol(self) -> SAPControlSettings | None: ...


@dataclass(frozen=True)
class Sources:
    """Which implementation serves each source interface."""

    system: SystemSource
    workload: WorkloadSource
    sql_trace: SQLTraceSource
    buffer_pools: BufferPoolSource
    sap_buffers: SAPBufferSource
    os_counters: OSCounterSource
    # SAP instances as their sapstartsrv reports them: never the model itself, at most the
    # model answering as sapstartsrv (exporters.sapstartsrv), read like a real landscape.
    # None while the sapcontrol collector is off: nothing is built for it.
    sapcontrol: SAPControlSource | None = None

    @classmethod
    def model(cls, snapshot: Callable[[], Snapshot]) -> Sources:
        """The landscape model serves everything it can (no sapstartsrv is read)."""
        model = ModelSource(snapshot)
        return cls(model, model, model, model, model, model)

    @classmethod
    def from_settings(
        cls,
        snapshot: Callable[[], Snapshot],
        config: ExporterConfig,
        log_sink: LineSink | None = None,
    ) -> Sources:
        """The model, with a real PostgreSQL as the buffer pools when a DSN is set and the
        sapstartsrv instances the sapcontrol settings name when that collector is on (their
        system log's lines to `log_sink`, the exporter's log store, when it has one)."""
        sources = cls.model(snapshot)
        settings = config.exporter
        if config.sapcontrol is not None and settings.collector_sapcontrol:
            sources = replace(
                sources, sapcontrol=SAPControlScraper(config.sapcontrol, log_sink=log_sink)
            )
        if settings.postgres_dsn is None:
            return sources
        pools = PostgresBufferPools(
            settings.postgres_dsn.get_secret_value(), sid=settings.postgres_sid
        )
        return replace(sources, buffer_pools=pools)


@dataclass(frozen=True)
class Registration:
    name: str
    build: Callable[[Sources, ExporterSettings], AnySourceCollector]
    default: bool = True
    help: str = ""

    @property
    def flag(self) -> str:
        """The ExporterSettings field that enables the collector."""
        return f"collector_{self.name}"

    def enabled(self, settings: ExporterSettings) -> bool:
        return bool(getattr(settings, self.flag))


COLLECTORS: tuple[Registration, ...] = (
    Registration("st03", lambda src, _: ST03Collector(src.workload), help="ST03 workload"),
    Registration(
        "st05",
        lambda src, cfg: ST05Collector(src.sql_trace, top_n=cfg.st05_top_n),
        help="ST05 SQL trace",
    ),
    Registration(
        "dbbuffer", lambda src, _: DBBufferCollector(src.buffer_pools), help="DB buffer pools"
    ),
    Registration(
        "sapbuffer", lambda src, _: SAPBufferCollector(src.sap_buffers), help="ST02 buffers"
    ),
    Registration(
        "oscounters", lambda src, _: OSCountersCollector(src.os_counters), help="OS counters"
    ),
    # Off unless switched on: it reads sapstartsrv, which the exporter does not run by itself.
    Registration(
        "sapcontrol",
        lambda src, _: SAPControlCollector(src.sapcontrol),
        default=False,
        help="sapstartsrv instances (WLMON_SAPCONTROL_*)",
    ),
)


def exporter_collector(
    snapshot: Callable[[], Snapshot],
    config: ExporterConfig,
    log_sink: LineSink | None = None,
) -> ExporterCollector:
    """Every enabled collector on the sources the configuration chooses."""
    sources = Sources.from_settings(snapshot, config, log_sink)
    settings = config.exporter
    return ExporterCollector(
        sources.system,
        {r.name: r.build(sources, settings) for r in COLLECTORS if r.enabled(settings)},
    )
