"""HA state through sapstartsrv (issue 31 item 2c): HAGetFailoverConfig, HACheckConfig and
HACheckFailoverConfig on the instances a cluster moves, read in the shapes SAP's WSDL and
the cluster guides' `sapcontrol` output show, asked once per HA_INTERVAL_S with the last
answer standing in between, and counted into bounded labels."""

from __future__ import annotations

import time

import httpx
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from exporters.collectors.sapcontrol import SAPControlCollector, ha_nodes
from exporters.sapcontrol.client import Endpoint, SAPControlClient
from exporters.sapcontrol.settings import SAPControlSettings
from exporters.sources.sapcontrol import SAPControlScraper
from tests.sapcontrol.conftest import PASSWORD, USER, RecordedSystem, recorded


def _client(name: str) -> SAPControlClient:
    return SAPControlClient(
        Endpoint("http://sapascs:50113/"),
        auth=(USER, PASSWORD),
        transport=httpx.MockTransport(lambda r: httpx.Response(200, content=recorded(name))),
    )


def test_failover_config_decodes_as_the_cluster_guides_print_it() -> None:
    config = _client("HAGetFailoverConfig.xml").ha_failover_config()
    assert config["HAActive"] is True
    assert config["HAActiveNode"] == "sapascs"
    assert "sap_suse_cluster_connector" in config["HASAPInterfaceVersion"]
    # One item "node1, node2" (as sapcontrol prints HANodes) or one item per node: alike.
    assert ha_nodes(config) == ["sapascs", "sapers"]
    assert ha_nodes({"HANodes": ["n1", "n2"]}) == ["n1", "n2"]


def test_checks_decode_with_the_wsdl_enumerations() -> None:
    checks = _client("HACheckConfig.xml").ha_check_config()
    assert [c["state"] for c in checks] == ["SAPControl-HA-SUCCESS"] * 3 + ["SAPControl-HA-ERROR"]
    failover = _client("HACheckFailoverConfig.xml").ha_check_failover_config()
    assert failover[0]["description"] == "SAPInstance RA sufficient version"


def _samples(text: str, name: str) -> dict[tuple, float]:
    return {
        tuple(sorted((k, v) for k, v in s.labels.items() if k not in ("sid",))): s.value
        for fam in text_string_to_metric_families(text)
        for s in fam.samples
        if s.name == name
    }


def test_ha_series_stand_between_readings_and_the_methods_are_asked_once_per_interval() -> None:
    system = RecordedSystem()
    settings = SAPControlSettings(
        endpoints=["http://sapascs:50113/"], username=USER, password=PASSWORD, ha_interval_s=0.3
    )

    def make(endpoint: Endpoint, auth) -> SAPControlClient:
        return SAPControlClient(endpoint, auth=auth, transport=httpx.MockTransport(system))

    scraper = SAPControlScraper(settings, client_factory=make)
    registry = CollectorRegistry()
    registry.register(SAPControlCollector(scraper))
    try:
        texts = [generate_latest(registry).decode() for _ in range(3)]
        time.sleep(0.35)
        texts.append(generate_latest(registry).decode())
    finally:
        scraper.close()
    asked = [op for _, op, _ in system.calls if op.startswith("HA")]
    assert asked.count("HAGetFailoverConfig") == 2  # the first scrape and after 0.3 s
    assert asked.count("HACheckFailoverConfig") == 2
    for text in texts:  # every scrape has them, from the last answer in between
        active = _samples(text, "sap_ha_failover_active")
        assert active == {(("sap_instance", "sapascs_ASCS01"),): 1.0}
        node = _samples(text, "sap_ha_active_node_info")
        assert node == {(("node", "sapascs"), ("sap_instance", "sapascs_ASCS01")): 1.0}
        checks = _samples(text, "sap_ha_checks")
        assert len(checks) == 2 * 4 * 3  # config/failover x categories x states, no text
        key = (
            ("category", "sap_state"),
            ("check", "config"),
            ("sap_instance", "sapascs_ASCS01"),
            ("state", "error"),
        )
        assert checks[key] == 1.0
    assert 'method="HAGetFailoverConfig",reason="interval"' in texts[1]
