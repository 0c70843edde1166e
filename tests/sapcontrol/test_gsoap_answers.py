"""Requests a real sapstartsrv (gSOAP, SOAP 1.1) refuses are refused by the model's too, with
gSOAP's fault texts: a SOAP 1.2 envelope, an operation outside urn:SAPControl, one it does
not serve. Before issue 25 the first two were answered as if right."""

from __future__ import annotations

import httpx
import pytest

from exporters.model.engine import Simulation
from exporters.sapcontrol.schema import SOAP12_ENV, decode_response, encode_request
from exporters.sapstartsrv.landscape import ModelLandscape
from exporters.sapstartsrv.server import Credentials, SapStartSrvFleet


@pytest.fixture(scope="module")
def url():
    sim = Simulation("sd-benchmark-2003", seed=5)
    sim.run(30)
    fleet = SapStartSrvFleet(
        ModelLandscape(sim.snapshot, lambda: sim.scenario), credentials=Credentials("a", "b")
    ).start()
    yield fleet.url("penguin2_D00")
    fleet.stop()


def _fault(url: str, body: bytes) -> tuple[int, str, str]:
    r = httpx.post(url, content=body, headers={"Content-Type": "text/xml"}, timeout=10)
    try:
        decode_response("GetProcessList", r.content)
    except Exception as exc:  # the SOAPFault the answer carries
        return r.status_code, getattr(exc, "faultcode", ""), getattr(exc, "faultstring", "")
    raise AssertionError(f"answered: {r.text[:200]}")


def test_a_soap12_envelope_is_a_version_mismatch(url) -> None:
    body = encode_request("GetProcessList").replace(
        b"http://schemas.xmlsoap.org/soap/envelope/", SOAP12_ENV.encode()
    )
    assert _fault(url, body) == (
        500,
        "SOAP-ENV:VersionMismatch",
        "SOAP version mismatch or no SOAP message",
    )


def test_an_operation_in_another_namespace_is_not_implemented(url) -> None:
    body = encode_request("GetProcessList").replace(b"urn:SAPControl", b"urn:NotSAPControl")
    assert _fault(url, body) == (
        500,
        "SOAP-ENV:Client",
        "Method 'SAPControl:GetProcessList' not implemented: method name or namespace not "
        "recognized",
    )


def test_an_operation_it_does_not_serve_is_not_implemented(url) -> None:
    body = encode_request("GetProcessList").replace(b"GetProcessList", b"OSExecute")
    status, code, text = _fault(url, body)
    assert (status, code) == (
        500,
        "SOAP-ENV:Client",
    ) and "'SAPControl:OSExecute' not implemented" in text


def test_the_right_request_still_answers(url) -> None:
    r = httpx.post(url, content=encode_request("GetProcessList"), timeout=10)
    assert r.status_code == 200 and len(decode_response("GetProcessList", r.content)) == 4
