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
