"""A real VictoriaLogs for tests, on a free loopback port: HTTPS with a certificate of a CA
made for the test (wlmon/stack/pki.py) and basic auth, as `wlmon up` runs it. Skips, saying
how to build it, while the binary is not in the cache."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil
import pytest

from exporters.sinks.loki import LogStoreAccess
from wlmon.stack import pki
from wlmon.stack.components import COMPONENTS

USER = "wlmon-logs"
PASSWORD = "test-logs-password"


def binary() -> Path:
    path = COMPONENTS["victorialogs"].path("victoria-logs")
    if not path.is_file():
        pytest.skip(f"{path} missing: run `wlmon stack install --only victorialogs`")
    return path


@dataclass
class VictoriaLogs:
    url: str
    access: LogStoreAccess
    proc: subprocess.Popen
    log_file: Path

    def client(self, **kwargs) -> httpx.Client:
        return self.access.client(base_url=self.url, timeout=30, **kwargs)

    def flush(self) -> None:
        """What was taken becomes searchable now (else within a second: its docs)."""
        with self.client() as c:
            c.get("/internal/force_flush").raise_for_status()

    def rows(self, query: str) -> list[dict]:
        """LogsQL through /select/logsql/query: one JSON object per line of the answer."""
        self.flush()
        with self.client() as c:
            r = c.post("/select/logsql/query", data={"query": query, "limit": "100000"})
        r.raise_for_status()
        return [json.loads(line) for line in r.text.splitlines() if line.strip()]

    def count(self, query: str) -> int:
        """`query | stats count()` through /select/logsql/stats_query (Prometheus's vector)."""
        self.flush()
        with self.client() as c:
            r = c.post(
                "/select/logsql/stats_query",
                data={"query": f"{query} | stats count() as n", "time": str(time.time() + 60)},
            )
        r.raise_for_status()
        result = r.json()["data"]["result"]
        return int(result[0]["value"][1]) if result else 0

    def freeze(self) -> None:
        """SIGSTOP, then wait until the kernel shows it stopped: the signal is delivered
        asynchronously, and a push sent before it took hold was answered (CI run 42)."""
        os.kill(self.proc.pid, signal.SIGSTOP)
        deadline = time.monotonic() + 5
        while psutil.Process(self.proc.pid).status() != psutil.STATUS_STOPPED:
            if time.monotonic() > deadline:
                raise AssertionError(f"victorialogs {self.proc.pid} did not stop on SIGSTOP")
            time.sleep(0.01)

    def thaw(self) -> None:
        os.kill(self.proc.pid, signal.SIGCONT)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def victorialogs(
    directory: Path, *, retention: str = "30d", port: int | None = None
) -> Iterator[VictoriaLogs]:
    exe = binary()
    made, _ = pki.ensure(directory / "tls")
    password_file = directory / "password"
    password_file.write_text(PASSWORD)
    password_file.chmod(0o600)
    port = port or free_port()
    log_file = directory / "victorialogs.log"
    with log_file.open("wb") as log:
        proc = subprocess.Popen(
            [
                str(exe),
                f"-httpListenAddr=127.0.0.1:{port}",
                f"-storageDataPath={directory / 'data'}",
                "-tls",
                f"-tlsCertFile={made.cert('server')}",
                f"-tlsKeyFile={made.key('server')}",
                f"-httpAuth.username={USER}",
                f"-httpAuth.password=file://{password_file}",
                f"-retentionPeriod={retention}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    store = VictoriaLogs(
        f"https://127.0.0.1:{port}",
        LogStoreAccess(ca_file=made.ca, username=USER, password=PASSWORD),
        proc,
        log_file,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with store.client() as c:
                    if c.get("/insert/loki/ready").status_code == 200:
                        break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"VictoriaLogs did not start: {log_file.read_text()[-2000:]}")
            time.sleep(0.1)
        yield store
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGCONT)
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
