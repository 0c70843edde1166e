"""The one place collectors are registered: each with its name (the `collector` label), its
enable flag (`WLMON_EXPORTER_COLLECTOR_<NAME>` in exporters.config) and the source it reads.

A new collector adds its source interface to `Sources`, the implementation that serves it
to `Sources.from_settings`, an entry to `COLLECTORS` and a flag to ExporterSettings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from exporters.collectors.base import AnySourceCollector, ExporterCollector, SystemSource
from exporters.collectors.dbbuffer import BufferPoolSource, DBBufferCollector
from exporters.collectors.oscounters import OSCountersCollector, OSCounterSource
from exporters.collectors.sapbuffer import SAPBufferCollector, SAPBufferSource
from exporters.collectors.sapcontrol import SAPControlCollector, SAPControlSource
from exporters.collectors.st03 import ST03Collector, WorkloadSource
from exporters.collectors.st05 import SQLTraceSource, ST05Collector
from exporters.config import ExporterSettings
from exporters.model.engine import Snapshot
from exporters.sources.model import ModelSource
from exporters.sources.postgres import PostgresBufferPools
from exporters.sources.sapcontrol import SAPControlScraper


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
    sapcontrol: SAPControlSource

    @classmethod
    def model(cls, snapshot: Callable[[], Snapshot]) -> Sources:
        """The landscape model serves everything it can; sapstartsrv instances are read
        through SAPControl as WLMON_SAPCONTROL_... (or WLMON_SAPSTARTSRV_...) name them."""
        model = ModelSource(snapshot)
        return cls(model, model, model, model, model, model, SAPControlScraper.from_settings())

    @classmethod
    def from_settings(cls, snapshot: Callable[[], Snapshot], settings: ExporterSettings) -> Sources:
        """The model, with a real PostgreSQL as the buffer pools when a DSN is set."""
        sources = cls.model(snapshot)
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

    @property
    def flag(self) -> str:
        """The ExporterSettings field that enables the collector."""
        return f"collector_{self.name}"

    def enabled(self, settings: ExporterSettings) -> bool:
        return bool(getattr(settings, self.flag))


COLLECTORS: tuple[Registration, ...] = (
    Registration("st03", lambda src, _: ST03Collector(src.workload)),
    Registration("st05", lambda src, cfg: ST05Collector(src.sql_trace, top_n=cfg.st05_top_n)),
    Registration("dbbuffer", lambda src, _: DBBufferCollector(src.buffer_pools)),
    Registration("sapbuffer", lambda src, _: SAPBufferCollector(src.sap_buffers)),
    Registration("oscounters", lambda src, _: OSCountersCollector(src.os_counters)),
    # Off unless switched on: it reads sapstartsrv, which the exporter does not run by itself.
    Registration("sapcontrol", lambda src, _: SAPControlCollector(src.sapcontrol)),
)


def exporter_collector(
    snapshot: Callable[[], Snapshot], settings: ExporterSettings
) -> ExporterCollector:
    """Every enabled collector on the sources the settings choose."""
    sources = Sources.from_settings(snapshot, settings)
    return ExporterCollector(
        sources.system,
        {r.name: r.build(sources, settings) for r in COLLECTORS if r.enabled(settings)},
    )
