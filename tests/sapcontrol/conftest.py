"""Recorded SAPControl answers served by an httpx mock transport, one system (SID EPP)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from exporters.sapcontrol.client import Endpoint, SAPControlClient
from exporters.sapcontrol.schema import decode_request

RECORDED = Path(__file__).parents[1] / "fixtures" / "sapcontrol"
PROTECTED = {
    "ABAPGetWPTable",
    "GetQueueStatistic",
    "GetAlertTree",
    "GetAlerts",
    "ABAPReadSyslog",
    "EnqGetStatistic",
    "ICMGetThreadList",
    "ICMGetConnectionList",
}
USER, PASSWORD = "eppadm", "s3cret-Pässword"


def recorded(name: str) -> bytes:
    return (RECORDED / name).read_bytes()


class RecordedSystem:
    """Answers like the EPP system's sapstartsrvs: by host and web method, from the files."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str | None]] = []
        self.down: set[str] = {"sapers"}  # the ERS is stopped: nothing listens
        self.protected = set(PROTECTED)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        host = request.url.host
        if host in self.down:
            raise httpx.ConnectError("Connection refused", request=request)
        operation, _ = decode_request(request.content)
        self.calls.append((host, operation, request.headers.get("authorization")))
        if operation in self.protected:
            expected = httpx.BasicAuth(USER, PASSWORD)._auth_header
            if request.headers.get("authorization") != expected:
                return httpx.Response(
                    401,
                    content=recorded("Fault-InvalidCredentials.xml"),
                    headers={"WWW-Authenticate": 'Basic realm="SAPControl"'},
                )
        kind = "ascs" if host == "sapascs" else "abap"
        files = {
            "GetSystemInstanceList": "GetSystemInstanceList.xml",
            "GetInstanceProperties": f"GetInstanceProperties-{host}.xml",
            "GetProcessList": f"GetProcessList-{kind}.xml",
            "ABAPGetWPTable": "ABAPGetWPTable.xml",
            "GetQueueStatistic": "GetQueueStatistic.xml",
            "GetAlertTree": "GetAlertTree.xml",
            "GetAlerts": "GetAlerts.xml",
            "ABAPReadSyslog": "ABAPReadSyslog.xml",
            "HAGetFailoverConfig": "HAGetFailoverConfig.xml",
            "EnqGetLockTable": "EnqGetLockTable.xml",
            "HACheckConfig": "HACheckConfig.xml",
            "HACheckFailoverConfig": "HACheckFailoverConfig.xml",
            "EnqGetStatistic": "EnqGetStatistic.xml",
            "ICMGetThreadList": "ICMGetThreadList.xml",
            "ICMGetConnectionList": "ICMGetConnectionList.xml",
            "GetVersionInfo": f"GetVersionInfo-{kind}.xml",
            "ABAPGetComponentList": "ABAPGetComponentList.xml",
        }
        return httpx.Response(200, content=recorded(files[operation]))


@pytest.fixture
def system() -> RecordedSystem:
    return RecordedSystem()


@pytest.fixture
def client_factory(system) -> Callable[[Endpoint], SAPControlClient]:
    def make(endpoint: Endpoint, auth=(USER, PASSWORD)) -> SAPControlClient:
        return SAPControlClient(endpoint, auth=auth, transport=httpx.MockTransport(system))

    return make
