"""`wlmon exporter` at start-up: every refusal of the model (a scenario that does not
exist, a landscape file it cannot read, a --set it cannot apply, the discrete-event engine
refusing a placement) is one error line naming the option or field, exit 2, no traceback;
a saved state the model refuses is ignored with a warning, as a state the catalog no
longer knows."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from exporters.config import load_config
from exporters.control import ControlState, StateFile
from exporters.server import ExporterServer
from landscape_model.catalog import DATA_DIR, Catalog
from landscape_model.des import DiscreteEventSimulation
from wlmon.cli import app
from wlmon.cli import serve as serve_cli

runner = CliRunner()

# Two instances on cores {0, 4} (both sockets) and {1} (one): their memory locality
# differs, which the DES refuses (tests/test_cli.py, the same refusal by `wlmon simulate`).
SPLIT = [
    "landscape.app_servers.instances_per_host=2",
    "landscape.app_servers.affinity=none",
    "landscape.database.affinity={cores: [3]}",
    "landscape.instance_affinity={sapsrv_D00: {cores: [0, 4]}, sapsrv_D01: {cores: [1]}}",
]
SPLIT_SCENARIO = """\
base: sd-two-tier-8core
name: split
landscape:
  app_servers: {instances_per_host: 2, affinity: none}
  database: {affinity: {cores: [3]}}
  instance_affinity: {sapsrv_D00: {cores: [0, 4]}, sapsrv_D01: {cores: [1]}}
"""


@pytest.fixture
def data_dir(tmp_path) -> Path:
    """The shipped scenarios and one the DES refuses (`split`)."""
    out = tmp_path / "data"
    shutil.copytree(DATA_DIR, out)
    (out / "scenarios" / "split.yml").write_text(SPLIT_SCENARIO)
    return out


@pytest.fixture(autouse=True)
def never_serve(monkeypatch) -> None:
    """A refusal comes before the server: an exporter that got as far as serving failed
    the test (rather than serving until the test times out)."""

    def serve(*args, **kwargs):
        raise AssertionError("the exporter started serving")

    monkeypatch.setattr(serve_cli, "serve", serve)


def _sets(settings: list[str]) -> list[str]:
    return [a for s in settings for a in ("--set", s)]


CASES = {
    "des-placement": (
        ["--scenario", "sd-two-tier-8core", "--engine", "des", *_sets(SPLIT)],
        "instance_affinity: the discrete-event engine",
    ),
    "des-placement-in-a-data-dir": (
        ["--data-dir", "{data}", "--scenario", "split", "--engine", "des"],
        "instance_affinity: the discrete-event engine",
    ),
    "no-such-scenario": (["--scenario", "no-such-scenario"], "unknown scenario 'no-such-scenario'"),
    "no-such-landscape-file": (["--landscape", "{tmp}/missing.yml"], "--landscape"),
    "landscape-not-text": (["--landscape", "{tmp}/binary.yml"], "binary.yml: not UTF-8 text"),
    "set-no-such-field": (["--set", "landscape.no_such_field=1"], "--set landscape.no_such_field"),
    "negative-think-time": (["--think-time", "-1"], "--think-time"),
    "data-dir-without-scenarios": (["--data-dir", "{tmp}"], "--data-dir"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_start_up_refusal_is_one_error_line(case, tmp_path, data_dir) -> None:
    args, named = CASES[case]
    (tmp_path / "binary.yml").write_bytes(b"\xff\xfe\x00landscape")
    args = [a.replace("{tmp}", str(tmp_path)).replace("{data}", str(data_dir)) for a in args]
    result = runner.invoke(app, ["exporter", "--port", "0", *args], env={"COLUMNS": "400"})
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    error = [line for line in result.output.splitlines() if line.strip()]
    assert len(error) == 1, result.output
    assert error[0].startswith("error:"), error[0]
    assert named in error[0]


def test_simulate_names_a_landscape_file_that_is_not_text(tmp_path) -> None:
    """The catalog's reading is shared: `wlmon simulate` says the same, no traceback."""
    (tmp_path / "binary.yml").write_bytes(b"\xff\xfe\x00landscape")
    result = runner.invoke(
        app,
        ["simulate", "--landscape", str(tmp_path / "binary.yml"), "--duration", "1m"],
        env={"COLUMNS": "400"},
    )
    assert result.exit_code == 2, result.output
    assert "binary.yml: not UTF-8 text" in result.output


def test_a_saved_state_the_model_refuses_is_ignored(tmp_path, data_dir, caplog) -> None:
    """The state names `split`, which the DES this exporter runs refuses: the exporter
    starts on its own scenario and says why it did not restore."""
    path = tmp_path / "state.json"
    StateFile(path).save(ControlState(scenario="split"))
    sim = DiscreteEventSimulation("sd-two-tier-8core", catalog=Catalog(data_dir))
    with caplog.at_level(logging.WARNING):
        srv = ExporterServer(sim, host="127.0.0.1", port=0, config=load_config(), state_file=path)
    srv.start()
    try:
        assert srv.sim.scenario_name == "sd-two-tier-8core"
        assert any(
            "ignoring the control state" in r.message and "instance_affinity" in r.message
            for r in caplog.records
        ), caplog.text
    finally:
        srv.stop()


def test_the_passwords_come_from_their_files_as_compose_mounts_them(tmp_path, monkeypatch) -> None:
    """docker-compose gives the exporter the log store's and InfluxDB's passwords as
    secret files (issue 38 item 3): what reaches the server is each file's content, the
    InfluxDB token built as user:password, a newline at the file's end not part of it."""
    seen: dict = {}

    class Served(Exception):
        pass

    def serve(*args, **kwargs):
        seen.update(kwargs)
        raise Served

    monkeypatch.setattr(serve_cli, "serve", serve)
    (tmp_path / "logs").write_text("logs-secret-1\n")
    (tmp_path / "influx").write_text("influx-secret-2")
    env = {
        "COLUMNS": "400",
        "WLMON_LOGS_USERNAME": "wlmon-logs",
        "WLMON_LOGS_PASSWORD_FILE": str(tmp_path / "logs"),
        "WLMON_INFLUX_USERNAME": "wlmon-admin",
        "WLMON_INFLUX_PASSWORD_FILE": str(tmp_path / "influx"),
        "WLMON_EXPORTER_TOKEN": "control-token-3",
    }
    result = runner.invoke(app, ["exporter", "--port", "0"], env=env)
    assert isinstance(result.exception, Served), result.output
    assert seen["logs_access"].password == "logs-secret-1"
    assert seen["influx_token"] == "wlmon-admin:influx-secret-2"
    assert "secret-1" not in result.output and "secret-2" not in result.output


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        ({"WLMON_LOGS_PASSWORD": "x"}, "--logs-password-file: WLMON_LOGS_PASSWORD is set too"),
        ({"WLMON_LOGS_PASSWORD_FILE": "{tmp}/missing"}, "--logs-password-file: {tmp}/missing"),
        ({"WLMON_LOGS_PASSWORD_FILE": "{tmp}/empty"}, "--logs-password-file: {tmp}/empty is empty"),
        ({"WLMON_INFLUX_USERNAME": ""}, "--influx-password-file: give --influx-username"),
    ],
)
def test_a_password_file_that_cannot_be_used_is_one_error_line(tmp_path, extra, named) -> None:
    (tmp_path / "logs").write_text("logs-secret-1")
    (tmp_path / "influx").write_text("influx-secret-2")
    (tmp_path / "empty").write_text("")
    env = {
        "COLUMNS": "400",
        "WLMON_LOGS_USERNAME": "wlmon-logs",
        "WLMON_LOGS_PASSWORD_FILE": str(tmp_path / "logs"),
        "WLMON_INFLUX_USERNAME": "wlmon-admin",
        "WLMON_INFLUX_PASSWORD_FILE": str(tmp_path / "influx"),
    }
    env.update({k: v.replace("{tmp}", str(tmp_path)) for k, v in extra.items()})
    result = runner.invoke(app, ["exporter", "--port", "0"], env=env)
    assert result.exit_code == 2, result.output
    error = [line for line in result.output.splitlines() if line.strip()]
    assert len(error) == 1 and error[0].startswith("error:"), result.output
    assert named.replace("{tmp}", str(tmp_path)) in error[0], error[0]
    assert "secret-1" not in result.output and "secret-2" not in result.output
