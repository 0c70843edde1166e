"""Whether the API can still store what it is sent: a full disk (or the database's own cap,
`db_max_bytes`) must be seen, not hidden behind a bare 500 while /healthz says ok.

A write that fails is recorded beside the database (api/store.py WriteFailures), by
whichever process met it: the API (the exception handlers of api/main.py, which also see
what its worker processes raised), a real-time run's driver, the CLI. /healthz turns
`degraded` with the reason until a write succeeds again or `hold_s` passes, and so does a
disk with less than `min_free_bytes` free. Prometheus reads the same verdict from
`wlmon_api_storage_degraded` (alert SAPAPIStorageDegraded) and the failures of every
process from `wlmon_api_storage_write_failures_total`.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

from prometheus_client import REGISTRY, Gauge
from prometheus_client.core import CounterMetricFamily, Metric

from api.store import WriteFailures, is_full, refusal

__all__ = ["StorageHealth", "is_full", "refusal"]

FREE_BYTES = Gauge(
    "wlmon_api_storage_free_bytes", "Free bytes on the filesystem of the API's database."
)
DEGRADED = Gauge(
    "wlmon_api_storage_degraded",
    "1 while /healthz reports the API's storage degraded (a recent failed write, a nearly "
    "full disk), else 0.",
)


class StorageHealth:
    def __init__(
        self, db_path: Path, min_free_bytes: int, hold_s: float = 60.0, max_bytes: int | None = None
    ) -> None:
        self.db_path = db_path
        self.max_bytes = max_bytes
        self.min_free_bytes = min_free_bytes
        self.hold_s = hold_s
        self.failures = WriteFailures(db_path)
        FREE_BYTES.set_function(self.free_bytes)
        DEGRADED.set_function(lambda: 1.0 if self.reasons() else 0.0)
        _FAILURES.health = self

    def free_bytes(self) -> int:
        return shutil.disk_usage(self.db_path.parent).free

    def failed(self, exc: BaseException) -> str:
        """Record a failed write; the message a client is answered with."""
        message = refusal(self.db_path, self.max_bytes, exc)
        self.failures.record(message)
        return message

    def succeeded(self) -> None:
        """A write went through: the storage takes data again."""
        self.failures.ok()

    def reasons(self) -> list[str]:
        """Why the storage is degraded; empty when it is not."""
        out = []
        rec = self.failures.read()
        if rec.failed_at > rec.ok_at:
            ago = max(0.0, time.time() - rec.failed_at)
            if ago < self.hold_s:
                out.append(f"storage: a write failed {ago:.0f} s ago: {rec.message}")
        free = self.free_bytes()
        if free < self.min_free_bytes:
            out.append(
                f"storage: {free} bytes free on the disk of {self.db_path} "
                f"(below {self.min_free_bytes})"
            )
        return out


class _FailureCount:
    """`wlmon_api_storage_write_failures_total`: the count kept beside the database, so it
    holds the refusals of every process that writes it, and survives the API's restart."""

    health: StorageHealth | None = None

    def collect(self) -> Iterator[Metric]:
        health = self.health
        count = 0 if health is None else health.failures.read().count
        yield CounterMetricFamily(
            "wlmon_api_storage_write_failures",
            "Writes to the API's database that failed (disk full, its size cap, I/O errors), "
            "by the API, its workers, real-time runs and the CLI.",
            value=count,
        )


_FAILURES = _FailureCount()
REGISTRY.register(_FAILURES)
