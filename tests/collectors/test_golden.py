"""Every collector's exposition against its golden file, and through promtool.

Set WLMON_UPDATE_GOLDEN=1 to rewrite tests/golden/<collector>.prom after a deliberate
change, and review the diff. Collector durations come from a fixed clock.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from exporters.registry import COLLECTORS
from tests.collectors.exposition import differences, scrape_registered
from tests.promtool import promtool_path

GOLDEN = Path(__file__).parents[1] / "golden"
# What promtool's linter says that we keep on purpose: node_exporter's own metric names.
PROMTOOL_ACCEPTED = {
    "oscounters": {
        f"node_memory_{field}_bytes metric names should be written in 'snake_case' not 'camelCase'"
        for field in ("MemAvailable", "MemTotal")
    }
}


# sapcontrol reads sapstartsrv, not the model: its golden file is scraped from recorded
# SOAP answers (tests/fixtures/sapcontrol) by tests/sapcontrol/test_collector_recorded.py,
# compared the same way (structure exactly, values within tolerance) and through promtool.
RECORDED = {"sapcontrol"}


@pytest.mark.parametrize("name", [r.name for r in COLLECTORS if r.name not in RECORDED])
def test_exposition_matches_golden_file_and_passes_promtool(sim, name: str) -> None:
    text = scrape_registered(sim.snapshot, name)
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


def test_every_golden_file_belongs_to_a_registered_collector() -> None:
    assert {p.stem for p in GOLDEN.glob("*.prom")} == {r.name for r in COLLECTORS}
