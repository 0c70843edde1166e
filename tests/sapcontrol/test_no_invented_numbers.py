"""Readings that do not invent numbers (issue 25): an element left out is no sample, a
tree without `parent` is still read by unique node names, a list that names no readable
instance is no successful discovery."""

from __future__ import annotations

import httpx
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from exporters.collectors.sapcontrol import (
    Identity,
    InstanceResult,
    SAPControlCollector,
    SAPControlReading,
    Target,
)
from exporters.sapcontrol.client import Endpoint, SAPControlClient
from exporters.sapcontrol.schema import decode_request, decode_response, encode_response
from exporters.sapcontrol.settings import SAPControlSettings
from exporters.sources.sapcontrol import SAPControlScraper
from tests.sapcontrol.conftest import recorded


def _families(data: dict) -> dict[str, list]:
    target = Target(Endpoint("http://sapascs:50113/"))
    result = InstanceResult(target, Identity("EPP", "sapascs_ASCS01", "ENQUE"), up=True)
    result.data = data
    fams = SAPControlCollector(None).families(SAPControlReading([result]))
    return {f.name: f.samples for f in fams}


def test_enqueue_elements_left_out_are_absent_not_zero() -> None:
    stat = decode_response("EnqGetStatistic", recorded("EnqStatistic-bare.xml"))
    fams = _families({"EnqGetStatistic": stat})
    entries = {s.labels["table"]: s.value for s in fams["sap_enqueue_table_entries"]}
    assert entries == {"locks": 1.0}  # owner-now and arguments-now were left out
    assert fams["sap_enqueue_table_state"] == []  # no *-state element: no colour, not 0
    assert fams["sap_enqueue_replication_state"] == []
    errors = {s.labels["operation"]: s.value for s in fams["sap_enqueue_errors"]}
    assert errors == {"enqueue": 4.0, "dequeue": 5.0}
    assert fams["sap_enqueue_requests"] == []


def test_a_tree_without_parents_still_gives_db_request_time_and_cpu() -> None:
    xml = recorded("GetAlertTree.xml").replace(b"<parent>", b"<x>").replace(b"</parent>", b"</x>")
    fams = _families({"GetAlertTree": decode_response("GetAlertTree", xml)})
    assert len(fams["sap_ccms_dialog_db_request_time_seconds"]) == 1
    assert len(fams["sap_ccms_cpu_utilisation_ratio"]) == 1
    assert fams["sap_ccms_dialog_response_time_seconds"] == []  # two ResponseTime: unread


def _portless(request: httpx.Request) -> httpx.Response:
    operation, _ = decode_request(request.content)
    assert operation == "GetSystemInstanceList"
    rows = [
        {"hostname": "sapapp1", "instanceNr": 0, "features": "ABAP", "dispstatus": None},
        {"hostname": "sapascs", "instanceNr": 1, "features": "ENQUE", "dispstatus": None},
    ]
    return httpx.Response(200, content=encode_response(operation, rows))


def test_a_list_without_ports_is_no_successful_discovery() -> None:
    settings = SAPControlSettings(discover="http://sapapp1:50013/", timeout_s=1.0)

    def factory(endpoint: Endpoint, auth) -> SAPControlClient:
        return SAPControlClient(endpoint, auth=auth, transport=httpx.MockTransport(_portless))

    scraper = SAPControlScraper(settings, client_factory=factory)
    registry = CollectorRegistry()
    registry.register(SAPControlCollector(scraper))
    try:
        text = generate_latest(registry).decode()
    finally:
        scraper.close()
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for f in text_string_to_metric_families(text)
        for s in f.samples
    }
    assert samples[("sap_sapcontrol_discovery_success", ())] == 0.0
    assert samples[("sap_scrape_collector_success", (("collector", "sapcontrol"),))] == 0.0
