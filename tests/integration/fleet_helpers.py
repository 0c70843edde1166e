"""What the fleet tests share: a webhook that counts notifications, a fleet on free ports."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import psutil
import pytest

from wlmon.stack.fleet import FleetPorts, FleetStack, load_fleet
from wlmon.stack.settings import StackSettings

TOKEN = "fleet-test-token"


@dataclass
class Notification:
    received: float  # time.time()
    body: dict

    @property
    def group(self) -> dict:
        return self.body["groupLabels"]

    @property
    def alerts(self) -> list[dict]:
        return self.body["alerts"]


@dataclass
class Webhook:
    """Alertmanager's webhook receiver, real HTTP on 127.0.0.1: every POST kept."""

    port: int = 0
    notifications: list[Notification] = field(default_factory=list)
    refused: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def since(self, t: float) -> list[Notification]:
        with self.lock:
            return [n for n in self.notifications if n.received >= t]

    def matching(self, t: float, **group: str) -> list[Notification]:
        return [n for n in self.since(t) if all(n.group.get(k) == v for k, v in group.items())]


@contextmanager
def webhook() -> Iterator[Webhook]:
    box = Webhook()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            with box.lock:
                if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                    box.refused += 1
                    self.send_response(401)
                else:
                    box.notifications.append(Notification(time.time(), json.loads(body)))
                    self.send_response(200)
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    box.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield box
    finally:
        server.shutdown()
        server.server_close()


def free_base(span: int = 110, tries: int = 50) -> int:
    """A port base whose whole fleet range is free on 127.0.0.1 now."""
    for base in range(21000 + (os.getpid() % 40) * 250, 60000, 250)[:tries]:
        socks = []
        try:
            for port in range(base, base + span):
                sock = socket.socket()
                sock.bind(("127.0.0.1", port))
                socks.append(sock)
            return base
        except OSError:
            continue
        finally:
            for sock in socks:
                sock.close()
    raise RuntimeError("no free range of fleet ports on 127.0.0.1")


@contextmanager
def fleet_environment(state: Path, hook: Webhook, **extra: str) -> Iterator[FleetStack]:
    """WLMON_* for a fleet on free ports, its webhook at `hook`; restored after."""
    env = {
        "WLMON_STATE_DIR": str(state),
        "WLMON_FLEET_PORT_BASE": str(free_base()),
        "WLMON_FLEET_WEBHOOK_BASE": f"http://127.0.0.1:{hook.port}",
        "WLMON_API_TOKEN": TOKEN,
        "WLMON_EXPORTER_TOKEN": "fleet-exporter-token",
        "WLMON_PERSES_ADMIN_PASSWORD": "fleet-test-password",
        **extra,
    }
    with pytest.MonkeyPatch.context() as patch:
        for key, value in env.items():
            patch.setenv(key, value)
        stack = FleetStack(StackSettings())
        try:
            yield stack
        finally:
            stack.down()


def kill9(stack: FleetStack, name: str) -> None:
    """SIGKILL the service (no clean shutdown), then forget it so `up` starts it again."""
    running = stack.recorded()
    target = next(r for r in running if r.name == name)
    proc = psutil.Process(target.pid)
    proc.kill()
    proc.wait(10)
    stack._record([r for r in running if r.name != name])


def ports(stack: FleetStack) -> FleetPorts:
    return FleetPorts(stack.settings.fleet_port_base)


def sids(stack: FleetStack) -> list[str]:
    from wlmon.stack.fleet import fleet_path

    return [e.sid for e in load_fleet(fleet_path(stack.settings)).sids]
