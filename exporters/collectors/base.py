"""What every wlmon collector shares: the snapshot source and the meta-metrics."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from exporters import __version__
from exporters.model.engine import Snapshot

log = logging.getLogger(__name__)

SnapshotSource = Callable[[], Snapshot]


class SnapshotCollector:
    """A collector turning one model snapshot into metric families."""

    name: str = ""

    def __init__(self, source: SnapshotSource) -> None:
        self.source = source

    @classmethod
    def from_settings(cls, source: SnapshotSource, settings) -> SnapshotCollector:
        """The collector as the exporter's settings configure it."""
        return cls(source)

    def families(self, snap: Snapshot) -> Iterable[Metric]:  # pragma: no cover - abstract
        raise NotImplementedError

    def describe_families(self) -> Iterable[Metric]:  # pragma: no cover - abstract
        raise NotImplementedError


class ExporterCollector(Collector):
    """Runs every enabled collector on one shared snapshot and reports how each did.

    A failing collector is logged and reported with success 0; its families are left
    out and the scrape goes on, so one broken source never empties the whole page.
    """

    def __init__(
        self,
        source: SnapshotSource,
        collectors: Iterable[SnapshotCollector],
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.source = source
        self.collectors = list(collectors)
        self.clock = clock

    def describe(self) -> Iterator[Metric]:
        for collector in self.collectors:
            yield from collector.describe_families()
        yield from self._meta({}, {}, up=True)

    def collect(self) -> Iterator[Metric]:
        success: dict[str, bool] = {}
        duration: dict[str, float] = {}
        out: list[Metric] = []
        try:
            snap = self.source()
        except Exception:  # a scrape must never raise
            log.exception("model snapshot failed")
            yield from self._meta({c.name: False for c in self.collectors}, {}, up=False)
            return
        for collector in self.collectors:
            start = self.clock()
            try:
                out.extend(collector.families(snap))
                success[collector.name] = True
            except Exception:
                log.exception("collector %s failed", collector.name)
                success[collector.name] = False
            duration[collector.name] = self.clock() - start
        yield from out
        # Collectors reading several instances (sapcontrol) add their own sap_up samples.
        extra_up = [s for c in self.collectors for s in getattr(c, "up_samples", list)()]
        yield from self._meta(success, duration, up=True, snap=snap, extra_up=extra_up)

    @staticmethod
    def _meta(
        success, duration, up: bool, snap: Snapshot | None = None, extra_up=()
    ) -> Iterator[Metric]:
        sid = [snap.sid] if snap else []
        labels = ["sid"] if snap else []
        up_f = GaugeMetricFamily(
            "sap_up", "1 if the monitored system's statistics could be read.", labels=labels
        )
        if snap or not up:
            up_f.add_metric(sid, 1.0 if up else 0.0)
        for sample_labels, value in extra_up:
            up_f.add_sample("sap_up", sample_labels, value)
        yield up_f
        ok = GaugeMetricFamily(
            "sap_scrape_collector_success",
            "1 if the collector succeeded in this scrape.",
            labels=["collector"],
        )
        dur = GaugeMetricFamily(
            "sap_scrape_collector_duration_seconds",
            "Time the collector took in this scrape.",
            labels=["collector"],
        )
        for name in sorted(success):
            ok.add_metric([name], 1.0 if success[name] else 0.0)
        for name in sorted(duration):
            dur.add_metric([name], duration[name])
        yield ok
        yield dur
        info = GaugeMetricFamily("wlmon_build_info", "wlmon version; always 1.", labels=["version"])
        info.add_metric([__version__], 1.0)
        yield info
