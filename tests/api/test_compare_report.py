"""The comparison report (issue 23 item 4): GET /runs/compare?format=html|json and
`wlmon compare A B [--html F]`: each figure side by side, the delta and a verdict within
seed 001's 5 %; unknown, identical or incomparable runs are a clear 4xx / CLI line."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from api.config import Settings, get_settings
from api.main import create_app
from tests.api.rows import run_row
from wlmon.cli import app

AUTH = {"Authorization": "Bearer t"}
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


class _Cells(HTMLParser):
    """The figures table's rows as text cells."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.inside = False
        self.cell: list[str] | None = None

    def handle_starttag(self, tag, attrs) -> None:
        if tag == "section" and ("id", "figures") in attrs:
            self.inside = True
        elif self.inside and tag == "tr":
            self.rows.append([])
        elif self.inside and tag == "td":
            self.cell = []

    def handle_endtag(self, tag) -> None:
        if tag == "section":
            self.inside = False
        elif tag == "td" and self.cell is not None:
            self.rows[-1].append("".join(self.cell).strip())
            self.cell = None

    def handle_data(self, data) -> None:
        if self.cell is not None:
            self.cell.append(data)


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    db = tmp_path_factory.mktemp("api") / "db.sqlite"
    with TestClient(create_app(Settings(db_path=db, token="t"))) as c:
        ids = {}
        for name, body in (
            ("base", {"duration_s": 600, "seed": 1}),
            ("again", {"duration_s": 600, "seed": 2}),
            ("fault", {"duration_s": 600, "faults": [{"name": "db-bottleneck", "start_s": 0}]}),
        ):
            r = c.post("/runs", json={**body, "label": name}, headers=AUTH)
            assert r.status_code in (200, 201), r.text
            ids[name] = r.json()["id"]
        raw = (FIXTURES / "perfmon" / "relog-two-hosts.csv").read_bytes()
        ids["perfmon"] = c.post("/imports/perfmon", content=raw, headers=AUTH).json()["id"]
        text = "Task Type Name\t# Steps\tØ Time (ms)\r\nDIALOG\t3600\t500.0\r\n"
        r = c.post("/imports/st03", content=text.encode(), params={"period": "1h"}, headers=AUTH)
        assert r.status_code == 201, r.text
        ids["st03"] = r.json()["id"]
        yield c, ids, db


def test_html_puts_each_figure_side_by_side_with_delta_and_verdict(api) -> None:
    c, ids, _ = api
    doc = c.get("/runs/compare", params={"base": ids["base"], "new": ids["fault"]}).json()
    r = c.get("/runs/compare", params={"base": ids["base"], "new": ids["fault"], "format": "html"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    parser = _Cells()
    parser.feed(r.text)
    rows = {row[0]: row for row in parser.rows if row}
    assert set(rows) == {f["figure"] for f in doc["figures"]}
    resp = next(f for f in doc["figures"] if f["figure"] == "dialog_response_s")
    # The delta computed here from the two reports' own values.
    base_r = c.get(f"/runs/{ids['base']}/report").json()["benchmark"]["sd"]["dialog_response_s"]
    new_r = c.get(f"/runs/{ids['fault']}/report").json()["benchmark"]["sd"]["dialog_response_s"]
    delta = 100 * (new_r - base_r) / base_r
    assert resp["delta_pct"] == pytest.approx(delta, abs=0.01) and delta > 5
    assert rows["dialog_response_s"][3] == f"{resp['delta_pct']:+,.2f}"
    assert rows["dialog_response_s"][5] == "worse" and not doc["repeatable"]
    assert "Not repeatable" in r.text and "db-bottleneck" in r.text  # the new run's fault


def test_two_seeds_of_one_plan_are_repeatable_within_5_pct(api) -> None:
    c, ids, _ = api
    doc = c.get("/runs/compare", params={"base": ids["base"], "new": ids["again"]}).json()
    thr = next(f for f in doc["figures"] if f["figure"] == "dialog_steps_per_hour")
    assert abs(thr["delta_pct"]) <= 5 and thr["verdict"] == "same"
    assert doc["repeatable"] is True


@pytest.mark.parametrize(
    "base, new, status, words",
    [
        ("base", "nosuchrun", 404, "no run 'nosuchrun'"),
        ("base", "base", 422, "the same run"),
        ("perfmon", "st03", 409, "share no figure"),
    ],
)
def test_unknown_same_or_incomparable_runs_are_refused_saying_why(
    api, base, new, status, words
) -> None:
    c, ids, _ = api
    params = {"base": ids.get(base, base), "new": ids.get(new, new), "format": "html"}
    r = c.get("/runs/compare", params=params)
    assert r.status_code == status, r.text
    assert words in r.json()["detail"]


def test_the_cli_compares_and_writes_the_page(api, tmp_path) -> None:
    _, ids, db = api
    env = {"WLMON_API_DB_PATH": str(db), "COLUMNS": "200"}
    get_settings.cache_clear()
    runner = CliRunner()
    out = tmp_path / "cmp.html"
    r = runner.invoke(app, ["compare", ids["base"], ids["fault"], "--html", str(out)], env=env)
    assert r.exit_code == 0, r.output
    assert "dialog_response_s" in out.read_text() and "Not repeatable" in out.read_text()
    table = runner.invoke(app, ["compare", ids["base"], ids["again"]], env=env)
    assert table.exit_code == 0 and "repeatable: throughput" in table.stdout
    bad = runner.invoke(app, ["compare", ids["perfmon"], ids["st03"]], env=env)
    assert bad.exit_code == 2 and "share no figure" in bad.output
    assert "Traceback" not in bad.output
    unknown = runner.invoke(app, ["compare", ids["base"], "nosuchrun"], env=env)
    assert unknown.exit_code == 2 and "no run 'nosuchrun'" in unknown.output
    get_settings.cache_clear()


def test_a_figure_from_0_has_no_percentage_and_is_never_same(monkeypatch) -> None:
    """0 ms dispatcher wait becoming 1.5 ms read "+0.00 %, same" before."""
    from api.runs import checks, report
    from api.runs.sla import parse_sla

    fig = report.Figure
    values = {
        "a": {
            "dialog_dispatcher_wait_ms": fig(0.0, False, "ms"),
            "saps": fig(100.0, True, ""),
            "x": fig(0.0, False, ""),
        },
        "b": {
            "dialog_dispatcher_wait_ms": fig(1.5, False, "ms"),
            "saps": fig(103.0, True, ""),
            "x": fig(0.0, False, ""),
        },
    }
    monkeypatch.setattr(report, "figures", lambda rep: values[rep["run"].id])
    monkeypatch.setattr(checks, "figures", lambda rep: values[rep["run"].id])
    doc = report.compare({"run": run_row("a")}, {"run": run_row("b")})
    rows = {f["figure"]: f for f in doc["figures"]}
    wait = rows["dialog_dispatcher_wait_ms"]
    assert wait["delta_pct"] is None and wait["verdict"] == "worse"
    assert rows["x"]["delta_pct"] == 0.0 and rows["x"]["verdict"] == "same"  # 0 and 0
    assert rows["saps"]["delta_pct"] == 3.0 and rows["saps"]["verdict"] == "same"
    # A baseline tolerance on it fails (it moved), saying why, rather than passing at 0 %.
    sla = parse_sla("tolerances:\n  dialog_dispatcher_wait_ms: 5\n")
    (_, crit) = checks.against_baseline({"run": run_row("b")}, {"run": run_row("a")}, sla)
    assert crit["status"] == "failed" and "from 0" in crit["detail"]
