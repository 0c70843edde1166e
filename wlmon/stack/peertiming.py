"""Whether the Alertmanager peers' --cluster.peer-timeout lets two of them send one
notification.

Every timer of an aggregation group is anchored on a rule evaluation: a group opens when
its first alert arrives (just after an evaluation; both Prometheus replicas evaluate a
rule group at the same phase, which Prometheus derives from the group's name and file,
not from the replica), flushes group_wait later, then every group_interval. So each
peer flushes a route's groups on one grid: an evaluation instant + k x g, g the greatest
common divisor of the evaluation interval and that route's group_wait and group_interval.

The peers' groups need not be in step on that grid: a peer that saw a group's last alert
resolve closes the group while the other, which flushed a few milliseconds before the
update arrived, keeps it open; the group opened anew on a later evaluation runs at
another phase. The peer at position k reads the gossiped notification log k x
peer-timeout after its own flush. When that instant is on the grid, it is an instant the
first peer flushes the same group, and neither sees the other's entry yet (gossip takes
a fraction of a second): both send. Measured here (tests/integration/
test_fleet_alertmanager.py, peer timeout 3 s on a 1 s grid): peer 2 sent at +3.001 s
after its flush, peer 1 flushed 30 ms later and sent too; peer 2's entry was gossiped
176 ms after it was logged. Off the grid, by at least a quarter of g for two peers,
every peer's entry has that long to arrive before the next one reads the log.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from exporters.durations import parse_duration

_MS = 1000


def grid_seconds(timers: Mapping[str, str]) -> float:
    """The step of the grid the peers flush on: the gcd of the timers (whole milliseconds;
    zero timers, a group_wait of 0s, add no step)."""
    steps = []
    for name, value in timers.items():
        try:
            steps.append(round(parse_duration(value, allow_zero=True) * _MS))
        except ValueError as exc:
            raise ValueError(f"{name}={value}: {exc}") from exc
    return math.gcd(*[s for s in steps if s > 0]) / _MS


def margin_seconds(grid: float, peers: int) -> float:
    """How far off the grid every peer's wait must be. Peer k waits k x peer-timeout, so
    1..peers-1 multiples must all miss it: a quarter of the step for two peers, less
    for more (a timeout of g/peers then spreads the waits evenly between grid points)."""
    return grid / (2 * peers)


def check_peer_timeout(peer_timeout: str, timers: Mapping[str, str], peers: int) -> None:
    """ValueError naming the setting, the grid and two good values when some peer's wait
    lands on (or too near) the instant another peer flushes."""
    if peers < 2:
        return
    try:
        timeout = parse_duration(peer_timeout)
    except ValueError as exc:
        raise ValueError(f"WLMON_FLEET_AM_PEER_TIMEOUT={peer_timeout}: {exc}") from exc
    grid = grid_seconds(timers)
    if grid == 0:  # no timer at all: nothing to fall on
        return
    margin = margin_seconds(grid, peers)
    for k in range(1, peers):
        wait = k * timeout
        off = abs(wait - round(wait / grid) * grid)
        if off < margin - 1e-9:
            lower = (math.floor(timeout / grid - 1 / peers) + 1 / peers) * grid
            good = [x for x in (lower, lower + grid) if x > 0]
            sources = ", ".join(f"{name}={value}" for name, value in timers.items())
            raise ValueError(
                f"WLMON_FLEET_AM_PEER_TIMEOUT={peer_timeout}: peer {k + 1} of {peers} would read"
                f" the notification log {wait:g} s after its flush, {off:g} s from the"
                f" {grid:g} s grid every peer flushes on ({sources}; at least {margin:g} s"
                f" off it is needed), so two peers can send the same notification; use e.g. "
                + " or ".join(_duration(x) for x in good)
            )


def _duration(seconds: float) -> str:
    return f"{round(seconds * _MS) / _MS:g}s"  # 22.5s: Alertmanager's flag takes Go's form
