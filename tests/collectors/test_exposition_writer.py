"""/metrics' own text writer writes exactly what prometheus_client's generate_latest writes:
for the default landscape's families over several scrapes, and for the awkward cases
(escapes, infinities, big numbers, timestamps, _created samples, unsorted labels)."""

from __future__ import annotations

import math

import httpx
import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    InfoMetricFamily,
)
from prometheus_client.openmetrics import exposition as om
from prometheus_client.registry import Collector

from exporters.collectors.exposition import OpenMetricsWriter, TextWriter
from exporters.config import ExporterConfig, ExporterSettings, load_config
from exporters.registry import exporter_collector
from exporters.server import ExporterServer
from landscape_model.engine import Simulation


class _Fixed(Collector):
    def __init__(self, families: list) -> None:
        self.families = families

    def collect(self):
        return iter(self.families)


def _registry(families: list) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Fixed(families))
    return registry


ESCAPINGS = (om.UNDERSCORES, om.ALLOWUTF8)


def _theirs(kind, escaping: str, families: list) -> bytes:
    if kind is TextWriter:
        return generate_latest(_registry(families), escaping=escaping)
    return om.generate_latest(_registry(families), escaping=escaping)


@pytest.mark.parametrize("kind", [TextWriter, OpenMetricsWriter])
@pytest.mark.parametrize("escaping", ESCAPINGS)
def test_the_landscape_serializes_as_prometheus_client_does_scrape_after_scrape(
    kind, escaping
) -> None:
    sim = Simulation("sd-benchmark-2003", seed=1)
    collector = exporter_collector(sim.snapshot, ExporterConfig(ExporterSettings()))
    writer = kind(escaping)
    for _ in range(3):  # the second and third come from the label cache
        sim.step()
        families = list(collector.collect())
        ours = writer.write(families)
        assert ours == _theirs(kind, escaping, families)
    assert ours.count(b"\n") > 4000


@pytest.mark.parametrize("kind", [TextWriter, OpenMetricsWriter])
@pytest.mark.parametrize("escaping", ESCAPINGS)
def test_awkward_samples_serialize_as_prometheus_client_does(kind, escaping) -> None:
    gauge = GaugeMetricFamily("g", "doc with \\ and\nnewline", labels=["z", "a"])
    gauge.add_metric(['quote " back \\ nl \n', "x"], math.inf)
    gauge.add_metric(["b", "y"], -math.inf)
    gauge.add_metric(["c", "w"], math.nan)
    gauge.add_metric(["d", "v"], 123456789.0)
    gauge.add_metric(["e", "u"], 1e-7, timestamp=1700000000.123)
    gauge.add_metric(["f", "t"], -5)
    counter = CounterMetricFamily("c", "counter", labels=["k"], created=1700000000.0)
    counter.add_metric(["v"], 3, created=1700000000.5)
    hist = HistogramMetricFamily("h", "hist", labels=["k"])
    hist.add_metric(["v"], [("0.1", 1), ("1e+07", 2), ("+Inf", 3)], 12.5)
    info = InfoMetricFamily("i", "info")
    info.add_metric([], {"version": "1"})
    utf8 = GaugeMetricFamily("odd.name", "dots", labels=["la.bel"])
    utf8.add_metric(["v"], 2.5)
    unit = GaugeMetricFamily("temp_celsius", "with a unit", value=21.5, unit="celsius")
    families = [
        gauge,
        counter,
        hist,
        info,
        GaugeMetricFamily("plain", "no labels", value=7),
        utf8,
        unit,
    ]
    expected = _theirs(kind, escaping, families)
    writer = kind(escaping, max_prefixes=3)  # the cache overflowing on the way
    assert writer.write(families) == expected
    assert writer.write(families) == expected


def test_the_server_answers_plain_and_gzip_scrapes_with_the_same_text() -> None:
    srv = ExporterServer(
        Simulation("sd-benchmark-2003", seed=1), port=0, speed=1.0, config=load_config()
    )
    srv.start()
    try:
        url = f"http://127.0.0.1:{srv.port}/metrics"
        plain = httpx.get(url, headers={"Accept-Encoding": "identity"})
        zipped = httpx.get(url, headers={"Accept-Encoding": "gzip"})
        assert zipped.headers["content-encoding"] == "gzip"
        assert plain.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
        # httpx has inflated it already: the same families (values and ST05's top
        # statements move between two scrapes of a running model).
        assert int(zipped.headers["content-length"]) < len(zipped.content) / 4

        def families(text: str) -> list[str]:
            return [x for x in text.splitlines() if x.startswith("# TYPE")]

        assert families(zipped.text) == families(plain.text)
        assert "sap_workload_steps_total" in plain.text
        # What Prometheus 3 asks for.
        accept = (
            "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,"
            "application/openmetrics-text;version=0.0.1;q=0.5,"
            "text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,"
            "text/plain;version=0.0.4;q=0.3,*/*;q=0.2"
        )
        openm = httpx.get(url, headers={"Accept": accept})
        assert openm.headers["content-type"] == (
            "application/openmetrics-text; version=1.0.0; charset=utf-8; escaping=allow-utf-8"
        )
        assert openm.text.endswith("# EOF\n")
        assert "sap_workload_steps_total{" in openm.text
    finally:
        srv.stop()
