"""Dashboards: one definition each, emitted for Perses and for Grafana; the committed JSON
is what the builder makes, follows the house rules, and keeps the alerts' thresholds."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from alerts.settings import MonitoringConfig
from alerts.thresholds import load_thresholds
from dashboards import build, forensics, grafana, perses
from dashboards.model import Kind, Lang, ModelError, Panel, Query, steps
from landscape_model.terms import COMPONENT_BY_KEY, RESPONSE_PARTS

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "dashboards"
PERSES = {p.stem: json.loads(p.read_text()) for p in sorted((OUT / "perses").glob("*.json"))}
GRAFANA = {p.stem: json.loads(p.read_text()) for p in sorted((OUT / "grafana").glob("*/*.json"))}
NAMES = ["dbbuffer", "fleet", "forensics", "instances", "noc", "os", "st03", "st05"]
# What the builder is handed (the comparisons below read thresholds.yml themselves).
CONFIG = MonitoringConfig(thresholds=load_thresholds())
# Read here, not through alerts.thresholds: what the file says is what must be drawn.
LIMITS = yaml.safe_load((REPO / "alerts" / "thresholds.yml").read_text())
# Where each indicator's alert pages (thresholds.yml, read here, not through the builder).
PAGE_KEY = {
    "Dispatcher wait": "dispatcher_wait_page_seconds",
    "DB request": "db_request_page_seconds",
    "Enqueue": "enqueue_page_seconds",
    "Roll-in": "roll_page_seconds",
    "Roll-out": "roll_page_seconds",
}
KEY = {
    "Dispatcher wait": "dispatcher_wait_seconds",
    "DB request": "db_request_seconds",
    "Enqueue": "enqueue_seconds",
    "Roll-in": "roll_seconds",
    "Roll-out": "roll_seconds",
}
HEX = {"green": "#73bf69", "orange": "#ff9830", "red": "#f2495c"}


def _grafana_panels(name: str) -> list[dict]:
    out = []
    for p in GRAFANA[name]["panels"]:
        out += [p, *p.get("panels", [])]
    return [p for p in out if p["type"] != "row"]


def _grafana_panel(name: str, title: str) -> dict:
    (panel,) = [p for p in _grafana_panels(name) if p["title"] == title]
    return panel


def _perses_panel(name: str, title: str) -> dict:
    panels = PERSES[name]["spec"]["panels"].values()
    (panel,) = [p for p in panels if p["spec"]["display"]["name"] == title]
    return panel


def _grafana_steps(panel: dict) -> list[tuple[float | None, str]]:
    return [
        (s["value"], s["color"]) for s in panel["fieldConfig"]["defaults"]["thresholds"]["steps"]
    ]


def _perses_steps(panel: dict) -> list[tuple[float | None, str]]:
    t = panel["spec"]["plugin"]["spec"]["thresholds"]
    return [(None, t["defaultColor"]), *((s["value"], s["color"]) for s in t["steps"])]


def _same(a: object, b: object, where: str) -> None:
    """Structure exactly, floats within a tolerance (their last digits may differ by CPU)."""
    assert build.same(a, b), f"{where} differs: run `python -m dashboards.build`"


def test_committed_json_is_what_the_builder_makes() -> None:
    built = build.build(CONFIG)
    on_disk = {p for pattern in build.OUTPUTS for p in OUT.glob(pattern)}
    assert set(built) == on_disk, "run `python -m dashboards.build`"
    for path, model in built.items():
        _same(model, json.loads(path.read_text()), str(path.relative_to(REPO)))
    assert sorted(PERSES) == NAMES and sorted(GRAFANA) == NAMES


def test_check_exits_1_when_a_dashboard_was_edited_by_hand(tmp_path, monkeypatch) -> None:
    for pattern in build.OUTPUTS:
        for path in OUT.glob(pattern):
            copy = tmp_path / path.relative_to(OUT)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, copy)
    monkeypatch.setattr(build, "HERE", tmp_path)
    assert build.main(["--check"]) == 0
    noc = tmp_path / "grafana" / "noc" / "noc.json"
    model = json.loads(noc.read_text())
    model["panels"][1]["fieldConfig"]["defaults"]["thresholds"]["steps"][1]["value"] = 60.0
    noc.write_text(json.dumps(model))
    stray = tmp_path / "perses" / "old.json"
    stray.write_text("{}")
    assert build.main(["--check"]) == 1
    assert build.main([]) == 0 and build.main(["--check"]) == 0
    assert not stray.exists(), "a file no module builds was left behind"


def test_check_tolerates_floats_that_differ_in_their_last_digits() -> None:
    assert build.same({"v": [0.1 + 0.2]}, {"v": [0.3]})
    assert not build.same({"v": [0.31]}, {"v": [0.3]})
    assert not build.same({"v": 1}, {"v": "1"})


def test_perses_resources_are_dashboards_of_the_wlmon_project() -> None:
    for name, res in PERSES.items():
        assert res["kind"] == "Dashboard"
        assert res["metadata"] == {"name": name, "project": "wlmon"}
        layouts = res["spec"]["layouts"]
        assert layouts and all(lay["kind"] == "Grid" for lay in layouts)
        refs = [i["content"]["$ref"] for lay in layouts for i in lay["spec"]["items"]]
        assert sorted(refs) == sorted(f"#/spec/panels/{k}" for k in res["spec"]["panels"])
        assert all("collapse" in lay["spec"]["display"] for lay in layouts)


def test_grafana_exports_name_their_data_sources_as_inputs() -> None:
    """Imported into an existing Grafana, every query asks for a data source of the right
    plugin: none is bound to a uid of wlmon's own stack."""
    for name, model in GRAFANA.items():
        inputs = {i["name"]: i["pluginId"] for i in model["__inputs"]}
        assert inputs["DS_PROMETHEUS"] == "prometheus"
        text = json.dumps({k: v for k, v in model.items() if k != "__inputs"})
        used = set(re.findall(r"\$\{(DS_[A-Z]+)\}", text))
        assert used == set(inputs), name
        for p in _grafana_panels(name):
            for t in p["targets"]:
                ref = t["datasource"]
                assert ref["uid"] in {f"${{{k}}}" for k in inputs}, p["title"]
                assert inputs[ref["uid"][2:-1]] == ref["type"], p["title"]


def test_logs_panels_read_the_log_store_in_logsql() -> None:
    grafana_logs = [p for n in NAMES for p in _grafana_panels(n) if p["type"] == "logs"]
    assert len(grafana_logs) == 3
    for p in grafana_logs:
        assert p["datasource"] == {"type": "victoriametrics-logs-datasource", "uid": "${DS_LOGS}"}
        # LogsQL pipes, not LogQL's (| logfmt, | json, line_format).
        assert re.search(r"\| (unpack_logfmt|unpack_json) \| format ", p["targets"][0]["expr"])
    perses_logs = [
        p
        for r in PERSES.values()
        for p in r["spec"]["panels"].values()
        if p["spec"]["plugin"]["kind"] == perses.LOGS["panel"]
    ]
    assert len(perses_logs) == 3
    for p in perses_logs:
        (q,) = p["spec"]["queries"]
        assert q["spec"]["plugin"]["kind"] == perses.LOGS["query"]
        assert q["spec"]["plugin"]["spec"]["datasource"] == {
            "kind": "VictoriaLogsDatasource",
            "name": "logs",
        }


def test_every_prometheus_query_reads_the_prometheus_datasource_by_name() -> None:
    for res in PERSES.values():
        for p in res["spec"]["panels"].values():
            for q in p["spec"].get("queries", []):
                plugin = q["spec"]["plugin"]
                if plugin["kind"] == "PrometheusTimeSeriesQuery":
                    assert plugin["spec"]["datasource"] == {
                        "kind": "PrometheusDatasource",
                        "name": "prometheus",
                    }
                    assert "instance=" not in plugin["spec"]["query"].replace("sap_instance=", "")


@pytest.mark.parametrize("name", NAMES)
def test_same_variables_in_both_and_every_shown_picker_filters_something(name: str) -> None:
    """A picker that no panel reads changes nothing when picked: it is hidden, kept for
    links."""
    g_vars = GRAFANA[name]["templating"]["list"]
    p_vars = PERSES[name]["spec"]["variables"]
    expected = ["sid", "sap_instance", "task_type", *(["run"] if name == "forensics" else [])]
    assert [v["name"] for v in g_vars] == expected
    assert [v["spec"]["name"] for v in p_vars] == expected
    text = json.dumps([GRAFANA[name]["panels"], GRAFANA[name].get("annotations", {})])
    for g, p in zip(g_vars, p_vars, strict=True):
        hidden = g.get("hide") == 2
        assert p["spec"]["display"]["hidden"] == hidden
        if not hidden:
            assert f"${g['name']}" in text or f"${{{g['name']}" in text, g["name"]
        if p["kind"] == "ListVariable":
            plugin = p["spec"]["plugin"]
            assert plugin["kind"] == "PrometheusLabelValuesVariable"
            assert plugin["spec"]["labelName"] == g["name"]
            assert g["query"] == f"label_values({plugin['spec']['matchers'][0]}, {g['name']})"


@pytest.mark.parametrize("indicator", list(KEY))
def test_noc_lights_are_the_alerts_levels_in_both_uis(indicator: str) -> None:
    """Green below the warning threshold, orange from it, red from the page level."""
    warn = LIMITS[KEY[indicator]] * 1000
    title = f"{indicator} (ms)"
    expected = [(None, "green"), (warn, "orange"), (LIMITS[PAGE_KEY[indicator]] * 1000, "red")]
    got = _grafana_steps(_grafana_panel("noc", title))
    assert [c for _, c in got] == [c for _, c in expected]
    assert [v for v, _ in got] == pytest.approx([v for v, _ in expected])
    got_p = _perses_steps(_perses_panel("noc", title))
    assert [c for _, c in got_p] == [HEX[c] for _, c in expected]
    assert [v for v, _ in got_p] == pytest.approx([v for v, _ in expected])
    (link,) = _grafana_panel("noc", title)["fieldConfig"]["defaults"]["links"]
    assert link["url"].startswith("/d/wlmon-") and "${__url_time_range}" in link["url"]
    (plink,) = _perses_panel("noc", title)["spec"]["links"]
    assert (
        plink["url"].startswith("/projects/wlmon/dashboards/") and "start=$__from" in plink["url"]
    )


@pytest.mark.parametrize(
    ("name", "title", "key", "scale"),
    [
        ("st03", "Dialog response per transaction (s per step)", "dialog_response_seconds", 1),
        ("noc", "Dialog response (s)", "dialog_response_seconds", 1),
        ("noc", "Worst SAP buffer hit ratio", "sap_buffer_hit_ratio_min", 1),
        ("dbbuffer", "Data hit ratio per pool", "db2_data_hit_ratio_min", 1),
        ("dbbuffer", "Index hit ratio per pool", "db2_index_hit_ratio_min", 1),
        ("dbbuffer", "SAP buffer hit ratio", "sap_buffer_hit_ratio_min", 1),
        (
            "forensics",
            "Dialog response and its bound (1-minute mean)",
            "dialog_response_seconds",
            1,
        ),
    ],
)
def test_panel_threshold_is_the_alerts_threshold_in_both_uis(
    name: str, title: str, key: str, scale: float
) -> None:
    """Seed 000 4.3.5.1: what the NOC sees turn red is what pages."""
    limit = LIMITS[key] * scale
    g = _grafana_steps(_grafana_panel(name, title))
    assert g[1][0] == pytest.approx(limit) and "red" in {g[0][1], g[1][1]}
    p = _perses_steps(_perses_panel(name, title))
    assert p[1][0] == pytest.approx(limit) and HEX["red"] in {p[0][1], p[1][1]}


@pytest.mark.parametrize(
    ("title", "indicator"),
    [
        ("Dispatcher wait (ms per dialog step)", "Dispatcher wait"),
        ("DB request (ms per dialog step)", "DB request"),
        ("Enqueue (ms per dialog step)", "Enqueue"),
        ("Roll-in and roll-out (ms per dialog step)", "Roll-in"),
    ],
)
def test_st03_draws_the_warning_and_the_page_level_as_two_lines(title: str, indicator: str) -> None:
    """Issue 37: the page level is a second line wherever the first is."""
    warn = LIMITS[KEY[indicator]] * 1000
    page = LIMITS[PAGE_KEY[indicator]] * 1000
    g = _grafana_panel("st03", title)
    assert [v for v, _ in _grafana_steps(g)[1:]] == pytest.approx([warn, page])
    assert [c for _, c in _grafana_steps(g)[1:]] == ["orange", "red"]
    assert g["fieldConfig"]["defaults"]["custom"]["thresholdsStyle"]["mode"] == "dashed"
    p = _perses_steps(_perses_panel("st03", title))
    assert [v for v, _ in p[1:]] == pytest.approx([warn, page])
    assert [c for _, c in p[1:]] == [HEX["orange"], HEX["red"]]


def _indicator_queries() -> dict[str, list[str]]:
    """Every PromQL query of the NOC lights and table, the fleet row and the ST03 lines that
    names an indicator's recorded mean, by where it is."""
    out: dict[str, list[str]] = {}
    for name in ("noc", "fleet", "st03"):
        for panel in PERSES[name]["spec"]["panels"].values():
            for q in panel["spec"].get("queries", []):
                expr = q["spec"]["plugin"]["spec"].get("query", "")
                if re.search(
                    r"(dispatcher_wait|db_request|enqueue|roll_in|roll_out)_seconds", expr
                ):
                    out.setdefault(f"{name}: {panel['spec']['display']['name']}", []).append(expr)
    return out


def test_each_indicator_has_one_definition_everywhere() -> None:
    """Issue 37: the NOC light, the NOC table, the fleet row and the ST03 panel read the
    series the alert pages on (alerts/workload.rules.yml), with `source` aggregated away."""
    rules = (REPO / "alerts" / "workload.rules.yml").read_text()
    paged_on = set(
        re.findall(r"(sap_instance_task_type:sap_workload_\w+_seconds_per_step:mean\w+)", rules)
    )
    found = _indicator_queries()
    wheres = {w.split(":")[0] for w in found}
    assert wheres == {"noc", "fleet", "st03"}, found
    for where, exprs in found.items():
        if where.startswith("st03: Response time split"):
            continue  # the whitepaper's 5-minute mean, the parts of the response time
        for expr in exprs:
            read = set(
                re.findall(
                    r"sap_instance_task_type:sap_workload_\w+_seconds_per_step:mean\w+", expr
                )
            )
            assert read and read <= paged_on, (where, expr)
            assert "rate(sap_workload_" not in expr, (where, expr)
            # No `source` can reach a stat or a row: every read is inside `max by (...)`
            # without it, or a `max(...)`.
            for m in re.finditer(r"max( by \(([^)]*)\))? ?\(sap_instance_task_type", expr):
                assert "source" not in (m.group(2) or ""), (where, expr)
            assert expr.count("sap_instance_task_type") == len(
                re.findall(r"max( by \([^)]*\))? ?\(sap_instance_task_type", expr)
            ), (where, expr)


def test_dialog_response_stat_is_one_series() -> None:
    """Issue 37: the stale `source="sapcontrol"` series beside the live one."""
    (q,) = _perses_panel("noc", "Dialog response (s)")["spec"]["queries"]
    expr = q["spec"]["plugin"]["spec"]["query"]
    assert re.fullmatch(
        r"max\(sid:sap_workload_dialog_response_seconds_per_step:mean5m\{[^}]*\}\)", expr
    )


def test_every_threshold_has_a_red_step() -> None:
    """Issue 37: "Worst vs threshold" at 6,265 % was orange: its scale had no red."""
    for name, dash in PERSES.items():
        for panel in dash["spec"]["panels"].values():
            plugin = panel["spec"]["plugin"]
            scales = [plugin["spec"].get("thresholds")]
            scales += [
                c.get("plugin", {}).get("spec", {}).get("thresholds")
                for c in plugin["spec"].get("columnSettings", [])
            ]
            for t in filter(None, scales):
                colours = {t["defaultColor"], *(s["color"] for s in t.get("steps", []))}
                if colours <= {HEX["green"], "#5794f2", "#808080", "#00000000"} and not t.get(
                    "steps"
                ):
                    continue  # one colour, no threshold (throughput in blue)
                assert HEX["red"] in colours, (name, panel["spec"]["display"]["name"], t)


def test_fleet_columns_are_red_at_the_thresholds_in_each_cell() -> None:
    table = _grafana_panel("fleet", "Systems: one row per SID (click a SID for its NOC overview)")
    overrides = {
        o["matcher"]["options"]: o["properties"] for o in table["fieldConfig"]["overrides"]
    }
    for indicator, key in KEY.items():
        props = {p["id"]: p["value"] for p in overrides[f"{indicator} (ms)"]}
        assert props["thresholds"]["steps"][1:] == [
            {"color": "orange", "value": pytest.approx(LIMITS[key] * 1000)},
            {"color": "red", "value": pytest.approx(LIMITS[PAGE_KEY[indicator]] * 1000)},
        ]
        assert props["custom.cellOptions"]["type"] == "color-background"
    perses_table = _perses_panel("fleet", table["title"])["spec"]["plugin"]["spec"]
    cols = {c["header"]: c for c in perses_table["columnSettings"] if "header" in c}
    db = cols["DB request (ms)"]["plugin"]
    assert db["kind"] == "StatChart"
    assert db["spec"]["thresholds"]["steps"][0]["value"] == pytest.approx(
        LIMITS["db_request_seconds"] * 1000
    )


def test_each_transaction_is_coloured_by_its_own_value() -> None:
    """Issue 37: a bar per item, each against the 2 s bound (Grafana's bar chart coloured
    all bars by one value): a bar gauge in Grafana, a stat tile per item in Perses."""
    title = "Dialog response per transaction (s per step)"
    g = _grafana_panel("st03", title)
    assert g["type"] == "bargauge"
    assert g["fieldConfig"]["defaults"]["color"]["mode"] == "thresholds"
    p = _perses_panel("st03", title)["spec"]["plugin"]
    # One tile per series named by its transaction, showing its number: with metricLabel
    # StatChart prints the label (VA01) in place of the value (seen in the browser).
    assert p["kind"] == "StatChart" and "metricLabel" not in p["spec"]
    (q,) = _perses_panel("st03", title)["spec"]["queries"]
    assert q["spec"]["plugin"]["spec"]["seriesNameFormat"] == "{{transaction}}"


def test_milliseconds_keep_their_digits() -> None:
    """2,086 ms stays 2,086 ms, not "2 s" (Grafana's ms unit rescales)."""
    g = _grafana_panel("noc", "DB request (ms)")["fieldConfig"]["defaults"]
    assert g["unit"] == "suffix: ms" and g["decimals"] == 0
    # Perses' "milliseconds" rescales too (formatTime: 2,086 with 0 decimals is "2s").
    p = _perses_panel("noc", "DB request (ms)")["spec"]["plugin"]["spec"]["format"]
    assert p == {"unit": "decimal", "decimalPlaces": 0, "shortValues": False}
    units = json.dumps(PERSES)
    assert '"milliseconds"' not in units


def test_response_stack_is_the_parts_the_response_is_made_of() -> None:
    """Roll-out (after the answer) and CPU (within processing) would count twice."""
    stack = _grafana_panel("st03", "Response time split into its parts (ms per step)")
    legends = [t["legendFormat"] for t in stack["targets"]]
    assert legends == [COMPONENT_BY_KEY[p].label for p in RESPONSE_PARTS]
    assert not any("roll_out" in t["expr"] or "_cpu_" in t["expr"] for t in stack["targets"])
    assert stack["fieldConfig"]["defaults"]["custom"]["stacking"]["mode"] == "normal"
    p = _perses_panel("st03", stack["title"])["spec"]["plugin"]
    assert p["spec"]["visual"]["stack"] == "all"


def test_forensics_snaps_to_the_picked_run_in_grafana() -> None:
    """Issue 8: pick a run, the time range snaps to it, start/faults/end annotations."""
    run_var = GRAFANA["forensics"]["templating"]["list"][3]
    assert run_var["datasource"]["uid"] == "${DS_INFLUXDB}" and "run_start" in run_var["query"]
    runs = _grafana_panel("forensics", "Runs (open one to snap the time range to it)")
    link = runs["fieldConfig"]["defaults"]["links"][0]["url"]
    assert link == grafana.url(forensics.OPEN_RUN)
    assert link.startswith("/d/wlmon-forensics?var-run=${__data.fields.run_id}")
    assert "from=${__data.fields.start_ms}&to=${__data.fields.end_ms}" in link
    tagged = [
        a for a in GRAFANA["forensics"]["annotations"]["list"] if a["target"].get("type") == "tags"
    ]
    assert tagged and tagged[0]["target"]["tags"] == ["$run"]
    overrides = {o["matcher"]["options"]: o["properties"] for o in runs["fieldConfig"]["overrides"]}
    assert {"id": "unit", "value": "dateTimeAsIso"} in overrides["Start"], "epoch ms shown raw"


def test_noc_counts_firing_rules_by_severity_and_names_every_table_column() -> None:
    critical = _grafana_panel("noc", "Pages sent (on-call)")["targets"][0]["expr"]
    warning = _grafana_panel("noc", "Warnings sent (NOC)")["targets"][0]["expr"]
    assert 'severity="critical"' in critical and 'severity!="critical"' in warning
    # What is left out says so on the panel.
    assert "watchdog" in _grafana_panel("noc", "Pages sent (on-call)")["description"]
    tables = {p["title"]: p for p in _grafana_panels("noc") if p["type"] == "table"}
    for title, table in tables.items():
        organize = next(t for t in table["transformations"] if t["id"] == "organize")
        renamed = organize["options"]["renameByName"]
        # Grafana names a lone query's value column "Value", each of several "Value #refId".
        targets = table["targets"]
        refs = ["Value"] if len(targets) == 1 else [f"Value #{t['refId']}" for t in targets]
        assert set(refs) <= set(renamed), f"{title}: a column left as 'Value #X'"
        assert table["options"]["sortBy"][0]["displayName"] in renamed.values(), title
    (table,) = [t for title, t in tables.items() if title.startswith("Instances")]
    worst = {o["matcher"]["options"]: o for o in table["fieldConfig"]["overrides"]}[
        "Worst vs threshold"
    ]
    colours = [
        s["color"]
        for p in worst["properties"]
        if p["id"] == "thresholds"
        for s in p["value"]["steps"]
    ]
    assert colours[-1] == "red", "a share of the threshold that can never be red"


@pytest.mark.parametrize("name", NAMES)
def test_every_panel_says_what_it_answers(name: str) -> None:
    assert [p["title"] for p in _grafana_panels(name) if not p.get("description")] == []
    assert [
        k
        for k, p in PERSES[name]["spec"]["panels"].items()
        if not p["spec"]["display"]["description"]
    ] == []


def test_seventy_eight_panels_kept_in_both() -> None:
    assert sum(len(_grafana_panels(n)) for n in NAMES) == 78
    assert sum(len(r["spec"]["panels"]) for r in PERSES.values()) == 78


def test_the_model_refuses_what_no_ui_draws_as_meant() -> None:
    with pytest.raises(ModelError, match="must rise"):
        steps((None, "green"), (400, "orange"), (200, "red"))
    with pytest.raises(ModelError, match="unknown colour"):
        steps((None, "green"), (400, "crimson"))
    with pytest.raises(ModelError, match="logs panels, and only they"):
        Panel(Kind.TIMESERIES, "t", "d", [Query('{source="st05"}', Lang.LOGSQL)])
    with pytest.raises(ModelError, match="says nothing"):
        Panel(Kind.STAT, "t", "", [Query("up")])


def test_dashboard_docs_need_every_screenshot_and_list_every_panel(tmp_path) -> None:
    from PIL import Image

    from dashboards import docs

    shots = tmp_path / "shots"
    shots.mkdir()
    models = build.dashboards(CONFIG)
    # Named as the browser test saves them: the Perses resource's name.
    names = [perses.dashboard(m)["metadata"]["name"] for m in models]
    for name in names[:-1]:
        Image.new("RGB", (1920, 240), "white").save(shots / f"{name}.png")
    out, page = tmp_path / "dashboards", tmp_path / "dashboards.md"
    assert docs.write(CONFIG, shots, out, page) == [names[-1]]
    assert not page.exists(), "a page written without one dashboard's picture"
    Image.new("RGB", (1920, 240), "white").save(shots / f"{names[-1]}.png")
    assert docs.write(CONFIG, shots, out, page) == []
    with Image.open(out / "noc.png") as small:
        assert small.size == (docs.WIDTH, 120)
    text = page.read_text()
    assert "## Into your own Grafana" in text and "DS_PROMETHEUS" in text
    for model in models:
        assert f"## {model.title}" in text
        for panel in model.panels:
            assert f"| {panel.title} |" in text


def test_the_docs_page_lists_every_panel_as_built() -> None:
    """docs/dashboards.md's tables are the model's titles and descriptions."""
    text = (REPO / "docs" / "dashboards.md").read_text()
    for model in build.dashboards(CONFIG):
        for panel in model.panels:
            assert f"| {panel.title} | {' '.join(panel.description.split())} |" in text


@pytest.mark.parametrize("name", NAMES)
def test_no_two_panels_overlap_and_ids_are_unique(name: str) -> None:
    """Drawn where they are meant: Grafana's grid (rows included) and each Perses group."""

    def cells(x: int, y: int, w: int, h: int) -> set[tuple[int, int]]:
        assert x >= 0 and x + w <= 24, (x, w)
        return {(i, j) for i in range(x, x + w) for j in range(y, y + h)}

    taken: set[tuple[int, int]] = set()
    ids = []
    for p in GRAFANA[name]["panels"]:
        g = p["gridPos"]
        mine = cells(g["x"], g["y"], g["w"], g["h"])
        assert not mine & taken, p["title"]
        taken |= mine
        ids += [p["id"], *(q["id"] for q in p.get("panels", []))]
    assert len(ids) == len(set(ids)) and None not in ids
    for layout in PERSES[name]["spec"]["layouts"]:
        taken = set()
        for item in layout["spec"]["items"]:
            mine = cells(item["x"], item["y"], item["width"], item["height"])
            assert not mine & taken, item["content"]
            taken |= mine


def _drawn_levels(config: MonitoringConfig) -> dict[str, set[float]]:
    """Every threshold step value each dashboard draws (panels and table columns)."""
    out: dict[str, set[float]] = {}
    for d in build.dashboards(config):
        scales = [p.thresholds for p in d.panels] + [
            c.thresholds for p in d.panels for c in p.columns
        ]
        out[d.uid] = {s.value for t in scales if t for s in t.steps if s.value is not None}
    return out


def test_the_dialog_response_bound_handed_in_is_the_one_drawn() -> None:
    """The builders draw what they are handed (the config), not what a getter reads behind
    them: a bound of 2.75 s, which thresholds.yml does not hold, appears on exactly the
    dashboards that draw the bound, where the file's 2 s was."""
    shipped = LIMITS["dialog_response_seconds"]
    tuned = MonitoringConfig(
        thresholds=load_thresholds().model_copy(update={"dialog_response_seconds": 2.75})
    )
    before, after = _drawn_levels(CONFIG), _drawn_levels(tuned)
    drawn = {uid for uid, levels in after.items() if 2.75 in levels}
    assert drawn == {"wlmon-noc", "wlmon-fleet", "wlmon-st03", "wlmon-forensics"}
    assert all(shipped in before[uid] and 2.75 not in before[uid] for uid in drawn)
