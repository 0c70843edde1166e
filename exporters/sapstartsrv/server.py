"""One SAPControl listener per model instance: SOAP 1.1 over HTTP (or TLS, or a Unix socket).

Each listener is a small threaded WSGI server like the exporter's own. It answers
`GET /?wsdl` with the WSDL and `POST /` (or `/SAPControl.cgi`, the address in SAP's WSDL)
with SOAP. Methods protected by the SDEFAULT setting of `service/protectedwebmethods`
answer HTTP 401 without valid basic-auth credentials. Without any credentials the answer is
gSOAP's own for an HTTP error (soap_send_fault with error 401): faultcode `SOAP-ENV:Client`,
faultstring "Error 401: HTTP 401 Unauthorized", which clients match on "401 Unauthorized";
with wrong ones, the "Invalid Credentials" fault sapcontrol prints as "FAIL: Invalid
Credentials". SDEFAULT protects "almost all methods, but
still permits an initial display of a system in SAP MMC/MC without authentication";
here that initial display is GetSystemInstanceList, GetProcessList and
GetInstanceProperties, everything else needs credentials.

For tests of the monitor, a listener can be stopped (connections refused) or stalled
(it accepts and answers nothing, like a hung sapstartsrv).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hmac
import logging
import os
import random
import secrets
import socket
import ssl
import struct
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from socketserver import ThreadingMixIn, UnixStreamServer
from wsgiref.simple_server import ServerHandler, WSGIRequestHandler, WSGIServer, make_server

from exporters.sapcontrol.schema import (
    SOAPFault,
    decode_request,
    encode_fault,
    encode_response,
    no_method,
)
from exporters.sapcontrol.settings import SapStartSrvSettings
from exporters.sapstartsrv.landscape import InstanceInfo, ModelLandscape
from exporters.sapstartsrv.wsdl import wsdl
from exporters.thresholds import Thresholds

log = logging.getLogger(__name__)
MAX_BODY = 64 * 1024
UNPROTECTED_SDEFAULT = frozenset(
    {"GetSystemInstanceList", "GetProcessList", "GetInstanceProperties"}
)
STALL_LIMIT_S = 600.0
# WSGI environ keys: the request came over the Unix socket from a trusted OS user; the
# connection must close after the answer (its request was not read to the end).
TRUSTED = "wlmon.trusted_peer"
CLOSE = "wlmon.close"
# What gSOAP's soap_set_fault writes for an HTTP status a service returns (stdsoap2.c,
# "Error %d: HTTP %d %s" with the status text; the fault code is SOAP-ENV:Client): the
# fault a real sapstartsrv sends with HTTP 401 when a protected method comes without
# credentials. Clients look for "401 Unauthorized" in it.
GSOAP_401_FAULTSTRING = "Error 401: HTTP 401 Unauthorized"
# A kept-alive connection idle this long is closed (gSOAP's default recv timeout is 0:
# forever; the model bounds its threads).
KEEPALIVE_IDLE_S = 30.0


def trusted_uids() -> frozenset[int]:
    """Who sapstartsrv trusts on its Unix socket: root and the user it runs as (<sid>adm on
    a real host, whoever runs the model here)."""
    return frozenset({0, os.getuid()})


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end of a Unix socket (SO_PEERCRED), or None
    where the platform does not say."""
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except (AttributeError, OSError):
        return None
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid


@dataclass(frozen=True)
class Credentials:
    """The OS user sapstartsrv authenticates (basic auth, UTF-8)."""

    username: str
    password: str

    def check(self, header: str | None) -> bool:
        if not header or not header.lower().startswith("basic "):
            return False
        try:
            user, _, password = base64.b64decode(header[6:]).decode("utf-8").partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return False
        return hmac.compare_digest(user, self.username) & hmac.compare_digest(
            password, self.password
        )


def read_body(environ: dict) -> bytes:
    """The request body, by Content-Length or chunked (Transfer-Encoding: chunked, as gSOAP
    clients send); ValueError when it is missing, too long or malformed."""
    stream = environ["wsgi.input"]
    if environ.get("HTTP_TRANSFER_ENCODING", "").strip().lower() == "chunked":
        data = bytearray()
        while True:
            line = stream.readline(1024)
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError as exc:
                raise ValueError("malformed chunked body") from exc
            if size == 0:
                while stream.readline(1024).strip():  # trailers, then the empty line
                    pass
                break
            if len(data) + size > MAX_BODY:
                raise ValueError(f"body must be 1..{MAX_BODY} bytes")
            data += stream.read(size)
            stream.readline(16)  # the chunk's CRLF
        if not data:
            raise ValueError(f"body must be 1..{MAX_BODY} bytes")
        return bytes(data)
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = -1
    if not 0 < length <= MAX_BODY:
        raise ValueError(f"body must be 1..{MAX_BODY} bytes")
    return stream.read(length)


def _respond(start_response: Callable, status: str, body: bytes, extra=()) -> list[bytes]:
    start_response(
        status,
        [
            ("Content-Type", "text/xml; charset=utf-8"),
            ("Content-Length", str(len(body))),
            *extra,
        ],
    )
    return [body]


class InstanceApp:
    """The WSGI application of one instance's sapstartsrv."""

    def __init__(
        self,
        landscape: ModelLandscape,
        name: str,
        ports: Callable[[], dict[str, tuple[int, int]]],
        stopped: Callable[[], set[str]],
        credentials: Credentials | None,
        unprotected: frozenset[str] = UNPROTECTED_SDEFAULT,
    ) -> None:
        self.landscape = landscape
        self.name = name
        self.ports = ports
        self.stopped = stopped
        self.credentials = credentials
        self.unprotected = unprotected
        self.stall = threading.Event()
        self.release = threading.Event()

    def __call__(self, environ, start_response) -> Iterable[bytes]:
        if self.stall.is_set():
            self.release.wait(STALL_LIMIT_S)
        method = environ["REQUEST_METHOD"]
        if method == "GET" and environ.get("QUERY_STRING", "").lower().startswith("wsdl"):
            scheme = environ.get("wsgi.url_scheme", "http")
            host = environ.get("HTTP_HOST") or f"{environ['SERVER_NAME']}:{environ['SERVER_PORT']}"
            return _respond(start_response, "200 OK", wsdl(f"{scheme}://{host}/SAPControl.cgi"))
        if method != "POST":
            environ[CLOSE] = True  # a body it did not read may follow
            return _respond(
                start_response, "405 Method Not Allowed", encode_fault("use POST or ?wsdl")
            )
        try:
            body = read_body(environ)
        except ValueError as exc:
            environ[CLOSE] = True  # the rest of the body is still on the connection
            return _respond(
                start_response, "400 Bad Request", encode_fault(str(exc), "SOAP-ENV:Client")
            )
        try:
            operation, params = decode_request(body)
            if (
                operation not in self.unprotected
                and not environ.get(TRUSTED)
                and not (
                    self.credentials and self.credentials.check(environ.get("HTTP_AUTHORIZATION"))
                )
            ):
                given = environ.get("HTTP_AUTHORIZATION")
                return _respond(
                    start_response,
                    "401 Unauthorized",
                    encode_fault("Invalid Credentials")
                    if given
                    else encode_fault(GSOAP_401_FAULTSTRING, "SOAP-ENV:Client"),
                    [("WWW-Authenticate", 'Basic realm="SAPControl"')],
                )
            return _respond(start_response, "200 OK", self._answer(operation, params))
        except SOAPFault as fault:
            return _respond(
                start_response,
                "500 Internal Server Error",
                encode_fault(fault.faultstring, fault.faultcode),
            )
        except ValueError as exc:
            return _respond(
                start_response, "400 Bad Request", encode_fault(str(exc), "SOAP-ENV:Client")
            )

    def _answer(self, operation: str, params: dict) -> bytes:
        land = self.landscape
        inst = land.instance(self.name)
        needs = {
            "ABAPReadSyslog": inst.abap,
            "ABAPGetWPTable": inst.abap,
            "ABAPGetSystemWPTable": inst.abap,
            "ABAPGetComponentList": inst.abap,
            "GetQueueStatistic": inst.abap,
            "EnqGetStatistic": inst.enqueue,
            "EnqGetLockTable": inst.enqueue,
            "ICMGetThreadList": inst.icm,
            "ICMGetConnectionList": inst.icm,
        }
        # The J2EE methods answer only on an AS Java instance (the landscape's `java`), and
        # are refused on the ABAP ones as the ABAP methods are on the ASCS.
        if operation.startswith("J2EE"):
            needs[operation] = "J2EE" in inst.features.split("|")
        if not needs.get(operation, True):
            raise SOAPFault(f"{operation}: not available on {inst.instance_name}")
        stopped = land.unavailable(inst, operation)
        if stopped:
            raise SOAPFault(stopped)
        match operation:
            case "GetSystemInstanceList":
                payload = land.system_instance_list(self.ports(), self.stopped())
            case "GetProcessList":
                payload = land.process_list(inst)
            case "GetInstanceProperties":
                payload = land.instance_properties(inst)
            case "ABAPGetWPTable":
                payload = land.wp_table(inst)
            case "ABAPGetSystemWPTable":
                payload = land.system_wp_table(bool(params.get("activeonly")))
            case "GetQueueStatistic":
                payload = land.queue_statistic(inst)
            case "EnqGetStatistic":
                payload = land.enq_statistic()
            case "GetAlertTree":
                payload = land.alert_tree(inst)
            case "J2EEGetProcessList2":
                payload = land.j2ee_process_list(inst)
            case "J2EEGetThreadList2":
                payload = land.j2ee_thread_list(inst)
            case "ICMGetThreadList":
                payload = land.icm_thread_list(inst)
            case "ICMGetConnectionList":
                payload = land.icm_connection_list(inst)
            case "GetVersionInfo":
                payload = land.version_info(inst)
            case "ABAPGetComponentList":
                payload = land.component_list(inst)
            case "GetEnvironment":
                payload = land.environment(inst)
            case "ParameterValue":
                name = str(params.get("parameter") or "")
                try:
                    payload = {"value": land.parameter_value(inst, name)}
                except KeyError as exc:
                    raise SOAPFault(f"Parameter {name} not found") from exc
            case "GetAccessPointList":
                http, https = self.ports().get(self.name, (0, 0))
                payload = land.access_points(inst, http, https)
            case "EnqGetLockTable":
                payload = land.enq_lock_table()
            case "GetAlerts":
                payload = land.alerts(inst, str(params.get("RootTid") or ""))
            case "GetStartProfile":
                payload = land.start_profile(inst)
            case "HAGetFailoverConfig":
                payload = land.ha_failover_config()
            case "HACheckConfig":
                payload = land.ha_check_config()
            case "HACheckFailoverConfig":
                payload = land.ha_check_failover_config()
            case "ABAPReadSyslog":
                payload = land.syslog(inst)
            case "Stop":
                land.stop_processes(inst.name)
                payload = {}
            case "Start":
                land.start_processes(inst.name)
                payload = {}
            case "SendSignal":
                try:
                    land.send_signal(inst.name, int(params["pid"]), str(params["signal"]))
                except KeyError as exc:
                    raise SOAPFault(f"Invalid argument: {exc.args[0]}") from exc
                payload = {}
            case _:  # pragma: no cover - decode_request rejects unknown operations
                raise SOAPFault(no_method(operation), "SOAP-ENV:Client")
        return encode_response(operation, payload)


class _ServerHandler(ServerHandler):
    http_version = "1.1"


class _Handler(WSGIRequestHandler):
    """HTTP/1.1 with keep-alive: requests one after another on a connection until the
    client closes it or asks to (`Connection: close`, HTTP/1.0)."""

    protocol_version = "HTTP/1.1"
    timeout = KEEPALIVE_IDLE_S

    def handle(self) -> None:
        self.server.track(self.connection, True)
        try:
            while not self.server.closing:
                try:
                    self.raw_requestline = self.rfile.readline(65537)
                except OSError:  # idle timeout, or the listener closed it
                    return
                if not self.raw_requestline or len(self.raw_requestline) > 65536:
                    return
                if not self.parse_request():
                    return
                environ = self.get_environ()
                handler = _ServerHandler(
                    self.rfile, self.wfile, self.get_stderr(), environ, multithread=False
                )
                handler.request_handler = self
                handler.run(self.server.get_app())
                if self.close_connection or environ.get(CLOSE):
                    return
        finally:
            self.server.track(self.connection, False)

    def log_message(self, format, *args) -> None:
        log.debug("sapstartsrv %s - %s", self.address_string(), format % args)

    def address_string(self) -> str:
        return str(self.client_address[0]) if self.client_address else "unix"

    def get_environ(self) -> dict:
        unix = self.connection.family == socket.AF_UNIX
        if unix:  # a Unix socket has no peer address
            self.client_address = ("unix", 0)
        environ = super().get_environ()
        if unix:
            # Trusted connect: on its Unix socket sapstartsrv lets root
            # and <sid>adm call protected methods without a password, by the peer's uid.
            environ[TRUSTED] = peer_uid(self.connection) in trusted_uids()
        return environ


class _Connections:
    """The open connections of a listener, so stopping it ends the kept-alive ones too (a
    stopped sapstartsrv answers nothing, however the client's pool holds its socket)."""

    closing = False

    def track(self, sock: socket.socket, open_: bool) -> None:
        if not hasattr(self, "_open"):
            self._open: set[socket.socket] = set()
            self._open_lock = threading.Lock()
        with self._open_lock:
            (self._open.add if open_ else self._open.discard)(sock)

    def close_connections(self) -> None:
        self.closing = True
        with getattr(self, "_open_lock", threading.Lock()):
            for sock in list(getattr(self, "_open", ())):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)


class _TCPServer(_Connections, ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


class _UnixServer(_Connections, ThreadingMixIn, UnixStreamServer):
    """WSGIServer's environment on a Unix stream socket (sapstartsrv's /tmp/.sapstream5NN13)."""

    daemon_threads = True
    application = None

    def server_bind(self) -> None:
        UnixStreamServer.server_bind(self)
        self.server_name, self.server_port = "localhost", 0
        self.base_environ = {
            "SERVER_NAME": "localhost",
            "GATEWAY_INTERFACE": "CGI/1.1",
            "SERVER_PORT": "0",
            "REMOTE_HOST": "",
            "CONTENT_LENGTH": "",
            "SCRIPT_NAME": "",
        }

    def get_app(self):
        return self.application

    def set_app(self, application) -> None:
        self.application = application


# How often the fleet looks whether an instance is moving (seconds): a refusal starts
# within this of the fault.
FAILOVER_POLL_S = 0.5


class _Listener:
    """One listening socket running one InstanceApp in a thread; can be stopped and reopened.

    A reopened TCP listener binds the port it had, so a restarted instance keeps its address.
    """

    def __init__(self, app: InstanceApp, make: Callable[[int], object], port: int = 0) -> None:
        self.app = app
        self._make = make
        self.bound_port = port
        self.server = None

    def start(self) -> None:
        self.server = self._make(self.bound_port)
        address = self.server.server_address
        if isinstance(address, tuple):
            self.bound_port = address[1]
        threading.Thread(
            target=self.server.serve_forever, name=f"sapstartsrv-{self.app.name}", daemon=True
        ).start()

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server.close_connections()
            self.server = None


class SapStartSrvFleet:
    """Every instance of the model answering as its own sapstartsrv on `host`.

    `base_port` 0 takes free ports; otherwise instance k (GetSystemInstanceList order)
    listens on base_port + k. With `tls` (an ssl.SSLContext) each also speaks HTTPS on a
    port of its own (`tls_base_port` + k, or a free one), beside plain HTTP as sapstartsrv
    serves 5<NN>13 and 5<NN>14 side by side, and is listed with both ports; with `uds_dir`,
    each also listens on `<uds_dir>/<host>/.sapstream5<NN>13` as sapstartsrv does on its
    own host.
    """

    def __init__(
        self,
        landscape: ModelLandscape,
        host: str = "127.0.0.1",
        base_port: int = 0,
        credentials: Credentials | None = None,
        unprotected: frozenset[str] = UNPROTECTED_SDEFAULT,
        tls: ssl.SSLContext | None = None,
        uds_dir: Path | None = None,
        tls_base_port: int = 0,
    ) -> None:
        self.landscape = landscape
        self.host = host
        self.base_port = base_port
        self.tls = tls
        self.uds_dir = uds_dir
        self._stopped: set[str] = set()
        # Listeners stopped because their instance is moving (ascs-failover), not by a test.
        self._moving: set[str] = set()
        self._done = threading.Event()
        self.apps: dict[str, InstanceApp] = {}
        self.tcp: dict[str, _Listener] = {}
        self.https: dict[str, _Listener] = {}
        self.unix: dict[str, _Listener] = {}
        for k, inst in enumerate(landscape.instances()):
            app = InstanceApp(
                landscape,
                inst.name,
                self.ports,
                lambda: set(self._stopped),
                credentials,
                unprotected,
            )
            self.apps[inst.name] = app
            port = base_port + k if base_port else 0
            self.tcp[inst.name] = _Listener(app, self._tcp_factory(app), port)
            if tls is not None:
                tls_port = tls_base_port + k if tls_base_port else 0
                self.https[inst.name] = _Listener(app, self._tcp_factory(app, tls), tls_port)
            if uds_dir is not None:
                self.unix[inst.name] = _Listener(app, self._unix_factory(app, inst))

    def _tcp_factory(
        self, app: InstanceApp, tls: ssl.SSLContext | None = None
    ) -> Callable[[int], object]:
        def make(port: int):
            server = make_server(
                self.host, port, app, server_class=_TCPServer, handler_class=_Handler
            )
            if tls is not None:
                server.socket = tls.wrap_socket(server.socket, server_side=True)
                server.base_environ["HTTPS"] = "on"
            return server

        return make

    def uds_path(self, inst: InstanceInfo) -> Path:
        return self.uds_dir / inst.host / f".sapstream5{inst.nr:02d}13"

    def _unix_factory(self, app: InstanceApp, inst: InstanceInfo) -> Callable[[int], object]:
        def make(_port: int):
            path = self.uds_path(inst)
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.exists():
                path.unlink()
            server = _UnixServer(str(path), _Handler)
            server.set_app(app)
            os.chmod(path, 0o660)
            return server

        return make

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> SapStartSrvFleet:
        for name in self.tcp:
            self.start_instance(name)
        self._done.clear()
        threading.Thread(target=self._watch_failover, name="sapstartsrv-ha", daemon=True).start()
        return self

    def _watch_failover(self) -> None:
        while not self._done.wait(FAILOVER_POLL_S):
            try:
                self.follow_failover()
            except Exception:  # a model being replaced; the next poll asks again
                log.exception("sapstartsrv: following the failover failed")

    def follow_failover(self) -> None:
        """While the ASCS moves, its old node's sapstartsrv refuses connections (as the
        cluster's stop of that instance leaves it); it answers again once moved."""
        moving = self.landscape.moving_instance()
        if moving is not None and moving in self.tcp and moving not in self._moving:
            log.info("sapstartsrv: %s moving (ascs-failover): connections refused", moving)
            self._moving.add(moving)
            self.stop_instance(moving)
        for name in sorted(self._moving - {moving}):
            self._moving.discard(name)
            self.start_instance(name)
            log.info("sapstartsrv: %s moved (ascs-failover): answering again", name)

    def stop(self) -> None:
        self._done.set()
        for app in self.apps.values():
            app.release.set()
        # shutdown() waits for serve_forever's next poll: stop them all at once.
        stoppers = [
            threading.Thread(target=listener.stop)
            for listener in [*self.tcp.values(), *self.https.values(), *self.unix.values()]
        ]
        for t in stoppers:
            t.start()
        for t in stoppers:
            t.join()

    def start_instance(self, name: str) -> None:
        self._stopped.discard(name)
        self.apps[name].stall.clear()
        for group in (self.tcp, self.https, self.unix):
            if name in group and group[name].server is None:
                group[name].start()

    def stop_instance(self, name: str) -> None:
        """sapstartsrv of `name` is gone: its connections are refused."""
        self._stopped.add(name)
        self.apps[name].release.set()
        for group in (self.tcp, self.https, self.unix):
            if name in group:
                group[name].stop()

    def stall_instance(self, name: str, stalled: bool = True) -> None:
        """`name` accepts connections but answers nothing (a hung sapstartsrv)."""
        app = self.apps[name]
        if stalled:
            app.release.clear()
            app.stall.set()
        else:
            app.stall.clear()
            app.release.set()

    # ------------------------------------------------------------------ addresses
    def ports(self) -> dict[str, tuple[int, int]]:
        return {
            name: (listener.bound_port, self.https[name].bound_port if self.https else 0)
            for name, listener in self.tcp.items()
        }

    def url(self, name: str, scheme: str | None = None) -> str:
        """Where instance `name` answers: over HTTPS when it speaks TLS, else (or with
        scheme "http") over HTTP."""
        http, https = self.ports()[name]
        if scheme is None:
            scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://{self.host}:{https if scheme == 'https' else http}/"

    def urls(self) -> dict[str, str]:
        return {name: self.url(name) for name in self.tcp}


def free_port_block(count: int, host: str = "127.0.0.1") -> int:
    """A base port with `count` consecutive free ports after it (tests, the stack).

    The block lies below the kernel's ephemeral range: a port released by the probe there
    cannot be handed to another socket bound to port 0 (another service's port picked
    meanwhile, an outgoing connection) before the listeners take it."""
    low = _ephemeral_low()
    candidates = list(range(10_000, max(10_001, low - count)))
    random.shuffle(candidates)
    for base in candidates[:200]:
        socks = []
        try:
            for k in range(count):
                s = socket.socket()
                socks.append(s)
                s.bind((host, base + k))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise OSError(f"no block of {count} free ports on {host} below {low}")


def _ephemeral_low(path: str = "/proc/sys/net/ipv4/ip_local_port_range") -> int:
    try:
        with open(path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default where the setting cannot be read


def fleet_from_settings(
    snapshot: Callable,
    scenario: Callable,
    settings: SapStartSrvSettings,
    thresholds: Thresholds,
) -> SapStartSrvFleet:
    """The model's sapstartsrv as WLMON_SAPSTARTSRV_... configures it (not yet started);
    `thresholds` set its CCMS alert levels."""
    landscape = ModelLandscape(
        snapshot, scenario, thresholds, ccms_interval_s=settings.ccms_interval_s
    )
    username = settings.username or f"{snapshot().sid.lower()}adm"
    if settings.password is None:
        # Nobody knows this one: protected methods then answer 401 to everyone.
        log.warning(
            "sapstartsrv: no WLMON_SAPSTARTSRV_PASSWORD(_FILE); protected methods refuse all"
        )
        password = secrets.token_urlsafe(24)
    else:
        password = settings.password.get_secret_value()
    tls = None
    if settings.tls_cert is not None:
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(settings.tls_cert, settings.tls_key)
    return SapStartSrvFleet(
        landscape,
        host=settings.host,
        base_port=settings.base_port,
        credentials=Credentials(username, password),
        tls=tls,
        uds_dir=settings.uds_dir,
        tls_base_port=settings.tls_base_port,
    )
