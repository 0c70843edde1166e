"""The model answering as sapstartsrv: WSDL, SOAP, 401 for protected methods, HTTPS, the Unix
socket, and what a fault of the model looks like through SAPControl."""

from __future__ import annotations

import shutil
import ssl
import subprocess
import xml.etree.ElementTree as ET

import httpx
import pytest

from alerts.thresholds import load_thresholds
from exporters.sapcontrol.client import (
    Endpoint,
    SAPControlClient,
    SAPControlFault,
    SAPControlUnauthorized,
    SAPControlUnavailable,
)
from exporters.sapcontrol.schema import OPERATIONS, SOAP_ENV, encode_request
from exporters.sapstartsrv.landscape import ModelLandscape
from exporters.sapstartsrv.server import Credentials, SapStartSrvFleet
from landscape_model.engine import Simulation

AUTH = ("bmkadm", "model-password")
WSDL_NS = "{http://schemas.xmlsoap.org/wsdl/}"


@pytest.fixture(scope="module")
def sim() -> Simulation:
    sim = Simulation("sd-benchmark-2003", seed=5)
    sim.run(120)
    return sim


@pytest.fixture(scope="module")
def fleet(sim, tmp_path_factory):
    land = ModelLandscape(sim.snapshot, lambda: sim.scenario, load_thresholds())
    uds = tmp_path_factory.mktemp("uds")
    fleet = SapStartSrvFleet(land, credentials=Credentials(*AUTH), uds_dir=uds).start()
    yield fleet
    fleet.stop()


def _client_http(fleet, name: str = "penguin2_D00") -> SAPControlClient:
    return SAPControlClient(Endpoint(fleet.url(name, "http")), auth=AUTH, timeout_s=10)


def _client(fleet, name: str, auth=AUTH) -> SAPControlClient:
    return SAPControlClient(Endpoint(fleet.url(name)), auth=auth, timeout_s=10)


def test_one_endpoint_per_instance_and_the_system_list(fleet) -> None:
    assert len(fleet.urls()) == 32  # 30 dialog instances, the ASCS and the Java instance
    with _client(fleet, "penguin5_D01") as c:
        rows = c.system_instance_list()
    ports = fleet.ports()
    assert len(rows) == 32
    first = rows[0]
    assert (first["hostname"], first["instanceNr"], first["features"]) == (
        "penguin2",
        0,
        "ABAP|GATEWAY|ICMAN|IGS",
    )
    assert first["httpPort"] == ports["penguin2_D00"][0]
    ascs = rows[-2]
    assert (ascs["hostname"], ascs["features"], ascs["startPriority"]) == (
        "penguin1",
        "MESSAGESERVER|ENQUE",
        "1",
    )
    java = rows[-1]
    assert (java["hostname"], java["instanceNr"], java["features"]) == ("penguin13", 10, "J2EE|IGS")


def test_wsdl_describes_the_operations_served(fleet) -> None:
    r = httpx.get(fleet.url("penguin2_D00") + "?wsdl", timeout=10)
    assert r.status_code == 200
    root = ET.fromstring(r.content)
    port_type = root.find(f"{WSDL_NS}portType")
    assert port_type.get("name") == "SAPControlPortType"
    served = {op.get("name") for op in port_type.findall(f"{WSDL_NS}operation")}
    assert served == set(OPERATIONS)
    assert b'location="http://127.0.0.1:' in r.content
    assert b'name="EnqStatistic"' in r.content and b'name="lock-wait-time"' in r.content


@pytest.mark.parametrize(
    "operation",
    ["ABAPGetWPTable", "GetQueueStatistic", "GetAlertTree", "ICMGetThreadList"],
)
def test_protected_methods_answer_401_without_credentials(fleet, operation) -> None:
    body = encode_request(operation)
    r = httpx.post(fleet.url("penguin2_D00"), content=body, timeout=10)
    assert r.status_code == 401
    assert r.headers["www-authenticate"].startswith("Basic")
    # gSOAP's fault for an HTTP 401 (soap_set_fault): a client fault, and the text
    # SAPControl clients match on "401 Unauthorized" (issue 25: it was a Server fault
    # "Invalid Credentials").
    fault = ET.fromstring(r.content).find(f".//{{{SOAP_ENV}}}Fault")
    assert fault is not None, r.text
    assert fault.findtext("faultcode") == "SOAP-ENV:Client"
    assert fault.findtext("faultstring") == "Error 401: HTTP 401 Unauthorized"
    wrong = httpx.post(fleet.url("penguin2_D00"), content=body, auth=("bmkadm", "x"), timeout=10)
    assert wrong.status_code == 401
    # Wrong credentials: the text sapcontrol prints as "FAIL: Invalid Credentials".
    assert b"<faultstring>Invalid Credentials</faultstring>" in wrong.content
    ok = httpx.post(fleet.url("penguin2_D00"), content=body, auth=AUTH, timeout=10)
    assert ok.status_code == 200


def test_the_initial_display_methods_need_no_credentials(fleet) -> None:
    with _client(fleet, "penguin2_D00", auth=None) as c:
        assert c.instance_properties()["INSTANCE_NAME"] == "D00"
        assert c.process_list()[0]["name"] == "disp+work"
        with pytest.raises(SAPControlUnauthorized):
            c.wp_table()


def test_methods_an_instance_does_not_run_are_faults(fleet) -> None:
    with _client(fleet, "penguin1_ASCS01") as c:
        assert c.enq_statistic()["locks-max"] > 0
        with pytest.raises(SAPControlFault, match="not available"):
            c.wp_table()
    with _client(fleet, "penguin2_D00") as c, pytest.raises(SAPControlFault):
        c.enq_statistic()


def test_the_icm_of_a_dialog_instance_is_idle_and_the_ascs_runs_none(fleet) -> None:
    body = encode_request("ICMGetThreadList")
    r = httpx.post(fleet.url("penguin2_D00"), content=body, auth=AUTH, timeout=10)
    # SAP's element names on the wire: ICMGetThreadListResponse/thread/item/...
    assert b"<SAPControl:ICMGetThreadListResponse><thread><item><name>Thread 0</name>" in r.content
    with _client(fleet, "penguin2_D00") as c:
        threads = c.call("ICMGetThreadList")
        assert len(threads) == 10
        assert {t["status"] for t in threads} == {"Available"}
        assert sum(t["requests"] for t in threads) == 0  # SD users come through SAP GUI
        assert c.call("ICMGetConnectionList") == []
    with _client(fleet, "penguin1_ASCS01") as c:
        for method in ("ICMGetThreadList", "ICMGetConnectionList"):
            with pytest.raises(SAPControlFault, match="not available"):
                c.call(method)


def test_work_process_table_rows_and_fields(fleet, sim) -> None:
    with _client(fleet, "penguin2_D00") as c:
        rows = c.wp_table()
    types = [r["Typ"] for r in rows]
    assert types.count("DIA") == 24 and types.count("UPD") == 1
    assert [r["No"] for r in rows] == list(range(25))
    busy = [r for r in rows if r["Status"] != "Wait"]
    assert busy and all(r["Program"] and r["User"] and r["Client"] == "100" for r in busy)


def test_the_unix_socket_answers_like_the_port(fleet, tmp_path) -> None:
    inst = fleet.landscape.instance("penguin3_D02")
    path = fleet.uds_path(inst)
    assert path.name == ".sapstream50213" and path.exists()
    with SAPControlClient(Endpoint("http://penguin3/", uds=str(path)), auth=AUTH) as c:
        assert c.instance_properties()["SAPLOCALHOST"] == "penguin3"
        assert len(c.queue_statistic()) == 8


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl not installed")
def test_https_with_a_ca_file(sim, tmp_path) -> None:
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
            "-keyout", str(key), "-out", str(cert),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    land = ModelLandscape(sim.snapshot, lambda: sim.scenario, load_thresholds())
    fleet = SapStartSrvFleet(land, credentials=Credentials(*AUTH), tls=tls).start()
    try:
        url = fleet.url("penguin2_D00")
        assert url.startswith("https://")
        verify = ssl.create_default_context(cafile=str(cert))
        with SAPControlClient(Endpoint(url), auth=AUTH, verify=verify) as c:
            assert c.alert_tree()[0]["name"] == "penguin2_BMK_00"
            assert c.system_instance_list()[0]["httpsPort"] == fleet.ports()["penguin2_D00"][1]
        with (
            SAPControlClient(Endpoint(url), auth=AUTH) as c,
            pytest.raises(SAPControlUnavailable, match=r"(?i)certificate"),
        ):
            c.process_list()  # not trusted without the CA
        # HTTP and HTTPS side by side, as sapstartsrv serves 5NN13 and 5NN14.
        http, https = fleet.ports()["penguin2_D00"]
        assert http and https and http != https
        with _client_http(fleet) as c:
            listed = c.system_instance_list()[0]
        assert (listed["httpPort"], listed["httpsPort"]) == (http, https)
    finally:
        fleet.stop()
