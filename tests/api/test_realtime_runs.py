"""Real-time runs without the stack: the plan's schedule, the checks made against a real
exporter (started here on 127.0.0.1) before anything is stored, the run store's life cycle.
The whole path, with Prometheus, the log store, InfluxDB and Grafana, is tests/integration."""

from __future__ import annotations

import socket
import time
from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient

from api.config import Settings
from api.main import create_app
from api.runs import realtime
from api.runs.spec import RealtimeRunRequest
from api.store import Store
from exporters.config import ExporterConfig, ExporterSettings, load_config
from exporters.control import ControlChange
from exporters.server import ExporterServer
from landscape_model.engine import Simulation
from tests.integration.helpers import eventually

AUTH = {"Authorization": "Bearer t"}


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def exporter():
    srv = ExporterServer(
        Simulation("sd-benchmark-2003", seed=1), port=0, speed=50.0, config=load_config()
    )
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture
def client(tmp_path, exporter):
    settings = Settings(
        db_path=tmp_path / "db.sqlite",
        token="t",
        exporter_url=f"http://127.0.0.1:{exporter.port}",
        prometheus_url=f"http://127.0.0.1:{_closed_port()}",
    )
    with TestClient(create_app(settings)) as c:
        yield c


def test_the_plan_ramps_in_ten_levels_and_switches_faults_at_their_offsets() -> None:
    req = RealtimeRunRequest(
        mode="realtime",
        duration_s=1000,
        ramp_up_s=100,
        faults=[{"name": "slow-enqueue-link", "start_s": 300, "end_s": 500}],
    )
    assert req.change_points() == [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 300, 500]
    assert [req.users_at(t, 5790) for t in (0, 10, 95, 100)] == [579, 1158, 5790, 5790]
    assert req.faults_at(299) == () and req.faults_at(300) == ("slow-enqueue-link",)
    assert req.faults_at(500) == ()


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"faults": [{"name": "nope", "start_s": 0}]}, 422, "unknown fault(s): nope"),
        ({"scenario": "nope"}, 422, "unknown scenario 'nope'"),
        ({"ramp_up_s": 700}, 422, "ramp_up_s must be shorter"),
        ({}, 502, "cannot read Prometheus targets"),
    ],
)
def test_a_run_that_cannot_start_is_refused_and_stores_nothing(
    client, exporter, body, status, message
) -> None:
    r = client.post("/runs", json={"mode": "realtime", "duration_s": 600, **body}, headers=AUTH)
    assert r.status_code == status, r.text
    assert message in str(r.json()["detail"])
    assert client.get("/runs").json() == []
    assert exporter.live.run_id == ""  # the exporter was not touched


def test_without_the_exporter_a_run_is_a_502(tmp_path) -> None:
    settings = Settings(
        db_path=tmp_path / "db.sqlite", token="t", exporter_url=f"http://127.0.0.1:{_closed_port()}"
    )
    with TestClient(create_app(settings)) as c:
        r = c.post("/runs", json={"mode": "realtime", "duration_s": 600}, headers=AUTH)
        assert r.status_code == 502 and "cannot reach the exporter" in r.json()["detail"]
        assert c.get("/runs").json() == []


def test_a_run_in_progress_has_no_report_yet_and_one_left_by_a_crashed_api_is_interrupted(
    tmp_path,
) -> None:
    path = tmp_path / "db.sqlite"
    store = Store(path)
    run_id = store.runs.begin(
        kind="realtime",
        scenario="sd-benchmark-2003",
        label="",
        start=datetime.now(UTC),
        duration_s=60,
        ramp_up_s=0,
        spec={},  # stored before runs kept their plan: it cannot be resumed nor read back
    )
    assert store.runs.get(run_id).status == "running"
    assert Store(path).runs.get(run_id).status == "running"  # the CLI opening it: no change
    with TestClient(create_app(Settings(db_path=path, token="t"))) as c:
        run = eventually(
            lambda: (r := c.get(f"/runs/{run_id}").json())["status"] != "running" and r,
            timeout=10,
        )
        assert run["status"] == "interrupted", run
        assert "the API ended without stopping (a crash or kill)" in run["message"]
        r = c.get(f"/runs/{run_id}/report")
        assert r.status_code == 409 and "has no data" in r.json()["detail"]
        r = c.post(f"/runs/{run_id}/cancel", headers=AUTH)
        assert r.status_code == 409 and "is interrupted" in r.json()["detail"]
        assert c.post("/runs/nope/cancel", headers=AUTH).status_code == 404
        assert c.post(f"/runs/{run_id}/cancel").status_code == 401


def test_alerts_fired_in_a_window_are_listed_once_each(tmp_path) -> None:
    """Alertmanager repeats a firing alert every group interval; a report lists it once."""
    store = Store(tmp_path / "db.sqlite")

    def alert(name: str, starts: str, sid: str = "BMK") -> dict:
        return {
            "status": "firing",
            "starts_at": starts,
            "labels": {"alertname": name, "severity": "warning", "sid": sid, "sap_instance": "a"},
            "annotations": {"summary": f"{name} summary"},
        }

    inside, before = "2026-11-23T10:05:00+00:00", "2026-11-23T09:59:00+00:00"
    for _ in range(3):
        store.add_notifications("noc-warning", "g", [alert("SAPEnqueueTimeHigh", inside)])
    store.add_notifications("noc-warning", "g", [alert("SAPRollInTimeHigh", before)])
    store.add_notifications("noc-warning", "g", [alert("SAPRollOutTimeHigh", inside, "QAS")])
    fired = store.fired_between(
        datetime(2026, 11, 23, 10, 0, tzinfo=UTC), datetime(2026, 11, 23, 10, 10, tzinfo=UTC), "BMK"
    )
    assert [(a["alertname"], a["starts_at"]) for a in fired] == [("SAPEnqueueTimeHigh", inside)]
    assert fired[0]["summary"] == "SAPEnqueueTimeHigh summary"


EXPORTER_TOKEN = "exp-token"


def _exporter_on(port: int = 0, **kwargs) -> ExporterServer:
    srv = ExporterServer(
        Simulation("sd-benchmark-2003", seed=1),
        port=port,
        speed=50.0,
        control_token=EXPORTER_TOKEN,
        **{"config": load_config(), **kwargs},
    )
    srv.start()
    return srv


def _driver(
    settings: Settings, req: RealtimeRunRequest, wall_s: float
) -> tuple[Store, str, realtime.RealtimeRun]:
    """A run's driver at speed 50 for the scenario's 5,790 users, not started; its store
    and run id."""
    plan = realtime.LivePlan(
        speed=50.0,
        wall_step_s=0.4,
        full_users=5790,
        think_time_s=10.0,
        restore={"scenario": "sd-benchmark-2003", "faults": [], "users": None},
    )
    store = Store(settings.db_path)
    run_id = store.runs.begin(
        kind="realtime",
        scenario=req.scenario,
        label="",
        start=datetime.now(UTC),
        duration_s=wall_s,
        ramp_up_s=0,
        spec={},
    )
    return store, run_id, realtime.RealtimeRun(store, settings, store.runs.get(run_id), req, plan)


def test_the_driver_puts_back_a_plan_the_exporter_lost_and_records_the_gap(
    tmp_path, monkeypatch
) -> None:
    """Issue 17: an exporter restarted mid-run came back without the run's fault and the
    run ended 'finished' as if it had been applied. Here the exporter is restarted without
    a state file (the worst case): the driver gives the plan back and notes the gap."""
    monkeypatch.setattr(realtime, "read_window", lambda *a, **k: None)
    first = _exporter_on()
    port = first.port
    settings = Settings(
        db_path=tmp_path / "db.sqlite",
        token="t",
        exporter_url=f"http://127.0.0.1:{port}",
        exporter_token=EXPORTER_TOKEN,
        exporter_lease_s=3,
    )
    req = RealtimeRunRequest(
        mode="realtime",
        # 20 s of wall time at speed 50, the fault from 1 s to 19 s: on a loaded machine
        # (load 9 on 2 cores) putting the plan took over 4 s and an exporter restart 2-4 s,
        # and the plan put back must still hold the fault.
        duration_s=1000,
        ramp_up_s=0,
        faults=[{"name": "slow-enqueue-link", "start_s": 50, "end_s": 950}],
    )
    store, run_id, driver = _driver(settings, req, wall_s=20)
    driver.start()
    second = None
    try:
        eventually(lambda: first.sim.faults == ("slow-enqueue-link",), timeout=15, every=0.1)
        assert first.live.run_id == run_id and first.live.state.lease_until is not None
        first.stop()  # a kill: the new process knows nothing of the run
        time.sleep(0.5)
        second = _exporter_on(port)
        assert second.sim.faults == ()
        eventually(lambda: second.sim.faults == ("slow-enqueue-link",), timeout=15, every=0.1)
        assert second.live.run_id == run_id
        driver.join(timeout=30)
        assert not driver.is_alive()
        assert second.sim.faults == () and second.live.run_id == ""  # given back at the end
    finally:
        driver.cancel()
        if second is not None:
            second.stop()
    row = store.runs.get(run_id)
    assert row.status == "finished", row
    assert "the exporter did not hold the plan from" in row.message
    assert "out of reach" in row.message and "restarted at" in row.message


def test_users_over_the_exporters_cap_are_refused_before_anything_starts(tmp_path) -> None:
    """Issue 17: the API accepted 150,000 users the exporter (cap 100,000) refused at its
    first step, and the run ended `finished`. The exporter says its cap; prepare() holds
    the plan against it, so nothing is stored and the exporter is not touched."""
    exporter = _exporter_on(config=ExporterConfig(ExporterSettings(max_users=3000)))
    try:
        assert (
            realtime.ExporterControl(f"http://127.0.0.1:{exporter.port}").state()["max_users"]
            == 3000
        )
        settings = Settings(
            db_path=tmp_path / "db.sqlite",
            token="t",
            exporter_url=f"http://127.0.0.1:{exporter.port}",
            exporter_token=EXPORTER_TOKEN,
            prometheus_url=f"http://127.0.0.1:{_closed_port()}",
        )
        with TestClient(create_app(settings)) as c:
            for users in ({"users": 3001}, {}):  # given, or the scenario's 5,790
                r = c.post(
                    "/runs", json={"mode": "realtime", "duration_s": 600, **users}, headers=AUTH
                )
                assert r.status_code == 422, r.text
                assert "more than the live exporter holds (3000" in r.json()["detail"]
            assert c.get("/runs").json() == []
        assert exporter.live.run_id == "" and exporter.sim.scenario.users == 5790
    finally:
        exporter.stop()


def test_a_plan_the_exporter_refuses_mid_run_fails_the_run_with_its_message(
    tmp_path, monkeypatch
) -> None:
    """A 400 is an answer, not an outage: retrying cannot help, so the run ends `failed`
    with the exporter's reason instead of `finished` with an 'out of reach' gap."""
    monkeypatch.setattr(realtime, "read_window", lambda *a, **k: None)
    exporter = _exporter_on(config=ExporterConfig(ExporterSettings(max_users=3000)))
    settings = Settings(
        db_path=tmp_path / "db.sqlite",
        token="t",
        exporter_url=f"http://127.0.0.1:{exporter.port}",
        exporter_token=EXPORTER_TOKEN,
        exporter_lease_s=3,
    )
    req = RealtimeRunRequest(mode="realtime", duration_s=100, ramp_up_s=0)
    # 5,790 users (the scenario's), as an exporter configured lower after prepare() sees it.
    store, run_id, driver = _driver(settings, req, wall_s=2)
    try:
        driver.start()
        driver.join(timeout=20)
        assert not driver.is_alive()
    finally:
        driver.cancel()
        exporter.stop()
    row = store.runs.get(run_id)
    assert row.status == "failed", row
    assert "field 'users' must be an integer from 1 to 3000" in row.message
    assert "out of reach" not in row.message


def test_an_api_restart_ends_an_old_run_interrupted_and_frees_the_exporter(tmp_path) -> None:
    """Issue 17: an API killed mid-run left the exporter injecting the run's fault."""
    exporter = _exporter_on()
    try:
        store = Store(tmp_path / "db.sqlite")
        run_id = store.runs.begin(
            kind="realtime",
            scenario="sd-benchmark-2003",
            label="",
            start=datetime.now(UTC),
            duration_s=600,
            ramp_up_s=0,
            spec={},
        )
        realtime.ExporterControl(f"http://127.0.0.1:{exporter.port}", EXPORTER_TOKEN).apply(
            ControlChange(faults=["slow-enqueue-link"], run_id=run_id, lease_s=600)
        )
        settings = Settings(
            db_path=tmp_path / "db.sqlite",
            token="t",
            exporter_url=f"http://127.0.0.1:{exporter.port}",
            exporter_token=EXPORTER_TOKEN,
        )
        with TestClient(create_app(settings)) as c:
            eventually(lambda: exporter.live.run_id == "", timeout=10, every=0.2)
            assert exporter.sim.faults == ()
            run = eventually(
                lambda: (r := c.get(f"/runs/{run_id}").json())["status"] != "running" and r,
                timeout=10,
            )
            assert run["status"] == "interrupted", run
            assert "its faults were removed from the exporter at" in run["message"]
    finally:
        exporter.stop()


FAULT = "slow-enqueue-link"


def _stored_run(store: Store, req: RealtimeRunRequest, speed: float = 50.0) -> str:
    """A real-time run as LiveRuns.start stores it: its request and plan in the spec."""
    plan = realtime.LivePlan(
        speed=speed,
        wall_step_s=0.4,
        full_users=5790,
        think_time_s=10.0,
        restore={"scenario": "sd-benchmark-2003", "faults": [], "users": None},
    )
    return store.runs.begin(
        kind="realtime",
        scenario=req.scenario,
        label="",
        start=datetime.now(UTC),
        duration_s=plan.wall(req.duration_s),
        ramp_up_s=req.ramp_up_s,
        spec=req.model_dump(mode="json") | plan.stored(),
    )


def test_a_planned_stop_leaves_the_run_to_the_next_api_which_resumes_it(
    tmp_path, monkeypatch
) -> None:
    """Item 5: a run whose window has not ended goes on after a restart. The planned stop
    (lifespan shutdown, as SIGTERM from `wlmon down`) leaves it 'running', the exporter
    holding the plan; the next API puts the fault in force now back and the run finishes,
    its record naming the stop and the resumption."""
    read = []
    monkeypatch.setattr(realtime, "read_window", lambda *a, **k: read.append(a[2:4]))
    exporter = _exporter_on()
    settings = Settings(
        db_path=tmp_path / "db.sqlite",
        token="t",
        exporter_url=f"http://127.0.0.1:{exporter.port}",
        exporter_token=EXPORTER_TOKEN,
        exporter_lease_s=30,
    )
    req = RealtimeRunRequest(
        mode="realtime",
        duration_s=400,  # 8 s of wall time at speed 50
        faults=[{"name": FAULT, "start_s": 0}],
    )
    try:
        store = Store(settings.db_path)
        run_id = _stored_run(store, req)
        with TestClient(create_app(settings)) as c:  # a crash left it: resumed
            eventually(lambda: exporter.sim.faults == (FAULT,), timeout=5, every=0.1)
            assert c.get(f"/runs/{run_id}").json()["status"] == "running"
        # The client's exit is the API's planned stop.
        row = store.runs.get(run_id)
        assert row.status == "running", row
        assert exporter.live.run_id == run_id and exporter.sim.faults == (FAULT,)
        # What the lease running out does while the API is down.
        realtime.ExporterControl(f"http://127.0.0.1:{exporter.port}", EXPORTER_TOKEN).apply(
            ControlChange(faults=[], run_id="")
        )
        assert exporter.sim.faults == ()
        with TestClient(create_app(settings)) as c:
            eventually(lambda: exporter.sim.faults == (FAULT,), timeout=5, every=0.1)
            running = c.get(f"/runs/{run_id}").json()
            assert running["status"] == "running"
            assert "(a planned stop)" in running["message"], running
            run = eventually(
                lambda: (r := c.get(f"/runs/{run_id}").json())["status"] != "running" and r,
                timeout=20,
            )
    finally:
        exporter.stop()
    assert run["status"] == "finished", run
    assert "the API was stopped (a planned stop) at" in run["message"]
    assert "resumed at" in run["message"]
    assert len(read) == 1  # the whole window, once


def test_a_run_whose_window_ended_while_the_api_was_down_is_read_up_to_the_stop(
    tmp_path, monkeypatch
) -> None:
    """Item 5: its report held nothing ('no data'). Now the window up to the planned stop is
    read back from Prometheus and the run ends `interrupted`, naming the planned stop."""
    read = []
    monkeypatch.setattr(realtime, "read_window", lambda *a, **k: read.append(a[2:4]))
    exporter = _exporter_on()
    settings = Settings(
        db_path=tmp_path / "db.sqlite",
        token="t",
        exporter_url=f"http://127.0.0.1:{exporter.port}",
        exporter_token=EXPORTER_TOKEN,
    )
    req = RealtimeRunRequest(mode="realtime", duration_s=200)  # 4 s of wall time
    try:
        store = Store(settings.db_path)
        run_id = _stored_run(store, req)
        with TestClient(create_app(settings)):
            time.sleep(1.5)  # resumed, driven for a while
        stopped_at = datetime.now(UTC)
        time.sleep(3)  # the window ends while the API is down
        with TestClient(create_app(settings)) as c:
            run = eventually(
                lambda: (r := c.get(f"/runs/{run_id}").json())["status"] != "running" and r,
                timeout=10,
            )
    finally:
        exporter.stop()
    assert run["status"] == "interrupted", run
    assert "the API was stopped (a planned stop) at" in run["message"]
    assert "ended at its restart" in run["message"]
    ((start, end),) = read
    assert start == datetime.fromisoformat(run["start"])
    assert abs((end - stopped_at).total_seconds()) < 1.0  # up to the stop, not the window's end
    assert datetime.fromisoformat(run["end"]) == end
