"""Schemathesis generates requests from the OpenAPI document; none may end in a 5xx."""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, settings

from api.config import Settings
from api.main import create_app

TOKEN = "fuzz-token"


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
