"""Schemathesis generates requests from the OpenAPI document; none may end in a 5xx."""

from __future__ import annotations

import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings

from api.config import Settings
from api.main import create_app

TOKEN = "fuzz-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _app(tmp_dir: str):
    return create_app(Settings(db_path=f"{tmp_dir}/db.sqlite", token=TOKEN))


import tempfile  # noqa: E402 - the schema needs an app at import time

APP = _app(tempfile.mkdtemp(prefix="wlmon-fuzz-"))
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


@schema.parametrize()
@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_no_server_error_without_a_token(case) -> None:
    response = case.call()
    assert response.status_code < 500, (
        f"{case.method} {case.path}: {response.status_code} {response.text[:300]}"
    )


# Simulated runs can take seconds each; their validation is fuzzed above (401 first) and
# covered by tests/api/test_runs.py.
@schema.exclude(method="POST", path="/runs").parametrize()
@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_no_server_error_with_the_token(case) -> None:
    response = case.call(headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code < 500, (
        f"{case.method} {case.path}: {response.status_code} {response.text[:300]}"
    )


# POST /runs with the token, on an API that simulates at most two minutes (a fast run then
# takes about a second) and whose exporter and Prometheus are closed ports: realtime and
# external plans that pass validation end in 502, which says so; nothing else may be 5xx.
RUNS_APP = create_app(
    Settings(
        db_path=f"{tempfile.mkdtemp(prefix='wlmon-fuzz-runs-')}/db.sqlite",
        token=TOKEN,
        max_fast_run_s=120,
        exporter_url="http://127.0.0.1:1",
        prometheus_url="http://127.0.0.1:1",
    )
)
runs_schema = schemathesis.openapi.from_asgi("/openapi.json", RUNS_APP)


@runs_schema.include(method="POST", path="/runs").parametrize()
@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_post_runs_never_fails_with_the_token(case) -> None:
    response = case.call(headers={"Authorization": f"Bearer {TOKEN}"})
    unreachable = response.status_code == 502 and "cannot" in response.text
    assert response.status_code < 500 or unreachable, (
        f"{case.method} {case.path}: {response.status_code} {response.text[:300]} "
        f"body {str(case.body)[:300]}"
    )


def _numbers(node: dict, where: str, seen: frozenset = frozenset()) -> list[tuple[str, dict]]:
    """Every integer or number schema under `node` (through $refs and unions), by where."""
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        if name in seen:
            return []
        node = APP.openapi()["components"]["schemas"][name]
        seen |= {name}
    out = [(where, node)] if node.get("type") in ("integer", "number") else []
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in node.get(key, []):
            out += _numbers(sub, where, seen)
    for name, sub in node.get("properties", {}).items():
        out += _numbers(sub, f"{where}.{name}", seen)
    if isinstance(node.get("items"), dict):
        out += _numbers(node["items"], f"{where}[]", seen)
    return out


def _operations() -> list[tuple[str, str, dict]]:
    return [
        (method, path, op)
        for path, ops in APP.openapi()["paths"].items()
        for method, op in ops.items()
    ]


def test_every_number_the_api_takes_has_a_range_in_its_schema() -> None:
    """Issue 38: GET /runs?offset=99999999999999999999 answered 500 (an OverflowError
    converting to SQLite's integer): an unbounded number reaches code that cannot hold it."""
    unbounded = []
    for method, path, op in _operations():
        places = [(f"{p['in']} {p['name']}", p["schema"]) for p in op.get("parameters", [])]
        for content in op.get("requestBody", {}).get("content", {}).values():
            places.append(("body", content["schema"]))
        for where, schema in places:
            for field, node in _numbers(schema, where):
                low = "minimum" in node or "exclusiveMinimum" in node
                high = "maximum" in node or "exclusiveMaximum" in node
                if not (low and high):
                    unbounded.append(f"{method.upper()} {path} {field}")
    assert unbounded == []


def test_a_number_past_its_range_is_a_422_on_every_parameter() -> None:
    """Each integer or number query and path parameter, given a value past its bounds
    (and one past SQLite's 64-bit integers), answers 422 naming it, never 5xx."""
    tried = 0
    with TestClient(APP) as client:
        for method, path, op in _operations():
            for param in op.get("parameters", []):
                if _numbers(param["schema"], param["name"]):
                    for value in ("99999999999999999999", "-99999999999999999999"):
                        url = path.replace("{run_id}", "nope")
                        if param["in"] == "path":
                            url = url.replace("{" + param["name"] + "}", value)
                            params = {}
                        else:
                            params = {param["name"]: value}
                        r = client.request(method, url, params=params, headers=AUTH)
                        tried += 1
                        assert r.status_code == 422, (method, path, param["name"], r.text)
                        assert param["name"] in str(r.json()["detail"]), r.text
    assert tried >= 8  # limit, offset, top, interval, ... : the walk found them
