"""Every run ends (issue 38): past the cap a real-time run's driver died on SQLITE_FULL in
`finish`, the run stayed `running`, cancel answered 409, /healthz said ok and `wlmon down`
waited on it until a restart. Each failure is driven here on a real exporter (127.0.0.1):
the cap, a full disk, an exception in the driver; and a run no thread drives."""

from __future__ import annotations

from datetime import UTC, datetime

import psutil
import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from api.config import Settings
from api.main import create_app
from api.runs import realtime
from api.runs.spec import RealtimeRunRequest
from api.store import Store
from tests.api.live_api import live_api
from tests.api.test_realtime_runs import EXPORTER_TOKEN, _exporter_on
from tests.api.test_storage_cap import (  # noqa: F401 (the fixture applies here too)
    CAP,
    PERFMON,
    _settings_read_afresh,
    ballast,
    fill,
    small_filesystem,
)
from tests.integration.helpers import eventually
from wlmon.cli import app as cli

AUTH = {"Authorization": "Bearer t"}
PLAN = realtime.LivePlan(
    speed=50.0,
    wall_step_s=0.4,
    full_users=5790,
    think_time_s=10.0,
    restore={"scenario": "sd-benchmark-2003", "faults": [], "users": None},
)
runner = CliRunner()


@pytest.fixture(scope="module")
def exporter():
    srv = _exporter_on()
    yield srv
    srv.stop()


def _record(tmp_path):
    from api.services import imports

    scratch = Store(tmp_path / "scratch.sqlite")
    with PERFMON.open("rb") as f:
        run = imports.store_perfmon(scratch, f, "data")
    return scratch.runs.data(run.id)


def _settings(db, exporter) -> Settings:
    return Settings(
        db_path=db,
        token="t",
        db_max_bytes=CAP,
        min_free_bytes=0,
        exporter_url=f"http://127.0.0.1:{exporter.port}",
        exporter_token=EXPORTER_TOKEN,
        exporter_lease_s=3,
    )


def _driver(store: Store, settings: Settings, wall_s: float = 1.6):
    req = RealtimeRunRequest(mode="realtime", duration_s=wall_s * PLAN.speed, ramp_up_s=0)
    run_id = store.runs.begin(
        kind="realtime",
        scenario=req.scenario,
        label="",
        start=datetime.now(UTC),
        duration_s=wall_s,
        ramp_up_s=0,
        spec={},
    )
    return run_id, realtime.RealtimeRun(store, settings, store.runs.get(run_id), req, PLAN)


def _ended(store: Store, run_id: str, driver: realtime.RealtimeRun, timeout: float = 30) -> dict:
    driver.join(timeout)
    assert not driver.is_alive(), "the driver did not end"
    row = store.runs.get(run_id)
    assert row.status != "running", row
    return row


def test_an_exception_in_the_driver_ends_the_run_failed_with_it(
    tmp_path, exporter, monkeypatch
) -> None:
    monkeypatch.setattr(realtime, "read_window", lambda *a, **k: None)
    store = Store(tmp_path / "db.sqlite")
    run_id, driver = _driver(store, _settings(tmp_path / "db.sqlite", exporter))

    def injected(offset: float) -> dict:
        raise KeyError("injected into the driver")

    monkeypatch.setattr(driver, "_expected", injected)
    driver.start()
    row = _ended(store, run_id, driver)
    assert row.status == "failed" and "injected into the driver" in row.message, row
    assert exporter.live.run_id == ""  # the exporter was given back


def test_an_exception_while_ending_still_ends_the_run(tmp_path, exporter, monkeypatch) -> None:
    """A bug reading the window back (not a Prometheus outage) left the run running."""

    def broken(*a, **k):
        raise ZeroDivisionError("injected into the read-back")

    monkeypatch.setattr(realtime, "read_window", broken)
    store = Store(tmp_path / "db.sqlite")
    run_id, driver = _driver(store, _settings(tmp_path / "db.sqlite", exporter))
    driver.start()
    row = _ended(store, run_id, driver)
    assert row.status == "failed", row
    assert "reading its window failed: ZeroDivisionError: injected" in row.message


def test_past_the_cap_the_run_ends_failed_keeping_its_row(tmp_path, exporter, monkeypatch) -> None:
    """Its data refused by the cap, the run ends `failed` without it, naming the cap; the
    refusal counts where /healthz sees it."""
    data = _record(tmp_path)
    monkeypatch.setattr(realtime, "read_window", lambda *a, **k: data)
    monkeypatch.setattr(realtime, "END_RETRY_S", 0.2)
    db = tmp_path / "db.sqlite"
    store = Store(db, CAP)
    run_id, driver = _driver(store, _settings(db, exporter))
    fill(store)
    driver.start()
    eventually(lambda: driver.pending is not None or not driver.is_alive(), timeout=30)
    if driver.pending is not None:  # even the row's update found no page: make room
        store._conn.execute("DELETE FROM notifications")
    row = _ended(store, run_id, driver)
    assert row.status == "failed", row
    assert f"its end was refused: the API's database {db} cannot grow" in row.message
    assert "WLMON_API_DB_MAX_BYTES" in row.message
    assert store.runs.data(run_id) is None
    assert store.failures.read().count >= 1
    with TestClient(create_app(_settings(db, exporter))) as client:
        assert client.get(f"/runs/{run_id}").json()["status"] == "failed"


def test_an_end_the_database_refuses_is_retried_until_room_comes(
    tmp_path, exporter, monkeypatch
) -> None:
    """The run's end does not fit at all (its message needs overflow pages, the database is
    full to its cap): the API answers the end meanwhile, cancel says it has ended, /healthz
    is degraded; when room is made (runs deleted) the end is stored."""
    monkeypatch.setattr(realtime, "read_window", lambda *a, **k: None)
    monkeypatch.setattr(realtime, "END_RETRY_S", 0.2)
    db = tmp_path / "db.sqlite"
    settings = _settings(db, exporter)
    with TestClient(create_app(settings)) as client:
        store = client.app.state.store
        run_id, driver = _driver(store, settings, wall_s=30)

        def refused(offset: float) -> dict:
            raise RuntimeError("the exporter's long answer: " + "x" * 6000)

        monkeypatch.setattr(driver, "_expected", refused)
        fill(store)
        client.app.state.live._driver = driver  # the app's driver, as start() sets it
        driver.start()
        eventually(lambda: driver.pending is not None, timeout=30)
        run = client.get(f"/runs/{run_id}").json()
        assert run["status"] == "failed" and "not stored yet" in run["message"], run
        assert "the exporter's long answer" in run["message"]
        r = client.post(f"/runs/{run_id}/cancel", headers=AUTH)
        assert r.status_code == 409 and "waits for room" in r.json()["detail"]
        assert client.get("/healthz").json()["status"] == "degraded"
        assert store.runs.get(run_id).status == "running"  # not stored: no room
        store._conn.execute("DELETE FROM notifications")  # room made
        row = _ended(store, run_id, driver)
        assert row.status == "failed" and "the exporter's long answer" in row.message
        assert client.get(f"/runs/{run_id}").json()["status"] == "failed"


def test_on_a_full_disk_the_run_ends_failed(tmp_path, exporter, monkeypatch) -> None:
    data = _record(tmp_path)
    monkeypatch.setattr(realtime, "read_window", lambda *a, **k: data)
    monkeypatch.setattr(realtime, "END_RETRY_S", 0.2)
    with small_filesystem(tmp_path) as mnt:
        db = mnt / "db.sqlite"
        store = Store(db)
        run_id, driver = _driver(
            store, _settings(db, exporter).model_copy(update={"db_max_bytes": None})
        )
        room = ballast(mnt)
        driver.start()
        eventually(lambda: driver.pending is not None or not driver.is_alive(), timeout=30)
        if driver.pending is not None:
            room.unlink()  # the disk cleaned: the end goes through
        row = _ended(store, run_id, driver)
        assert row.status == "failed", row
        # The first write the full disk refused names it: the run's sign of life, or its end.
        assert "the disk is full" in row.message, row
        assert any(
            why in row.message
            for why in ("a write of the run's progress was refused", "its end was refused")
        ), row
        assert store.failures.read().count >= 1


def test_cancel_ends_a_run_no_thread_drives(tmp_path) -> None:
    """A run stored as running with no driver (a driver gone by a bug, another process)
    was answered 409 'is running' for ever."""
    db = tmp_path / "db.sqlite"
    settings = Settings(db_path=db, token="t", exporter_url="http://127.0.0.1:1")
    with TestClient(create_app(settings)) as client:
        run_id = client.app.state.store.runs.begin(
            kind="realtime",
            scenario="sd-benchmark-2003",
            label="orphan",
            start=datetime.now(UTC),
            duration_s=600,
            ramp_up_s=0,
            spec={},
        )
        r = client.post(f"/runs/{run_id}/cancel", headers=AUTH)
        assert r.status_code == 202, r.text
        assert r.json()["status"] == "cancelled"
        assert "no driver was running it" in r.json()["message"]
        r = client.post(f"/runs/{run_id}/cancel", headers=AUTH)
        assert r.status_code == 409 and "is cancelled" in r.json()["detail"]


def _listening_pid(url: str) -> int:
    port = int(url.rsplit(":", 1)[1])
    for conn in psutil.net_connections(kind="tcp"):
        if conn.laddr and conn.laddr.port == port and conn.status == psutil.CONN_LISTEN:
            return conn.pid
    raise AssertionError(f"nothing listens on {url}")


def _record_api(state, url: str) -> None:
    """The stack's record of its services (wlmon/stack/runtime.py) holding this API."""
    import json

    proc = psutil.Process(_listening_pid(url))
    run = state / "run"
    run.mkdir(parents=True, exist_ok=True)
    (run / "services.json").write_text(
        json.dumps(
            [
                {
                    "name": "api",
                    "pid": proc.pid,
                    "url": url,
                    "health_url": f"{url}/healthz",
                    "executable": proc.cmdline()[0],
                    "log": str(state / "api.log"),
                    "started": proc.create_time(),
                }
            ]
        )
    )


def test_wlmon_down_waits_only_on_a_run_a_running_api_drives(tmp_path, exporter) -> None:
    """`wlmon down` refused while a phantom run was stored as running. It asks while the
    stack's API drives the run, and not once no process drives it."""
    state = tmp_path / "state"
    db = state / "data" / "api" / "wlmon.sqlite"
    req = RealtimeRunRequest(mode="realtime", duration_s=3000, ramp_up_s=0)
    run_id = Store(db).runs.begin(
        kind="realtime",
        scenario=req.scenario,
        label="night test",
        start=datetime.now(UTC),
        duration_s=PLAN.wall(req.duration_s),
        ramp_up_s=0,
        spec=req.model_dump(mode="json") | PLAN.stored(),
    )
    env = {"WLMON_STATE_DIR": str(state), "COLUMNS": "300"}
    settings = {
        "exporter_url": f"http://127.0.0.1:{exporter.port}",
        "exporter_token": EXPORTER_TOKEN,
    }
    with live_api(db, "t", **settings) as url:  # it resumes the run and drives it
        _record_api(state, url)
        assert httpx_status(url, run_id) == "running"
        asked = runner.invoke(cli, ["down"], env=env, input="n\n")
        assert asked.exit_code == 2, asked.output
        said = " ".join(asked.output.split())
        assert f"1 real-time run(s) in progress: {run_id} (night test)" in said
        assert "wlmon down --force" in said
        no_terminal = runner.invoke(cli, ["down"], env=env)  # nothing to answer with
        assert no_terminal.exit_code == 2
    # The API is gone: the run is still stored as running, but nothing drives it.
    assert Store(db).runs.get(run_id).status == "running"
    down = runner.invoke(cli, ["down"], env=env)
    assert down.exit_code == 0, down.output
    assert "in progress" not in down.output


def httpx_status(url: str, run_id: str) -> str:
    import httpx

    return httpx.get(f"{url}/runs/{run_id}", timeout=10).json()["status"]
