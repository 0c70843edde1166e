"""A SAPControl SOAP client for one sapstartsrv: HTTP, HTTPS or its Unix socket.

Every call has its own timeout (the collector passes what is left of an instance's
deadline). Credentials go only into the Authorization header: they are never part of a
URL, an error message or a log line.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from exporters.sapcontrol.schema import (
    OPERATIONS,
    Record,
    SOAPFault,
    decode_response,
    encode_request,
)

MAX_RESPONSE = 16 * 1024 * 1024  # a system-wide WP table of a large system is far below


class SAPControlError(Exception):
    """A call that did not return an answer; the message names the endpoint and method."""


class SAPControlUnavailable(SAPControlError):
    """No answer in time, or no connection: the instance counts as down."""


class SAPControlUnauthorized(SAPControlError):
    """HTTP 401: the method is protected (service/protectedwebmethods) and the credentials
    are missing or wrong."""


class SAPControlFault(SAPControlError):
    """The service answered with a SOAP fault (e.g. a method the instance does not run)."""


@dataclass(frozen=True)
class Endpoint:
    """Where one sapstartsrv listens: `url`, or a Unix socket `uds` (url then only names it)."""

    url: str
    uds: str | None = None

    def __post_init__(self) -> None:
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"sapcontrol endpoint {self.url!r}: need http(s)://host:port/")
        if parts.username or parts.password:
            raise ValueError("sapcontrol endpoint: credentials do not belong in the URL")

    @property
    def label(self) -> str:
        return f"unix:{self.uds}" if self.uds else self.url


def tls_verify(verify: bool, ca_file: Path | None) -> ssl.SSLContext | bool:
    """httpx's `verify`: a context trusting `ca_file`, the system store, or no check."""
    if ca_file is not None:
        return ssl.create_default_context(cafile=str(ca_file))
    return verify


class SAPControlClient:
    """Calls the web methods of one sapstartsrv."""

    def __init__(
        self,
        endpoint: Endpoint,
        auth: tuple[str, str] | None = None,
        verify: ssl.SSLContext | bool = True,
        timeout_s: float = 3.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.timeout_s = timeout_s
        if transport is None and endpoint.uds:
            transport = httpx.HTTPTransport(uds=endpoint.uds, verify=verify)
        self._http = httpx.Client(
            base_url=endpoint.url,
            auth=httpx.BasicAuth(*auth) if auth else None,
            verify=verify,
            transport=transport,
            timeout=timeout_s,
            headers={"Content-Type": "text/xml; charset=utf-8", "SOAPAction": '""'},
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> SAPControlClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def call(
        self, operation: str, timeout_s: float | None = None, **params
    ) -> list[Record] | Record:
        """The decoded answer of `operation`; raises a SAPControlError subclass otherwise."""
        where = f"{self.endpoint.label} {operation}"
        if operation not in OPERATIONS:
            raise SAPControlError(f"{where}: method not known to wlmon")
        timeout = httpx.Timeout(timeout_s if timeout_s is not None else self.timeout_s)
        body = encode_request(operation, **params)
        try:
            with self._http.stream("POST", "", content=body, timeout=timeout) as response:
                data = bytearray()
                for chunk in response.iter_bytes():
                    data += chunk
                    if len(data) > MAX_RESPONSE:
                        raise SAPControlError(f"{where}: answer larger than {MAX_RESPONSE} bytes")
                status = response.status_code
        except httpx.TimeoutException as exc:
            raise SAPControlUnavailable(f"{where}: no answer within the timeout") from exc
        except httpx.TransportError as exc:
            raise SAPControlUnavailable(f"{where}: {type(exc).__name__}: {exc}") from exc
        if status == 401:
            raise SAPControlUnauthorized(
                f"{where}: HTTP 401, the method is protected (service/protectedwebmethods); "
                "give the monitoring user's credentials"
            )
        try:
            return decode_response(operation, bytes(data))
        except SOAPFault as fault:
            raise SAPControlFault(f"{where}: SOAP fault {fault.faultstring!r}") from fault
        except ValueError as exc:
            raise SAPControlError(f"{where}: HTTP {status}, {exc}") from exc

    # The methods a monitor needs, by their SAP names' meaning.
    def instance_properties(self, timeout_s: float | None = None) -> dict[str, str]:
        rows = self.call("GetInstanceProperties", timeout_s)
        return {r["property"]: r["value"] for r in rows}

    def system_instance_list(self, timeout_s: float | None = None) -> list[Record]:
        return self.call("GetSystemInstanceList", timeout_s)

    def process_list(self, timeout_s: float | None = None) -> list[Record]:
        return self.call("GetProcessList", timeout_s)

    def wp_table(self, timeout_s: float | None = None) -> list[Record]:
        return self.call("ABAPGetWPTable", timeout_s)

    def queue_statistic(self, timeout_s: float | None = None) -> list[Record]:
        return self.call("GetQueueStatistic", timeout_s)

    def enq_statistic(self, timeout_s: float | None = None) -> Record:
        return self.call("EnqGetStatistic", timeout_s)

    def alert_tree(self, timeout_s: float | None = None) -> list[Record]:
        return self.call("GetAlertTree", timeout_s)
