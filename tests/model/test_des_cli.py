"""`--engine des|analytic` on wlmon simulate, wlmon run (and the API's fast runs) and the
exporter's live model."""

from __future__ import annotations

import json
import sqlite3

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from api.config import Settings, get_settings
from api.main import create_app
from exporters.server import LiveModel
from landscape_model.des import DiscreteEventSimulation
from landscape_model.engine import Simulation
from wlmon.cli import app
from wlmon.cli import serve as serve_cli

runner = CliRunner()


def test_simulate_on_the_des_prints_the_same_document() -> None:
    args = ["simulate", "--duration", "40s", "--seed", "3", "--json"]
    des = runner.invoke(app, [*args, "--engine", "des"])
    analytic = runner.invoke(app, [*args, "--engine", "analytic"])
    assert des.exit_code == 0, des.output
    a, b = json.loads(des.stdout), json.loads(analytic.stdout)
    assert set(a) == set(b)
    assert (a["engine"], b["engine"]) == ("des", "analytic")
    assert [r["task_type"] for r in a["summary"]] == ["dialog", "update"]
    assert a["summary"][0]["steps"] > 15_000  # every step of 40 s, about 480 a second


def test_an_unknown_engine_is_a_clear_error() -> None:
    result = runner.invoke(app, ["simulate", "--engine", "quantum"])
    assert result.exit_code == 2
    assert "--engine: 'quantum' is not one of des, analytic" in " ".join(result.output.split())


def test_a_fast_run_on_the_des_records_its_engine(tmp_path) -> None:
    db = tmp_path / "db.sqlite"
    env = {"WLMON_API_DB_PATH": str(db)}
    get_settings.cache_clear()
    try:
        args = ["run", "--duration", "90s", "--ramp-up", "30s", "--engine", "des"]
        result = runner.invoke(app, args, env=env)
        assert result.exit_code == 0, result.output
        run_id = result.stdout.strip()
        with sqlite3.connect(db) as conn:
            (spec,) = conn.execute("SELECT spec FROM runs WHERE id = ?", (run_id,)).fetchone()
        assert json.loads(spec)["engine"] == "des"
        report = runner.invoke(app, ["report", run_id, "--json"], env=env)
        assert report.exit_code == 0, report.output
        assert json.loads(report.stdout)["st03"][0]["steps"] > 20_000
        realtime = runner.invoke(app, ["run", "--no-fast", "--engine", "des"], env=env)
        assert realtime.exit_code == 2
        assert "live exporter's" in realtime.output
    finally:
        get_settings.cache_clear()


def test_the_live_model_keeps_its_engine_when_the_scenario_switches() -> None:
    live = LiveModel(DiscreteEventSimulation("sd-benchmark-2003", seed=1), speed=50.0)
    live.start()
    try:
        live.reconfigure({"scenario": "sd-two-tier", "faults": ["slow-enqueue-link"]})
        assert isinstance(live.sim, DiscreteEventSimulation)
        assert live.sim.faults == ("slow-enqueue-link",)
    finally:
        live.stop()


def _spec(db, run_id: str) -> dict:
    with sqlite3.connect(db) as conn:
        (spec,) = conn.execute("SELECT spec FROM runs WHERE id = ?", (run_id,)).fetchone()
    return json.loads(spec)


def test_runs_simulate_and_the_live_exporter_default_to_the_des(tmp_path, monkeypatch) -> None:
    """Issue 24 item 5: everything that produces a run's time series simulates every dialog
    step unless told `--engine analytic` (engines.RUN_ENGINE)."""
    db = tmp_path / "db.sqlite"
    with TestClient(create_app(Settings(db_path=db, token="t"))) as client:
        auth = {"Authorization": "Bearer t"}
        plain = client.post("/runs", json={"duration_s": 60}, headers=auth)
        solver = client.post("/runs", json={"duration_s": 60, "engine": "analytic"}, headers=auth)
        assert plain.status_code == solver.status_code == 201, (plain.text, solver.text)
    assert _spec(db, plain.json()["id"])["engine"] == "des"
    assert _spec(db, solver.json()["id"])["engine"] == "analytic"
    doc = json.loads(runner.invoke(app, ["simulate", "--duration", "5s", "--json"]).stdout)
    assert doc["engine"] == "des"
    served: list = []
    monkeypatch.setattr(serve_cli, "serve", lambda sim, **kwargs: served.append(sim))
    monkeypatch.setenv("WLMON_EXPORTER_TOKEN", "t")
    for args, engine in (([], DiscreteEventSimulation), (["--engine", "analytic"], Simulation)):
        result = runner.invoke(app, ["exporter", *args])
        assert result.exit_code == 0, result.output
        assert type(served[-1]) is engine
