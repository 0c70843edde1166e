"""Alertmanager's notification log survives a kill -9 (issue 38 item 6), on the real server.

Alertmanager writes its notification log to --storage.path only at maintenance (every
--data.maintenance-interval, default 15m) and at a clean stop. A kill -9 brings back the last
snapshot: if it still holds the alert as firing, the resolved alert Prometheus re-sends after
the restart is notified again ("resolved" twice). The stack snapshots every
settings.am_maintenance_interval (10 s): a resolved notice delivered longer ago than that
before the kill is not sent again. Both sides are measured here: the default 15m sends it
twice, the stack's interval once.
"""

from __future__ import annotations

import http.server
import json
import signal
import subprocess
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
import yaml

from exporters.durations import parse_duration
from tests.integration.helpers import eventually
from wlmon.stack.components import COMPONENTS
from wlmon.stack.install import status
from wlmon.stack.settings import StackSettings

pytestmark = pytest.mark.skipif(
    not status(COMPONENTS["alertmanager"]).installed, reason="alertmanager not installed"
)


class Receiver:
    """A webhook receiver keeping each notification's status (firing/resolved)."""

    def __init__(self) -> None:
        self.statuses: list[str] = []
        statuses = self.statuses

        class _Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                statuses.append(body["status"])
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    def __init__(self, directory: Path, receiver: Receiver, maintenance: str) -> None:
        self.directory = directory
        self.maintenance = maintenance
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = {
            "route": {
                "receiver": "r",
                "group_by": ["alertname"],
                "group_wait": "0s",
                "group_interval": "1s",
                "repeat_interval": "4h",
            },
            "receivers": [
                {"name": "r", "webhook_configs": [{"url": receiver.url, "send_resolved": True}]}
            ],
        }
        (directory / "am.yml").write_text(yaml.safe_dump(config))
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                str(COMPONENTS["alertmanager"].directory / "alertmanager"),
                f"--config.file={self.directory / 'am.yml'}",
                f"--storage.path={self.directory / 'data'}",
                f"--data.maintenance-interval={self.maintenance}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--cluster.listen-address=",
            ],
            stdout=subprocess.DEVNULL,
            stderr=(self.directory / "am.log").open("ab"),
        )
        eventually(lambda: httpx.get(f"{self.url}/-/ready", timeout=2).status_code == 200, 30, 0.2)

    def stop(self, sig: signal.Signals) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)
        self.proc.wait(timeout=30)

    def post(self, resolved: bool) -> None:
        now = datetime.now(UTC)
        alert = {
            "labels": {"alertname": "SAPNflogProbe", "severity": "warning"},
            "startsAt": (now - timedelta(minutes=5)).isoformat(),
            "endsAt": (
                now - timedelta(seconds=1) if resolved else now + timedelta(hours=1)
            ).isoformat(),
        }
        httpx.post(f"{self.url}/api/v2/alerts", json=[alert], timeout=5).raise_for_status()


def _resolved_notices_after_kill(tmp_path: Path, maintenance: str, wait_s: float) -> list[str]:
    """Fire, stop cleanly (a snapshot holding it firing, as a maintenance run would), resolve,
    wait `wait_s`, kill -9, restart, re-send the resolved alert as Prometheus does: the
    notifications the receiver got."""
    receiver = Receiver()
    server = Server(tmp_path, receiver, maintenance)
    try:
        server.start()
        server.post(resolved=False)
        eventually(lambda: receiver.statuses == ["firing"], 20, 0.2)
        server.stop(signal.SIGTERM)
        server.start()
        server.post(resolved=False)
        server.post(resolved=True)
        eventually(lambda: receiver.statuses == ["firing", "resolved"], 20, 0.2)
        time.sleep(wait_s)
        server.stop(signal.SIGKILL)
        server.start()
        for _ in range(3):  # Prometheus re-sends a resolved alert for 15 minutes
            server.post(resolved=True)
            time.sleep(2)
        return list(receiver.statuses)
    finally:
        if server.proc and server.proc.poll() is None:
            server.stop(signal.SIGKILL)
        receiver.stop()


def test_a_resolved_notice_is_not_sent_again_after_a_kill(tmp_path) -> None:
    interval = StackSettings.model_fields["am_maintenance_interval"].default
    before_dir, after_dir = tmp_path / "default", tmp_path / "stack"
    before_dir.mkdir()
    after_dir.mkdir()
    before = _resolved_notices_after_kill(before_dir, "15m", 1.0)
    after = _resolved_notices_after_kill(after_dir, interval, parse_duration(interval) + 3)
    print(f"\nkill -9 with --data.maintenance-interval=15m: {before}")
    print(f"kill -9 {parse_duration(interval) + 3:.0f} s after with {interval}: {after}")
    assert before == ["firing", "resolved", "resolved"]
    assert after == ["firing", "resolved"]
