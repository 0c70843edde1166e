from __future__ import annotations

from fastapi.testclient import TestClient

from api.main import create_app


def test_healthz_and_metrics() -> None:
    client = TestClient(create_app())
    assert client.get("/healthz").json()["status"] == "ok"
    metrics = client.get("/metrics/")
    assert metrics.status_code == 200
    assert "python_info" in metrics.text
