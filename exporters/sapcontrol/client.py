"""A SAPControl SOAP client for one sapstartsrv: HTTP, HTTPS or its Unix socket.

Every call has a total deadline (the collector passes what is left of an instance's):
connecting, the TLS handshake, sending, the headers and every read of the body share it,
so a sapstartsrv that trickles its answer a byte at a time holds the calling worker no
longer than the deadline (a per-read timeout alone restarts with every byte). The
deadline is enforced under httpx, in httpcore's network backend: each socket operation
gets at most what is left of it.

An endpoint may name the address to connect to apart from its URL's host (WLMON_SAPCONTROL_
HOSTS): the URL keeps SAP's host name, so the TLS handshake sends it as SNI and the
certificate is checked against it, while the connection goes to the mapped address.

Credentials go only into the Authorization header: they are never part of a URL, an
error message or a log line (`scrub` removes any that reach one).
"""

from __future__ import annotations

import re
import ssl
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpcore
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


class SAPControlTimeout(SAPControlUnavailable):
    """Connected, but no complete answer within the deadline (slow or trickling)."""


class SAPControlFault(SAPControlError):
    """The service answered with a SOAP fault (e.g. a method the instance does not run)."""


class SAPControlServerError(SAPControlError):
    """HTTP 5xx without a SOAP fault: sapstartsrv failed inside (the SUSE exporter's
    maintainers tied sapstartsrv crashes to such answers)."""


class SAPControlInvalid(SAPControlError):
    """An answer that is not the method's SOAP response (truncated or malformed XML)."""


_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s]*@")


def scrub(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with credentials removed: a URL's user:password@ part, and each secret."""
    text = _USERINFO.sub(r"\1***@", text)
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


# The deadline of the call running in this thread (time.monotonic()); None: no deadline.
_call = threading.local()


def _left(timeout: float | None, kind: type[Exception]) -> float | None:
    """`timeout` clamped to what is left of this thread's call deadline."""
    deadline = getattr(_call, "deadline", None)
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise kind("the call's deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A socket whose every operation ends by the call's deadline."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        inner = self._inner.start_tls(
            ssl_context, server_hostname, _left(timeout, httpcore.ConnectTimeout)
        )
        return _DeadlineStream(inner)

    def get_extra_info(self, info: str):
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's own socket backend, with the call's deadline and the endpoint's mapped
    address (SNI and certificate checks still use the URL's host: httpcore passes the
    origin's host name to start_tls, not the address connected to)."""

    def __init__(self, address: str | None) -> None:
        self._inner = httpcore.SyncBackend()
        self._address = address

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        stream = self._inner.connect_tcp(
            self._address or host,
            port,
            _left(timeout, httpcore.ConnectTimeout),
            local_address,
            socket_options,
        )
        return _DeadlineStream(stream)

    def connect_unix_socket(self, path, timeout=None, socket_options=None):
        stream = self._inner.connect_unix_socket(
            path, _left(timeout, httpcore.ConnectTimeout), socket_options
        )
        return _DeadlineStream(stream)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def _transport(endpoint: Endpoint, verify: ssl.SSLContext | bool) -> httpx.HTTPTransport:
    """httpx's transport over the deadline backend. httpx.HTTPTransport takes no network
    backend, so its connection pool is replaced by one built with the same SSL context."""
    transport = httpx.HTTPTransport(verify=verify, uds=endpoint.uds)
    transport._pool = httpcore.ConnectionPool(
        ssl_context=httpx.create_ssl_context(verify=verify),
        uds=endpoint.uds,
        network_backend=_DeadlineBackend(endpoint.address),
    )
    return transport


@dataclass(frozen=True)
class Endpoint:
    """Where one sapstartsrv listens: `url`, or a Unix socket `uds` (url then only names it)."""

    url: str
    uds: str | None = None
    # The address to connect to where DNS does not know the URL's host (HOSTS); the URL's
    # host stays what TLS checks the certificate against.
    address: str | None = None

    def __post_init__(self) -> None:
        parts = urlsplit(self.url)
        if parts.username or parts.password:
            raise ValueError("sapcontrol endpoint: credentials do not belong in the URL")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"sapcontrol endpoint {self.url!r}: need http(s)://host:port/")

    @property
    def label(self) -> str:
        if self.uds:
            return f"unix:{self.uds}"
        return f"{self.url} (at {self.address})" if self.address else self.url

    @property
    def plain_http(self) -> bool:
        """Reached over the network without TLS (a Unix socket never leaves the host)."""
        return not self.uds and urlsplit(self.url).scheme == "http"


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
        if transport is None:
            transport = _transport(endpoint, verify)
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
        seconds = timeout_s if timeout_s is not None else self.timeout_s
        body = encode_request(operation, **params)
        _call.deadline = time.monotonic() + seconds
        try:
            with self._http.stream(
                "POST", "", content=body, timeout=httpx.Timeout(seconds)
            ) as response:
                data = bytearray()
                for chunk in response.iter_bytes():
                    data += chunk
                    if len(data) > MAX_RESPONSE:
                        raise SAPControlInvalid(f"{where}: answer larger than {MAX_RESPONSE} bytes")
                status = response.status_code
        except httpx.TimeoutException as exc:
            if isinstance(exc, httpx.ConnectTimeout):
                raise SAPControlUnavailable(
                    f"{where}: no connection within {seconds:.1f} s"
                ) from exc
            raise SAPControlTimeout(f"{where}: no complete answer within {seconds:.1f} s") from exc
        except httpx.TransportError as exc:
            raise SAPControlUnavailable(
                f"{where}: {type(exc).__name__}: {scrub(str(exc))}"
            ) from exc
        finally:
            _call.deadline = None
        if status == 401:
            raise SAPControlUnauthorized(
                f"{where}: HTTP 401, the method is protected (service/protectedwebmethods) "
                "and the monitoring user was refused (missing or wrong credentials, or a "
                "locked OS user)"
            )
        try:
            return decode_response(operation, bytes(data))
        except SOAPFault as fault:
            raise SAPControlFault(f"{where}: SOAP fault {fault.faultstring!r}") from fault
        except ValueError as exc:
            if status >= 500:
                raise SAPControlServerError(f"{where}: HTTP {status} without a SOAP fault") from exc
            raise SAPControlInvalid(f"{where}: HTTP {status}, {exc}") from exc

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

    def alerts(self, root_tid: str = "", timeout_s: float | None = None) -> Record:
        """GetAlerts: the open CCMS alerts under the node `root_tid` ('' for all), as
        {"RootTidName": ..., "alert": [Alert, ...]}."""
        return self.call("GetAlerts", timeout_s, RootTid=root_tid)

    def ha_failover_config(self, timeout_s: float | None = None) -> Record:
        """HAGetFailoverConfig: HAActive, HAProductVersion, ..., HAActiveNode, HANodes."""
        return self.call("HAGetFailoverConfig", timeout_s)

    def ha_check_config(self, timeout_s: float | None = None) -> list[Record]:
        return self.call("HACheckConfig", timeout_s)

    def ha_check_failover_config(self, timeout_s: float | None = None) -> list[Record]:
        return self.call("HACheckFailoverConfig", timeout_s)
