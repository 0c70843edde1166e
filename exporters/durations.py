"""Parses durations as the CLI takes them (90, 90s, 15m, 1h, 1h30m) and as Prometheus
writes them (2s, 1m30s, 500ms)."""

from __future__ import annotations

import re

_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|[smhd]?)")
_UNIT = {"": 1.0, "ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(text: str, *, allow_zero: bool = False) -> float:
    """Seconds in a duration such as '1h', '15m', '90s' or '1h30m'; '0s' only with
    `allow_zero` (an offset, where a length must be positive)."""
    cleaned = text.strip().lower()
    pos, total = 0, 0.0
    for match in _PART.finditer(cleaned):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _UNIT[match.group(2)]
        pos = match.end()
    if not cleaned or pos != len(cleaned) or total < 0 or (total == 0 and not allow_zero):
        raise ValueError(f"not a duration: {text!r} (use e.g. 90s, 15m, 1h, 1h30m)")
    return total
