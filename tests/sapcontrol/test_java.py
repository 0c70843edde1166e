"""AS Java through SAPControl (issue 31 items 2 and 5): the twin lists an AS Java instance
(features J2EE|IGS) and answers J2EEGetProcessList2 and J2EEGetThreadList2 on it; the
exporter calls them only there and only while jstart runs, and exports server nodes by
state and threads by pool and state. The java-thread-pool-exhausted fault fills the
application pool. Expected figures come from the landscape's `java` settings."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from alerts.thresholds import load_thresholds
from exporters.collectors.sapcontrol import SAPControlCollector
from exporters.sapcontrol.client import Endpoint, SAPControlClient, SAPControlFault
from exporters.sapcontrol.settings import SAPControlSettings
from exporters.sources.sapcontrol import SAPControlScraper
from tests.sapcontrol.twins import faultable_twin

JAVA = "penguin13_J10"
FAULT = "java-thread-pool-exhausted"


@pytest.fixture(scope="module")
def twin():
    with faultable_twin(FAULT, load_thresholds()) as t:
        yield t


def _scrape(fleet) -> list:
    settings = SAPControlSettings(
        discover=fleet.url("penguin2_D00"),
        hosts={"*": "127.0.0.1"},
        username="bmkadm",
        password="pw",
        timeout_s=10,
    )
    registry = CollectorRegistry()
    registry.register(SAPControlCollector(SAPControlScraper(settings)))
    return [
        s
        for f in text_string_to_metric_families(generate_latest(registry).decode())
        for s in f.samples
    ]


def _threads(samples, inst: str) -> dict[tuple[str, str], float]:
    return {
        (s.labels["pool"], s.labels["state"]): s.value
        for s in samples
        if s.name == "sap_java_threads" and s.labels["sap_instance"] == inst
    }


def test_the_twin_answers_j2ee_only_on_the_java_instance(twin) -> None:
    fleet, java = twin.fleet, twin.scenario.landscape.java
    with SAPControlClient(Endpoint(fleet.url(JAVA)), auth=("bmkadm", "pw"), timeout_s=10) as c:
        procs = c.call("J2EEGetProcessList2")
        threads = c.call("J2EEGetThreadList2")
        features = {r["hostname"]: r["features"] for r in c.system_instance_list()}
    assert features["penguin13"] == "J2EE|IGS"
    assert len(procs) == java.server_nodes
    assert {p["state"] for p in procs} == {"SAPControl-J2EE-RUNNING"}
    assert len({p["clusterId"] for p in procs}) == java.server_nodes
    per_node = java.application_threads + java.system_threads
    assert len(threads) == java.server_nodes * per_node
    abap = SAPControlClient(Endpoint(fleet.url("penguin2_D00")), auth=("bmkadm", "pw"))
    with abap, pytest.raises(SAPControlFault):
        abap.call("J2EEGetThreadList2")


def test_exporter_reads_java_threads_and_the_fault_fills_the_pool(twin) -> None:
    fleet, java = twin.fleet, twin.scenario.landscape.java
    samples = _scrape(fleet)
    calls = {
        (s.labels["sap_instance"], s.labels["method"]): s.value
        for s in samples
        if s.name == "sap_sapcontrol_request_success"
    }
    assert calls[(JAVA, "J2EEGetProcessList2")] == 1.0
    assert calls[(JAVA, "J2EEGetThreadList2")] == 1.0
    assert not [k for k in calls if k[1].startswith("J2EE") and k[0] != JAVA]
    assert not [k for k in calls if k[0] == JAVA and k[1].startswith("ABAP")]
    nodes = {
        s.labels["state"]: s.value
        for s in samples
        if s.name == "sap_java_server_processes" and s.labels["sap_instance"] == JAVA
    }
    assert nodes == {"running": float(java.server_nodes)}
    # restartCount and errorCount count since jstart started: counters (the twin's are 0).
    counted = {
        (s.name, s.labels["cluster_id"]): s.value
        for s in samples
        if s.name in ("sap_java_process_restarts_total", "sap_java_process_errors_total")
        and s.labels["sap_instance"] == JAVA
    }
    assert len(counted) == 2 * java.server_nodes and set(counted.values()) == {0.0}
    healthy = _threads(samples, JAVA)
    pool = java.server_nodes * java.application_threads
    busy = java.server_nodes * round(java.busy_share * java.application_threads)
    assert healthy[("application", "busy")] == busy
    assert healthy[("application", "idle")] == pool - busy
    limit = load_thresholds().java_thread_pool_busy_ratio
    assert busy / pool < limit

    twin.fault = FAULT
    try:
        full = _threads(_scrape(fleet), JAVA)
    finally:
        twin.fault = ""
    assert full[("application", "busy")] == pool and full[("application", "idle")] == 0
    assert full[("application", "busy")] / pool >= limit
    # The system pool keeps its own figures; thread names and tasks never become labels.
    assert full[("system", "busy")] == healthy[("system", "busy")]


def test_no_j2ee_call_while_jstart_is_stopped(twin) -> None:
    fleet, land = twin.fleet, twin.landscape
    land.stop_processes(JAVA)
    try:
        samples = _scrape(fleet)
    finally:
        land.start_processes(JAVA)
    methods = {
        s.labels["method"]
        for s in samples
        if s.name == "sap_sapcontrol_request_success" and s.labels["sap_instance"] == JAVA
    }
    assert "GetProcessList" in methods
    assert not {m for m in methods if m.startswith("J2EE")}
    up = [s.value for s in samples if s.name == "sap_up" and s.labels.get("sap_instance") == JAVA]
    assert up == [1.0]
