"""The stack's service logs rotate by size, keeping a bounded number of old files, with no
line lost or cut; the writer ends with its server."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

from tests.test_stack_runtime import _free_port, _stack_of
from wlmon.stack import runtime
from wlmon.stack.services import Service

MAX, KEEP = 4096, 2


def _lines(n: int) -> list[str]:
    return [f"line {k:05d} " + "x" * (k % 97) + "\n" for k in range(n)]


def test_the_writer_rotates_by_size_and_keeps_at_most_keep_old_files(tmp_path) -> None:
    log = tmp_path / "svc.log"
    sent = _lines(2000)  # ~120 KB: thirty times the size of one file
    writer = subprocess.Popen(
        [sys.executable, "-m", "wlmon.stack.logpipe", str(log), str(MAX), str(KEEP)],
        stdin=subprocess.PIPE,
    )
    writer.communicate("".join(sent).encode(), timeout=30)
    assert writer.returncode == 0
    files = sorted(tmp_path.iterdir())
    assert [f.name for f in files] == ["svc.log", "svc.log.1", "svc.log.2"]
    longest = max(len(s) for s in sent)
    assert all(f.stat().st_size <= MAX + longest for f in files)
    # Oldest first, the kept files are the last lines sent, whole and in order.
    kept = "".join((tmp_path / n).read_text() for n in ("svc.log.2", "svc.log.1", "svc.log"))
    assert kept.splitlines(keepends=True) == sent[-len(kept.splitlines()) :]
    assert len(kept) > 2 * MAX  # the old files hold real history, not a fragment


CHATTY_SERVER = """
import http.server, sys
for k in range(3000):
    print(f"starting {k:05d} " + "y" * 40, flush=True)
http.server.test(http.server.SimpleHTTPRequestHandler, port=int(sys.argv[1]), bind="127.0.0.1")
"""


def _writers(log: Path) -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter(["cmdline"]):
        cmd = p.info["cmdline"] or []
        if "wlmon.stack.logpipe" in cmd and str(log) in cmd:
            found.append(p)
    return found


def test_a_service_log_is_rotated_and_its_writer_ends_with_it(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(runtime, "_LOG_LIMITS", (str(MAX), str(KEEP)))
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    argv = [sys.executable, "-c", CHATTY_SERVER, str(port)]
    stack = _stack_of(tmp_path, monkeypatch, Service("chatty", argv, port, url, f"{url}/"))
    (running,) = stack.up()
    log = Path(running.log)
    try:
        assert _writers(log), "no log writer runs beside the server"
        deadline = time.monotonic() + 10
        while "starting 02999" not in log.read_text():
            assert time.monotonic() < deadline, "the server's last start line never arrived"
            time.sleep(0.05)
        names = sorted(p.name for p in log.parent.glob("chatty.log*"))
        assert names == ["chatty.log", "chatty.log.1", "chatty.log.2"]
    finally:
        stack.down()
    deadline = time.monotonic() + 10
    while _writers(log):
        assert time.monotonic() < deadline, "the log writer outlived its server"
        time.sleep(0.05)


# A server that logs all the time: a shell loop (the shell dies of SIGPIPE on a broken stdout
# unless it started with SIGPIPE ignored, as a Go server does) beside a Python HTTP server
# for the health check.
TICKING_SERVER = (
    '"$0" -c "import http.server, sys; http.server.test(http.server.SimpleHTTPRequestHandler,'
    ' port=int(sys.argv[1]), bind=\'127.0.0.1\')" "$1" & '
    "while :; do echo tick; sleep 0.02; done"
)


def test_a_server_outlives_its_dead_log_writer(tmp_path, monkeypatch) -> None:
    """The writer is a second process on the server's stderr: if it dies (killed, OOM), the
    server's next log line meets a broken pipe. It must cost the log, not the server."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    argv = [shutil.which("sh") or "/bin/sh", "-c", TICKING_SERVER, sys.executable, str(port)]
    stack = _stack_of(tmp_path, monkeypatch, Service("ticking", argv, port, url, f"{url}/"))
    (running,) = stack.up()
    log = Path(running.log)
    try:
        (writer,) = _writers(log)
        writer.kill()
        writer.wait(10)
        time.sleep(1)  # fifty lines into the broken pipe
        server = psutil.Process(running.pid)
        assert server.is_running() and server.status() != psutil.STATUS_ZOMBIE
        assert "tick" in log.read_text()
    finally:
        stack.down()
        # A server that died (the failure this test looks for) leaves its HTTP child behind:
        # stack.down stops only live recorded pids. Its session is its own.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(running.pid, signal.SIGKILL)
