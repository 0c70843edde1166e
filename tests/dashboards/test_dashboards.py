"""Dashboards: the committed JSON is what the builder makes, and follows the house rules."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from alerts.thresholds import thresholds
from dashboards import build, instances, layout
from exporters.vocabulary import COMPONENT_BY_KEY, INDICATOR_BY_ALERT, INDICATORS, RESPONSE_PARTS

REPO = Path(__file__).resolve().parents[2]
COMMITTED = {p: json.loads(p.read_text()) for p in sorted((REPO / "dashboards").rglob("*.json"))}
DATASOURCE_UIDS = {"prometheus", "loki", "influxdb"}


def _assert_same(built: object, committed: object, where: str) -> None:
    """Structure exactly, floats within a tolerance (their last digits may differ by CPU)."""
    if isinstance(built, float) or isinstance(committed, float):
        assert committed == pytest.approx(built), where
    elif isinstance(built, dict):
        assert isinstance(committed, dict) and built.keys() == committed.keys(), where
        for key in built:
            _assert_same(built[key], committed[key], f"{where}.{key}")
    elif isinstance(built, list):
        assert isinstance(committed, list) and len(built) == len(committed), where
        for i, (b, c) in enumerate(zip(built, committed, strict=True)):
            _assert_same(b, c, f"{where}[{i}]")
    else:
        assert type(built) is type(committed) and built == committed, where


def test_committed_json_is_what_the_builder_makes() -> None:
    built = build.build()
    assert set(built) == set(COMMITTED), "run `python -m dashboards.build`"
    for path, model in built.items():
        _assert_same(model, COMMITTED[path], str(path.relative_to(REPO)))


def test_check_exits_1_when_a_dashboard_was_edited_by_hand(tmp_path, monkeypatch) -> None:
    for path in COMMITTED:
        copy = tmp_path / path.relative_to(REPO / "dashboards")
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, copy)
    monkeypatch.setattr(build, "HERE", tmp_path)
    assert build.main(["--check"]) == 0
    noc = tmp_path / "noc" / "noc.json"
    model = json.loads(noc.read_text())
    model["panels"][0]["fieldConfig"]["defaults"]["thresholds"]["steps"][1]["value"] = 60.0
    noc.write_text(json.dumps(model))
    assert build.main(["--check"]) == 1
    assert build.main([]) == 0 and build.main(["--check"]) == 0


def test_check_tolerates_floats_that_differ_in_their_last_digits() -> None:
    assert build.same({"v": [0.1 + 0.2]}, {"v": [0.3]})
    assert not build.same({"v": [0.31]}, {"v": [0.3]})
    assert not build.same({"v": 1}, {"v": "1"})


def test_eight_dashboards_with_stable_unique_uids() -> None:
    uids = [d["uid"] for d in COMMITTED.values()]
    assert sorted(uids) == [
        "wlmon-dbbuffer",
        "wlmon-fleet",
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


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.stem)
def test_every_picker_shown_filters_something(path: Path) -> None:
    """A picker that no panel reads changes nothing when picked (the OS dashboard showed
    instance and task type pickers over host counters): it is hidden, kept for links."""
    dash = COMMITTED[path]
    text = json.dumps([dash["panels"], dash.get("annotations", {})])
    for var in dash["templating"]["list"]:
        if var.get("hide") != 2:
            assert f"${var['name']}" in text or f"${{{var['name']}" in text, (
                f"{dash['uid']}: the {var['name']} picker filters no panel"
            )


def _panel(uid: str, title: str) -> dict:
    dash = next(d for d in COMMITTED.values() if d["uid"] == uid)
    return next(p for p in dash["panels"] if p["title"] == title)


@pytest.mark.parametrize(
    ("uid", "title", "alert_or_key", "scale"),
    [
        ("wlmon-noc", "Dispatcher wait (ms)", "SAPDispatcherWaitTimeHigh", 1000),
        ("wlmon-noc", "DB request (ms)", "SAPDatabaseRequestTimeHigh", 1000),
        ("wlmon-noc", "Enqueue (ms)", "SAPEnqueueTimeHigh", 1000),
        ("wlmon-noc", "Roll-in (ms)", "SAPRollInTimeHigh", 1000),
        ("wlmon-noc", "Roll-out (ms)", "SAPRollOutTimeHigh", 1000),
        ("wlmon-st03", "Dispatcher wait (ms per dialog step)", "SAPDispatcherWaitTimeHigh", 1000),
        ("wlmon-st03", "DB request (ms per dialog step)", "SAPDatabaseRequestTimeHigh", 1000),
        ("wlmon-st03", "Enqueue (ms per dialog step)", "SAPEnqueueTimeHigh", 1000),
        ("wlmon-st03", "Roll-in and roll-out (ms per dialog step)", "SAPRollOutTimeHigh", 1000),
        ("wlmon-noc", "Dialog response (s)", "dialog_response_seconds", 1),
        ("wlmon-noc", "Worst SAP buffer hit ratio", "sap_buffer_hit_ratio_min", 1),
        ("wlmon-dbbuffer", "Data hit ratio per pool", "db2_data_hit_ratio_min", 1),
        ("wlmon-dbbuffer", "Index hit ratio per pool", "db2_index_hit_ratio_min", 1),
        ("wlmon-dbbuffer", "SAP buffer hit ratio", "sap_buffer_hit_ratio_min", 1),
    ],
)
def test_panel_threshold_is_the_alerts_threshold(
    uid: str, title: str, alert_or_key: str, scale: float
) -> None:
    """Seed 000 4.3.5.1 thresholds: what the NOC sees turn red is what pages. The rules read
    the same key of thresholds.yml (tests/alerts); an indicator's alert names its key."""
    indicator = INDICATOR_BY_ALERT.get(alert_or_key)
    key = indicator.threshold_key if indicator else alert_or_key
    steps = _panel(uid, title)["fieldConfig"]["defaults"]["thresholds"]["steps"]
    limit = next(s["value"] for s in steps if s["value"] is not None)
    assert limit == pytest.approx(thresholds()[key] * scale)


def test_response_stack_is_the_parts_the_response_is_made_of() -> None:
    """Roll-out (after the answer) and CPU (within processing) would count twice."""
    stack = _panel("wlmon-st03", "Response time split into its parts (ms per step)")
    legends = [t["legendFormat"] for t in stack["targets"]]
    assert legends == [COMPONENT_BY_KEY[p].label for p in RESPONSE_PARTS]
    assert not any("roll_out" in t["expr"] or "_cpu_" in t["expr"] for t in stack["targets"])


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


def test_the_instances_dashboard_is_built_like_the_others() -> None:
    """Its own variable queries, the shared layout, variables and threshold steps."""
    d = instances.dashboard()
    assert isinstance(d, layout.Dashboard)
    variables = d.json()["templating"]["list"]
    assert variables == [
        layout._variable(name, query, hidden=name == "task_type")
        for name, query in instances.VARIABLES
    ]
    assert [v["name"] for v in variables] == [name for name, _ in layout.VARIABLES]


def test_noc_lights_say_what_the_alerts_say_and_link_on_with_the_time_range() -> None:
    """Orange at the warning threshold, red at the critical twin's; a click keeps the range."""
    for indicator in INDICATORS:
        panel = _panel("wlmon-noc", f"{indicator.label} (ms)")
        colours = [
            (s["value"], s["color"])
            for s in panel["fieldConfig"]["defaults"]["thresholds"]["steps"]
        ]
        warn = thresholds()[indicator.threshold_key] * 1000
        expected = [(None, "green"), (pytest.approx(warn), "orange")]
        if indicator.critical_multiple:
            expected.append((pytest.approx(warn * indicator.critical_multiple), "red"))
        assert colours == expected
        assert panel["targets"][0]["range"], "a light without a trend"
        (link,) = panel["fieldConfig"]["defaults"]["links"]
        assert link["url"].startswith("/d/wlmon-") and "${__url_time_range}" in link["url"]


def test_noc_counts_firing_rules_by_severity_and_names_every_table_column() -> None:
    critical = _panel("wlmon-noc", "Critical alerts")["targets"][0]["expr"]
    warning = _panel("wlmon-noc", "Warning alerts")["targets"][0]["expr"]
    assert 'severity="critical"' in critical and 'severity="warning"' in warning
    assert "count by (alertname)" in critical
    dash = next(d for d in COMMITTED.values() if d["uid"] == "wlmon-noc")
    (table,) = [p for p in dash["panels"] if p["type"] == "table"]
    renamed = table["transformations"][1]["options"]["renameByName"]
    refs = [f"Value #{t['refId']}" for t in table["targets"]]
    assert set(refs) <= set(renamed), "a column left as 'Value #X'"
    assert table["options"]["sortBy"][0]["displayName"] in renamed.values()
    task_type = next(v for v in dash["templating"]["list"] if v["name"] == "task_type")
    assert task_type.get("hide") == 2, "a task_type picker that changes nothing"


def test_dashboard_docs_need_every_screenshot_and_list_every_panel(tmp_path) -> None:
    from PIL import Image

    from dashboards import docs

    shots = tmp_path / "shots"
    shots.mkdir()
    models = [m.dashboard().json() for m in build.MODULES]
    for model in models[:-1]:
        Image.new("RGB", (1920, 240), "white").save(shots / f"{model['uid']}.png")
    out, page = tmp_path / "dashboards", tmp_path / "dashboards.md"
    assert docs.write(shots, out, page) == [models[-1]["uid"]]
    assert not page.exists(), "a page written without one dashboard's picture"
    Image.new("RGB", (1920, 240), "white").save(shots / f"{models[-1]['uid']}.png")
    assert docs.write(shots, out, page) == []
    with Image.open(out / "wlmon-noc.png") as small:
        assert small.size == (docs.WIDTH, 120)
    text = page.read_text()
    for model in models:
        assert f"## {model['title']}" in text
        for panel in model["panels"]:
            assert f"| {panel['title']} |" in text


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.stem)
def test_every_panel_says_what_it_answers(path: Path) -> None:
    """docs/dashboards.md and the panel's (i) read it: no panel without a question."""
    untold = [p["title"] for p in COMMITTED[path]["panels"] if not p.get("description")]
    assert untold == []
