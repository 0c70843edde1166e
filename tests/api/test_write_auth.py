"""Every write route needs the API token: checked on the OpenAPI document (the token
dependency declares the `authorization` header, so a new POST without `WriteAuth` fails
here), and on the wire for `POST /runs/{id}/check`."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from api.config import Settings
from api.main import create_app

TOKEN = "t"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
WRITES = {"post", "put", "patch", "delete"}


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    return create_app(Settings(db_path=tmp_path_factory.mktemp("auth") / "db.sqlite", token=TOKEN))


def _takes_the_token(operation: dict) -> bool:
    return any(
        p["in"] == "header" and p["name"].lower() == "authorization"
        for p in operation.get("parameters", [])
    )


def test_every_write_route_depends_on_the_token(app) -> None:
    paths = app.openapi()["paths"]
    writes = {
        f"{method.upper()} {path}": op
        for path, ops in paths.items()
        for method, op in ops.items()
        if method in WRITES
    }
    assert {"POST /runs", "POST /alerts/webhook", "DELETE /runs/{run_id}"} <= set(writes)
    assert [name for name, op in writes.items() if not _takes_the_token(op)] == []
    # The reads stay open: the check holds the header because of the token, not by chance.
    assert not _takes_the_token(paths["/runs/{run_id}/check"]["get"])


def test_post_check_without_the_token_is_refused(app) -> None:
    with TestClient(app) as client:
        run_id = client.post("/runs", json={"duration_s": 60}, headers=AUTH).json()["id"]
        for headers in ({}, {"Authorization": "Bearer nope"}):
            r = client.post(f"/runs/{run_id}/check", json={"sla": ""}, headers=headers)
            assert r.status_code == 401, r.text
        assert client.post(f"/runs/{run_id}/check", json={"sla": ""}, headers=AUTH).is_success
