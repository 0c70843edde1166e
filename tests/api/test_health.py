from __future__ import annotations

from fastapi.testclient import TestClient

from api.config import Settings
from api.main import create_app
from tests.api.test_alerts_webhook import PAYLOAD


def test_healthz_and_metrics(tmp_path) -> None:
    with TestClient(create_app(Settings(db_path=tmp_path / "db.sqlite"))) as client:
        assert client.get("/healthz").json()["status"] == "ok"
        metrics = client.get("/metrics/")
        assert metrics.status_code == 200
        assert "python_info" in metrics.text


def _payload(k: int) -> dict:
    alert = {
        **PAYLOAD["alerts"][0],
        "fingerprint": f"fp{k}",
        "annotations": {"summary": "x" * 2000, "description": f"notification {k}"},
    }
    return {**PAYLOAD, "alerts": [alert]}


def test_a_full_database_answers_507_says_degraded_and_keeps_what_it_had(tmp_path) -> None:
    """Issue 26: with SQLite out of room every write answered a bare 500 while /healthz said
    ok. The database's size cap fails writes with SQLITE_FULL, exactly as a full disk does."""
    settings = Settings(
        db_path=tmp_path / "db.sqlite", token="t", db_max_bytes=1024 * 1024, min_free_bytes=0
    )
    auth = {"Authorization": "Bearer t"}
    with TestClient(create_app(settings)) as client:
        accepted, refused = 0, None
        for k in range(2000):
            r = client.post("/alerts/webhook", json=_payload(k), headers=auth)
            if r.status_code != 200:
                refused = r
                break
            accepted += 1
        assert refused is not None, "the 1 MiB cap was never reached"
        assert refused.status_code == 507, refused.text
        assert "cannot grow" in refused.json()["detail"]
        assert "what was stored before is kept" in refused.json()["detail"]
        health = client.get("/healthz").json()
        assert health["status"] == "degraded"
        assert any("a write failed" in reason for reason in health["reasons"]), health
        metrics = client.get("/metrics/").text
        assert "wlmon_api_storage_write_failures_total 1.0" in metrics
        assert "wlmon_api_storage_degraded 1.0" in metrics
        # Nothing acknowledged was lost.
        stored = client.get("/alerts/notifications", params={"limit": 1000}).json()
        assert len(stored) == accepted > 100
        assert {n["annotations"]["description"] for n in stored} == {
            f"notification {k}" for k in range(accepted)
        }


def test_low_free_space_is_a_reason_to_be_degraded(tmp_path) -> None:
    settings = Settings(db_path=tmp_path / "db.sqlite", min_free_bytes=2**62)
    with TestClient(create_app(settings)) as client:
        health = client.get("/healthz").json()
    assert health["status"] == "degraded"
    assert "bytes free on the disk of" in health["reasons"][0]
