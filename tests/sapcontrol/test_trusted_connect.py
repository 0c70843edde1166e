"""Trusted connect: on its Unix socket the model's sapstartsrv lets root and the user it
runs as (<sid>adm on a real host) call protected methods without a password, as SAP's
does; over TCP, and for any other user on the socket, they still need the credentials."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from pathlib import Path

import pytest

from alerts.thresholds import load_thresholds
from exporters.sapcontrol.client import Endpoint, SAPControlClient, SAPControlUnauthorized
from exporters.sapcontrol.schema import encode_request
from exporters.sapstartsrv.landscape import ModelLandscape
from exporters.sapstartsrv.server import Credentials, SapStartSrvFleet
from landscape_model.engine import Simulation

NAME = "penguin2_D00"


@pytest.fixture(scope="module")
def fleet():
    sim = Simulation("sd-benchmark-2003", seed=5)
    sim.run(60)
    land = ModelLandscape(sim.snapshot, lambda: sim.scenario, load_thresholds())
    # Not under pytest's private tmp dir: another user must be able to reach the socket.
    uds = Path(tempfile.mkdtemp(prefix="wlmon-uds-"))
    uds.chmod(0o755)
    fleet = SapStartSrvFleet(land, credentials=Credentials("bmkadm", "pw"), uds_dir=uds).start()
    yield fleet
    fleet.stop()
    shutil.rmtree(uds, ignore_errors=True)


def _socket(fleet) -> str:
    return str(fleet.uds_path(fleet.landscape.instance(NAME)))


def test_the_owner_calls_protected_methods_on_the_socket_without_a_password(fleet) -> None:
    with SAPControlClient(Endpoint("http://localhost/", uds=_socket(fleet)), timeout_s=10) as c:
        assert len(c.wp_table()) > 0
        assert len(c.call("GetQueueStatistic")) > 0


def test_over_tcp_the_same_call_needs_the_password(fleet) -> None:
    with (
        SAPControlClient(Endpoint(fleet.url(NAME)), timeout_s=10) as c,
        pytest.raises(SAPControlUnauthorized),
    ):
        c.wp_table()


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to call as another user")
def test_another_user_on_the_socket_needs_the_password(fleet) -> None:
    path = _socket(fleet)
    os.chmod(path, 0o666)  # let `nobody` connect at all: then only trust is in question
    body = encode_request("ABAPGetWPTable")
    request = (
        b"POST / HTTP/1.0\r\nHost: localhost\r\nContent-Type: text/xml\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: another OS user on the same host
        status = b"error"
        try:
            os.setuid(65534)
            with socket.socket(socket.AF_UNIX) as sock:
                sock.settimeout(10)
                sock.connect(path)
                sock.sendall(request)
                status = sock.recv(64).split(b" ")[1]
        finally:
            os.write(write, status)
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    assert os.read(read, 64) == b"401"
    os.close(read)
