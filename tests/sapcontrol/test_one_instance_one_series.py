"""One instance, one series: an instance reached several ways (its Unix socket and its
port named in ENDPOINTS, and again through discovery) is read once, through the configured
transport, and exported under one (sid, sap_instance)."""

from __future__ import annotations

from collections import Counter

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from alerts.thresholds import load_thresholds
from exporters.collectors.sapcontrol import SAPControlCollector
from exporters.sapcontrol.settings import SAPControlSettings
from exporters.sapstartsrv.landscape import ModelLandscape
from exporters.sapstartsrv.server import Credentials, SapStartSrvFleet
from exporters.sources.sapcontrol import SAPControlScraper
from landscape_model.engine import Simulation

AUTH = ("bmkadm", "model-password")
NAME = "penguin2_D00"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    sim = Simulation("sd-benchmark-2003", seed=5)
    sim.run(60)
    land = ModelLandscape(sim.snapshot, lambda: sim.scenario, load_thresholds())
    uds = tmp_path_factory.mktemp("uds")
    fleet = SapStartSrvFleet(land, credentials=Credentials(*AUTH), uds_dir=uds).start()
    yield fleet
    fleet.stop()


def _three_ways(fleet) -> SAPControlScraper:
    inst = fleet.landscape.instance(NAME)
    settings = SAPControlSettings(
        endpoints=[f"unix:{fleet.uds_path(inst)}", fleet.url(NAME)],
        discover=[fleet.url("penguin3_D00")],
        hosts={"*": "127.0.0.1"},
        username=AUTH[0],
        password=AUTH[1],
        timeout_s=10,
    )
    return SAPControlScraper(settings)


def _exposition(scraper) -> list:
    registry = CollectorRegistry()
    registry.register(SAPControlCollector(scraper))
    return list(text_string_to_metric_families(generate_latest(registry).decode()))


def test_the_same_instance_configured_three_ways_is_one_series(fleet) -> None:
    scraper = _three_ways(fleet)
    try:
        for _ in range(2):  # the first scrape learns identities, the second skips twins
            families = _exposition(scraper)
            samples = [
                (s.name, tuple(sorted(s.labels.items()))) for f in families for s in f.samples
            ]
            twice = [k for k, n in Counter(samples).items() if n > 1]
            assert twice == []
            up = {
                s.labels["sap_instance"]: s.value
                for f in families
                if f.name == "sap_up"
                for s in f.samples
            }
            assert len(up) == 32 and set(up.values()) == {1.0}
            [mine] = [r for r in scraper._last if r.identity.sap_instance == NAME]
            assert mine.target.configured and mine.target.endpoint.uds  # the first configured
        # After the first scrape the twins are not even asked.
        targets = scraper.targets()
        assert len(targets) == 32  # 30 dialog, the ASCS and the Java instance
        assert [t.endpoint.uds is not None for t in targets if t.configured] == [True]
    finally:
        scraper.close()


def test_a_configured_twin_that_answers_without_identity_is_skipped(fleet, caplog) -> None:
    """GetInstanceProperties with no SAPLOCALHOST/SAPSYSTEM (and no instance list to say
    who it is): skipped with a log line, never labelled `_-1`."""
    scraper = SAPControlScraper(SAPControlSettings(endpoints=[fleet.url(NAME)], timeout_s=10))
    scraper.client(scraper.targets()[0].endpoint).instance_properties = lambda timeout_s: {}
    try:
        with caplog.at_level("WARNING"):
            families = _exposition(scraper)
        labels = [s.labels for f in families for s in f.samples if "sap_instance" in s.labels]
        assert labels == []
        assert "names no SAPLOCALHOST and SAPSYSTEM" in caplog.text
    finally:
        scraper.close()
