"""Every collector's exposition against its golden file, and through promtool.

Set WLMON_UPDATE_GOLDEN=1 to rewrite tests/golden/<collector>.prom after a deliberate
change, and review the diff. Collector durations come from a fixed clock.
"""

from __future__ import annotations

import itertools
import os
import subprocess
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from exporters.collectors.base import ExporterCollector
from exporters.collectors.dbbuffer import DBBufferCollector
from exporters.collectors.oscounters import OSCountersCollector
from exporters.collectors.sapbuffer import SAPBufferCollector
from exporters.collectors.st03 import ST03Collector
from exporters.collectors.st05 import ST05Collector
from tests.collectors.exposition import differences
from tests.promtool import promtool_path

GOLDEN = Path(__file__).parents[1] / "golden"
BUILD = {
    "st03": ST03Collector,
    "st05": lambda source: ST05Collector(source, top_n=10),
    "dbbuffer": DBBufferCollector,
    "sapbuffer": SAPBufferCollector,
    "oscounters": OSCountersCollector,
}
# What promtool's linter says that we keep on purpose: node_exporter's own metric names.
PROMTOOL_ACCEPTED = {
    "oscounters": {
        f"node_memory_{field}_bytes metric names should be written in 'snake_case' not 'camelCase'"
        for field in ("MemAvailable", "MemTotal")
    }
}


def exposition(sim, name: str) -> str:
    ticks = itertools.count()
    registry = CollectorRegistry()
    registry.register(
        ExporterCollector(
            sim.snapshot,
            [BUILD[name](sim.snapshot)],
            clock=lambda: next(ticks) * 0.001,  # a fixed clock keeps durations stable
        )
    )
    return generate_latest(registry).decode()


@pytest.mark.parametrize("name", BUILD)
def test_exposition_matches_golden_file_and_passes_promtool(sim, name: str) -> None:
    text = exposition(sim, name)
    golden = GOLDEN / f"{name}.prom"
    if os.environ.get("WLMON_UPDATE_GOLDEN") == "1":
        golden.write_text(text)
    problems = differences(text, golden.read_text())
    assert not problems, "\n".join(problems[:40])
    result = subprocess.run(
        [promtool_path(), "check", "metrics"],
        input=text,
        capture_output=True,
        text=True,
        timeout=60,
    )
    findings = {line for line in (result.stdout + result.stderr).splitlines() if line.strip()}
    accepted = PROMTOOL_ACCEPTED.get(name, set())
    assert findings == accepted, result.stdout + result.stderr
    assert result.returncode == (3 if accepted else 0)  # 3: lint findings only
