"""A service's output into `<state>/logs/<name>.log`, rotated by size.

Prometheus, Alertmanager, VictoriaLogs and InfluxDB only log to stderr, and the stack's servers run
detached (nothing of `wlmon up` stays to rotate a file they hold open): each server writes
into a pipe read by this process, which writes through the standard library's
RotatingFileHandler (at `max_bytes` the file becomes `.1`, `.1` becomes `.2`, ... and only
`keep` old files stay). It ends when the server's end of the pipe closes (the server
stopped, however). Run as `python -m wlmon.stack.logpipe PATH MAX_BYTES KEEP`."""

from __future__ import annotations

import io
import logging
import logging.handlers
import sys
from pathlib import Path
from typing import BinaryIO

MAX_BYTES = 10 * 1024 * 1024  # per file: the last few hours of a busy server's log
KEEP = 5  # old files kept: at most 6 × 10 MiB per service


def pump(source: BinaryIO, path: Path, max_bytes: int, keep: int) -> None:
    """Copy `source` line by line into `path`, rotated; returns at end of input."""
    handler = logging.handlers.RotatingFileHandler(
        path, maxBytes=max_bytes, backupCount=keep, encoding="utf-8", errors="replace"
    )
    handler.terminator = ""  # the lines keep their own line breaks
    text = io.TextIOWrapper(source, encoding="utf-8", errors="replace", newline="")
    try:
        for line in text:
            # A record per line: the handler rolls over before a line that would pass the
            # size, and flushes after each, so `wlmon` reads a failed start's last lines.
            handler.emit(logging.makeLogRecord({"msg": line}))
    finally:
        handler.close()


def main(argv: list[str]) -> int:
    path, max_bytes, keep = Path(argv[0]), int(argv[1]), int(argv[2])
    pump(sys.stdin.buffer, path, max_bytes, keep)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
