"""Where a monitored run's data has holes: the exporter could not be scraped, or no sample
arrived at all (Prometheus itself down, a scrape that came back empty). A report that
averages over a hole without saying so reads a quiet system where there was no data."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

EXPORTER_DOWN = "exporter_down"
NO_DATA = "no_data"


def spans(mask: np.ndarray) -> list[tuple[int, int]]:
    """[first, last] step index of each run of True in `mask`."""
    out: list[tuple[int, int]] = []
    start = None
    for k, flag in enumerate(mask):
        if flag and start is None:
            start = k
        elif not flag and start is not None:
            out.append((start, k - 1))
            start = None
    if start is not None:
        out.append((start, len(mask) - 1))
    return out


def gaps(
    grid: np.ndarray, step: float, down: np.ndarray, missing: np.ndarray, speed: float = 1.0
) -> list[dict]:
    """Gaps over the steps ending at `grid` (unix seconds, `step` apart): `down` where a scrape
    of the exporter failed, `missing` where no workload sample arrived. A missing step the
    exporter's outage explains is not listed twice. `start_s`/`end_s`: from the window's
    start in the system's own time (`speed` simulated seconds per wall second), the clock
    the run's series and steady state use."""
    found = [(EXPORTER_DOWN, a, b) for a, b in spans(down)]
    found += [(NO_DATA, a, b) for a, b in spans(missing & ~down)]
    out = []
    for kind, a, b in sorted(found, key=lambda g: g[1]):
        start, end = float(grid[a] - step), float(grid[b])
        out.append(
            {
                "kind": kind,
                "start": datetime.fromtimestamp(start, UTC).isoformat(),
                "end": datetime.fromtimestamp(end, UTC).isoformat(),
                "duration_s": end - start,
                "start_s": a * step * speed,
                "end_s": (b + 1) * step * speed,
            }
        )
    return out


def describe(found: list[dict]) -> str:
    """One line for a run's message: 'gaps: exporter down 30 s from 12:00:01Z; ...'."""
    words = {EXPORTER_DOWN: "exporter down", NO_DATA: "no data"}
    parts = [f"{words[g['kind']]} {g['duration_s']:.0f} s from {g['start']}" for g in found]
    return "gaps: " + "; ".join(parts) if parts else ""


def longest_clear(found: list[dict], start_s: float, end_s: float) -> float:
    """The longest stretch of [start_s, end_s] (run seconds) that no gap overlaps."""
    edge, best = start_s, 0.0
    for g in sorted(found, key=lambda g: g.get("start_s", 0.0)):
        if "start_s" not in g:
            continue  # a record from before gaps carried run seconds: cannot place it
        if g["end_s"] <= start_s or g["start_s"] >= end_s:
            continue
        best = max(best, g["start_s"] - edge)
        edge = max(edge, g["end_s"])
    return max(best, end_s - edge, 0.0)


GAP_FACTOR = 1.5  # a step this many times the capture's usual interval is a hole


def sample_gaps(times: np.ndarray, start: datetime) -> list[dict]:
    """Holes in a capture of its own clock (PerfMon): wherever two samples lie more than
    GAP_FACTOR times the usual interval (the median step) apart, listed as Prometheus gaps
    are (`no_data`), from the last sample before the hole to the first after it; `times`
    in seconds from `start`."""
    if times.size < 3:
        return []
    steps = np.diff(times)
    usual = float(np.median(steps))
    out = []
    for k in np.nonzero(steps > GAP_FACTOR * usual)[0]:
        a, b = float(times[k]), float(times[k + 1])
        out.append(
            {
                "kind": NO_DATA,
                "start": (start + timedelta(seconds=a)).isoformat(),
                "end": (start + timedelta(seconds=b)).isoformat(),
                "duration_s": b - a,
                "start_s": a,
                "end_s": b,
            }
        )
    return out
