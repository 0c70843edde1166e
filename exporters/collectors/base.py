"""What every wlmon collector shares: reading a source, and the scrape's meta-metrics.

Each collector module names the source interface it reads (a `typing.Protocol`) and the
reading that interface returns; `exporters.sources` implements them, `exporters.registry`
wires each collector to its source.
"""

from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Generic, Protocol, TypeVar

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from exporters import __version__

log = logging.getLogger(__name__)

S = TypeVar("S")  # the source interface
R = TypeVar("R")  # what one reading of it returns
UpSample = tuple[dict[str, str], float]  # one `sap_up` sample: its labels and value


class SystemSource(Protocol):
    """The monitored system as a whole: `sap_up` is 1 while its SID can be read."""

    def sid(self) -> str: ...


class SourceCollector(ABC, Generic[S, R]):
    """Turns one reading of its source into metric families."""

    def __init__(self, source: S) -> None:
        self.source = source

    @abstractmethod
    def read(self) -> R:
        """One reading of the source; may raise (the scrape reports success 0)."""

    @abstractmethod
    def families(self, reading: R | None) -> Iterable[Metric]:
        """The families with the reading's samples; with None, empty (for describe)."""

    def up_samples(self, reading: R) -> Iterable[UpSample]:
        """`sap_up` samples of the systems or instances this reading saw itself (labels,
        value); they join the exporter's one `sap_up` family. Most collectors read the
        monitored system and add none."""
        return ()

    def succeeded(self, reading: R) -> bool:
        """Whether the reading counts as a success (`sap_scrape_collector_success`); a
        collector whose reading can be partial says when it is not enough."""
        return True


AnySourceCollector = SourceCollector[Any, Any]


class ExporterCollector(Collector):
    """Runs every enabled collector once per scrape and reports how each did.

    A failing collector is logged and reported with success 0; its families are left
    out and the scrape goes on, so one broken source never empties the whole page.
    """

    def __init__(
        self,
        system: SystemSource,
        collectors: Mapping[str, AnySourceCollector],
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.system = system
        self.collectors = dict(collectors)  # the `collector` label -> collector
        self.clock = clock

    def describe(self) -> Iterator[Metric]:
        for collector in self.collectors.values():
            yield from collector.families(None)
        yield from self._meta({}, {}, sid=None, up=True)

    def collect(self) -> Iterator[Metric]:
        success: dict[str, bool] = {}
        duration: dict[str, float] = {}
        out: list[Metric] = []
        up_samples: list[UpSample] = []
        try:
            sid = self.system.sid()
        except Exception:  # a scrape must never raise
            log.exception("monitored system unreadable")
            yield from self._meta(dict.fromkeys(self.collectors, False), {}, sid=None, up=False)
            return
        for name, collector in self.collectors.items():
            start = self.clock()
            try:
                reading = collector.read()
                out.extend(collector.families(reading))
                up_samples.extend(collector.up_samples(reading))
                success[name] = collector.succeeded(reading)
            except Exception:
                log.exception("collector %s failed", name)
                success[name] = False
            duration[name] = self.clock() - start
        yield from out
        yield from self._meta(success, duration, sid=sid, up=True, up_samples=up_samples)

    @staticmethod
    def _meta(
        success: dict[str, bool],
        duration: dict[str, float],
        sid: str | None,
        up: bool,
        up_samples: Iterable[UpSample] = (),
    ) -> Iterator[Metric]:
        up_f = GaugeMetricFamily(
            "sap_up",
            "1 if the monitored system's statistics could be read.",
            labels=["sid"] if sid else [],
        )
        if sid or not up:
            up_f.add_metric([sid] if sid else [], 1.0 if up else 0.0)
        # Collectors reading instances of their own (sapcontrol) add theirs, labelled by
        # instance and source, to the same family: one `sap_up` per exposition.
        for labels, value in up_samples:
            up_f.add_sample("sap_up", labels, value)
        yield up_f
        if sid:
            # The SID this exporter serves is the model's (exporters.monitor says the same of
            # a real SID with kind="sapcontrol"): dashboards and alerts can tell them apart.
            info_f = GaugeMetricFamily(
                "sap_system_info",
                "One per SID the exporter serves; kind=twin: the model answering as that "
                "system, kind=sapcontrol: a system read through SAPControl. Always 1.",
                labels=["sid", "kind"],
            )
            info_f.add_metric([sid, "twin"], 1.0)
            yield info_f
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
