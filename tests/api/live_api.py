"""The API as it runs in production: a uvicorn process on a free port of 127.0.0.1, for
tests that measure it from outside (no test client sharing its event loop or its GIL)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def live_api(db_path: Path, token: str, **settings: str) -> Iterator[str]:
    """The API's base URL while it runs; WLMON_API_<NAME> settings from `settings`."""
    port = free_port()
    env = os.environ | {"WLMON_API_DB_PATH": str(db_path), "WLMON_API_TOKEN": token}
    env |= {f"WLMON_API_{k.upper()}": v for k, v in settings.items()}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "api.main:create_app",
            "--factory",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the API did not start on {url}")
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
