"""Reading the CCMS alert tree GetAlertTree returns: node paths and their values.

A node's value is text in its `description` ("317 msec", "943 /min", "29 %", "193"), the
unit after the number; "-" means the monitor has no value for its last interval. Names
repeat in the tree (Dialog/ResponseTime and Update/PerformanceU1/ResponseTime), so nodes
are addressed by their path from the root, built from the `parent` indexes, and matched
on its trailing names (a real tree nests R3Services under more levels than the model's).
"""

from __future__ import annotations

import re

from exporters.sapcontrol.schema import Record

# Unit text -> factor to base units (seconds, ratio 0-1, per second, bytes).
UNITS = {
    "": 1.0,
    "msec": 1e-3,
    "ms": 1e-3,
    "sec": 1.0,
    "s": 1.0,
    "min": 60.0,
    "%": 0.01,
    "perc": 0.01,
    "/min": 1 / 60,
    "/h": 1 / 3600,
    "/s": 1.0,
    "/sec": 1.0,
    "entr": 1.0,
    "kb": 1024.0,
    "mb": 1024.0**2,
    "gb": 1024.0**3,
}
_VALUE = re.compile(r"^\s*(-?[\d.,]+)\s*(\S*)\s*$")


def parse_value(description: str | None) -> float | None:
    """The value of a node in base units; None for "-", empty or text CCMS has no number for."""
    match = _VALUE.match(description or "")
    if not match:
        return None
    number, unit = match.groups()
    factor = UNITS.get(unit.lower())
    if factor is None:
        return None
    try:
        return float(number.replace(",", "")) * factor
    except ValueError:
        return None


def paths(tree: list[Record]) -> list[tuple[tuple[str, ...], Record]]:
    """Every node with its path of names from the root (cycles and bad parents cut off)."""
    out = []
    for k, node in enumerate(tree):
        path, seen, cur = [], set(), k
        while 0 <= cur < len(tree) and cur not in seen:
            seen.add(cur)
            path.append(str(tree[cur]["name"]))
            cur = int(tree[cur]["parent"])
        out.append((tuple(reversed(path)), node))
    return out


Paths = list[tuple[tuple[str, ...], Record]]


def find(tree_paths: Paths, suffix: tuple[str, ...]) -> Record | None:
    """The first node whose path ends with `suffix`."""
    n = len(suffix)
    for path, node in tree_paths:
        if path[-n:] == suffix:
            return node
    return None
