"""The exporter's control endpoint is safe: bounded fields, all-or-nothing changes, a bearer
token on writes, and a state that survives restarts and expires with its lease."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from exporters.config import load_config
from exporters.control import ControlState, StateFile
from exporters.server import ExporterServer
from landscape_model.des import DiscreteEventSimulation
from landscape_model.engine import Simulation

TOKEN = "s3cret"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _server(**kwargs) -> ExporterServer:
    srv = ExporterServer(
        Simulation("sd-benchmark-2003", seed=1),
        host="127.0.0.1",
        port=0,
        speed=50.0,
        control_token=TOKEN,
        config=load_config(),
        **kwargs,
    )
    srv.start()
    return srv


@pytest.fixture
def server():
    srv = _server()
    yield srv
    srv.stop()


def _url(srv: ExporterServer) -> str:
    return f"http://127.0.0.1:{srv.port}/control/faults"


@pytest.mark.parametrize("users", [10**14, 2**63, 100_001, -1, 0, 1.5, True])
def test_out_of_bounds_users_are_refused_and_the_exporter_keeps_working(server, users) -> None:
    """Issue 17: 10^14 or 2^63 users once wedged every later control call with a 500."""
    before = (server.sim.scenario.users, server.sim.faults, dict(server.sim.overrides))
    r = httpx.put(
        _url(server), headers=AUTH, json={"faults": ["db-bottleneck"], "users": users}, timeout=30
    )
    assert r.status_code == 400, r.text
    assert "field 'users' must be an integer from 1 to 100000" in r.json()["error"]
    assert (server.sim.scenario.users, server.sim.faults, dict(server.sim.overrides)) == before
    assert httpx.get(f"http://127.0.0.1:{server.port}/metrics").status_code == 200
    good = httpx.put(_url(server), headers=AUTH, json={"faults": []}, timeout=30)
    assert good.status_code == 200, good.text
    good = httpx.put(_url(server), headers=AUTH, json={"users": 2000}, timeout=30)
    assert good.status_code == 200 and good.json()["users"] == 2000


def test_a_failing_model_call_leaves_the_model_as_it_was(server, monkeypatch) -> None:
    """Within the bounds the model may still fail (here: made to run out of memory); the
    previous state is put back and the next call works."""
    sim = server.sim
    real = sim._resolve

    def exhausted(faults):
        if sim.overrides.get("users") == 4321:
            raise MemoryError
        return real(faults)

    monkeypatch.setattr(sim, "_resolve", exhausted)
    r = httpx.put(_url(server), headers=AUTH, json={"faults": ["db-bottleneck"], "users": 4321})
    assert r.status_code == 400 and "nothing was changed" in r.json()["error"]
    assert sim.faults == () and sim.scenario.users == 5790 and "users" not in sim.overrides
    assert server.live.state.faults == ()
    r = httpx.put(_url(server), headers=AUTH, json={"faults": ["db-bottleneck"], "users": 3000})
    assert r.status_code == 200, r.text
    assert sim.faults == ("db-bottleneck",) and sim.scenario.users == 3000


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"scenario": 7}, "unknown scenario 7"),
        ({"lease_s": 5}, "field 'lease_s' needs a run_id"),
        ({"run_id": "r", "lease_s": 0}, "field 'lease_s' must be a number"),
        ({"run_id": "r", "lease_s": 1e9}, "field 'lease_s' must be a number"),
        ({"fault": ["db-bottleneck"]}, "unknown field(s): fault"),
        ([1, 2], "body must be a JSON object"),
    ],
)
def test_other_bad_fields_are_400(server, body, message) -> None:
    r = httpx.put(_url(server), headers=AUTH, json=body)
    assert r.status_code == 400
    assert message in r.json()["error"]
    assert server.live.state == ControlState(scenario="sd-benchmark-2003")


def test_writes_need_the_token(server) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
        r = httpx.put(_url(server), headers=headers, json={"faults": ["db-bottleneck"]})
        assert r.status_code == 401, headers
        assert "Bearer" in r.json()["error"]
    assert server.sim.faults == ()
    assert httpx.get(_url(server)).status_code == 200  # reading stays open


def test_without_a_token_writes_are_disabled() -> None:
    srv = ExporterServer(
        Simulation("sd-benchmark-2003", seed=1), host="127.0.0.1", port=0, config=load_config()
    )
    srv.start()
    try:
        r = httpx.put(_url(srv), headers=AUTH, json={"faults": ["db-bottleneck"]})
        assert r.status_code == 403
        assert "WLMON_EXPORTER_TOKEN" in r.json()["error"]
    finally:
        srv.stop()


def test_the_state_survives_a_restart(tmp_path) -> None:
    path = tmp_path / "exporter" / "control.json"
    srv = _server(state_file=path)
    try:
        r = httpx.put(
            _url(srv),
            headers=AUTH,
            json={"faults": ["db-bottleneck"], "users": 1234, "run_id": "r-7", "lease_s": 600},
        )
        assert r.status_code == 200, r.text
        saved = json.loads(path.read_text())
        assert saved["faults"] == ["db-bottleneck"] and saved["run_id"] == "r-7"
        # A refused call does not touch the file.
        httpx.put(_url(srv), headers=AUTH, json={"users": 10**14})
        assert json.loads(path.read_text()) == saved
    finally:
        srv.stop()
    again = _server(state_file=path)
    try:
        state = httpx.get(_url(again)).json()
        assert (state["faults"], state["users"], state["run_id"]) == (
            ["db-bottleneck"],
            1234,
            "r-7",
        )
        assert state["lease_until"] == pytest.approx(saved["lease_until"])
    finally:
        again.stop()


def test_a_restart_keeps_the_engine_it_was_started_on(tmp_path) -> None:
    """Issue 24 item 4: an exporter on --engine des came back analytic after a restart
    (its restore path always built the analytic model)."""
    path = tmp_path / "control.json"
    StateFile(path).save(
        ControlState(scenario="sd-two-tier-1core", faults=("db-bottleneck",), users=30)
    )
    srv = ExporterServer(
        DiscreteEventSimulation("sd-two-tier-1core", seed=1),
        host="127.0.0.1",
        port=0,
        speed=1.0,
        control_token=TOKEN,
        config=load_config(),
        state_file=path,
    )
    srv.start()
    try:
        assert type(srv.sim) is DiscreteEventSimulation
        assert (list(srv.sim.faults), srv.sim.scenario.users) == (["db-bottleneck"], 30)
        state = httpx.get(_url(srv)).json()
        assert (state["faults"], state["users"]) == (["db-bottleneck"], 30)
    finally:
        srv.stop()


def test_an_expired_lease_is_not_restored(tmp_path) -> None:
    path = tmp_path / "control.json"
    StateFile(path).save(
        ControlState(
            scenario="sd-benchmark-2003",
            faults=("db-bottleneck",),
            users=100,
            run_id="gone",
            lease_until=time.time() - 1,
        )
    )
    srv = _server(state_file=path)
    try:
        state = httpx.get(_url(srv)).json()
        assert (state["faults"], state["run_id"], state["users"]) == ([], "", 5790)
    finally:
        srv.stop()


def test_a_broken_state_file_is_ignored(tmp_path) -> None:
    path = tmp_path / "control.json"
    path.write_text('{"scenario": "sd-benchmark-2003", "faults": ["nope"]}')
    srv = _server(state_file=path)
    try:
        assert httpx.get(_url(srv)).json()["faults"] == []
    finally:
        srv.stop()


def test_the_exporter_drops_a_run_whose_lease_runs_out(server) -> None:
    r = httpx.put(
        _url(server),
        headers=AUTH,
        json={"faults": ["db-bottleneck"], "run_id": "r-9", "lease_s": 5},
    )
    assert r.status_code == 200
    first_expiry = time.monotonic() + 5
    # Renewed: still held past the first lease (margins for a loaded machine).
    time.sleep(2.5)
    httpx.put(_url(server), headers=AUTH, json={"run_id": "r-9", "lease_s": 5})
    time.sleep(max(0.0, first_expiry - time.monotonic()) + 1)
    assert server.live.state.run_id == "r-9" and server.sim.faults == ("db-bottleneck",)
    deadline = time.monotonic() + 10
    while server.live.state.run_id and time.monotonic() < deadline:
        time.sleep(0.1)
    state = httpx.get(_url(server)).json()
    assert (state["faults"], state["run_id"], state["lease_until"]) == ([], "", None)
