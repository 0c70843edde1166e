"""Alerts fit a fleet: each one names its SID (and its SAP instance where it has one), as
Alertmanager's grouping by [alertname, sid] and the exporter-down inhibition need.

Read from the promtool cases (tests/alerts/*.test.yml, generated, and the hand-written
tests/sapcontrol/rules/*.test.yml), which promtool checks against the real rule evaluation:
the labels a firing alert really carries, not what the rule claims.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


# The monitor's own alerts (alerts/monitoring.py: the watchdog, a stack server down) are
# about the stack, not about a SID: they carry the scraped server's job and instance.
STACK_RULES = REPO / "alerts" / "monitoring.rules.yml"


def _rules(paths=None) -> dict[str, str]:
    out = {}
    for path in sorted(paths or (REPO / "alerts").glob("*.rules.yml")):
        for group in yaml.safe_load(path.read_text())["groups"]:
            for rule in group["rules"]:
                if "alert" in rule:
                    out[rule["alert"]] = rule["expr"]
    return out


def _fired() -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    cases = [*(REPO / "tests" / "alerts").glob("*.test.yml")]
    cases += (REPO / "tests" / "sapcontrol" / "rules").glob("*.test.yml")
    for path in sorted(cases):
        for test in yaml.safe_load(path.read_text())["tests"]:
            for case in test.get("alert_rule_test", []):
                for alert in case.get("exp_alerts") or []:
                    out.setdefault(case["alertname"], []).append(alert["exp_labels"])
    return out


def test_every_alert_fires_in_a_case_and_names_its_sid() -> None:
    rules, fired = _rules(), _fired()
    assert set(rules) <= set(fired), f"alerts never seen firing: {set(rules) - set(fired)}"
    about_the_stack = set(_rules([STACK_RULES]))
    assert "SAPWatchdog" in about_the_stack and len(about_the_stack) < len(rules) / 2
    for name, labels in fired.items():
        if name in about_the_stack:
            continue
        for one in labels:
            # One exception: the exporter of several SIDs that never served one (its SIDs
            # come from its own series) is down; it names its target instead.
            unseen = name == "SAPExporterDown" and one.get("job") and one.get("instance")
            assert one.get("sid") or unseen, f"{name} fires without sid: {one}"


def test_the_stacks_own_alerts_say_which_server() -> None:
    """Grouped by [alertname, sid], a stack alert without sid is one group per rule; what
    it names instead is the server (job), or it is the always-firing watchdog."""
    fired = _fired()
    for name in _rules([STACK_RULES]):
        for one in fired[name]:
            assert name == "SAPWatchdog" or one.get("job"), f"{name} names no server: {one}"


def test_alerts_on_instance_series_name_the_instance() -> None:
    # Per instance: the expression reads a series kept by (sid, sap_instance) or one of the
    # sap_instance-level recording rules.
    per_instance = {
        name
        for name, expr in _rules().items()
        if re.search(r"by \(sid, sap_instance|\bsap_instance[_:]|sap_extended_memory", expr)
    }
    assert len(per_instance) >= 8
    for name in per_instance:
        for one in _fired()[name]:
            assert one.get("sap_instance"), f"{name} fires without sap_instance: {one}"
