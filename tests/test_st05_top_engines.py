"""`wlmon st05 top --simulate` runs the model through engines.py, as `wlmon simulate` and
`wlmon run` do: the discrete-event engine by default, `--engine analytic` kept; both give a
trace whose top statements are the scenario's own."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from landscape_model.catalog import Catalog
from landscape_model.engines import ENGINES, RUN_ENGINE
from landscape_model.sqltext import sql_text, statement_hash
from wlmon.cli import app
from wlmon.st05top import from_simulation

SCENARIO = "sd-two-tier"
TOP = 5
# Our choice: 10 simulated minutes give the DES about 10^4-10^5 executions of each top
# statement; its share of executions is then within 1-3 % of the mix's (2.7 % the largest
# seen, LIPS), so 5 % relative.
SHARE_TOLERANCE = 0.05


def _expected_shares(scenario: str) -> dict[str, float]:
    """Each statement's share of all executions, from the scenario's transactions alone:
    a transaction's dialog statements run `calls` times on each of its dialog steps, its
    update statements `calls` times once per execution (one V1 update)."""
    sc = Catalog().scenario(scenario)
    calls: dict[str, float] = {}
    for t in sc.transactions.values():
        for demand, per_execution in ((t.dialog, t.dialog_steps), (t.update, 1)):
            for st in demand.statements if demand is not None else ():
                key = statement_hash(sql_text(st.table, st.op, st.where))
                calls[key] = calls.get(key, 0.0) + st.calls * per_execution
    total = sum(calls.values())
    return {k: v / total for k, v in calls.items()}


@pytest.fixture(scope="module")
def traces() -> dict[str, list[dict]]:
    return {e: from_simulation(SCENARIO, [], 600.0, e) for e in ENGINES}


def test_both_engines_give_the_scenarios_top_statements(traces) -> None:
    expected = _expected_shares(SCENARIO)
    tops = {}
    for engine, rows in traces.items():
        assert {r["statement"] for r in rows} == set(expected), engine
        executions = sum(r["executions"] for r in rows)
        for r in rows[:TOP]:
            share = r["executions"] / executions
            assert share == pytest.approx(expected[r["statement"]], rel=SHARE_TOLERANCE), (
                engine,
                r["table"],
            )
        tops[engine] = {r["statement"] for r in rows[:TOP]}
    assert tops["des"] == tops["analytic"]


def test_cli_takes_the_engine_and_defaults_to_the_run_engine(monkeypatch) -> None:
    asked = []

    def fake(scenario, faults, seconds, engine=None, unconverged=None):
        asked.append(engine)
        return []

    monkeypatch.setattr("wlmon.cli.st05.from_simulation", fake)
    base = ["st05", "top", "--simulate", "--scenario", SCENARIO, "--window", "1m", "--json"]
    for extra in ([], ["--engine", "analytic"], ["--engine", "des"]):
        result = CliRunner().invoke(app, [*base, *extra])
        assert result.exit_code == 0, result.output
    assert asked == [RUN_ENGINE, "analytic", "des"]
    result = CliRunner().invoke(app, [*base, "--engine", "nope"])
    assert result.exit_code == 2 and "--engine: 'nope' is not one of" in result.output


def test_engine_and_fault_without_simulate_are_an_error_naming_them(monkeypatch) -> None:
    """--engine and --fault choose the model's run: without --simulate the trace is read
    from Prometheus, and they used to be dropped silently (--engine analytic read the live
    counters; only an unknown engine was refused)."""

    def no_prometheus(*args, **kwargs):
        raise AssertionError("read Prometheus with an option that needs --simulate")

    monkeypatch.setattr("wlmon.cli.st05.from_prometheus", no_prometheus)
    for extra, named in (
        (["--engine", "analytic"], "--engine applies only with --simulate"),
        (["--engine", "nope"], "--engine applies only with --simulate"),
        (["--fault", "db-bottleneck"], "--fault applies only with --simulate"),
        (["--fault", "db-bottleneck", "--engine", "des"], "--fault and --engine apply only"),
    ):
        result = CliRunner().invoke(app, ["st05", "top", "--window", "1m", *extra])
        assert result.exit_code == 2, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and named in lines[0], result.output


def test_engine_help_says_it_applies_with_simulate_only() -> None:
    result = CliRunner().invoke(app, ["st05", "top", "--help"], env={"COLUMNS": "200"})
    line = next(ln for ln in result.output.splitlines() if "--engine" in ln)
    assert "with --simulate only" in line
