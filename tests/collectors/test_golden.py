"""Every collector's exposition against its golden file, and through promtool.

Set WLMON_UPDATE_GOLDEN=1 to rewrite tests/golden/<collector>.prom after a deliberate
change, and review the diff. Collector durations come from a fixed clock.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from exporters.registry import COLLECTORS
from tests.collectors.exposition import differences, golden_rewritten, scrape_registered
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
    if golden_rewritten(golden, text):
        pytest.skip(
            f"rewrote {golden}: read `git diff`, then run again without WLMON_UPDATE_GOLDEN"
        )
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


def test_a_golden_rewrite_is_refused_under_ci_and_skips_otherwise(tmp_path, monkeypatch) -> None:
    golden = tmp_path / "x.prom"
    golden.write_text("old\n")
    monkeypatch.setenv("WLMON_UPDATE_GOLDEN", "1")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(RuntimeError, match="refused under CI=true"):
        golden_rewritten(golden, "new\n")
    assert golden.read_text() == "old\n"
    monkeypatch.setenv("CI", "false")
    assert golden_rewritten(golden, "new\n") and golden.read_text() == "new\n"
    monkeypatch.delenv("WLMON_UPDATE_GOLDEN")
    assert not golden_rewritten(golden, "newer\n") and golden.read_text() == "new\n"


def test_a_ci_session_with_golden_updates_stops_in_one_line(tmp_path) -> None:
    """The whole session refuses (tests/conftest.py), before a golden file is touched."""
    repo = Path(__file__).resolve().parents[2]
    before = {p: p.read_bytes() for p in (repo / "tests" / "golden").glob("*.prom")}
    env = {**os.environ, "CI": "true", "WLMON_UPDATE_GOLDEN": "1"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/collectors/test_golden.py",
        ],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]  # usage error
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines == [
        "ERROR: WLMON_UPDATE_GOLDEN=1 is refused under CI=true (a CI run compares the golden "
        "files, it does not rewrite them): unset WLMON_UPDATE_GOLDEN"
    ]
    assert {p: p.read_bytes() for p in before} == before
