"""What a NOC pages on from CCMS (issue 31 item 2a): short dumps and their rate, aborted jobs,
update errors, spool errors from GetAlertTree, open alerts from GetAlerts, configured nodes;
read from trees in the shapes real clients recorded, and answered by the twin's faults."""

from __future__ import annotations

import httpx
import pytest
from prometheus_client.core import Metric

from alerts.thresholds import load_thresholds
from exporters.collectors.sapcontrol import (
    NOC_NODES,
    Identity,
    InstanceResult,
    SAPControlCollector,
    SAPControlReading,
    Target,
)
from exporters.sapcontrol import ccms
from exporters.sapcontrol.client import Endpoint, SAPControlClient
from exporters.sapcontrol.schema import decode_response
from exporters.sapcontrol.settings import SAPControlSettings
from exporters.sapstartsrv.landscape import ModelLandscape
from exporters.sources.sapcontrol_guard import Guard
from landscape_model.engine import Simulation
from tests.sapcontrol.conftest import PASSWORD, USER, recorded

G, Y, R, GRAY = "SAPControl-GREEN", "SAPControl-YELLOW", "SAPControl-RED", "SAPControl-GRAY"


def _flat(*nodes: tuple[str, str, str | None]) -> list[dict]:
    """A tree as gowsdl-based clients record it (observIQ's receiver): items without
    parent, a colour, and a description that may be missing (AbapErrorInUpdate)."""
    return [{"name": n, "ActualValue": c, "description": d} for n, c, d in nodes]


def _families(data: dict, **reading) -> dict[str, Metric]:
    target = Target(Endpoint("http://app1:50013/"))
    result = InstanceResult(target, Identity("PRD", "app1_D00", "ABAP"), up=True, data=data)
    collector = SAPControlCollector(source=None)
    fams = collector.families(SAPControlReading([result], **reading))
    return {f.name: f for f in fams}


def _samples(fam: Metric) -> dict[tuple, float]:
    return {
        tuple(v for k, v in sorted(s.labels.items()) if k not in ("sid", "sap_instance")): s.value
        for s in fam.samples
    }


def test_noc_nodes_from_a_flat_tree_as_real_clients_record_it() -> None:
    tree = _flat(
        ("Shortdumps Frequency", R, "25 /min"),
        ("Total Number of Work Processes", GRAY, "22"),
        ("AbortedJobs", Y, "12"),
        ("AbapErrorInUpdate", R, None),  # a colour, no value
        ("ErrorsInWpSPO", G, "0"),
        ("HostspoolListUsed", GRAY, "3"),
    )
    fams = _families({"GetAlertTree": tree})
    assert _samples(fams["sap_ccms_shortdumps_per_second"]) == {(): pytest.approx(25 / 60)}
    assert _samples(fams["sap_ccms_aborted_jobs"]) == {(): 12.0}
    assert _samples(fams["sap_ccms_spool_errors"]) == {(): 0.0}
    assert _samples(fams["sap_ccms_update_errors"]) == {}  # no value: no sample, never 0
    states = _samples(fams["sap_ccms_node_state"])
    assert states[("Shortdumps Frequency",)] == 4.0
    assert states[("AbortedJobs",)] == 3.0
    assert states[("AbapErrorInUpdate",)] == 4.0
    assert states[("ErrorsInWpSPO",)] == 2.0
    assert ("HostspoolListUsed",) not in states  # not configured: not read


def test_a_tree_without_the_nodes_gives_no_sample() -> None:
    fams = _families({"GetAlertTree": _flat(("CPU_Utilization", G, "4 %"))})
    for _, metric, _ in NOC_NODES:
        assert _samples(fams[f"sap_ccms_{metric}"]) == {}


def test_configured_nodes_are_read_under_their_names(monkeypatch) -> None:
    monkeypatch.setenv(
        "WLMON_SAPCONTROL_CCMS_NODES",
        '{"Hostspool lists": "Spool/HostspoolListUsed", "Swap": "Swap_Space"}',
    )
    settings = SAPControlSettings()
    assert settings.ccms_nodes["Hostspool lists"] == "Spool/HostspoolListUsed"
    tree = [
        {"name": "PRD", "parent": -1, "ActualValue": G, "description": ""},
        {"name": "Spool", "parent": 0, "ActualValue": G, "description": ""},
        {"name": "HostspoolListUsed", "parent": 1, "ActualValue": Y, "description": "87 %"},
    ]
    fams = _families(
        {"GetAlertTree": tree},
        ccms_nodes={"Hostspool lists": ("Spool", "HostspoolListUsed"), "Swap": ("Swap_Space",)},
    )
    assert _samples(fams["sap_ccms_value"]) == {("Hostspool lists",): pytest.approx(0.87)}
    assert _samples(fams["sap_ccms_node_state"])[("Hostspool lists",)] == 3.0


@pytest.mark.parametrize(
    ("nodes", "says"),
    [
        ('{"AbortedJobs": "Background/AbortedJobs"}', "read by default"),
        ('{"9lives": "Spool/X"}', "starting with a letter"),
        ('{"x\\"y": "Spool/X"}', "starting with a letter"),
        ('{"Spool": "//"}', "need a node path"),
    ],
)
def test_bad_configured_nodes_are_refused_naming_the_setting(
    monkeypatch, nodes: str, says: str
) -> None:
    monkeypatch.setenv("WLMON_SAPCONTROL_CCMS_NODES", nodes)
    with pytest.raises(ValueError) as err:
        SAPControlSettings()
    assert "WLMON_SAPCONTROL_CCMS_NODES" in str(err.value) and says in str(err.value)


def test_noc_node_names_are_those_settings_refuse() -> None:
    assert tuple(name for name, _, _ in NOC_NODES) == ccms.NOC_NODE_NAMES


def test_get_alerts_through_the_client_counts_open_alerts_with_bounded_labels() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        assert b"<RootTid></RootTid>" in request.content  # the WSDL's one parameter
        return httpx.Response(200, content=recorded("GetAlerts.xml"))

    client = SAPControlClient(
        Endpoint("http://app1:50013/"),
        auth=(USER, PASSWORD),
        transport=httpx.MockTransport(answer),
    )
    alerts = client.alerts()
    assert alerts["RootTidName"] == "sapapp1_EPP_00"
    assert [a["Value"] for a in alerts["alert"]] == [Y, Y, R, Y]
    fams = _families({"GetAlerts": alerts})
    assert _samples(fams["sap_ccms_alerts"]) == {("red",): 1.0, ("yellow",): 3.0}
    assert _samples(fams["sap_ccms_alerts_by_attribute"]) == {
        ("QueueTime", "yellow"): 1.0,
        ("Shortdumps Frequency", "yellow"): 1.0,
        ("AbapErrorInUpdate", "red"): 1.0,
        ("other", "yellow"): 1.0,  # R3BPServerSpecAbortedJobs: not a name wlmon knows
    }


def test_no_open_alert_is_two_zeros() -> None:
    empty = decode_response(
        "GetAlerts",
        b'<SOAP-ENV:Envelope xmlns:SOAP-ENV="http://schemas.xmlsoap.org/soap/envelope/" '
        b'xmlns:SAPControl="urn:SAPControl"><SOAP-ENV:Body><SAPControl:GetAlertsResponse>'
        b"<RootTidName>x</RootTidName><alert></alert></SAPControl:GetAlertsResponse>"
        b"</SOAP-ENV:Body></SOAP-ENV:Envelope>",
    )
    fams = _families({"GetAlerts": empty})
    assert _samples(fams["sap_ccms_alerts"]) == {("red",): 0.0, ("yellow",): 0.0}


def test_get_alerts_waits_while_the_dispatcher_is_down() -> None:
    guard = Guard(SAPControlSettings(), "http://app1:50013/")
    guard.processes = {"disp+work": GRAY}
    assert guard.skip("GetAlerts", 0.0) == "state"
    guard.processes = {"disp+work": G}
    assert guard.skip("GetAlerts", 0.0) is None


# ---------------------------------------------------------------- the twin's faults
def _land(faults: tuple[str, ...], seconds: float = 300) -> tuple[Simulation, ModelLandscape]:
    sim = Simulation("sd-benchmark-2003", faults=faults, seed=21)
    # No snapshot cache: the model runs faster than the cache's wall-clock 0.1 s here.
    land = ModelLandscape(
        sim.snapshot, lambda: sim.scenario, load_thresholds(), 120, snapshot_ttl_s=0.0
    )
    sim.run(seconds)
    return sim, land


def _node(land: ModelLandscape, name: str) -> dict:
    tree = land.alert_tree(land.instance("penguin2_D00"))
    return ccms.find(ccms.paths(tree), (name,))


def test_twin_healthy_has_the_nodes_green_and_no_open_alert() -> None:
    _, land = _land(())
    for name in ccms.NOC_NODE_NAMES:
        node = _node(land, name)
        assert node["ActualValue"] == G and ccms.parse_value(node["description"]) == 0.0
    assert land.alerts(land.instance("penguin2_D00"))["alert"] == []


def test_twin_short_dump_storm_is_red_at_its_share_of_the_step_rate() -> None:
    _, land = _land(("short-dump-storm",))
    steps = ccms.parse_value(_node(land, "DialogSteps")["description"])
    node = _node(land, "Shortdumps Frequency")
    assert node["ActualValue"] == R
    # 2 % of the instance's steps (computed here from its own DialogSteps node).
    assert ccms.parse_value(node["description"]) == pytest.approx(0.02 * steps, abs=1 / 60)
    assert ccms.parse_value(node["description"]) * 60 > load_thresholds().short_dumps_per_minute
    attrs = [a["Attribute"] for a in land.alerts(land.instance("penguin2_D00"))["alert"]]
    assert "Shortdumps Frequency" in attrs


def test_twin_update_errors_are_red_with_a_count() -> None:
    _, land = _land(("update-errors",))
    node = _node(land, "AbapErrorInUpdate")
    assert node["ActualValue"] == R and ccms.parse_value(node["description"]) > 0


def test_twin_update_hang_queues_v1_requests_and_reads_nothing() -> None:
    sim, land = _land(())
    inst = land.instance("penguin2_D00")

    def upd() -> dict:
        return next(r for r in land.queue_statistic(inst) if r["Typ"] == "ABAP/UPD")

    before = upd()
    sim.set_faults(["update-hang"])
    sim.run(60)
    first = upd()
    sim.run(120)
    hung = upd()
    assert hung["Reads"] == first["Reads"] >= before["Reads"]  # nothing taken since
    assert hung["Writes"] > first["Writes"]  # requests still arrive
    assert hung["Now"] == hung["Writes"] - hung["Reads"] > first["Now"] > 0
    sim.set_faults([])
    sim.run(60)
    after = upd()
    assert after["Reads"] > hung["Reads"] and after["Now"] < hung["Now"]
