"""The native stack, started once for all integration tests (real servers, 127.0.0.1)."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator

import httpx
import pytest

from exporters.stack.runtime import Stack
from exporters.stack.settings import StackSettings

PORT_NAMES = (
    "grafana",
    "prometheus",
    "alertmanager",
    "loki",
    "loki_grpc",
    "influxdb",
    "influxdb_rpc",
    "telegraf",
    "exporter",
    "api",
)


def _free_ports(n: int) -> list[int]:
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


@pytest.fixture(scope="session")
def stack(tmp_path_factory) -> Iterator[Stack]:
    """Non-default ports and a fresh state dir, so a developer's own stack is untouched."""
    env = {
        f"WLMON_PORT_{name.upper()}": str(port)
        for name, port in zip(PORT_NAMES, _free_ports(10), strict=True)
    }
    env |= {
        "WLMON_STATE_DIR": str(tmp_path_factory.mktemp("wlmon-state")),
        "WLMON_SCRAPE_INTERVAL": "2s",
        "WLMON_TELEGRAF_INTERVAL": "2s",
        "WLMON_EXPORTER_SPEED": "5",
        "WLMON_GRAFANA_ADMIN_PASSWORD": "integration-test-password",
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    stack = Stack(StackSettings())
    try:
        stack.up()
        yield stack
    finally:
        stack.down()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def url(stack: Stack, service: str) -> str:
    return f"http://127.0.0.1:{getattr(stack.settings.ports, service)}"


def grafana(stack: Stack) -> httpx.Client:
    return httpx.Client(
        base_url=url(stack, "grafana"), auth=("admin", "integration-test-password"), timeout=30
    )
