"""The native stack, started once for all integration tests (real servers, 127.0.0.1)."""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.conftest import STACK_ENVIRONMENT
from tests.integration.helpers import Heartbeats, Mailbox, start_smtp_sink
from wlmon.stack.runtime import Stack
from wlmon.stack.settings import StackSettings, free_port_environment

PERSES_PASSWORD = "integration-test-password"
# How much faster than real time the model runs (rule windows scale by its inverse). The
# suite's figures assume 10; WLMON_TEST_SPEED=1 runs a test at real speed, as an operator
# sees it (the browser test's fault at speed 1 takes about 3 minutes to page, not 20 s).
SPEED = float(os.environ.get("WLMON_TEST_SPEED", "10"))
REPO = Path(__file__).resolve().parents[2]
# The Perses dashboards provisioned: the repository's, as `wlmon up` provisions them.
PERSES_DASHBOARDS = REPO / "dashboards" / "perses"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def mailbox() -> Iterator[Mailbox]:
    """A real SMTP server on 127.0.0.1 that Alertmanager mails to."""
    controller, box = start_smtp_sink(_free_port())
    box.port = controller.port
    yield box
    controller.stop()


@pytest.fixture(scope="session")
def heartbeats() -> Iterator[Heartbeats]:
    """Where the watchdog's heartbeats go (WLMON_WATCHDOG_URL), as a heartbeat service."""
    receiver = Heartbeats()
    yield receiver
    receiver.stop()


@pytest.fixture(scope="session")
def stack(tmp_path_factory, mailbox, heartbeats) -> Iterator[Stack]:
    """Non-default ports and a fresh state dir, so a developer's own stack is untouched.

    Time is compressed so alerts fire within a minute: the model runs 10x real time (per-step
    means do not change with speed), rule windows and for: durations are scaled by 0.1,
    Prometheus scrapes and evaluates every 2 s, Alertmanager groups within 1 s.
    """
    env = free_port_environment() | {
        "WLMON_STATE_DIR": str(tmp_path_factory.mktemp("wlmon-state")),
        "WLMON_SCRAPE_INTERVAL": "2s",
        "WLMON_TELEGRAF_INTERVAL": "2s",
        "WLMON_EXPORTER_SPEED": f"{SPEED:g}",
        "WLMON_ST05_TRACE_INTERVAL_S": "5",
        "WLMON_RULES_TIME_SCALE": f"{1 / SPEED:g}",
        "WLMON_AM_GROUP_WAIT": "1s",
        "WLMON_AM_GROUP_INTERVAL": "5s",
        "WLMON_SMTP_SMARTHOST": f"127.0.0.1:{mailbox.port}",
        "WLMON_SMTP_REQUIRE_TLS": "false",
        "WLMON_ALERT_EMAIL_CRITICAL": "oncall@wlmon.test",
        "WLMON_ALERT_EMAIL_WARNING": "noc@wlmon.test",
        "WLMON_WATCHDOG_URL": heartbeats.url,
        "WLMON_WATCHDOG_INTERVAL": "5s",
        "WLMON_PERSES_ADMIN_PASSWORD": PERSES_PASSWORD,
        "WLMON_API_TOKEN": "integration-test-token",
        "WLMON_EXPORTER_TOKEN": "integration-exporter-token",
        # The model's sapstartsrv is read as `wlmon up` reads it; Prometheus and Telegraf
        # scrape every 2 s here, so they share a reading for 4 s, and each instance's
        # deadline stays below the 2 s scrape timeout.
        "WLMON_SAPCONTROL_CACHE_S": "4",
        "WLMON_SAPCONTROL_TIMEOUT_S": "1.5",
    }
    # Set for the session and restored after (pytest's own MonkeyPatch, not a copy of it);
    # the tests outside tests/integration that run after it do not see them (tests/conftest).
    STACK_ENVIRONMENT.update(env)
    with pytest.MonkeyPatch.context() as patch:
        for key, value in env.items():
            patch.setenv(key, value)
        stack = Stack(StackSettings())
        try:
            stack.up()
            yield stack
        finally:
            stack.down()


def url(stack: Stack, service: str) -> str:
    if service == "victorialogs":  # HTTPS with basic auth: query it through logs(stack)
        return stack.logs_url()
    return f"http://127.0.0.1:{getattr(stack.settings.ports, service)}"


def logs(stack: Stack) -> httpx.Client:
    """The log store serves HTTPS with basic auth: a client trusting its CA, logged in."""
    return stack.logs_client()


def logsql(stack: Stack, query: str, since_ns: int | None = None) -> list[dict]:
    """The rows of a LogsQL query (/select/logsql/query, one JSON object per line), from
    `since_ns` (default: the last hour) until a minute from now."""
    start = since_ns if since_ns is not None else time.time_ns() - 3600 * 10**9
    with logs(stack) as client:
        r = client.post(
            "/select/logsql/query",
            data={
                "query": query,
                "start": str(start // 10**9 - 1),
                "end": str(int(time.time()) + 60),
                "limit": "100000",
            },
        )
    r.raise_for_status()
    return [json.loads(line) for line in r.text.splitlines() if line.strip()]


def exporter_auth(stack: Stack) -> dict[str, str]:
    """The header control writes to the exporter need."""
    return {"Authorization": f"Bearer {stack.exporter_token()}"}


@contextmanager
def perses(stack: Stack) -> Iterator[httpx.Client]:
    """A client signed in to Perses (native auth: the session cookies it sets at login)."""
    with httpx.Client(base_url=url(stack, "perses"), timeout=30) as client:
        r = client.post(
            "/api/auth/providers/native/login",
            json={"login": "admin", "password": PERSES_PASSWORD},
        )
        r.raise_for_status()
        yield client


def influx_token(stack: Stack) -> str:
    """InfluxDB runs with auth: "user:password", the token of its 2.x API."""
    user, password, _ = stack.influx_credentials()
    return f"{user}:{password}"
