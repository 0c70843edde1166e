"""POST /runs refuses plans outside its bounds with a 422 naming the field, and stores
nothing (issue 17: users 2**63 or a NaN duration answered 500; users "1000000000" held
gigabytes; windows past the run's end and a start in year 1 were accepted; a SID with a
quote reached PromQL)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient

from api.config import Settings
from api.main import create_app
from api.runs.fromprom import label_value
from api.runs.spec import MAX_USERS

AUTH = {"Authorization": "Bearer t"}
END = datetime.now(UTC) - timedelta(hours=1)
EXTERNAL = {
    "mode": "external",
    "start": (END - timedelta(minutes=10)).isoformat(),
    "end": END.isoformat(),
}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    settings = Settings(
        db_path=tmp_path_factory.mktemp("bounds") / "db.sqlite",
        token="t",
        max_fast_run_s=600,
        # Nothing listens: a plan that passed validation would answer 502, not 422.
        prometheus_url="http://127.0.0.1:1",
        exporter_url="http://127.0.0.1:1",
    )
    with TestClient(create_app(settings)) as c:
        yield c


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ('{"duration_s": 600, "users": 9223372036854775808}', "users"),
        (f'{{"duration_s": 600, "users": {MAX_USERS + 1}}}', "users"),
        ('{"duration_s": 600, "users": "1000000000"}', "users"),
        ('{"duration_s": 600, "users": 1.5}', "users"),
        ('{"duration_s": NaN}', "duration_s"),
        ('{"duration_s": Infinity}', "duration_s"),
        ('{"duration_s": "600"}', "duration_s"),
        ('{"duration_s": 86401}', "duration_s"),
        ('{"duration_s": 600, "resolution_s": 0.5}', "resolution_s"),
        ('{"duration_s": 60, "resolution_s": 120}', "resolution_s"),
        ('{"duration_s": 600, "seed": -1}', "seed"),
        ('{"duration_s": 600, "start": "0001-01-01T00:00:00Z"}', "start"),
        ('{"duration_s": 600, "start": "9999-12-31T23:59:59Z"}', "start"),
        (
            '{"duration_s": 600, "faults": [{"name": "slow-enqueue-link", "start_s": 10,'
            ' "end_s": 700}]}',
            "faults[0].end_s",
        ),
        ('{"duration_s": 600, "faults": [{"name": "a\\"b", "start_s": 10}]}', "name"),
        ('{"duration_s": 600, "scenario": "../etc"}', "scenario"),
        ('{"mode": "realtime", "duration_s": 600, "users": "5"}', "users"),
    ],
)
def test_out_of_bounds_plans_are_422_naming_the_field(client, body, field) -> None:
    before = client.get("/runs").json()
    r = client.post("/runs", content=body, headers=AUTH | {"Content-Type": "application/json"})
    assert r.status_code == 422, r.text
    assert field in str(r.json()["detail"])
    assert client.get("/runs").json() == before


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"sid": 'BMK"} or vector(1) or {a="'}, "sid"),
        ({"sid": "bmk"}, "sid"),
        ({"start": "0001-01-01T00:00:00Z"}, "start"),
        ({"start": (END - timedelta(days=200)).isoformat(), "resolution_s": 1}, "resolution_s"),
        ({"users": 10**12}, "users"),
    ],
)
def test_out_of_bounds_windows_are_422(client, change, field) -> None:
    r = client.post("/runs", json=EXTERNAL | change, headers=AUTH)
    assert r.status_code == 422, r.text
    assert field in str(r.json()["detail"])


def test_a_fast_run_longer_than_the_setting_is_422(client) -> None:
    r = client.post("/runs", json={"duration_s": 601}, headers=AUTH)
    assert r.status_code == 422
    assert "WLMON_API_MAX_FAST_RUN_S" in r.json()["detail"]


def test_label_values_reach_promql_as_literals() -> None:
    assert label_value("BMK") == '"BMK"'
    assert label_value('a"b\\c\nd') == '"a\\"b\\\\c\\nd"'
