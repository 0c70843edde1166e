"""Disk growth of the native stack's state per day, per server, extrapolated from minutes.

Starts the native stack on free loopback ports in a fresh state directory with production
intervals (model at real time, Prometheus every 15 s, Telegraf every 10 s), waits
--warmup seconds so start-up writes (Perses' database, VictoriaLogs' first parts, InfluxDB's first
shards) do not count, then measures each server's data directory at the start and the
end of --minutes and extrapolates linearly to a day. The baseline in the same run is the
whole state directory: the ratio column is each server's share of it.

Linear extrapolation over minutes measures what is written before compaction (Prometheus'
WAL, InfluxDB's WAL and cache snapshots, VictoriaLogs' in-memory parts): an upper bound, since
compacted blocks are smaller. Usage:
    python bench/disk_growth.py [--minutes 5] [--warmup 60]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from wlmon.stack.runtime import Stack
from wlmon.stack.settings import StackSettings, free_port_environment

SERVERS = ("prometheus", "influxdb", "victorialogs", "alertmanager", "perses", "api")
DAY_S = 86_400
MIB = 1024 * 1024


def tree_bytes(path: Path) -> int:
    """Bytes the files under `path` occupy on disk (allocated blocks, as `du` counts)."""
    total = 0
    for f in path.rglob("*"):
        try:
            if f.is_file() and not f.is_symlink():
                total += f.stat().st_blocks * 512
        except OSError:  # a file compacted away while we walk
            continue
    return total


def sizes(stack: Stack) -> dict[str, int]:
    out = {name: tree_bytes(stack.data_dir / name) for name in SERVERS}
    out["state (all)"] = tree_bytes(stack.state)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--warmup", type=float, default=60.0)
    args = parser.parse_args()
    os.environ.update(free_port_environment())
    with tempfile.TemporaryDirectory(prefix="wlmon-growth-") as state:
        os.environ["WLMON_STATE_DIR"] = state
        stack = Stack(StackSettings())
        try:
            stack.up(on_event=lambda msg: print(msg, flush=True))
            time.sleep(args.warmup)
            before, t0 = sizes(stack), time.monotonic()
            time.sleep(args.minutes * 60)
            after, elapsed = sizes(stack), time.monotonic() - t0
        finally:
            stack.down()
    whole = (after["state (all)"] - before["state (all)"]) / elapsed * DAY_S
    print(f"measured over {elapsed:.0f} s after a {args.warmup:.0f} s warm-up")
    print(f"{'server':<14}{'MiB/day':>10}{'share':>8}")
    for name in (*SERVERS, "state (all)"):
        per_day = (after[name] - before[name]) / elapsed * DAY_S
        share = per_day / whole if whole else float("nan")
        print(f"{name:<14}{per_day / MIB:>10.0f}{share:>8.2f}")


if __name__ == "__main__":
    main()
