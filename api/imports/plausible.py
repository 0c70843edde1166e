"""Time stamps an import keeps but flags: before 1990 or more than a day after the import.

Kept, not refused: the figures of a capture rest on its samples' spacing, which a wrong
clock on the captured server (a VM restored from a snapshot, a dead BIOS battery) leaves
intact, and a measurement cannot be repeated. What a wrong clock breaks is placing the
run beside other data (Prometheus, the log store, a second capture), so the run says so loudly."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

EARLIEST = datetime(1990, 1, 1, tzinfo=UTC)  # before Windows NT's counters and SAP R/3
AHEAD = timedelta(days=1)  # any time zone, a clock a little fast


def out_of_range(stamp: datetime, now: datetime) -> str | None:
    """Why `stamp` (UTC) is implausible for a capture imported at `now`; None if it is not."""
    if stamp < EARLIEST:
        return f"before {EARLIEST:%Y-%m-%d}"
    if stamp > now + AHEAD:
        return f"after the import's own time ({now:%Y-%m-%d %H:%M} UTC)"
    return None


def clock_warning(where: str, stamp: datetime, why: str, others: int) -> str:
    """The warning stored with the run: where the first implausible stamp is, and how many."""
    more = f" (and {others:,} more sample(s) like it)" if others else ""
    return (
        f"{where}: time stamp {stamp:%Y-%m-%d %H:%M:%S} UTC is {why}{more}: the clock of the "
        "captured system was probably wrong. The run is placed at these stamps, so it will "
        "not line up in time with other data; figures from the samples' spacing are unaffected"
    )
