"""Whether the API can still store what it is sent: a full disk (or the database's own cap,
`db_max_bytes`) must be seen, not hidden behind a bare 500 while /healthz says ok.

A write that fails is recorded here (the exception handlers of api/main.py); /healthz turns
`degraded` with the reason until a write succeeds again or `hold_s` passes, and so does a
disk with less than `min_free_bytes` free. Prometheus reads the same verdict from
`wlmon_api_storage_degraded` (alert SAPAPIStorageDegraded) and the failures from
`wlmon_api_storage_write_failures_total`.
"""

from __future__ import annotations

import errno
import shutil
import sqlite3
import threading
import time
from pathlib import Path

from prometheus_client import Counter, Gauge

WRITE_FAILURES = Counter(
    "wlmon_api_storage_write_failures_total",
    "Writes to the API's database that failed (disk full, its size cap, I/O errors).",
)
FREE_BYTES = Gauge(
    "wlmon_api_storage_free_bytes", "Free bytes on the filesystem of the API's database."
)
DEGRADED = Gauge(
    "wlmon_api_storage_degraded",
    "1 while /healthz reports the API's storage degraded (a recent failed write, a nearly "
    "full disk), else 0.",
)


def is_full(exc: BaseException) -> bool:
    """SQLite's SQLITE_FULL (the disk, or max_page_count) or the OS's ENOSPC."""
    if isinstance(exc, sqlite3.Error):
        return getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or (
            "database or disk is full" in str(exc)
        )
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


class StorageHealth:
    def __init__(self, db_path: Path, min_free_bytes: int, hold_s: float = 60.0) -> None:
        self.db_path = db_path
        self.min_free_bytes = min_free_bytes
        self.hold_s = hold_s
        self._lock = threading.Lock()
        self._failed: tuple[float, str] | None = None
        FREE_BYTES.set_function(self.free_bytes)
        DEGRADED.set_function(lambda: 1.0 if self.reasons() else 0.0)

    def free_bytes(self) -> int:
        return shutil.disk_usage(self.db_path.parent).free

    def failed(self, exc: BaseException) -> str:
        """Record a failed write; the message a client is answered with."""
        WRITE_FAILURES.inc()
        if is_full(exc):
            message = (
                f"the API's database {self.db_path} cannot grow (disk full or its size cap "
                f"reached; {self.free_bytes()} bytes free): nothing of this request was "
                "stored, what was stored before is kept"
            )
        else:
            message = f"the API's database {self.db_path} failed a write: {exc}"
        with self._lock:
            self._failed = (time.monotonic(), message)
        return message

    def succeeded(self) -> None:
        """A write went through: the storage takes data again."""
        if self._failed is not None:
            with self._lock:
                self._failed = None

    def reasons(self) -> list[str]:
        """Why the storage is degraded; empty when it is not."""
        out = []
        with self._lock:
            failed = self._failed
        if failed is not None:
            ago = time.monotonic() - failed[0]
            if ago < self.hold_s:
                out.append(f"storage: a write failed {ago:.0f} s ago: {failed[1]}")
        free = self.free_bytes()
        if free < self.min_free_bytes:
            out.append(
                f"storage: {free} bytes free on the disk of {self.db_path} "
                f"(below {self.min_free_bytes})"
            )
        return out
