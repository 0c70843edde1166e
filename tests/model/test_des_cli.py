"""`--engine des|analytic` on wlmon simulate, wlmon run (and the API's fast runs) and the
exporter's live model."""

from __future__ import annotations

import json
import sqlite3

from typer.testing import CliRunner

from api.config import get_settings
from exporters.model.des import DiscreteEventSimulation
from exporters.server import LiveModel
from wlmon.cli import app

runner = CliRunner()


def test_simulate_on_the_des_prints_the_same_document() -> None:
    args = ["simulate", "--duration", "40s", "--seed", "3", "--json"]
    des = runner.invoke(app, [*args, "--engine", "des"])
    analytic = runner.invoke(app, args)
    assert des.exit_code == 0, des.output
    a, b = json.loads(des.stdout), json.loads(analytic.stdout)
    assert set(a) == set(b)
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
        live.switch_scenario("sd-benchmark-2003", ["slow-enqueue-link"])
        assert isinstance(live.sim, DiscreteEventSimulation)
        assert live.sim.faults == ("slow-enqueue-link",)
    finally:
        live.stop()
