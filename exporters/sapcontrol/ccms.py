"""Reading the CCMS alert tree GetAlertTree returns: node paths and their values.

A node's value is text in its `description` ("317 msec", "943 /min", "29 %", "193"), the
unit after the number; "-" means the monitor has no value for its last interval. Numbers
come in the locale of the system: "0,5 sec" has a decimal comma, "1,260 /min" (observIQ's
sample) a thousands separator; see `number`. Names repeat in the tree
(Dialog/ResponseTime and Update/PerformanceU1/ResponseTime), so nodes are addressed by
their path from the root, built from the `parent` indexes, and matched on its trailing
names (a real tree nests R3Services under more levels than the model's). A tree whose
nodes lack `parent` (some clients record it so) is matched by the node's own name where
that name occurs once in the tree; a repeated name is then left unread, not guessed.
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
_GROUPED = re.compile(r"^-?[1-9]\d{0,2}(,\d{3})+$")  # 1,260 or 12,345,678


def number(text: str) -> float:
    """A CCMS number with either separator: with both '.' and ',' the last one is the
    decimal point; with only ',' it groups thousands when every group after the first has
    three digits and the first is not 0 ('1,260'), else it is the decimal comma ('0,5',
    '12,75'). Raises ValueError for text that is no number."""
    if "," in text and "." in text:
        decimal = "," if text.rfind(",") > text.rfind(".") else "."
        group = "." if decimal == "," else ","
        return float(text.replace(group, "").replace(decimal, "."))
    if "," in text:
        return float(text.replace(",", "") if _GROUPED.match(text) else text.replace(",", "."))
    return float(text)


def parse_value(description: str | None) -> float | None:
    """The value of a node in base units; None for "-", empty or text CCMS has no number for."""
    match = _VALUE.match(description or "")
    if not match:
        return None
    text, unit = match.groups()
    factor = UNITS.get(unit.lower())
    if factor is None:
        return None
    try:
        return number(text) * factor
    except ValueError:
        return None


def paths(tree: list[Record]) -> list[tuple[tuple[str, ...], Record]]:
    """Every node with its path of names from the root (cycles and bad parents cut off; a
    node without `parent` is a path of its own name)."""
    out = []
    for k, node in enumerate(tree):
        path, seen, cur = [], set(), k
        while 0 <= cur < len(tree) and cur not in seen:
            seen.add(cur)
            path.append(str(tree[cur]["name"]))
            parent = tree[cur].get("parent")
            if parent is None:
                break
            cur = int(parent)
        out.append((tuple(reversed(path)), node))
    return out


Paths = list[tuple[tuple[str, ...], Record]]


def find(tree_paths: Paths, suffix: tuple[str, ...]) -> Record | None:
    """The first node whose path ends with `suffix`; in a tree without parents, the node
    named `suffix[-1]` if no other node has that name."""
    n = len(suffix)
    for path, node in tree_paths:
        if path[-n:] == suffix:
            return node
    if any(node.get("parent") is None for _, node in tree_paths):
        named = [node for _, node in tree_paths if str(node["name"]) == suffix[-1]]
        if len(named) == 1 and named[0].get("parent") is None:
            return named[0]
    return None
