"""A solve whose fixed point did not converge is said so, naming the point, its sweeps and its
residual, by every command that prints an analytic solve (`wlmon whatif`, `wlmon simulate
--engine analytic`, `wlmon st05 top --simulate --engine analytic`), in a line on stderr
(and a field of --json where the command has one for it); a converged one is silent."""

from __future__ import annotations

import dataclasses
import io
import json
import re
from functools import partialmethod

import pytest
from rich.console import Console
from typer.testing import CliRunner

from landscape_model.engine import UnconvergedSolve
from landscape_model.engines import make_simulation
from landscape_model.solver import Solver, SolverOptions
from wlmon.cli import app, common

runner = CliRunner()
WHATIF = [
    "whatif",
    "--scenario", "sd-two-tier",
    "--set", "landscape.app_servers.cpus=2",
    "--sweep", "users=150",
    "--no-max-users",
]  # fmt: skip
SIMULATE = ["simulate", "--scenario", "sd-two-tier", "--engine", "analytic", "--duration", "1m"]


def _cut_short(monkeypatch: pytest.MonkeyPatch) -> None:
    """No Anderson pass and 3 damped sweeps: far too few to reach any fixed point. The
    commands build their solvers with the default options, so the test swaps them in."""
    build = Solver.__init__

    def without_anderson(self, network, options=None, **kwargs):
        options = dataclasses.replace(options or SolverOptions(), anderson_mixing=())
        build(self, network, options, **kwargs)

    monkeypatch.setattr(Solver, "__init__", without_anderson)
    monkeypatch.setattr(Solver, "_extrapolated", partialmethod(Solver._extrapolated, limit=3))


@pytest.fixture
def cut_short(monkeypatch: pytest.MonkeyPatch) -> None:
    _cut_short(monkeypatch)


def _warnings(stderr: str) -> list[str]:
    """Each warning on one line: its `warning:` line and the indented lines that follow."""
    joined = re.sub(r"\n  (?=\S)", " ", stderr)
    return [line for line in joined.splitlines() if line.startswith("warning:")]


def _whatif(as_json: bool):
    result = runner.invoke(app, [*WHATIF, *(["--json"] if as_json else [])])
    assert result.exit_code == 0, result.output
    return result


def test_a_converged_whatif_prints_no_warning() -> None:
    for as_json in (False, True):
        assert "did not converge" not in _whatif(as_json).stderr
    point = json.loads(_whatif(True).stdout)["configurations"][0]["points"][0]
    assert point["converged"] and point["iterations"] > 3


def test_an_unconverged_whatif_point_is_named_with_its_sweeps_and_residual(cut_short) -> None:
    text = _whatif(False).stderr
    assert "did not converge" in text
    assert "sd-two-tier" in text and "users=150" in text and "3 sweeps" in text
    assert "residual" in text
    result = _whatif(True)
    assert "did not converge" in result.stderr
    conf = json.loads(result.stdout)["configurations"][0]
    point = conf["points"][0]
    assert point["converged"] is False and point["iterations"] == 3 and point["residual"] > 0
    assert [p["users"] for p in conf["unconverged"]] == [150]


def test_simulate_on_the_analytic_engine_warns_only_when_not_converged(monkeypatch) -> None:
    result = runner.invoke(app, [*SIMULATE, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["unconverged"] == []
    assert "did not converge" not in result.stderr
    _cut_short(monkeypatch)
    for as_json in (False, True):
        result = runner.invoke(app, [*SIMULATE, *(["--json"] if as_json else [])])
        assert result.exit_code == 0, result.output
        assert "did not converge" in result.stderr and "3 sweeps" in result.stderr
    (solve,) = json.loads(result.stdout)["unconverged"]
    assert solve["iterations"] == 3 and solve["residual"] > 0 and solve["users"] > 0
    assert solve["faults"] == []


def test_the_analytic_engine_records_an_unconverged_solve_as_a_type(cut_short) -> None:
    """What the commands read of a run's unconverged solves is typed (engine.py to the
    command line), not a dict whose keys each reader spells again."""
    sim = make_simulation("analytic", "sd-two-tier", faults=["slow-enqueue-link"])
    (solve,) = sim.unconverged
    assert isinstance(solve, UnconvergedSolve)
    assert solve.faults == ("slow-enqueue-link",) and solve.users == 800
    assert solve.iterations == 3 and solve.residual > 0


def test_st05_top_on_the_analytic_engine_warns_only_when_not_converged(monkeypatch) -> None:
    args = ["st05", "top", "--simulate", "--scenario", "sd-two-tier", "--window", "1m"]
    args += ["--engine", "analytic", "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "did not converge" not in result.stderr
    _cut_short(monkeypatch)
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "did not converge" in result.stderr and "users=800" in result.stderr
    assert json.loads(result.stdout)  # the trace is printed all the same


def test_an_unconverged_search_point_is_not_named_by_a_sweep_value(cut_short) -> None:
    """Sweeping another parameter than users, the most-users search solves users at the
    configuration's own value of it: its point's value is its users. Its warning used to
    name it as the parameter's value ("landscape.database.disks.count=188" for 188 users),
    and its --json entry gave that as its value."""
    args = ["whatif", "--scenario", "sd-two-tier", "--set", "landscape.app_servers.cpus=2"]
    args += ["--sweep", "landscape.database.disks.count=15", "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    lines = _warnings(result.stderr)
    entries = json.loads(result.stdout)["configurations"][0]["unconverged"]
    # The search stops at its first unconverged point (it gives no answer from one:
    # issue 34 item 5), so one search entry beside the sweep's.
    assert len(lines) == len(entries) == 2
    swept = [e for e in entries if not e["search"]]
    searched = [e for e in entries if e["search"]]
    assert [(e["value"], e["users"]) for e in swept] == [(15, 800)]
    assert searched and all(e["value"] is None for e in searched)
    # The sweep's one point names the parameter; every other line is the search's.
    (named,) = [line for line in lines if "disks.count=" in line]
    assert named.startswith("warning: not converged: sd-two-tier, users=800, landscape.")
    assert "users=800, landscape.database.disks.count=15 the solver's" in named
    assert sum("(most-users search)" in line for line in lines) == len(searched)


def test_a_label_rich_would_read_as_markup_is_printed_as_given(cut_short) -> None:
    """A configuration's label is the user's text: "a[/b]" is a closing tag to rich, which
    raised MarkupError (a traceback) from the progress line, the tables and the warning."""
    args = [*WHATIF, "--config", "a[/b]: landscape.app_servers.cpus=2"]
    result = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "warning: not converged: sd-two-tier, a[/b], users=150" in _warnings(result.stderr)[0]
    assert "What-if over users: a[/b] (landscape.app_servers.cpus=2)" in result.stdout


@pytest.mark.parametrize(
    "call",
    [
        lambda c: c.warn_unconverged_solves(
            "sd-two-tier",
            [UnconvergedSolve(("slow-enqueue-link", "db-bottleneck"), 800, 3, 0.0561)],
        ),
        lambda c: c.warn_unconverged(
            "sd-two-tier, a[/b], users=800, landscape.database.disks.count=15", 1_000, 1.5e-7
        ),
    ],
)
def test_the_warning_reads_in_80_columns_and_starts_with_its_prefix(monkeypatch, call) -> None:
    """It was one ~200-character line (soft_wrap), which an 80-column terminal cut mid-word.
    Every line now fits, the first starts `warning:` and names the point, the rest are
    indented, and no word is cut (each of the message's words is found whole)."""
    out = io.StringIO()
    monkeypatch.setattr(common, "err", Console(file=out, width=80))
    call(common)
    lines = out.getvalue().splitlines()
    assert len(lines) > 1 and all(len(line) <= 80 for line in lines), lines
    assert lines[0].startswith("warning: not converged: sd-two-tier")
    assert "users=800" in lines[0] or "users=800" in lines[1]
    assert all(line.startswith("  ") and line[2] != " " for line in lines[1:]), lines
    words = " ".join(lines).split()
    for whole in ("did", "converge", "sweeps", "(residual", "steady", "state"):
        assert whole in words, (whole, lines)
    assert "1,000" in words or "3" in words
    named = " ".join(words)
    assert "(slow-enqueue-link, db-bottleneck), users=800" in named or (
        "a[/b], users=800, landscape.database.disks.count=15 the" in named
    )
