"""Dashboards: the committed JSON is what the builder makes, and follows the house rules."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("dashboards_build", REPO / "dashboards" / "build.py")
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)
COMMITTED = {p: json.loads(p.read_text()) for p in sorted((REPO / "dashboards").rglob("*.json"))}
THRESHOLDS = yaml.safe_load((REPO / "alerts" / "thresholds.yml").read_text())
DATASOURCE_UIDS = {"prometheus", "loki", "influxdb"}


def test_committed_json_is_what_the_builder_makes() -> None:
    built = build.build()
    assert set(built) == set(COMMITTED), "run `python dashboards/build.py`"
    for path, text in built.items():
        assert path.read_text() == text, (
            f"{path.relative_to(REPO)} differs from dashboards/build.py"
        )


def test_six_dashboards_with_stable_unique_uids() -> None:
    uids = [d["uid"] for d in COMMITTED.values()]
    assert sorted(uids) == [
        "wlmon-dbbuffer",
        "wlmon-forensics",
        "wlmon-instances",
        "wlmon-noc",
        "wlmon-os",
        "wlmon-st03",
        "wlmon-st05",
    ]


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.stem)
def test_datasources_by_uid_and_template_variables(path: Path) -> None:
    dash = COMMITTED[path]
    names = [v["name"] for v in dash["templating"]["list"]]
    assert names[:3] == ["sid", "sap_instance", "task_type"]
    # The forensics dashboard also picks a run (its ids from the run events in InfluxDB).
    assert names[3:] == (["run"] if dash["uid"] == "wlmon-forensics" else [])
    for panel in dash["panels"]:
        assert panel["datasource"]["uid"] in DATASOURCE_UIDS, panel["title"]
        for target in panel["targets"]:
            assert target["datasource"]["uid"] in DATASOURCE_UIDS
            text = target.get("expr", "") + target.get("query", "")
            assert "instance=" not in text.replace("sap_instance=", ""), (
                f"{panel['title']}: use sap_instance"
            )


def _panel(uid: str, title: str) -> dict:
    dash = next(d for d in COMMITTED.values() if d["uid"] == uid)
    return next(p for p in dash["panels"] if p["title"] == title)


def _rule_threshold(alert: str, severity: str = "warning") -> float:
    rules = [
        r
        for f in (REPO / "alerts").glob("*.rules.yml")
        for g in yaml.safe_load(f.read_text())["groups"]
        for r in g["rules"]
        if r.get("alert") == alert
    ]
    rule = next(r for r in rules if r["labels"]["severity"] == severity)
    return float(re.search(r"(?:>=|>|<) ([0-9.]+)\s*$", rule["expr"].strip()).group(1))


@pytest.mark.parametrize(
    ("uid", "title", "alert", "scale"),
    [
        ("wlmon-noc", "Dispatcher wait (ms)", "SAPDispatcherWaitTimeHigh", 1),
        ("wlmon-noc", "DB request (ms)", "SAPDatabaseRequestTimeHigh", 1),
        ("wlmon-noc", "Enqueue (ms)", "SAPEnqueueTimeHigh", 1),
        ("wlmon-noc", "Roll-in (ms)", "SAPRollInTimeHigh", 1),
        ("wlmon-noc", "Roll-out (ms)", "SAPRollOutTimeHigh", 1),
        ("wlmon-st03", "Dispatcher wait (ms)", "SAPDispatcherWaitTimeHigh", 1),
        ("wlmon-st03", "DB request (ms)", "SAPDatabaseRequestTimeHigh", 1),
        ("wlmon-st03", "Enqueue (ms)", "SAPEnqueueTimeHigh", 1),
        ("wlmon-st03", "Roll-in and roll-out (ms)", "SAPRollInTimeHigh", 1),
        ("wlmon-noc", "Dialog response (s)", "SAPDialogResponseTimeHigh", 1),
        ("wlmon-dbbuffer", "Data hit ratio per pool", "SAPDB2BufferPoolHitRatioLow", 100),
    ],
)
def test_panel_threshold_equals_the_alert_threshold(
    uid: str, title: str, alert: str, scale: float
) -> None:
    """Seed 000 4.3.5.1 thresholds: what the NOC sees turn red is what pages."""
    steps = _panel(uid, title)["fieldConfig"]["defaults"]["thresholds"]["steps"]
    limit = next(s["value"] for s in steps if s["value"] is not None)
    assert limit * scale == pytest.approx(_rule_threshold(alert))


def test_forensics_snaps_to_the_picked_run_and_marks_its_steady_state() -> None:
    """Issue 8: pick a run, the time range snaps to it, start/faults/end annotations."""
    dash = next(d for d in COMMITTED.values() if d["uid"] == "wlmon-forensics")
    run_var = dash["templating"]["list"][3]
    assert run_var["datasource"]["uid"] == "influxdb" and "run_start" in run_var["query"]
    runs = dash["panels"][0]
    link = runs["fieldConfig"]["defaults"]["links"][0]["url"]
    assert link.startswith("/d/wlmon-forensics/run-forensics?var-run=${__data.fields.run_id}")
    assert "from=${__data.fields.start_ms}&to=${__data.fields.end_ms}" in link
    tagged = [a for a in dash["annotations"]["list"] if a.get("target", {}).get("type") == "tags"]
    assert tagged and tagged[0]["target"]["tags"] == ["$run"]
