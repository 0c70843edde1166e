"""The `wlmon` command line: simulate, faults, stack --check."""

from __future__ import annotations

import json
import shutil
import typing
from pathlib import Path

import pytest
from typer.testing import CliRunner

from alerts.thresholds import ThresholdsError
from api.config import get_settings
from tests.api.test_stored_56ab7c5 import RUNS, damage
from wlmon.cli import app, edge
from wlmon.cli import serve as serve_cli
from wlmon.cli.common import fail

runner = CliRunner()


def test_simulate_json_has_the_documented_shape() -> None:
    result = runner.invoke(app, ["simulate", "--duration", "10m", "--seed", "3", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    keys = {
        "task_type",
        "steps",
        "response_ms",
        "dispatcher_wait_ms",
        "cpu_ms",
        "db_request_ms",
        "enqueue_ms",
        "roll_in_ms",
        "roll_out_ms",
        "load_gen_ms",
    }
    assert {r["task_type"] for r in doc["summary"]} == {"dialog", "update"}
    for row in doc["summary"]:
        assert keys <= set(row)
    assert doc["calibration"]
    for row in doc["calibration"]:
        assert {"figure", "paper", "model", "residual_pct"} <= set(row)
    assert abs(doc["response_time_law"]["residual_pct"]) < 1.0


def test_simulate_with_a_fault_shows_its_indicator() -> None:
    result = runner.invoke(
        app, ["simulate", "--duration", "10m", "--fault", "slow-enqueue-link", "--json"]
    )
    assert result.exit_code == 0, result.output
    dialog = next(r for r in json.loads(result.stdout)["summary"] if r["task_type"] == "dialog")
    assert dialog["enqueue_ms"] > 10


def test_simulate_prints_rich_tables() -> None:
    result = runner.invoke(app, ["simulate", "--duration", "2m"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "Calibration against seed 000 Table 5" in result.stdout
    assert "dialog_steps_per_hour" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["simulate", "--duration", "soon"], "--duration: not a duration: 'soon'"),
        (["simulate", "--fault", "gremlins"], "unknown fault 'gremlins'"),
        (["simulate", "--scenario", "nope"], "unknown scenario 'nope'"),
    ],
)
def test_bad_input_is_a_clear_error(args: list[str], message: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert message in " ".join(result.output.split())


def test_faults_json_lists_name_and_description() -> None:
    result = runner.invoke(app, ["faults", "--json"])
    assert result.exit_code == 0
    items = json.loads(result.stdout)
    assert {i["name"] for i in items} == {
        "too-few-work-processes",
        "db-bottleneck",
        "slow-enqueue-link",
        "roll-area-too-small",
        "short-dump-storm",
        "update-errors",
        "update-hang",
        "lock-held",
        "long-running-dialog-step",
        "ascs-failover",
        "java-thread-pool-exhausted",
        "kernel-patch-drift",
    }
    assert all(i["description"] for i in items)


def test_stack_check_reports_without_building(tmp_path) -> None:
    result = runner.invoke(
        app, ["stack", "install", "--check", "--json"], env={"WLMON_CACHE": str(tmp_path)}
    )
    assert result.exit_code == 1  # nothing installed in an empty cache
    rows = json.loads(result.stdout)
    assert rows and all(not r["installed"] for r in rows)
    assert list(tmp_path.iterdir()) == []


def test_stack_install_rejects_unknown_component() -> None:
    result = runner.invoke(app, ["stack", "install", "--only", "oracle"])
    assert result.exit_code == 2
    assert "unknown component(s) oracle" in result.output


def test_st05_top_simulated_sorts_by_elapsed_time() -> None:
    """Seed 000 4.3.5.2: the compressed summary sorted by elapsed DB time."""
    result = runner.invoke(
        app, ["st05", "top", "--window", "5m", "--simulate", "--json", "--limit", "8"]
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert len(rows) == 8
    elapsed = [r["elapsed_ms"] for r in rows]
    assert elapsed == sorted(elapsed, reverse=True)
    assert rows[0]["sql"].startswith('SELECT * FROM "VBAP"')


def test_st05_top_error_quoting_markup_is_printed_not_a_traceback() -> None:
    """An error message quotes what it was given: "x[/y]" is a closing tag to rich, which
    raised MarkupError (a traceback, exit 1) instead of printing the error (exit 2)."""
    result = runner.invoke(app, ["st05", "top", "--simulate", "--scenario", "x[/y]"])
    assert result.exit_code == 2, result.output
    assert "unknown scenario 'x[/y]'" in " ".join(result.output.split())


def test_st05_top_without_prometheus_is_a_clear_error() -> None:
    result = runner.invoke(app, ["st05", "top", "--prometheus", "http://127.0.0.1:1"])
    assert result.exit_code == 2
    assert "cannot query Prometheus at http://127.0.0.1:1" in " ".join(result.output.split())


def test_run_import_and_report_through_the_cli(tmp_path) -> None:
    env = {"WLMON_API_DB_PATH": str(tmp_path / "db.sqlite")}
    get_settings.cache_clear()
    try:
        result = runner.invoke(
            app,
            [
                "run",
                "--duration",
                "10m",
                "--ramp-up",
                "1m",
                "--fault",
                "slow-enqueue-link@3m-6m",
                "--label",
                "cli",
            ],
            env=env,
        )
        assert result.exit_code == 0, result.output
        run_id = result.stdout.strip()
        rep = runner.invoke(app, ["report", run_id, "--json"], env=env)
        assert rep.exit_code == 0, rep.output
        doc = json.loads(rep.stdout)
        assert doc["run"]["label"] == "cli"
        assert any(b["rule"] == "SAPEnqueueTimeHigh" for b in doc["breaches"])
        table = runner.invoke(app, ["report", run_id], env={**env, "COLUMNS": "200"})
        assert table.exit_code == 0, table.output
        assert "Dispatcher wait ms" in table.stdout and "SAPEnqueueTimeHigh" in table.stdout
        unwritable = runner.invoke(
            app, ["report", run_id, "--html", str(tmp_path / "no" / "such" / "r.html")], env=env
        )
        assert unwritable.exit_code == 2
        assert "--html: cannot write" in " ".join(unwritable.output.split())
        fixtures = Path(__file__).parent / "fixtures" / "perfmon"
        imp = runner.invoke(app, ["import", "perfmon", str(fixtures / "relog-utf8.csv")], env=env)
        assert imp.exit_code == 0, imp.output
        # What a PerfMon capture lacks is one line each, not an empty table.
        lacking = runner.invoke(app, ["report", imp.stdout.strip()], env={**env, "COLUMNS": "200"})
        assert lacking.exit_code == 0, lacking.output
        assert "ST03: no ST03 data in this run." in lacking.stdout
        assert "No response-time histogram in this run: no percentiles." in lacking.stdout
        assert "Transaction profile: no per-transaction ST03 data" in lacking.stdout
        assert "Time profile: no ST03 data in this run." in lacking.stdout
        assert "Task type" not in lacking.stdout and "task type" not in lacking.stdout
        bad = tmp_path / "bad.csv"
        bad.write_text('"Time","x"\n')
        failed = runner.invoke(app, ["import", "perfmon", str(bad)], env=env)
        assert failed.exit_code == 2
        assert "line 1, column 1: the file starts with text 'Time'" in " ".join(
            failed.output.split()
        )
        missing = runner.invoke(app, ["report", "nope"], env=env)
        assert missing.exit_code == 2
        profiles = runner.invoke(
            app, ["report", run_id, "--json", "--top", "3", "--interval", "3m"], env=env
        )
        assert profiles.exit_code == 0, profiles.output
        doc = json.loads(profiles.stdout)
        assert len(doc["transaction_profile"]) == 3
        assert doc["time_profile"]["interval_s"] == 180
        assert {r["start_s"] for r in doc["time_profile"]["rows"]} == {60.0, 240.0, 420.0}
        assert "p95" in table.stdout and "Transaction profile" in table.stdout
        # The screen shows the time profile at the interval asked for, the parts of the
        # response per transaction, and percentiles per transaction.
        screen = runner.invoke(
            app, ["report", run_id, "--interval", "3m"], env={**env, "COLUMNS": "250"}
        )
        assert screen.exit_code == 0, screen.output
        assert "Time profile (ST03N): per 180 s of the steady state" in screen.stdout
        # ST03 (every field the run has, issue 32), then the transaction and time profiles
        # with every part
        assert screen.stdout.count("DB request ms") == 3
        assert screen.stdout.count("Load+gen ms") == 3
        va01 = next(
            r
            for r in doc["percentiles"]["by_transaction"]
            if (r["task_type"], r["transaction"]) == ("dialog", "VA01")
        )
        cells = f"{va01['p50_s']:.3f} │ {va01['p90_s']:.3f} │ {va01['p95_s']:.3f}"
        assert any("VA01" in line and cells in line for line in screen.stdout.splitlines())
        bad_interval = runner.invoke(app, ["report", run_id, "--interval", "soon"], env=env)
        assert bad_interval.exit_code == 2 and "--interval" in bad_interval.output
        verdict = runner.invoke(app, ["check", run_id], env=env)
        assert verdict.exit_code == 1  # ten minutes are not BAIT's sixty
        assert "BAIT: 60 consecutive minutes" in verdict.stdout
    finally:
        get_settings.cache_clear()


def test_a_real_time_run_without_the_api_is_a_clear_error() -> None:
    result = runner.invoke(
        app,
        ["run", "--no-fast", "--duration", "10m", "--api-url", "http://127.0.0.1:1"],
        env={"WLMON_API_TOKEN": "t"},
    )
    assert result.exit_code == 2
    assert "cannot reach the API at http://127.0.0.1:1" in " ".join(result.output.split())


def test_a_real_time_run_goes_to_the_stacks_api_port(monkeypatch) -> None:
    """Issue 26: without --api-url it went to 8000 whatever WLMON_PORT_API said, and sent
    the token there."""
    monkeypatch.delenv("WLMON_API_URL", raising=False)
    result = runner.invoke(
        app,
        ["run", "--no-fast", "--duration", "10m"],
        env={"WLMON_API_TOKEN": "t", "WLMON_PORT_API": "1"},
    )
    assert result.exit_code == 2
    assert "cannot reach the API at http://127.0.0.1:1:" in " ".join(result.output.split())


def test_a_real_time_run_takes_the_token_wlmon_up_generated(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("WLMON_API_TOKEN", raising=False)
    argv = ["run", "--no-fast", "--duration", "10m", "--api-url", "http://127.0.0.1:1"]
    env = {"WLMON_STATE_DIR": str(tmp_path)}
    missing = runner.invoke(app, argv, env=env)
    assert missing.exit_code == 2
    stored = tmp_path / "secrets" / "api-token"
    # Rich may wrap the path anywhere: compare without whitespace.
    assert "setWLMON_API_TOKEN" in "".join(missing.output.split())
    assert str(stored) in "".join(missing.output.split())
    stored.parent.mkdir()
    stored.write_text("generated\n")
    found = runner.invoke(app, argv, env=env)
    assert "cannot reach the API at http://127.0.0.1:1" in " ".join(found.output.split())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "--no-fast", "--duration", "1x"], "--duration: not a duration: '1x'"),
        (["run", "--no-fast", "--ramp-up", "soon"], "--ramp-up: not a duration: 'soon'"),
        (
            ["run", "--no-fast", "--fault", "slow-enqueue-link@1y"],
            "--fault: not a duration: '1y'",
        ),
        (["run", "--duration", "1x"], "--duration: not a duration: '1x'"),
        (
            ["run", "--duration", "10m", "--ramp-up", "1h"],
            "--ramp-up must be shorter than --duration",
        ),
        (["run", "--no-fast", "--duration", "10m", "--users", "0"], "--users:"),
    ],
)
def test_bad_run_options_are_an_error_naming_the_option(
    args: list[str], message: str, tmp_path
) -> None:
    """Every option is parsed before anything is recorded or sent to the API."""
    result = runner.invoke(
        app,
        [*args, "--api-url", "http://127.0.0.1:1"],
        env={"WLMON_API_DB_PATH": str(tmp_path / "db.sqlite")},
    )
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert message in " ".join(result.output.split())


def test_a_standalone_exporter_takes_the_token_wlmon_up_generated(tmp_path, monkeypatch) -> None:
    """Issue 17: control writes need a token 'from the environment or the state's secret
    file'; `wlmon exporter` read only the environment."""
    monkeypatch.delenv("WLMON_EXPORTER_TOKEN", raising=False)
    served: list[dict] = []
    monkeypatch.setattr(serve_cli, "serve", lambda sim, **kwargs: served.append(kwargs))
    env = {"WLMON_STATE_DIR": str(tmp_path)}
    nothing = runner.invoke(app, ["exporter"], env=env)
    assert nothing.exit_code == 0, nothing.output
    assert served[-1]["control_token"] is None
    assert "writes are refused" in " ".join(nothing.output.split())
    stored = tmp_path / "secrets" / "exporter-token"
    stored.parent.mkdir()
    stored.write_text("generated\n")
    found = runner.invoke(app, ["exporter"], env=env)
    assert found.exit_code == 0, found.output
    assert served[-1]["control_token"] == "generated"
    assert str(stored) in "".join(found.output.split())
    given = runner.invoke(app, ["exporter"], env=env | {"WLMON_EXPORTER_TOKEN": "env"})
    assert given.exit_code == 0 and served[-1]["control_token"] == "env"


def test_fail_is_typed_as_never_returning() -> None:
    """Type checkers then know code after fail() is unreachable (a variable set only on
    the other branch is not 'possibly unbound')."""
    assert typing.get_type_hints(fail)["return"] is typing.NoReturn


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--collector", "nosuch"], {}, "'nosuch' is not one of st03, st05"),
        (["--collector", "st05", "--no-collector", "st05"], {}, "both name st05"),
        (
            ["--collector", "sapcontrol"],
            {"WLMON_SAPCONTROL_ENDPOINTS": "ftp://nowhere"},
            "WLMON_SAPCONTROL_ENDPOINTS: 'ftp://nowhere'",
        ),
        (["--collector", "sapcontrol"], {}, "names no sapstartsrv"),
    ],
)
def test_exporter_configuration_errors_name_the_setting(args, env, message) -> None:
    """Read at the edge: a bad flag or WLMON_SAPCONTROL_ value is one line, no traceback;
    before anything listens."""
    result = runner.invoke(app, ["exporter", "--port", "0", *args], env=env)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())
    assert "Traceback" not in result.output


def _state_with_a_running_run(tmp_path: Path) -> str:
    from datetime import UTC, datetime

    from api.store import Store

    store = Store(tmp_path / "data" / "api" / "wlmon.sqlite")
    return store.runs.begin(
        kind="realtime",
        scenario="sd-benchmark-2003",
        label="night test",
        start=datetime.now(UTC),
        duration_s=600,
        ramp_up_s=0,
        spec={},
    )


def test_down_does_not_wait_on_a_run_no_api_drives(tmp_path) -> None:
    """Issue 38: a run stored as running with no API to drive it (a crash, a driver gone)
    kept `wlmon down` refusing; the next `wlmon up` resumes or ends it. The question while
    the stack's API does drive one: tests/api/test_run_ends.py."""
    _state_with_a_running_run(tmp_path)
    result = runner.invoke(app, ["down"], env={"WLMON_STATE_DIR": str(tmp_path)})
    assert result.exit_code == 0, result.output
    assert "in progress" not in result.output and "nothing was running" in result.output


def test_down_without_a_run_in_progress_does_not_ask(tmp_path) -> None:
    result = runner.invoke(app, ["down"], env={"WLMON_STATE_DIR": str(tmp_path)})
    assert result.exit_code == 0 and "nothing was running" in result.output


@pytest.mark.parametrize("args", [["api"], ["report", "no-such-run"], ["check", "no-such-run"]])
def test_a_wrong_thresholds_file_is_one_line_naming_it(args, monkeypatch, tmp_path) -> None:
    """The CLI is where thresholds.yml is read for the API and for reports and checks
    (configuration flows downward): a wrong file stops it with exit 2, no traceback."""

    def broken() -> None:
        raise ThresholdsError(
            "alerts/thresholds.yml: enqueue_seconds: Input should be greater than 0"
        )

    monkeypatch.setattr(edge, "load_thresholds", broken)
    get_settings.cache_clear()
    try:
        env = {"COLUMNS": "200", "WLMON_API_DB_PATH": str(tmp_path / "db.sqlite")}
        result = runner.invoke(app, args, env=env)
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 2, result.output
    assert "thresholds.yml: enqueue_seconds" in result.output
    assert "Traceback" not in result.output


def test_the_lazy_command_table_lists_every_command_of_every_module() -> None:
    """`wlmon`'s commands are named by hand (wlmon/cli/__init__.py, imported on use): a
    command added to a module but not to the table would be unreachable."""
    import importlib
    import pkgutil

    import typer.main

    import wlmon.cli as cli

    table = cli._COMMANDS
    for mod in pkgutil.iter_modules(cli.__path__):
        module = importlib.import_module(f"wlmon.cli.{mod.name}")
        for attr, sub in vars(module).items():
            if not isinstance(sub, typer.Typer) or (mod.name, attr) == ("__init__", "app"):
                continue
            own = [name for name, entry in table.items() if entry == (mod.name, attr, True)]
            if own:
                continue  # a group of its own: reached under its name
            group = typer.main.get_group(sub)
            for name in group.commands:
                assert table.get(name) == (mod.name, attr, False), f"{mod.name}.{attr}: {name}"


def test_simulate_prints_the_des_refusing_a_placement_as_an_error() -> None:
    """The discrete-event engine refuses instances whose memory locality differs (one
    spans both sockets, one sits in one): `wlmon simulate` says so in an error naming
    instance_affinity and the other engine, no traceback."""
    settings = [
        "landscape.app_servers.instances_per_host=2",
        "landscape.app_servers.affinity=none",
        "landscape.database.affinity={cores: [3]}",
        "landscape.instance_affinity={sapsrv_D00: {cores: [0, 4]}, sapsrv_D01: {cores: [1]}}",
    ]
    args = ["simulate", "--scenario", "sd-two-tier-8core", "--engine", "des", "--duration", "1m"]
    for setting in settings:
        args += ["--set", setting]
    result = runner.invoke(app, args, env={"COLUMNS": "400"})
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    error = [line for line in result.output.splitlines() if line.strip()]
    assert len(error) == 1, result.output
    assert "instance_affinity: the discrete-event engine" in error[0]
    assert "--engine analytic" in error[0]


def test_wlmon_runs_lists_the_readable_rows_and_names_the_unreadable_one(tmp_path) -> None:
    """One unreadable row stopped `wlmon runs` with a traceback; now it is named on stderr."""
    reps = json.loads((RUNS / "stored-56ab7c5.reports.json").read_text())
    bad, good = reps["perfmon"]["run"], reps["st03"]["run"]
    shutil.copy(RUNS / "stored-56ab7c5.sqlite", tmp_path / "db.sqlite")
    damage(tmp_path / "db.sqlite", bad["id"])
    env = {"WLMON_API_DB_PATH": str(tmp_path / "db.sqlite")}
    get_settings.cache_clear()
    try:
        result = runner.invoke(app, ["runs", "--json"], env=env)
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 0, result.output
    assert [r["id"] for r in json.loads(result.stdout)] == [good["id"]]
    assert f"run {bad['id']} cannot be read, left out:" in result.stderr
    assert "has no UTC offset" in result.stderr
