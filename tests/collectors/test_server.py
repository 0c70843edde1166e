"""The exporter over HTTP on 127.0.0.1: /metrics, /healthz, switching faults."""

from __future__ import annotations

import time

import httpx
import pytest

from exporters.config import load_config
from exporters.server import ExporterServer, LiveModel
from landscape_model.engine import Simulation

TOKEN = "test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def server():
    srv = ExporterServer(
        Simulation("sd-benchmark-2003", seed=1),
        host="127.0.0.1",
        port=0,
        speed=50.0,
        control_token=TOKEN,
        config=load_config(),
    )
    srv.start()
    yield srv
    srv.stop()


def _base(srv) -> str:
    return f"http://127.0.0.1:{srv.port}"


def test_metrics_grow_in_real_time(server) -> None:
    first = httpx.get(_base(server) + "/metrics").text
    time.sleep(0.5)
    second = httpx.get(_base(server) + "/metrics")
    assert second.status_code == 200
    assert second.headers["content-type"].startswith("text/plain")
    assert "sap_workload_steps_total" in second.text

    def simulated(text: str) -> float:
        line = next(
            x for x in text.splitlines() if x.startswith("wlmon_model_simulated_seconds_total")
        )
        return float(line.split()[-1])

    assert simulated(second.text) > simulated(first)


def test_faults_switch_while_running(server) -> None:
    r = httpx.put(
        _base(server) + "/control/faults", headers=AUTH, json={"faults": ["slow-enqueue-link"]}
    )
    assert r.status_code == 200
    assert r.json()["faults"] == ["slow-enqueue-link"]
    assert httpx.get(_base(server) + "/control/faults").json()["faults"] == ["slow-enqueue-link"]
    assert server.sim.faults == ("slow-enqueue-link",)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"faults": ["nope"]}, "unknown fault(s): nope"),
        ({"faults": "db-bottleneck"}, "field 'faults' must be a list"),
        ("not json", "body is not JSON"),
        ({"faults": [], "users": 0}, "field 'users' must be an integer from 1"),
        ({"faults": [], "users": "many"}, "field 'users' must be an integer from 1"),
        ({"faults": [], "run_id": "a b"}, "field 'run_id' must be up to 64"),
    ],
)
def test_bad_control_input_is_a_400_and_changes_nothing(server, body, message) -> None:
    before = server.sim.faults
    if isinstance(body, str):
        r = httpx.put(_base(server) + "/control/faults", headers=AUTH, content=body)
    else:
        r = httpx.put(_base(server) + "/control/faults", headers=AUTH, json=body)
    assert r.status_code == 400
    assert message in r.json()["error"]
    assert server.sim.faults == before
    assert server.live.users == 5790 and server.live.run_id == ""


def test_healthz_and_unknown_paths(server) -> None:
    assert httpx.get(_base(server) + "/healthz").json()["status"] == "ok"
    assert httpx.get(_base(server) + "/nope").status_code == 404


def test_live_model_replaces_its_simulation_and_keeps_running(fixture_catalog) -> None:
    live = LiveModel(Simulation("mmc", seed=1, catalog=fixture_catalog), speed=100.0)
    live.start()
    try:
        first = live.sim
        live.reconfigure({"scenario": "mmc-half", "faults": ["busier"]})
        assert live.sim is not first and live.faults == ("busier",)
        assert live.scenario_name == "mmc-half" and live.users == 10000
        stopped_at = first.tick
        time.sleep(0.3)
        assert live.snapshot().totals.sim_time > 0
        assert first.tick == stopped_at  # the old model no longer advances
    finally:
        live.stop()


def test_the_exporters_own_users_are_what_a_run_returns_to(fixture_catalog) -> None:
    """`wlmon exporter --users 3` (a fleet member below its scenario's benchmark limit):
    a run's users end, or `users: null`, and the model is back at 3, not at the scenario's
    own; a switch to another scenario runs it at 3 too."""
    own = fixture_catalog.scenario("mmc").users
    sim = Simulation("mmc", seed=1, catalog=fixture_catalog, overrides={"users": 3})
    live = LiveModel(sim, speed=100.0, default_users=3)
    live.start()
    try:
        assert own != 3 and live.users == 3
        live.reconfigure({"users": 7, "run_id": "r1"})
        assert live.users == 7
        live.reconfigure({"users": None, "run_id": ""})
        assert live.users == 3
        live.reconfigure({"scenario": "mmc-half", "faults": ["busier"]})
        assert live.users == 3
    finally:
        live.stop()


def test_scenario_switches_while_running(server) -> None:
    r = httpx.put(
        _base(server) + "/control/faults", headers=AUTH, json={"scenario": "nope", "faults": []}
    )
    assert r.status_code == 400
    assert "unknown scenario 'nope'" in r.json()["error"]
    before = server.sim
    r = httpx.put(
        _base(server) + "/control/faults",
        headers=AUTH,
        json={"scenario": "sd-benchmark-2003", "faults": []},
    )
    assert r.status_code == 200
    assert server.sim is before  # same scenario: only the faults change
    assert "sd-benchmark-2003" in r.json()["scenarios"]


def test_users_and_run_id_are_set_and_cleared(server) -> None:
    """A real-time run ramps users and tags the exporter's run events with its id."""
    r = httpx.put(
        _base(server) + "/control/faults",
        headers=AUTH,
        json={"faults": [], "users": 579, "run_id": "r-1"},
    )
    assert r.status_code == 200, r.text
    state = r.json()
    assert (state["users"], state["run_id"], state["speed"]) == (579, "r-1", 50.0)
    assert server.sim.scenario.users == 579
    r = httpx.put(
        _base(server) + "/control/faults", headers=AUTH, json={"faults": [], "users": None}
    )
    assert r.json()["users"] == 5790  # the scenario's own (seed 000: 5,790 users)
    assert r.json()["run_id"] == "r-1"  # kept until cleared
    assert (
        httpx.put(
            _base(server) + "/control/faults", headers=AUTH, json={"faults": [], "run_id": ""}
        ).json()["run_id"]
        == ""
    )
