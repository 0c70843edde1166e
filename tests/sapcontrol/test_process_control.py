"""The model's sapstartsrv stops and starts processes as a real one does (Stop, Start,
SendSignal), and the sapcontrol collector reads what that means: sapstartsrv still answers
(sap_up 1) while its processes are gray and the ABAP methods answer SOAP faults."""

from __future__ import annotations

import httpx
import pytest

from alerts.thresholds import load_thresholds
from exporters.collectors.sapcontrol import SAPControlCollector
from exporters.sapcontrol.client import (
    Endpoint,
    SAPControlClient,
    SAPControlFault,
    SAPControlUnauthorized,
)
from exporters.sapcontrol.schema import GRAY, GREEN, RED, encode_request
from exporters.sapcontrol.settings import SAPControlSettings
from exporters.sapstartsrv.landscape import ModelLandscape
from exporters.sapstartsrv.server import Credentials, SapStartSrvFleet
from exporters.sources.sapcontrol import SAPControlScraper
from landscape_model.engine import Simulation

AUTH = ("bmkadm", "model-password")
NAME = "penguin3_D00"


@pytest.fixture(scope="module")
def fleet():
    sim = Simulation("sd-benchmark-2003", seed=5)
    sim.run(60)
    land = ModelLandscape(sim.snapshot, lambda: sim.scenario, load_thresholds())
    fleet = SapStartSrvFleet(land, credentials=Credentials(*AUTH)).start()
    yield fleet
    fleet.stop()


@pytest.fixture
def client(fleet):
    with SAPControlClient(Endpoint(fleet.url(NAME)), auth=AUTH, timeout_s=10) as c:
        yield c
    fleet.landscape.start_processes(NAME)


def _colors(client) -> dict[str, str]:
    return {p["name"]: p["dispstatus"] for p in client.process_list()}


def _listed(client, name: str = NAME) -> str:
    host, inst = name.split("_")
    nr = int(inst[-2:])
    rows = client.system_instance_list()
    return next(r["dispstatus"] for r in rows if (r["hostname"], r["instanceNr"]) == (host, nr))


def test_stop_grays_every_process_and_the_instance_and_start_restores(client) -> None:
    assert set(_colors(client).values()) <= {GREEN, "SAPControl-YELLOW"}
    assert client.call("Stop", softtimeout=0, IsSystemStop=0) == {}
    procs = client.process_list()
    assert {p["dispstatus"] for p in procs} == {GRAY}
    assert {p["textstatus"] for p in procs} == {"Stopped"} and {p["pid"] for p in procs} == {-1}
    assert _listed(client) == GRAY
    with pytest.raises(SAPControlFault, match="DpAttachStartService failed"):
        client.wp_table()
    client.call("Start", runlevel="")
    assert GRAY not in _colors(client).values()
    assert len(client.wp_table()) > 0


def test_send_signal_kills_the_dispatcher_only(client) -> None:
    pid = next(p["pid"] for p in client.process_list() if p["name"] == "disp+work")
    client.call("SendSignal", pid=pid, signal="9")
    colors = _colors(client)
    assert colors["disp+work"] == GRAY and colors["gwrd"] == GREEN
    assert _listed(client) == RED  # started, but a process that should run does not
    for method in ("ABAPGetWPTable", "GetQueueStatistic", "GetAlertTree"):
        with pytest.raises(SAPControlFault, match="DpAttachStartService failed"):
            client.call(method)
    assert len(client.call("ICMGetThreadList")) == 10  # the ICM still answers


def test_signal_to_an_unknown_pid_is_a_fault(client) -> None:
    with pytest.raises(SAPControlFault, match="Invalid argument"):
        client.call("SendSignal", pid=999999, signal="KILL")
    assert GRAY not in _colors(client).values()


def test_control_methods_need_credentials(fleet) -> None:
    with SAPControlClient(Endpoint(fleet.url(NAME)), timeout_s=10) as anonymous:
        for op in ("Stop", "Start", "SendSignal"):
            with pytest.raises(SAPControlUnauthorized):
                anonymous.call(op)
    r = httpx.post(fleet.url(NAME), content=encode_request("Stop"), timeout=10)
    assert r.status_code == 401
    assert GRAY not in {
        p["dispstatus"] for p in fleet.landscape.process_list(fleet.landscape.instance(NAME))
    }


def _samples(fleet, name: str) -> dict:
    scraper = SAPControlScraper(
        SAPControlSettings(endpoints=[fleet.url(name)], username=AUTH[0], password=AUTH[1])
    )
    try:
        collector = SAPControlCollector(scraper)
        reading = collector.read()
        fams = {f.name: f for f in collector.families(reading)}
        return {"up": collector.up_samples(reading), "fams": fams}
    finally:
        scraper.close()


def test_a_dead_dispatcher_reads_sapstartsrv_up_and_the_process_gray(fleet, client) -> None:
    """The defect of issue 25: a fault answer kept the instance looking alive. Now sap_up
    keeps its meaning (sapstartsrv answered) and disp+work reads gray (1). The ABAP and ICM
    methods, which would only fault ("DpAttachStartService failed"), are not called."""
    client.call("Stop", softtimeout=0, IsSystemStop=0)
    got = _samples(fleet, NAME)
    [(labels, up)] = got["up"]
    assert labels["sap_instance"] == NAME and up == 1.0
    status = {s.labels["process"]: s.value for s in got["fams"]["sap_process_status"].samples}
    assert status["disp+work"] == 1.0 and status["gwrd"] == 1.0
    ok = {
        s.labels["method"]: s.value for s in got["fams"]["sap_sapcontrol_request_success"].samples
    }
    # ABAPReadSyslog is asked all the same: sapstartsrv reads the syslog file itself, and
    # the log says why the dispatcher went down; GetVersionInfo too (the executables' files).
    assert ok == {"GetProcessList": 1.0, "ABAPReadSyslog": 1.0, "GetVersionInfo": 1.0}
    assert "sap_work_processes" not in got["fams"]
    skipped = {
        (s.labels["method"], s.labels["reason"])
        for s in got["fams"]["sap_sapcontrol_calls_skipped"].samples
        if s.name.endswith("_total")
    }
    assert {("ABAPGetWPTable", "state"), ("ICMGetThreadList", "state")} <= skipped
