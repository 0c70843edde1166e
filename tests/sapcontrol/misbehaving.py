"""A sapstartsrv that misbehaves on demand: a real HTTP server on 127.0.0.1 answering
SAPControl SOAP, one per SAP instance, with a system of them whose instance list names
SAP host names (mapped to 127.0.0.1 by WLMON_SAPCONTROL_HOSTS).

Each method of each instance can be told to answer normally, slowly, byte by byte
(trickle), with HTTP 401, with an HTTP 500 without a SOAP body, with a SOAP fault (as
sapstartsrv sends "DpAttachStartService failed" while disp+work is down), or with a
truncated envelope. Every request is counted by method and answer, so tests prove what
the exporter asked and how often.
"""

from __future__ import annotations

import ssl
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

from exporters.sapcontrol.schema import decode_request, encode_fault, encode_response

RECORDED = Path(__file__).parents[1] / "fixtures" / "sapcontrol"
FILES = {
    "ABAPGetWPTable": "ABAPGetWPTable.xml",
    "GetQueueStatistic": "GetQueueStatistic.xml",
    "GetAlertTree": "GetAlertTree.xml",
    "EnqGetStatistic": "EnqGetStatistic.xml",
    "ICMGetThreadList": "ICMGetThreadList.xml",
    "ICMGetConnectionList": "ICMGetConnectionList.xml",
}
# service/protectedwebmethods = SDEFAULT: what the exporter calls that needs the user.
PROTECTED = set(FILES)
SID = "MIS"


@dataclass
class Instance:
    """One SAP instance as its sapstartsrv describes it."""

    host: str  # SAP's host name (SAPLOCALHOST)
    nr: int
    features: str
    name: str
    disp_work: str = "SAPControl-GREEN"  # the dispstatus of disp+work (ABAP instances)
    # method -> behaviour: "ok", "slow", "trickle", "401", "500", "fault", "truncated"
    behave: dict[str, str] = field(default_factory=dict)
    down: bool = False  # sapstartsrv stopped: the connection is closed at once

    @property
    def key(self) -> str:
        return f"{self.host}_{self.name}"


class System:
    """The misbehaving sapstartsrvs of one SAP system, one HTTP server per instance."""

    def __init__(
        self,
        instances: list[Instance],
        user: str = "misadm",
        password: str = "pw-Secret!",
        slow_s: float = 5.0,
        trickle_s: float = 0.2,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.instances = instances
        self.user, self.password = user, password
        self.slow_s, self.trickle_s = slow_s, trickle_s
        self.calls: Counter = Counter()  # (host_NAME, method, answer) -> count
        self.active = 0  # requests being answered now (a client that gave up ends its own)
        self.most_active = 0
        self._active_lock = threading.Lock()
        self.listing: list[Instance] | None = None  # what GetSystemInstanceList names
        self.hosted: dict[str, tuple[str, int]] = {}  # SAP host name -> listening port
        self._servers: dict[str, ThreadingHTTPServer] = {}
        self._stop = threading.Event()
        self._tls = tls
        self.ports: dict[str, int] = {}
        for inst in instances:
            self._serve(inst)

    # ------------------------------------------------------------------ servers
    def _serve(self, inst: Instance) -> None:
        system = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                with system._active_lock:
                    system.active += 1
                    system.most_active = max(system.most_active, system.active)
                try:
                    system._answer(self, inst, body)
                finally:
                    with system._active_lock:
                        system.active -= 1

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        if self._tls is not None:
            server.socket = self._tls.wrap_socket(server.socket, server_side=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self._servers[inst.key] = server
        self.ports[inst.key] = server.server_address[1]

    def stop(self) -> None:
        self._stop.set()
        for key in list(self._servers):
            self._close(key)

    def stop_instance(self, name: str) -> None:
        """sapstartsrv stopped: its port refuses connections from now on, and the
        connections a client kept open are closed."""
        inst = self.instance(name)
        inst.down = True
        self._close(inst.key)

    def _close(self, key: str) -> None:
        server = self._servers.pop(key, None)
        if server is not None:
            server.shutdown()
            server.server_close()

    def instance(self, name: str) -> Instance:
        """By `host_NAME`, or by NAME where one instance has it."""
        return next(i for i in self.instances if name in (i.key, i.name))

    def port(self, name: str) -> int:
        return self.ports[self.instance(name).key]

    def url(self, name: str, scheme: str = "http") -> str:
        """The URL by SAP's host name (HOSTS maps it to 127.0.0.1)."""
        return f"{scheme}://{self.instance(name).host}:{self.port(name)}/"

    def local_url(self, name: str, scheme: str = "http") -> str:
        return f"{scheme}://127.0.0.1:{self.port(name)}/"

    def count(self, name: str | None = None, method: str | None = None, answer: str | None = None):
        return sum(
            n
            for (i, m, a), n in self.calls.items()
            if (name is None or i == self.instance(name).key)
            and (method is None or m == method)
            and (answer is None or a == answer)
        )

    # ------------------------------------------------------------------ answers
    def _answer(self, handler: BaseHTTPRequestHandler, inst: Instance, body: bytes) -> None:
        if inst.down:
            handler.close_connection = True
            handler.connection.close()
            return
        operation, _ = decode_request(body)
        how = inst.behave.get(operation, "ok")
        expected = httpx.BasicAuth(self.user, self.password)._auth_header
        if (
            how == "ok"
            and operation in PROTECTED
            and handler.headers.get("Authorization") != expected
        ):
            how = "401"
        self.calls[(inst.key, operation, how)] += 1
        if how == "401":
            fault = encode_fault("Invalid Credentials", "SOAP-ENV:Client")
            return self._send(handler, 401, fault, {"WWW-Authenticate": 'Basic realm="SAPControl"'})
        if how == "500":
            return self._send(
                handler, 500, b"Internal Server Error", {"Content-Type": "text/plain"}
            )
        if how == "fault":
            return self._send(handler, 500, encode_fault("DpAttachStartService failed"))
        payload = self._payload(inst, operation)
        if how == "truncated":
            return self._send(handler, 200, payload[: len(payload) // 2])
        if how == "slow":
            self._stop.wait(self.slow_s)
        if how == "trickle":
            return self._trickle(handler, payload)
        return self._send(handler, 200, payload)

    def _payload(self, inst: Instance, operation: str) -> bytes:
        if operation == "GetSystemInstanceList":
            rows = [
                {
                    "hostname": i.host,
                    "instanceNr": i.nr,
                    "httpPort": self.port(i.key) if self._tls is None else 0,
                    "httpsPort": self.port(i.key) if self._tls is not None else 0,
                    "startPriority": "1",
                    "features": i.features,
                    "dispstatus": "SAPControl-GREEN",
                }
                for i in (self.listing if self.listing is not None else self.instances)
            ]
            return encode_response(operation, rows)
        if operation == "GetInstanceProperties":
            props = {
                "SAPSYSTEMNAME": SID,
                "SAPSYSTEM": f"{inst.nr:02d}",
                "SAPLOCALHOST": inst.host,
                "INSTANCE_NAME": inst.name,
            }
            rows = [
                {"property": k, "propertytype": "Attribute", "value": v} for k, v in props.items()
            ]
            return encode_response(operation, rows)
        if operation == "GetProcessList":
            if "ABAP" in inst.features:
                procs = [("disp+work", inst.disp_work), ("igswd_mt", "SAPControl-GREEN")]
            else:
                procs = [("msg_server", "SAPControl-GREEN"), ("enserver", "SAPControl-GREEN")]
            rows = [
                {
                    "name": n,
                    "description": n,
                    "dispstatus": c,
                    "textstatus": "Running",
                    "starttime": "",
                    "elapsedtime": "",
                    "pid": 1000 + k,
                }
                for k, (n, c) in enumerate(procs)
            ]
            return encode_response(operation, rows)
        return (RECORDED / FILES[operation]).read_bytes()

    def _send(self, handler, status: int, body: bytes, headers: dict | None = None) -> None:
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", "text/xml; charset=utf-8")
            for k, v in (headers or {}).items():
                handler.send_header(k, v)
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body)
        except OSError:
            pass  # the client gave up: what a real sapstartsrv sees too

    def _trickle(self, handler, body: bytes) -> None:
        """The whole answer, one byte every `trickle_s`: every read gets something in time,
        the answer takes len(body) * trickle_s."""
        try:
            handler.send_response(200)
            handler.send_header("Content-Type", "text/xml; charset=utf-8")
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            handler.wfile.flush()
            for k in range(len(body)):
                if self._stop.wait(self.trickle_s):
                    return
                handler.wfile.write(body[k : k + 1])
                handler.wfile.flush()
        except OSError:
            pass


def ascs_d00_d01() -> list[Instance]:
    """Three instances on three hosts: an ASCS and two dialog instances."""
    return [
        Instance("misascs", 1, "MESSAGESERVER|ENQUE", "ASCS01"),
        Instance("misapp1", 0, "ABAP|GATEWAY|ICMAN|IGS", "D00"),
        Instance("misapp2", 2, "ABAP|GATEWAY|ICMAN|IGS", "D02"),
    ]


def wait_until(check, timeout_s: float = 10.0) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.05)
    return check()


def tls_pair(directory: Path, names: list[str]) -> tuple[Path, ssl.SSLContext]:
    """A self-signed CA (its PEM file) and a server context whose certificate, issued by
    it, names `names` only (no IP address: a client connecting by 127.0.0.1 that checks
    the address instead of the host name fails)."""
    import datetime as dt

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = dt.datetime.now(dt.UTC)

    def cert(subject, issuer, key, signer, ca: bool, sans: list[str]):
        b = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if ca:
            b = b.add_extension(
                x509.KeyUsage(False, False, False, False, False, True, True, False, False),
                critical=True,
            )
        if sans:
            b = b.add_extension(
                x509.SubjectAlternativeName([x509.DNSName(n) for n in sans]), critical=False
            )
        return b.sign(signer, hashes.SHA256())

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = cert("wlmon test SAP CA", "wlmon test SAP CA", ca_key, ca_key, True, [])
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = cert(names[0], "wlmon test SAP CA", key, ca_key, False, names)
    pem = serialization.Encoding.PEM
    ca_file, cert_file, key_file = (directory / n for n in ("ca.pem", "cert.pem", "key.pem"))
    ca_file.write_bytes(ca.public_bytes(pem))
    cert_file.write_bytes(leaf.public_bytes(pem))
    key_file.write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert_file, key_file)
    return ca_file, server
