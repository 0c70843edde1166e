"""alerts/sapcontrol.rules.yml: the whitepaper alerts fire (and stay silent) from the sapcontrol
source's series, checked by promtool like the other rules."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from tests.promtool import promtool_path

REPO = Path(__file__).resolve().parents[2]
RULES = REPO / "alerts" / "sapcontrol.rules.yml"
TESTS = Path(__file__).parent / "rules"


def test_promtool_checks_the_rules() -> None:
    result = subprocess.run(
        [promtool_path(), "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_promtool_unit_tests_pass() -> None:
    result = subprocess.run(
        [promtool_path(), "test", "rules", "sapcontrol.test.yml"],
        cwd=TESTS,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_per_step_series_says_its_source_and_is_idle_safe() -> None:
    rules = yaml.safe_load(RULES.read_text())["groups"][0]["rules"]
    per_step = [r for r in rules if r["record"].endswith(":mean5m")]
    assert {r["record"] for r in per_step} >= {
        f"sap_instance_task_type:sap_workload_{c}_seconds_per_step:mean5m"
        for c in ("dispatcher_wait", "db_request", "enqueue", "roll_in", "roll_out")
    }
    for rule in per_step:
        assert rule["labels"]["source"] == "sapcontrol", rule["record"]
        assert ">= 0.1" in rule["expr"], f"{rule['record']}: needs the minimum-traffic guard"
        assert "alert" not in rule


def test_the_fire_and_silence_cases_cover_the_four_indicators() -> None:
    doc = yaml.safe_load((TESTS / "sapcontrol.test.yml").read_text())
    fired, silent = set(), set()
    for case in doc["tests"]:
        for art in case.get("alert_rule_test", []):
            (fired if art["exp_alerts"] else silent).add(art["alertname"])
    assert fired >= {
        "SAPDispatcherWaitTimeHigh",
        "SAPDatabaseRequestTimeHigh",
        "SAPEnqueueTimeHigh",
        "SAPRollInTimeHigh",
        "SAPRollOutTimeHigh",
    }
    assert silent >= {"SAPDispatcherWaitTimeHigh", "SAPEnqueueTimeHigh", "SAPRollInTimeHigh"}
