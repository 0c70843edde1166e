"""The emitted dashboards against the UIs' own schemas: Perses resources linted by percli
v0.54.0 with the CUE schemas of exactly the plugins the stack's Perses loads, Grafana
exports type-checked against @grafana/schema. Each check is shown to fail on a resource it
must refuse."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from alerts.settings import MonitoringConfig
from alerts.thresholds import load_thresholds
from dashboards import perses
from tests.dashboards import grafana_schema, percli

REPO = Path(__file__).resolve().parents[2]
PERSES = sorted((REPO / "dashboards" / "perses").glob("*.json"))
GRAFANA = sorted((REPO / "dashboards" / "grafana").glob("*/*.json"))


@pytest.fixture(scope="module")
def lint(tmp_path_factory):
    try:
        binary = percli.percli()
    except percli.Unavailable as e:
        pytest.skip(str(e))
    plugins = percli.plugin_dir(tmp_path_factory.mktemp("perses") / "plugins")

    def run(resource: Path):
        return percli.lint(binary, resource, plugins)

    return run


@pytest.mark.parametrize("path", PERSES, ids=lambda p: p.stem)
def test_percli_lints_each_dashboard_clean(lint, path: Path) -> None:
    done = lint(path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "your resources look good" in done.stdout + done.stderr


def _mutated(tmp_path: Path, change) -> Path:
    res = json.loads((REPO / "dashboards" / "perses" / "noc.json").read_text())
    change(res)
    out = tmp_path / "noc.json"
    out.write_text(json.dumps(res))
    return out


def _light(res: dict) -> dict:
    return next(
        p for p in res["spec"]["panels"].values() if p["spec"]["plugin"]["kind"] == "StatChart"
    )["spec"]["plugin"]["spec"]


@pytest.mark.parametrize(
    ("case", "change", "says"),
    [
        # A field of a newer StatChart than the npm registry serves (0.10.0).
        ("stat colorMode", lambda r: _light(r).update(colorMode="background_solid"), "colorMode"),
        ("threshold as text", lambda r: _light(r)["thresholds"]["steps"][0].update(value="50"), ""),
        ("unit unknown", lambda r: _light(r)["format"].update(unit="ms"), ""),
        (
            "unknown plugin",
            lambda r: next(iter(r["spec"]["panels"].values()))["spec"]["plugin"].update(
                kind="BarGaugeChart"
            ),
            "BarGaugeChart",
        ),
        (
            "dangling layout",
            lambda r: r["spec"]["layouts"][0]["spec"]["items"][0].update(
                content={"$ref": "#/spec/panels/nothing"}
            ),
            "nothing",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_percli_refuses_what_perses_would_not_draw(lint, tmp_path, case, change, says) -> None:
    done = lint(_mutated(tmp_path, change))
    out = done.stdout + done.stderr
    assert "your resources look good" not in out, case
    assert says in out, out


@pytest.fixture(scope="module")
def tsc(tmp_path_factory):
    try:
        grafana_schema.install()
    except grafana_schema.Unavailable as e:
        pytest.skip(str(e))

    def run(exports: dict[str, dict]) -> tuple[int, str]:
        return grafana_schema.check(exports, tmp_path_factory.mktemp("ts"))

    return run


def test_grafana_exports_match_grafanas_schema(tsc) -> None:
    rc, out = tsc({p.stem: json.loads(p.read_text()) for p in GRAFANA})
    assert rc == 0, out


def _noc() -> dict:
    return json.loads((REPO / "dashboards" / "grafana" / "noc" / "noc.json").read_text())


def test_grafanas_schema_refuses_what_grafana_would_not_read(tsc) -> None:
    bad = {}
    model = _noc()
    model["panels"][1]["options"]["colorMode"] = "glow"  # not a BigValueColorMode
    bad["enum"] = model
    model = copy.deepcopy(_noc())
    model["panels"][1]["fieldConfig"]["defaults"]["thresholdz"] = {}  # no such field
    bad["field"] = model
    model = copy.deepcopy(_noc())
    model["panels"][1]["gridPos"]["w"] = "4"  # a string where a number belongs
    bad["type"] = model
    model = copy.deepcopy(_noc())
    model["templating"]["list"][0]["auto"] = False  # what the SDK writes, Grafana's schema lacks
    bad["variable"] = model
    rc, out = tsc(bad)
    assert rc != 0
    for name, what in (
        ("enum", "glow"),
        ("field", "thresholdz"),
        ("type", "gridPos"),
        ("variable", "auto"),
    ):
        lines = [line for line in out.splitlines() if line.startswith(f"{name}.ts(")]
        assert lines and any(what in line or "string" in line for line in lines), (name, out)


def test_the_logs_plugin_constant_switches_to_the_loki_plugin_and_still_lints(
    tmp_path, monkeypatch
) -> None:
    """The logs panels' plugin kinds live in one constant (perses.LOGS): switched to the
    Loki plugin the npm registry serves (0.2.0), the dashboards still lint against it."""
    try:
        binary = percli.percli()
    except percli.Unavailable as e:
        pytest.skip(str(e))
    from dashboards import st05

    monkeypatch.setattr(perses, "LOGS", perses.LOGS_LOKI_PLUGIN)
    res = perses.dashboard(st05.dashboard(MonitoringConfig(thresholds=load_thresholds())))
    kinds = {
        q["spec"]["plugin"]["kind"]
        for p in res["spec"]["panels"].values()
        for q in p["spec"].get("queries", [])
    }
    assert "LokiLogQuery" in kinds and "VictoriaLogsLogQuery" not in kinds
    path = tmp_path / "st05.json"
    path.write_text(json.dumps(res))
    plugins = percli.plugin_dir(tmp_path / "plugins")
    done = percli.lint(binary, path, plugins)
    assert done.returncode == 0, done.stdout + done.stderr


def test_grafana_exports_for_loki_read_logql_and_match_grafanas_schema(tsc, tmp_path) -> None:
    """`--grafana-loki DIR`: the same dashboards, their logs from a Loki data source in
    LogQL; Loki's query type (LokiDataQuery) checks those targets."""
    from dashboards import build

    assert build.main(["--grafana-loki", str(tmp_path)]) == 0
    exports = {p.stem: json.loads(p.read_text()) for p in sorted(tmp_path.glob("*/*.json"))}
    assert sorted(exports) == sorted(p.stem for p in GRAFANA)
    st05 = exports["st05"]
    assert {"name": "DS_LOGS", "pluginId": "loki"}.items() <= st05["__inputs"][1].items()
    logs = [p for p in st05["panels"] if p["type"] == "logs"]
    (target,) = logs[0]["targets"]
    assert target["datasource"] == {"type": "loki", "uid": "${DS_LOGS}"}
    assert "| logfmt | line_format `{{.sap_instance}}" in target["expr"]
    rc, out = tsc(exports)
    assert rc == 0, out
    exports["st05"]["panels"][-1]["targets"][0]["editorMode"] = "wysiwyg"  # not a QueryEditorMode
    rc, out = tsc({"st05": exports["st05"]})
    assert rc != 0 and "wysiwyg" in out, out
