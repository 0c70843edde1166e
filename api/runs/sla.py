"""An SLA file: bounds on any report figure, and tolerances per figure against a baseline.

    criteria:
      - figure: dialog_p95_s          # a figure's name, as GET /runs/{id}/check lists them
        max: 1.5                      # at most (and/or min: at least)
        name: p95 dialog response     # optional; the figure's name otherwise
      - figure: throughput_steps_per_s
        min: 480
    tolerances:                       # per figure, the change allowed against --baseline
      dialog_p95_s: 10                # percent

Read from YAML's node tree rather than plain data so every error names its line."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

FIGURE_NAME = re.compile(r"[A-Za-z0-9_.:\-]+")
CRITERION_KEYS = {"figure", "min", "max", "name"}


class SlaError(ValueError):
    """What is wrong in the SLA file, with its line."""


@dataclass(frozen=True)
class Bound:
    figure: str
    name: str
    line: int
    min: float | None = None
    max: float | None = None
    min_line: int | None = None  # the line of its own min / max key: what a testcase cites
    max_line: int | None = None


@dataclass(frozen=True)
class Tolerance:
    figure: str
    pct: float
    line: int


@dataclass
class Sla:
    bounds: list[Bound] = field(default_factory=list)
    tolerances: list[Tolerance] = field(default_factory=list)


def _line(node: Node) -> int:
    return node.start_mark.line + 1


def _fail(node: Node, message: str) -> SlaError:
    return SlaError(f"line {_line(node)}: {message}")


def _text(node: Node, what: str) -> str:
    if not isinstance(node, ScalarNode) or not node.value.strip():
        raise _fail(node, f"{what} must be text")
    return node.value.strip()


def _number(node: Node, what: str) -> float:
    if isinstance(node, ScalarNode):
        try:
            value = float(node.value)
        except ValueError:
            pass
        else:
            if value == value and abs(value) != float("inf"):
                return value
    raise _fail(node, f"{what} must be a number, not {getattr(node, 'value', '...')!r}")


def _figure(node: Node) -> str:
    name = _text(node, "figure")
    if not FIGURE_NAME.fullmatch(name):
        raise _fail(node, f"figure {name!r} is not a figure name (letters, digits, _ . : -)")
    return name


def _pairs(node: MappingNode) -> list[tuple[ScalarNode, Node]]:
    seen: set[str] = set()
    for key, _ in node.value:
        if not isinstance(key, ScalarNode):
            raise _fail(key, "keys must be text")
        if key.value in seen:
            raise _fail(key, f"{key.value!r} is given twice")
        seen.add(key.value)
    return node.value


def _criterion(node: Node) -> Bound:
    if not isinstance(node, MappingNode):
        raise _fail(node, "a criterion is a mapping: figure, and min and/or max")
    items = {k.value: (k, v) for k, v in _pairs(node)}
    for key, (k, _) in items.items():
        if key not in CRITERION_KEYS:
            raise _fail(k, f"unknown key {key!r} (known: {', '.join(sorted(CRITERION_KEYS))})")
    if "figure" not in items:
        raise _fail(node, "a criterion needs a figure")
    figure = _figure(items["figure"][1])
    low = _number(items["min"][1], "min") if "min" in items else None
    high = _number(items["max"][1], "max") if "max" in items else None
    if low is None and high is None:
        raise _fail(node, f"criterion {figure!r} needs min or max")
    if low is not None and high is not None and low > high:
        raise _fail(items["min"][0], f"min {low:g} is above max {high:g}")
    name = _text(items["name"][1], "name") if "name" in items else figure
    return Bound(
        figure,
        name,
        _line(node),
        low,
        high,
        _line(items["min"][0]) if "min" in items else None,
        _line(items["max"][0]) if "max" in items else None,
    )


def parse_sla(text: str) -> Sla:
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}: " if mark else ""
        raise SlaError(f"{where}not valid YAML: {exc.problem or exc}") from exc
    except yaml.YAMLError as exc:
        raise SlaError(f"not valid YAML: {exc}") from exc
    if root is None:
        raise SlaError("line 1: the SLA file is empty; it needs criteria or tolerances")
    if not isinstance(root, MappingNode):
        raise _fail(root, "the SLA file is a mapping with criteria and/or tolerances")
    sla = Sla()
    for key, value in _pairs(root):
        if key.value == "criteria":
            if not isinstance(value, SequenceNode):
                raise _fail(value, "criteria is a list of criteria (- figure: ...)")
            sla.bounds = [_criterion(item) for item in value.value]
        elif key.value == "tolerances":
            if not isinstance(value, MappingNode):
                raise _fail(value, "tolerances maps a figure to its tolerance in percent")
            for k, v in _pairs(value):
                pct = _number(v, f"the tolerance of {k.value!r}")
                if pct < 0:
                    raise _fail(v, f"the tolerance of {k.value!r} must not be negative")
                sla.tolerances.append(Tolerance(_figure(k), pct, _line(k)))
        else:
            raise _fail(key, f"unknown key {key.value!r} (known: criteria, tolerances)")
    return sla
