"""Reading the CCMS alert tree GetAlertTree returns: node paths and their values.

A node's value is text in its `description` ("317 msec", "943 /min", "29 %", "193"), the
unit after the number; "-" means the monitor has no value for its last interval. Numbers
come in the system's decimal notation, decimal point with ',' grouping (1,260.5) or decimal
comma with '.' grouping (1.260,5); a value such as "1,260" reads either way, 1260 or 1.26.
The notation is decided for the whole tree from the values that read only one way
("0,5 sec", "1,234.5 msec"), or given (WLMON_SAPCONTROL_DECIMAL); a value that reads two
ways when neither tells is left unread, never guessed (`tree_notation`, `parse_value`).
Names repeat in the tree
(Dialog/ResponseTime and Update/PerformanceU1/ResponseTime), so nodes are addressed by
their path from the root, built from the `parent` indexes, and matched on its trailing
names (a real tree nests R3Services under more levels than the model's). A tree whose
nodes lack `parent` (some clients record it so) is matched by the node's own name where
that name occurs once in the tree; a repeated name is then left unread, not guessed.
"""

from __future__ import annotations

import re

from exporters.sapcontrol.schema import Record

# The CCMS nodes a NOC pages on that wlmon reads by default (exporters/collectors/sapcontrol.py
# NOC_NODES says what each is); configured nodes (WLMON_SAPCONTROL_CCMS_NODES) take other names.
NOC_NODE_NAMES = ("Shortdumps Frequency", "AbortedJobs", "AbapErrorInUpdate", "ErrorsInWpSPO")

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
# A number in either notation: digits, or groups of three after a first group that does
# not start with 0 ("0,500" is no grouped number), then decimals.
NOTATIONS = {
    "point": (re.compile(r"-?(\d+|[1-9]\d{0,2}(,\d{3})+)(\.\d+)?"), ","),
    "comma": (re.compile(r"-?(\d+|[1-9]\d{0,2}(\.\d{3})+)(,\d+)?"), "."),
}


def readings(text: str) -> dict[str, float]:
    """The value `text` has in each notation it can be read in ("1,260": both, 1260 and
    1.26; "0,5": comma only; "97": both, alike; "1,2,3": none)."""
    out = {}
    for name, (pattern, group) in NOTATIONS.items():
        if pattern.fullmatch(text):
            decimal = "," if group == "." else "."
            out[name] = float(text.replace(group, "").replace(decimal, "."))
    return out


def _number_and_unit(description: str | None) -> tuple[str, float] | None:
    """(number text, unit factor) of a node's value; None for "-", empty or text CCMS has
    no number for."""
    match = _VALUE.match(description or "")
    if not match:
        return None
    text, unit = match.groups()
    factor = UNITS.get(unit.lower())
    return None if factor is None else (text, factor)


def tree_notation(descriptions: list[str | None], given: str | None = None) -> str | None:
    """'point' or 'comma' for one tree: `given` if set, else what its values that read one
    way only say; None when none says, or when they contradict each other."""
    if given:
        return given
    told = set()
    for description in descriptions:
        parsed = _number_and_unit(description)
        if parsed is not None:
            ways = readings(parsed[0])
            if len(ways) == 1:
                told.update(ways)
    return told.pop() if len(told) == 1 else None


def ambiguous(description: str | None) -> bool:
    """True if the node's value reads as two different numbers, one per notation."""
    parsed = _number_and_unit(description)
    return parsed is not None and len(set(readings(parsed[0]).values())) > 1


def parse_value(description: str | None, notation: str | None = None) -> float | None:
    """The value of a node in base units, in the tree's `notation` (tree_notation); None for
    "-", empty, text CCMS has no number for, a number not in the notation, and, without a
    notation, a number that reads two ways ("1,260")."""
    parsed = _number_and_unit(description)
    if parsed is None:
        return None
    text, factor = parsed
    ways = readings(text)
    if notation is not None:
        value = ways.get(notation)
    else:
        value = ways.popitem()[1] if len(set(ways.values())) == 1 else None
    return None if value is None else value * factor


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
