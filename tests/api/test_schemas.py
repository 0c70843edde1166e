"""The OpenAPI document describes every answer: each API route declares a model (or HTML),
and real answers (a fast run's report, a monitored run's report, a comparison, a refusal)
validate against the schemas the document publishes, as does what the CLI prints."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, get_args, get_origin

import jsonschema_rs
import pytest
from fastapi import APIRouter, FastAPI
from fastapi.responses import HTMLResponse, PlainTextResponse
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from pydantic import BaseModel
from starlette.routing import BaseRoute

from alerts.thresholds import load_thresholds
from api.config import Settings
from api.main import create_app
from api.runs.recorder import record_fast_run
from api.runs.spec import RunSpec
from api.services import reports

AUTH = {"Authorization": "Bearer t"}
FAULTY = {
    "duration_s": 900,
    "ramp_up_s": 120,
    "label": "enqueue",
    "faults": [{"name": "slow-enqueue-link", "start_s": 300, "end_s": 600}],
}


def _described(model: Any) -> bool:
    """A pydantic model, or a list of them: something the document can describe."""
    if get_origin(model) is list:
        return _described(get_args(model)[0])
    return isinstance(model, type) and issubclass(model, BaseModel)


def api_routes(routes: Sequence[BaseRoute]) -> Iterator[APIRoute]:
    """Every APIRoute, also inside included routers (FastAPI wraps those in a route that
    keeps the router as `original_router`)."""
    for route in routes:
        if isinstance(route, APIRoute):
            yield route
        elif (router := getattr(route, "original_router", None)) is not None:
            yield from api_routes(router.routes)


def _html(route: APIRoute) -> bool:
    cls = getattr(route.response_class, "value", route.response_class)  # unset: a placeholder
    if isinstance(cls, type) and issubclass(cls, HTMLResponse):
        return True
    # Text in another type (series.csv): described when its 200 declares that content.
    return (
        isinstance(cls, type)
        and issubclass(cls, PlainTextResponse)
        and bool(route.responses.get(200, {}).get("content"))
    )


def undescribed(app: FastAPI) -> list[str]:
    """The API routes whose answer the OpenAPI document does not describe."""
    return [
        f"{sorted(route.methods)} {route.path}"
        for route in api_routes(app.routes)
        if not _described(route.response_model) and not _html(route)
    ]


def test_every_route_declares_its_answer(tmp_path) -> None:
    app = create_app(Settings(db_path=tmp_path / "db.sqlite"))
    paths = {route.path for route in api_routes(app.routes)}
    assert {"/healthz", "/runs/{run_id}/report", "/imports/st03", "/alerts/webhook"} <= paths
    assert undescribed(app) == []


def test_the_route_check_finds_an_undescribed_route() -> None:
    app = FastAPI()

    @app.get("/loose")
    def loose() -> dict:  # a bare dict: inferred, but the document says nothing of it
        return {}

    @app.get("/page", response_class=HTMLResponse)
    def page() -> str:
        return "<p>fine</p>"

    @app.get("/text", response_class=PlainTextResponse)
    def text() -> str:  # text without its content declared: the document says nothing
        return "a,b"

    router = APIRouter(prefix="/inner")

    @router.post("/loose")
    def inner() -> list[dict]:
        return []

    app.include_router(router)
    assert undescribed(app) == ["['GET'] /loose", "['GET'] /text", "['POST'] /inner/loose"]


@pytest.fixture(scope="module")
def app(tmp_path_factory) -> FastAPI:
    return create_app(Settings(db_path=tmp_path_factory.mktemp("api") / "db.sqlite", token="t"))


@pytest.fixture(scope="module")
def client(app):
    with TestClient(app) as c:
        yield c


@pytest.fixture(scope="module")
def openapi(client) -> dict:
    return client.get("/openapi.json").json()


def violations(openapi: dict, path: str, method: str, code: int, answer: Any) -> list[str]:
    """Where `answer` breaks the schema the document gives for that response."""
    content = openapi["paths"][path][method]["responses"][str(code)]["content"]
    schema = {**content["application/json"]["schema"], "components": openapi["components"]}
    validator = jsonschema_rs.Draft202012Validator(schema)
    return [f"{list(e.instance_path)}: {e.message}" for e in validator.iter_errors(answer)]


@pytest.fixture(scope="module")
def run_ids(client) -> list[str]:
    ids = []
    for body in (FAULTY, {**FAULTY, "faults": [], "label": "healthy"}):
        r = client.post("/runs", json=body, headers=AUTH)
        assert r.status_code == 201, r.text
        ids.append(r.json()["id"])
    return ids


def test_the_validation_can_fail(openapi) -> None:
    bad = {
        "figure": "saps",
        "base": "many",
        "new": 1.0,
        "delta_pct": 0.0,
        "tolerance_pct": 5.0,
        "verdict": "same",
    }
    answer = {"base": "a", "new": "b", "figures": [bad], "repeatable": True, "criterion": ""}
    assert violations(openapi, "/runs/compare", "get", 200, answer) == [
        "['figures', 0, 'base']: \"many\" is not of type \"number\""
    ]
    extra = {**answer, "figures": [], "verdict": "fine"}
    assert violations(openapi, "/runs/compare", "get", 200, extra)  # an undeclared key


def test_a_fast_runs_report_matches_the_document(client, openapi, run_ids) -> None:
    r = client.get(f"/runs/{run_ids[0]}/report")
    assert r.status_code == 200
    rep = r.json()
    assert rep["breaches"] and rep["top_sql"] and rep["bufferpools"] and rep["benchmark"]["sd"]
    assert violations(openapi, "/runs/{run_id}/report", "get", 200, rep) == []
    # The answer is the report as built: nothing added, nothing dropped (no alerts_fired
    # for a simulated run, no grafana_path).
    assert set(rep) == {
        "warnings",
        "run",
        "steady_state",
        "st03",
        "transactions",
        "percentiles",
        "transaction_profile",
        "time_profile",
        "indicators",
        "os_counters",
        "breaches",
        "top_sql",
        "bufferpools",
        "benchmark",
        "not_measured",
        "window",
        "faults",
        "over_time",
        "distribution",
        "apdex",
        "transaction_spread",
    }
    assert rep["not_measured"] == {}  # a recorded run measures its throughput
    assert "grafana_path" not in rep["run"] and "dashboard_path" not in rep["run"]


def test_what_the_cli_prints_matches_the_document_too(app, client, openapi, run_ids) -> None:
    """`wlmon report --json` prints the service's report as the answer model writes it
    (the run row is typed: its times are written by the model, as the API writes them)."""
    rep = reports.report(app.state.store, run_ids[0], load_thresholds())
    doc = reports.answer(rep).model_dump(mode="json", exclude_unset=True, by_alias=True)
    assert violations(openapi, "/runs/{run_id}/report", "get", 200, doc) == []


def test_a_comparison_matches_the_document(client, openapi, run_ids) -> None:
    r = client.get("/runs/compare", params={"base": run_ids[1], "new": run_ids[0]})
    assert r.status_code == 200
    doc = r.json()
    assert {f["verdict"] for f in doc["figures"]} >= {"worse"}
    assert violations(openapi, "/runs/compare", "get", 200, doc) == []


def test_a_check_matches_the_document(client, openapi, run_ids) -> None:
    sla = "criteria:\n  - figure: dialog_p95_s\n    max: 30\ntolerances:\n  dialog_p99_s: 50\n"
    r = client.post(
        f"/runs/{run_ids[0]}/check", json={"sla": sla, "baseline": run_ids[1]}, headers=AUTH
    )
    assert r.status_code == 200, r.text
    doc = r.json()
    assert {c["source"] for c in doc["criteria"]} == {"built-in", "sla", "baseline"}
    assert violations(openapi, "/runs/{run_id}/check", "post", 200, doc) == []
    plain = client.get(f"/runs/{run_ids[0]}/check")
    assert violations(openapi, "/runs/{run_id}/check", "get", 200, plain.json()) == []


def test_a_monitored_runs_report_with_its_alerts_matches_the_document(app, client, openapi):
    """External and real-time runs carry a dashboard link and the alerts that fired."""
    store = app.state.store
    start = datetime.now(UTC) - timedelta(hours=1)
    run_id = store.runs.add(
        kind="external",
        scenario="BMK",
        label="window",
        start=start,
        duration_s=300,
        ramp_up_s=0,
        spec={},
        data=record_fast_run(RunSpec(duration_s=300)),
    )
    alert = {
        "status": "firing",
        "starts_at": (start + timedelta(minutes=2)).isoformat(),
        "labels": {"alertname": "SAPEnqueueTimeHigh", "severity": "warning", "sid": "BMK"},
        "annotations": {"summary": "Lock requests to the enqueue server are slow."},
    }
    store.add_notifications("noc", "g", [alert])
    run = client.get(f"/runs/{run_id}").json()
    assert run["grafana_path"].startswith(f"/d/wlmon-forensics/run-forensics?var-run={run_id}")
    assert run["dashboard_path"].startswith("/projects/wlmon/dashboards/forensics?start=")
    assert run["dashboard_path"].endswith(f"&var-run={run_id}")
    assert violations(openapi, "/runs/{run_id}", "get", 200, run) == []
    rep = client.get(f"/runs/{run_id}/report").json()
    assert [a["alertname"] for a in rep["alerts_fired"]] == ["SAPEnqueueTimeHigh"]
    assert violations(openapi, "/runs/{run_id}/report", "get", 200, rep) == []
    runs = client.get("/runs").json()
    assert violations(openapi, "/runs", "get", 200, runs) == []


@pytest.mark.parametrize(
    ("method", "path", "code"),
    [
        ("get", "/runs/{run_id}/report", 404),
        ("get", "/runs/compare", 404),
        ("post", "/runs/{run_id}/cancel", 404),
    ],
)
def test_refusals_match_the_document(client, openapi, method, path, code) -> None:
    r = client.request(
        method,
        path.replace("{run_id}", "nope"),
        params={"base": "nope", "new": "nope"},
        headers=AUTH,
    )
    assert r.status_code == code
    assert r.json() == {"detail": "no run 'nope'"}
    assert violations(openapi, path, method, code, r.json()) == []
