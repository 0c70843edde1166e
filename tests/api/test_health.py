from __future__ import annotations

from fastapi.testclient import TestClient

from api.config import Settings
from api.main import create_app


def test_healthz_and_metrics(tmp_path) -> None:
    with TestClient(create_app(Settings(db_path=tmp_path / "db.sqlite"))) as client:
        assert client.get("/healthz").json()["status"] == "ok"
        metrics = client.get("/metrics/")
        assert metrics.status_code == 200
        assert "python_info" in metrics.text
