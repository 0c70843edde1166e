"""A third-party SOAP client (zeep, from PyPI) loads the WSDL the model's sapstartsrv serves
and calls every operation it lists; the served element names are SAP's (written out below
from sapstartsrv's own WSDL, as recorded in SUSE/sap_host_exporter `index.html?wsdl`)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import httpx
import pytest
import requests
from zeep import Client
from zeep.exceptions import Fault
from zeep.transports import Transport

from alerts.thresholds import load_thresholds
from exporters.sapcontrol.schema import OPERATIONS
from exporters.sapstartsrv.landscape import ModelLandscape
from exporters.sapstartsrv.server import Credentials, SapStartSrvFleet
from landscape_model.engine import Simulation

AUTH = ("bmkadm", "model-password")
XSD = "{http://www.w3.org/2001/XMLSchema}"
# Response element -> its child elements, and item type -> its elements, in SAP's WSDL.
SAP_RESPONSES = {
    "GetProcessListResponse": ["process"],
    "GetInstancePropertiesResponse": ["properties"],
    "GetSystemInstanceListResponse": ["instance"],
    "ABAPGetWPTableResponse": ["workprocess"],
    "ABAPGetSystemWPTableResponse": ["workprocess"],
    "GetQueueStatisticResponse": ["queue"],
    "GetAlertTreeResponse": ["tree"],
    "ICMGetThreadListResponse": ["thread"],
    "ICMGetConnectionListResponse": ["connection"],
    "GetVersionInfoResponse": ["version"],
    "ABAPGetComponentListResponse": ["component"],
    "GetEnvironmentResponse": ["env"],
    "ParameterValueResponse": ["value"],
    "GetAccessPointListResponse": ["accesspoint"],
    "GetStartProfileResponse": ["name", "lines"],
    "GetAlertsResponse": ["RootTidName", "alert"],
    "HACheckConfigResponse": ["check"],
    "HACheckFailoverConfigResponse": ["check"],
    "HAGetFailoverConfigResponse": [
        "HAActive",
        "HAProductVersion",
        "HASAPInterfaceVersion",
        "HADocumentation",
        "HAActiveNode",
        "HANodes",
    ],
    "ABAPReadSyslogResponse": ["log"],
    "EnqGetLockTableResponse": ["lock"],
    "J2EEGetProcessListResponse": ["process"],
    "J2EEGetProcessList2Response": ["process"],
    "J2EEGetThreadListResponse": ["thread"],
    "J2EEGetThreadList2Response": ["thread"],
    "J2EEGetSessionListResponse": ["session"],
    "J2EEGetCacheStatisticResponse": ["cache"],
    "J2EEGetCacheStatistic2Response": ["cache"],
    "StartResponse": [],
    "StopResponse": [],
    "SendSignalResponse": [],
}
SAP_REQUESTS = {
    "GetSystemInstanceList": ["timeout"],
    "ABAPGetSystemWPTable": ["activeonly"],
    "ParameterValue": ["parameter"],
    "Start": ["runlevel"],
    "Stop": ["softtimeout", "IsSystemStop"],
    "SendSignal": ["pid", "signal"],
    "GetAlerts": ["RootTid"],
}
# SAP's AS Java (J2EE) types (the WSDL's J2EEProcess, J2EEThread, J2EECache, ...).
J2EE_PROCESS = [
    "telnetPort",
    "name",
    "pid",
    "type",
    "restart",
    "exitCode",
    "state",
    "statetext",
    "startTime",
    "elapsedTime",
    "restartCount",
    "errorCount",
    "cpu",
    "debug",
]
J2EE_THREAD = [
    "processname",
    "startTime",
    "updateTime",
    "taskupdateTime",
    "subtaskupdateTime",
    "task",
    "subtask",
    "name",
    "classname",
    "user",
    "pool",
    "state",
    "dispstatus",
]
J2EE_CACHE = [
    "processname",
    "type",
    "size",
    "attrSize",
    "keysSize",
    "cachedObjects",
    "usedObjects",
    "puts",
    "gets",
    "hits",
    "changes",
    "removes",
    "evictions",
    "instanceInvalidations",
    "clusterInvalidations",
    "updateTime",
    "dispstatus",
]
SAP_TYPES = {
    "HACheck": ["state", "category", "description", "comment"],
    "EnqLock": [
        "lock-name",
        "lock-arg",
        "lock-mode",
        "owner",
        "owner-vb",
        "use-count-owner",
        "use-count-owner-vb",
        "client",
        "user",
        "transaction",
        "object",
        "backup",
    ],
    "Alert": ["Object", "Attribute", "Value", "Description", "Time", "Tid", "Aid"],
    "SyslogEntry": ["Time", "Typ", "Client", "User", "Tcode", "MNo", "Text", "Severity"],
    "InstanceVersionInfo": ["Filename", "VersionInfo", "Time"],
    "ABAPComponent": ["component", "release", "patchlevel", "componenttype", "description"],
    "J2EEProcess": J2EE_PROCESS,
    "J2EEProcess2": [*J2EE_PROCESS, "clusterId"],
    "J2EEThread": J2EE_THREAD,
    "J2EEThread2": [*J2EE_THREAD, "index"],
    "J2EECache": ["cachename", *J2EE_CACHE],
    "J2EECache2": ["description", "owner", *J2EE_CACHE],
    "J2EESession": [
        "processname",
        "IdHash",
        "size",
        "timeout",
        "activeRequests",
        "startTime",
        "updateTime",
        "sticky",
        "corrupt",
        "backingStore",
    ],
    "AccessPoint": ["address", "port", "protocol", "processname", "active"],
    "OSProcess": [
        "name",
        "description",
        "dispstatus",
        "textstatus",
        "starttime",
        "elapsedtime",
        "pid",
    ],
}
NAME = "penguin3_D00"


@pytest.fixture(scope="module")
def fleet():
    sim = Simulation("sd-benchmark-2003", seed=5)
    sim.run(60)
    land = ModelLandscape(sim.snapshot, lambda: sim.scenario, load_thresholds())
    fleet = SapStartSrvFleet(land, credentials=Credentials(*AUTH)).start()
    yield fleet
    fleet.stop()


@pytest.fixture(scope="module")
def service(fleet):
    session = requests.Session()
    session.auth = AUTH
    client = Client(fleet.url(NAME) + "?wsdl", transport=Transport(session=session, timeout=10))
    yield client.service
    session.close()


def _served_schema(fleet) -> ET.Element:
    root = ET.fromstring(httpx.get(fleet.url(NAME) + "?wsdl", timeout=10).content)
    return root.find(f".//{XSD}schema")


def _children(node: ET.Element) -> list[str]:
    return [e.get("name") for e in node.iter(f"{XSD}element") if e is not node]


def test_served_element_names_are_saps(fleet) -> None:
    schema = _served_schema(fleet)
    elements = {e.get("name"): e for e in schema.findall(f"{XSD}element")}
    types = {t.get("name"): t for t in schema.findall(f"{XSD}complexType")}
    for op in OPERATIONS.values():
        expected = SAP_RESPONSES.get(op.response)
        if expected is not None:
            assert _children(elements[op.response]) == expected, op.response
        assert _children(elements[op.name]) == SAP_REQUESTS.get(op.name, []), op.name
    for name, fields in SAP_TYPES.items():
        assert _children(types[name]) == fields, name
    assert [e.get("type") for e in types["ArrayOfString"].iter(f"{XSD}element")] == ["xsd:string"]


ARGS = {
    "GetSystemInstanceList": {"timeout": 0},
    "ABAPGetSystemWPTable": {"activeonly": True},
    "ParameterValue": {"parameter": "rdisp/wp_no_dia"},
    "Start": {"runlevel": ""},
    "Stop": {"softtimeout": 0, "IsSystemStop": 0},
}


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
def test_zeep_calls_every_served_operation(fleet, service, operation) -> None:
    if operation == "SendSignal":
        pid = next(p.pid for p in service.GetProcessList() if p.name == "gwrd")
        service.SendSignal(pid=pid, signal="15")
        gray = [p.name for p in service.GetProcessList() if p.dispstatus == "SAPControl-GRAY"]
        service.Start(runlevel="")
        assert gray == ["gwrd"]
        texts = [entry.Text for entry in service.ABAPReadSyslog()]
        assert texts[-2:] == ["Process gwrd stopped", "Process gwrd started"]
        return
    if operation.startswith("Enq"):  # a dialog instance runs no enqueue server
        with pytest.raises(Fault, match="not available"):
            getattr(service, operation)()
        return
    if operation.startswith("J2EE"):  # an ABAP-only instance: no AS Java to ask
        with pytest.raises(Fault, match=f"^{operation}: not available on D00$"):
            getattr(service, operation)()
        return
    try:
        answer = getattr(service, operation)(**ARGS.get(operation, {}))
    finally:
        fleet.landscape.start_processes(NAME)  # after Stop
    if operation in ("Start", "Stop"):
        assert answer is None
    elif operation == "ParameterValue":
        dia = [wp for wp in service.ABAPGetWPTable() if wp.Typ == "DIA"]
        assert int(answer) == len(dia)  # the profile agrees with SM50
    elif operation == "GetEnvironment":
        assert "SAPSYSTEMNAME=BMK" in answer
    elif operation == "GetAlerts":
        assert answer.RootTidName == "penguin3_BMK_00"  # a healthy system: no alert needed
    elif operation == "HAGetFailoverConfig":
        assert answer.HAActive is False  # the model is not an HA system
    elif operation == "HACheckConfig":
        assert {c.description: c.state for c in answer}[
            "Redundant ABAP instance configuration"
        ] == ("SAPControl-HA-SUCCESS")
    elif operation == "HACheckFailoverConfig":
        assert not answer  # no cluster connector: no failover checks
    elif operation == "GetStartProfile":
        assert answer.name.endswith("BMK_D00_penguin3")
        assert "_P00 = disp+work" in answer.lines.item  # zeep keeps ArrayOfString's item
    elif operation == "ICMGetConnectionList":
        assert not answer  # the SD benchmark's ICM holds no connections
    else:
        assert answer, operation


def test_zeep_reads_the_ascs_enqueue_statistic_and_its_faults(fleet) -> None:
    session = requests.Session()
    session.auth = AUTH
    ascs = Client(fleet.url("penguin1_ASCS01") + "?wsdl", transport=Transport(session=session))
    stat = ascs.service.EnqGetStatistic()
    assert stat["locks-max"] > 0 and stat["replication-state"] == "SAPControl-GRAY"
    with pytest.raises(Fault, match="not available"):
        ascs.service.ABAPGetWPTable()
    # The lock table holds as many locks on average as EnqGetStatistic's locks-now says.
    tables, counts = set(), []
    for _ in range(60):
        rows = ascs.service.EnqGetLockTable() or []
        tables |= {r["lock-name"] for r in rows}
        counts.append(len(rows))
    now = [ascs.service.EnqGetStatistic()["locks-now"] for _ in range(60)]
    assert sum(counts) / 60 == pytest.approx(sum(now) / 60, abs=0.5)
    assert tables and all(t.isupper() for t in tables)  # SD tables (VBAK, ...)
    session.close()


def test_access_points_and_parameters_answer_from_the_model(fleet, service) -> None:
    [ap] = service.GetAccessPointList()
    assert (ap.address, ap.port, ap.protocol) == ("penguin3", fleet.ports()[NAME][0], "HTTP")
    everything = service.ParameterValue(parameter="").splitlines()
    assert "SAPSYSTEMNAME=BMK" in everything and "INSTANCE_NAME=D00" in everything
    with pytest.raises(Fault, match="Parameter nosuch/param not found"):
        service.ParameterValue(parameter="nosuch/param")


def test_zeep_sees_gsoaps_401_fault_without_credentials(fleet) -> None:
    """A protected call without credentials: HTTP 401 with gSOAP's fault, which zeep raises
    as a Fault whose message carries "401 Unauthorized" (what SAPControl clients match)."""
    anonymous = Client(
        fleet.url(NAME) + "?wsdl", transport=Transport(session=requests.Session(), timeout=10)
    )
    with pytest.raises(Fault) as err:
        anonymous.service.GetQueueStatistic()
    assert "401 Unauthorized" in err.value.message
    assert err.value.code == "SOAP-ENV:Client"


def test_j2ee_types_and_their_state_enumeration_are_saps(fleet) -> None:
    """A J2EE process's `state` is SAP's J2EE-PSTATE enumeration; the methods are refused
    on the ASCS too (the model's system is ABAP-only), with a fault zeep raises."""
    schema = _served_schema(fleet)
    [pstate] = [t for t in schema.findall(f"{XSD}simpleType") if t.get("name") == "J2EE-PSTATE"]
    assert [e.get("value") for e in pstate.iter(f"{XSD}enumeration")] == [
        f"SAPControl-J2EE-{v}"
        for v in ("STOPPED", "STARTING", "CORE-RUNNING", "RUNNING", "STOPPING", "MAINTENANCE")
    ] + ["SAPControl-J2EE-UNKNOWN"]
    types = {t.get("name"): t for t in schema.findall(f"{XSD}complexType")}
    state = {e.get("name"): e.get("type") for e in types["J2EEProcess2"].iter(f"{XSD}element")}
    assert state["state"] == "SAPControl:J2EE-PSTATE" and state["clusterId"] == "xsd:int"
    session = requests.Session()
    session.auth = AUTH
    ascs = Client(fleet.url("penguin1_ASCS01") + "?wsdl", transport=Transport(session=session))
    with pytest.raises(Fault, match=r"^J2EEGetProcessList2: not available on ASCS01$"):
        ascs.service.J2EEGetProcessList2()
    session.close()
