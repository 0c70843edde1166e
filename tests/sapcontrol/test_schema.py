"""Recorded SAPControl answers decode into records named as SAP's WSDL names them."""

from __future__ import annotations

import pytest

from exporters.sapcontrol import schema
from tests.sapcontrol.conftest import recorded


def test_system_instance_list() -> None:
    rows = schema.decode_response("GetSystemInstanceList", recorded("GetSystemInstanceList.xml"))
    assert [(r["hostname"], r["instanceNr"], r["httpPort"], r["features"]) for r in rows] == [
        ("sapapp1", 0, 50013, "ABAP|GATEWAY|ICMAN|IGS"),
        ("sapapp2", 0, 50013, "ABAP|GATEWAY|ICMAN|IGS"),
        ("sapascs", 1, 50113, "MESSAGESERVER|ENQUE"),
        ("sapers", 2, 50213, "ENQREP"),
    ]
    assert rows[3]["dispstatus"] == schema.GRAY


def test_work_process_table_has_every_wsdl_field() -> None:
    rows = schema.decode_response("ABAPGetWPTable", recorded("ABAPGetWPTable.xml"))
    assert len(rows) == 14
    assert list(rows[0]) == [name for name, _ in schema.TYPES["WorkProcess"]]
    held = rows[4]
    assert (held["No"], held["Typ"], held["Status"], held["Reason"]) == (4, "DIA", "Hold", "ENQ")
    assert rows[2]["Action"] == "Sequential Read" and rows[2]["Table"] == "VBAK"


def test_queue_statistic_reads_typ_now_high_max_writes_reads() -> None:
    rows = schema.decode_response("GetQueueStatistic", recorded("GetQueueStatistic.xml"))
    dia = next(r for r in rows if r["Typ"] == "ABAP/DIA")
    assert dia == {
        "Typ": "ABAP/DIA",
        "Now": 5,
        "High": 35,
        "Max": 14000,
        "Writes": 479801,
        "Reads": 479796,
    }


def test_enqueue_statistic_uses_the_hyphenated_element_names() -> None:
    stat = schema.decode_response("EnqGetStatistic", recorded("EnqGetStatistic.xml"))
    assert stat["enqueue-requests"] == 109408
    assert stat["lock-time"] == pytest.approx(174.574351)
    assert stat["replication-state"] == schema.GRAY
    assert list(stat) == [name for name, _ in schema.ENQ_STATISTIC]


def test_a_bare_answer_with_elements_left_out_reads_them_as_absent() -> None:
    """Not 0: state 0 is no STATE-COLOR and 0 locks is a reading nobody made."""
    stat = schema.decode_response("EnqGetStatistic", recorded("EnqStatistic-bare.xml"))
    assert (stat["locks-now"], stat["enqueue-errors"], stat["lock-wait-time"]) == (1, 4, 7.0)
    assert stat["owner-now"] is None and stat["owner-state"] is None


def test_a_fault_is_raised_with_its_faultstring() -> None:
    with pytest.raises(schema.SOAPFault, match="Invalid Credentials"):
        schema.decode_response("GetAlertTree", recorded("Fault-InvalidCredentials.xml"))


def test_encoding_round_trips_what_decoding_reads() -> None:
    for operation, fixture in (
        ("ABAPGetWPTable", "ABAPGetWPTable.xml"),
        ("GetAlertTree", "GetAlertTree.xml"),
        ("EnqGetStatistic", "EnqGetStatistic.xml"),
        ("GetProcessList", "GetProcessList-abap.xml"),
    ):
        payload = schema.decode_response(operation, recorded(fixture))
        again = schema.decode_response(operation, schema.encode_response(operation, payload))
        assert again == payload, operation


def test_requests_name_the_operation_and_its_parameters() -> None:
    body = schema.encode_request("ABAPGetSystemWPTable", activeonly=True)
    assert b"<SAPControl:ABAPGetSystemWPTable><activeonly>true</activeonly>" in body
    assert schema.decode_request(body) == ("ABAPGetSystemWPTable", {"activeonly": True})
    with pytest.raises(schema.SOAPFault, match="not implemented: method name or namespace"):
        schema.decode_request(body.replace(b"ABAPGetSystemWPTable", b"OSExecute"))


def test_text_is_escaped() -> None:
    body = schema.encode_response("GetProcessList", [{"name": "a<b&c", "dispstatus": "x"}])
    assert schema.decode_response("GetProcessList", body)[0]["name"] == "a<b&c"


def test_icm_thread_and_connection_lists_read_the_wsdl_fields() -> None:
    threads = schema.decode_response("ICMGetThreadList", recorded("ICMGetThreadList.xml"))
    assert len(threads) == 10
    assert list(threads[1]) == [name for name, _ in schema.TYPES["ICMThread"]]
    assert (threads[1]["status"], threads[1]["requests"]) == ("Running", 5121)
    conns = schema.decode_response("ICMGetConnectionList", recorded("ICMGetConnectionList.xml"))
    assert [(c["protocol"], c["role"], c["local-port"]) for c in conns] == [
        ("HTTP", "Server", 8000),
        ("HTTPS", "Server", 44300),
        ("HTTPS", "Server", 44300),
        ("HTTP", "Client", 40122),
    ]
