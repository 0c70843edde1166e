"""Requests a real sapstartsrv (gSOAP, SOAP 1.1) refuses are refused by the model's too, with
gSOAP's fault texts: a SOAP 1.2 envelope, an operation outside urn:SAPControl, one it does
not serve. Before issue 25 the first two were answered as if right."""

from __future__ import annotations

import socket

import httpx
import pytest

from alerts.thresholds import load_thresholds
from exporters.sapcontrol.client import Endpoint, SAPControlClient, SAPControlUnavailable
from exporters.sapcontrol.schema import SOAP12_ENV, decode_response, encode_request
from exporters.sapstartsrv.landscape import ModelLandscape
from exporters.sapstartsrv.server import Credentials, SapStartSrvFleet
from landscape_model.engine import Simulation


@pytest.fixture(scope="module")
def fleet():
    sim = Simulation("sd-benchmark-2003", seed=5)
    sim.run(30)
    fleet = SapStartSrvFleet(
        ModelLandscape(sim.snapshot, lambda: sim.scenario, load_thresholds()),
        credentials=Credentials("a", "b"),
    ).start()
    yield fleet
    fleet.stop()


@pytest.fixture(scope="module")
def url(fleet):
    return fleet.url("penguin2_D00")


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


def _raw(url: str, requests: list[bytes]) -> list[bytes]:
    """Send the requests one after another on one TCP connection; each answer's head."""
    host, port = url.split("//")[1].rstrip("/").split(":")
    heads = []
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        stream = sock.makefile("rb")
        for request in requests:
            sock.sendall(request)
            head = b""
            while not head.endswith(b"\r\n\r\n"):
                head += stream.readline()
            length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            stream.read(length)
            heads.append(head)
    return heads


def _post(body: bytes, chunked: bool = False) -> bytes:
    if chunked:
        half = len(body) // 2
        chunks = [body[:half], body[half:]]
        payload = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks) + b"0\r\n\r\n"
        framing = b"Transfer-Encoding: chunked\r\n"
    else:
        payload, framing = body, b"Content-Length: %d\r\n" % len(body)
    return (
        b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/xml; charset=utf-8\r\n"
        + framing
        + b"\r\n"
        + payload
    )


def test_http11_keeps_the_connection_and_reads_chunked_bodies(url) -> None:
    """gSOAP clients send HTTP/1.1, keep the connection and may chunk the request: three
    requests on one connection, the second chunked, all answered (before: HTTP/1.0 only,
    a chunked body was a 400)."""
    body = encode_request("GetProcessList")
    heads = _raw(url, [_post(body), _post(body, chunked=True), _post(body)])
    assert [h.split(b"\r\n")[0] for h in heads] == [b"HTTP/1.1 200 OK"] * 3


def test_a_malformed_chunked_body_is_a_client_fault(url) -> None:
    bad = b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n"
    [head] = _raw(url, [bad])
    assert head.startswith(b"HTTP/1.1 400")


def test_a_stopped_sapstartsrv_ends_its_kept_alive_connections(fleet) -> None:
    """The client's pool holds the socket; a stopped sapstartsrv still answers nothing."""
    name = "penguin4_D00"
    with SAPControlClient(Endpoint(fleet.url(name)), timeout_s=5) as client:
        assert client.process_list()
        fleet.stop_instance(name)
        try:
            with pytest.raises(SAPControlUnavailable):
                client.process_list()
        finally:
            fleet.start_instance(name)
        assert client.process_list()
