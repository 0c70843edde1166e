"""Alert rules: promtool checks and unit tests, house style, one source of thresholds."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from exporters.model.summary import THRESHOLDS_MS
from tests.alerts import cases
from tests.promtool import promtool_path

ALERTS = Path(__file__).resolve().parents[2] / "alerts"
HERE = Path(__file__).parent
RULE_FILES = sorted(ALERTS.glob("*.rules.yml"))
THRESHOLDS = yaml.safe_load((ALERTS / "thresholds.yml").read_text())


def _rules() -> list[dict]:
    return [
        r for f in RULE_FILES for g in yaml.safe_load(f.read_text())["groups"] for r in g["rules"]
    ]


ALERT_RULES = [r for r in _rules() if "alert" in r]


def test_promtool_check_rules_is_clean() -> None:
    result = subprocess.run(
        [promtool_path(), "check", "rules", *map(str, RULE_FILES)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_committed_unit_tests_match_their_builder() -> None:
    built = cases.build()
    committed = {p.name: p.read_text() for p in HERE.glob("*.test.yml")}
    assert committed == built, (
        "run `python -m tests.alerts.cases` to rewrite tests/alerts/*.test.yml"
    )


@pytest.mark.parametrize("test_file", sorted(p.name for p in HERE.glob("*.test.yml")))
def test_promtool_unit_tests_pass(test_file: str) -> None:
    result = subprocess.run(
        [promtool_path(), "test", "rules", test_file],
        cwd=HERE,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_alert_has_firing_and_silent_unit_tests() -> None:
    tested: dict[str, set[bool]] = {}
    for path in HERE.glob("*.test.yml"):
        for case in yaml.safe_load(path.read_text())["tests"]:
            for art in case.get("alert_rule_test", []):
                tested.setdefault(art["alertname"], set()).add(bool(art["exp_alerts"]))
    for name in {r["alert"] for r in ALERT_RULES}:
        assert tested.get(name) == {True, False}, f"{name}: needs a firing and a silent test"


@pytest.mark.parametrize(
    "rule", ALERT_RULES, ids=lambda r: f"{r['alert']}-{r['labels']['severity']}"
)
def test_alert_follows_house_style(rule: dict) -> None:
    assert re.fullmatch(r"SAP[A-Z][A-Za-z0-9]+", rule["alert"])
    assert rule.get("for"), "every alert needs for:"
    assert rule["labels"]["severity"] in {"critical", "warning", "info"}
    ann = rule["annotations"]
    assert set(ann) == {"summary", "description", "diagnosis", "runbook_url"}
    assert ann["summary"].endswith(".") and "{{" not in ann["summary"]
    assert "{{" in ann["description"]
    assert ann["runbook_url"] == f"alerts/runbooks.md#{rule['alert'].lower()}"


def test_every_alert_has_a_runbook_section() -> None:
    headings = {
        line[3:].strip()
        for line in (ALERTS / "runbooks.md").read_text().splitlines()
        if line.startswith("## ")
    }
    assert {r["alert"] for r in ALERT_RULES} <= headings


def _threshold(alert: str, severity: str) -> float:
    rule = next(
        r for r in ALERT_RULES if r["alert"] == alert and r["labels"]["severity"] == severity
    )
    return float(re.search(r"> ([0-9.]+)\s*$", rule["expr"].strip()).group(1))


@pytest.mark.parametrize(
    ("alert", "key", "model_key", "multiple"),
    [
        (
            "SAPDispatcherWaitTimeHigh",
            "dispatcher_wait_seconds",
            "dispatcher_wait",
            "dispatcher_wait",
        ),
        ("SAPDatabaseRequestTimeHigh", "db_request_seconds", "db_request", "db_request"),
        ("SAPEnqueueTimeHigh", "enqueue_seconds", "enqueue", "enqueue"),
        ("SAPRollInTimeHigh", "roll_seconds", "roll", "roll"),
        ("SAPRollOutTimeHigh", "roll_seconds", "roll", "roll"),
    ],
)
def test_seed_000_thresholds_are_one_source(
    alert: str, key: str, model_key: str, multiple: str
) -> None:
    """Seed 000 §4.3.5.1: 50 ms, 400 ms, 5 ms, 20 ms — rules, thresholds.yml and model agree."""
    warn_ms = THRESHOLDS[key] * 1000
    assert _threshold(alert, "warning") == pytest.approx(warn_ms)
    assert _threshold(alert, "critical") == pytest.approx(
        warn_ms * THRESHOLDS["critical_multiple"][multiple]
    )
    assert THRESHOLDS_MS[model_key] == pytest.approx(warn_ms)


@pytest.mark.parametrize(
    ("page_type", "key"), [("data", "db2_data_hit_ratio_min"), ("index", "db2_index_hit_ratio_min")]
)
def test_db2_hit_ratio_floors_are_one_source(page_type: str, key: str) -> None:
    rule = next(
        r
        for r in ALERT_RULES
        if r["alert"] == "SAPDB2BufferPoolHitRatioLow" and r["labels"]["page_type"] == page_type
    )
    floor = float(re.search(r"< ([0-9.]+)\s*$", rule["expr"].strip()).group(1))
    assert floor == pytest.approx(100 * THRESHOLDS[key])
