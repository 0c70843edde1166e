"""Scraping collectors for tests, and comparing Prometheus text expositions: structure
exactly, values with a tolerance.

Floats differ in their last digits across CPUs and numpy builds (`6.7882293382707015` vs
`6.788229338270701`), so a golden file cannot be compared bit for bit. Everything but the
sample values must match exactly and in order: HELP and TYPE lines, sample names and label
sets. Values match when they are close, NaN and infinities when they are the same.
"""

from __future__ import annotations

import difflib
import itertools
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest

from exporters.collectors.base import AnySourceCollector, ExporterCollector, SystemSource
from exporters.config import ExporterSettings
from exporters.registry import COLLECTORS, Sources
from landscape_model.engine import Snapshot

# A sample line: name, optional {labels}, value, optional timestamp. Label values may hold
# spaces and braces, so the value is the last field but one when a timestamp follows.
SAMPLE = re.compile(r"^(?P<series>[^\s{]+(?:\{.*\})?) (?P<value>\S+)(?: (?P<ts>-?\d+))?$")


@dataclass(frozen=True)
class Line:
    """One line of an exposition: its structure (the value masked) and its value."""

    structure: str
    value: float | None = None


def parse(text: str) -> list[Line]:
    lines = []
    for raw in text.splitlines():
        if not raw.strip() or raw.startswith("#"):
            lines.append(Line(raw))
            continue
        match = SAMPLE.match(raw)
        if match is None:
            raise ValueError(f"not a sample line: {raw!r}")
        ts = f" @{match['ts']}" if match["ts"] else ""
        lines.append(Line(match["series"] + ts, float(match["value"])))
    return lines


def values_match(actual: float, expected: float, rel: float, abs_: float) -> bool:
    if math.isnan(expected) or math.isnan(actual):
        return math.isnan(expected) and math.isnan(actual)
    return math.isclose(actual, expected, rel_tol=rel, abs_tol=abs_)


# The model's values come out of a fixed point the solver stops within 1e-8 of its scale
# (solver.solve): a tolerance below that compares rounding (numpy's summation order, the
# compiled kernels, another machine's libm), not the model. 1e-6 is above it and far below
# any deliberate change.
GOLDEN_REL = 1e-6


def golden_rewritten(golden: Path, text: str) -> bool:
    """WLMON_UPDATE_GOLDEN=1 rewrites `golden` (after a deliberate change) and the test is
    skipped, not passed: a rewritten file compared with itself proves nothing, and the diff
    is for a person to read. Refused under CI=true, where nobody reads it."""
    if os.environ.get("WLMON_UPDATE_GOLDEN") != "1":
        return False
    if os.environ.get("CI", "").lower() == "true":
        raise RuntimeError("WLMON_UPDATE_GOLDEN=1 is refused under CI=true: unset it")
    golden.write_text(text)
    return True


def differences(
    actual: str, expected: str, rel: float = GOLDEN_REL, abs_: float = 1e-12
) -> list[str]:
    """What differs, one message per difference; empty when the expositions match."""
    got, want = parse(actual), parse(expected)
    got_structure = [line.structure for line in got]
    want_structure = [line.structure for line in want]
    if got_structure != want_structure:
        diff = difflib.unified_diff(
            want_structure, got_structure, "golden", "scraped", n=1, lineterm=""
        )
        return ["structure differs:", *list(diff)[:40]]
    return [
        f"{w.structure}: {g.value!r}, golden {w.value!r}"
        for g, w in zip(got, want, strict=True)
        if w.value is not None
        and g.value is not None
        and not values_match(g.value, w.value, rel, abs_)
    ]


def scrape(system: SystemSource, collectors: Mapping[str, AnySourceCollector]) -> str:
    """One scrape's exposition; collector durations come from a fixed clock, 1 ms each."""
    ticks = itertools.count()
    registry = CollectorRegistry()
    registry.register(ExporterCollector(system, collectors, clock=lambda: next(ticks) * 0.001))
    return generate_latest(registry).decode()


def scrape_registered(snapshot: Callable[[], Snapshot], name: str) -> str:
    """The registered collector `name` alone, on the model, as the golden files show it
    (ST05 exports its top 10 statements)."""
    sources = Sources.model(snapshot)
    registration = next(r for r in COLLECTORS if r.name == name)
    collector = registration.build(sources, ExporterSettings(st05_top_n=10))
    return scrape(sources.system, {name: collector})
