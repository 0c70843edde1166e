"""Every bad input a one-line error naming the option or field, or a bounded answer; never a
traceback, never a run that does not answer (issue 34 item 5). Each case printed a traceback,
ran for minutes or was taken silently before."""

from __future__ import annotations

import time

import pytest
from typer.testing import CliRunner

from landscape_model.catalog import Catalog, ConfigError
from landscape_model.whatif import Configuration, Point, WhatIf
from wlmon.cli import app

runner = CliRunner()
TWO_TIER = ["--scenario", "sd-two-tier"]


def _refused(args: list[str], *names: str) -> str:
    """The command exits 2 with one `error:` line naming each of `names`, within seconds."""
    start = time.monotonic()
    result = runner.invoke(app, args)
    assert time.monotonic() - start < 30, f"{args}: took {time.monotonic() - start:.0f} s"
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{args}: {result.exception!r}"
    )
    assert result.exit_code == 2, (args, result.output)
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), (args, result.output)
    for name in names:
        assert name in lines[0], (args, lines[0])
    return lines[0]


@pytest.mark.parametrize("value", ["abc", "", "1e400"])
def test_a_sweep_of_values_that_are_no_users_is_an_error(value: str) -> None:
    _refused(["whatif", *TWO_TIER, "--sweep", f"users={value}", "--no-max-users"], "--sweep users")


def test_a_chart_to_a_missing_directory_is_refused_before_solving(tmp_path) -> None:
    chart = tmp_path / "missing" / "sizing.png"
    line = _refused(["whatif", *TWO_TIER, "--sweep", "users=10", "--chart", str(chart)], "--chart")
    assert "no directory" in line


@pytest.mark.parametrize(
    ("setting", "field"),
    [
        # 1e-300 bytes/s: a step's variance overflowed (OverflowError) in the solver.
        ("landscape.instance.roll.copy_bytes_per_s=1e-300", "copy_bytes_per_s"),
        ("landscape.instance.roll.copy_bytes_per_s=1e300", "copy_bytes_per_s"),
        ("think_time_s=inf", "think_time_s"),  # was X = 0 and R = 0
        ("think_time_s=.nan", "think_time_s"),
        ("users=true", "users"),  # a YAML true was 1 user (database.cpus=true: 1 CPU)
        ("landscape.app_servers.cpus=true", "cpus"),
    ],
)
def test_non_finite_absurd_and_boolean_numbers_are_refused_naming_the_field(
    setting: str, field: str
) -> None:
    _refused(["whatif", *TWO_TIER, "--sweep", "users=10", "--set", setting], field)
    with pytest.raises(ConfigError, match=field):
        Catalog().scenario("sd-two-tier", settings=[setting])


@pytest.mark.parametrize("limit", ["inf", "0", "-1", "nan"])
def test_a_response_bound_that_is_not_a_positive_number_is_refused(limit: str) -> None:
    # --limit inf searched up to the old cap and answered 8,192,000 users.
    _refused(["whatif", *TWO_TIER, "--sweep", "users=10", "--limit", limit], "--limit")


@pytest.mark.parametrize(
    ("args", "names"),
    [
        # 1e20 s: a loop of 1e20 ticks.
        (["simulate", "--duration", "99999999999999999999s"], ("--duration", "24 h")),
        (["simulate", "--duration", "0.5s"], ("--duration",)),  # ran 0 s
        (["simulate", "--duration", "1.5s"], ("--duration",)),  # ran 2 s
        (["simulate", "--set", "users=1000000"], ("users", "user-seconds")),
        # The analytic engine solved 10,000,000 users as it started: minutes.
        (
            ["simulate", "--engine", "analytic", "--set", "users=10000000", "--duration", "1m"],
            ("users", "20,000 per instance"),
        ),
        # Ran for more than 7 minutes.
        (["whatif", "--sweep", "users=10000000"], ("users", "20,000 per instance")),
    ],
)
def test_runs_too_big_to_answer_in_a_minute_are_refused_naming_the_limit(
    args: list[str], names: tuple[str, ...]
) -> None:
    _refused(args, *names)


def test_the_most_users_search_answers_within_the_solvable_bound() -> None:
    """A bound the response never reaches (a huge --limit) ends at the most users the solver
    answers, naming that limit, instead of growing to 8,192,000 users."""
    line = _refused(["whatif", *TWO_TIER, "--sweep", "users=10", "--limit", "1e9"], "--limit")
    assert "20,000 per instance" in line


def test_no_most_users_from_a_search_point_that_did_not_converge(monkeypatch) -> None:
    """A search whose solve does not converge gives no answer (its response says neither side
    of the bound), and the command says so instead of printing a user count."""
    import landscape_model.whatif as whatif

    real = whatif.solve_point

    def unconverged(scenario, value=None, warm=None, options=None) -> Point:
        point = real(scenario, value, warm, options)
        return Point(**{**vars(point), "converged": False, "iterations": 3, "residual": 0.1})

    monkeypatch.setattr(whatif, "solve_point", unconverged)
    model = WhatIf("sd-two-tier")
    assert model.max_users(Configuration("sd-two-tier")) is None
    result = runner.invoke(app, ["whatif", *TWO_TIER, "--sweep", "users=100"])
    assert result.exit_code == 0, result.output
    row = next(
        line for line in result.output.splitlines() if "not converged" in line and "│" in line
    )
    assert "sd-two-tier" in row


def test_a_refused_setting_beside_a_sweep_is_not_blamed_on_the_swept_value() -> None:
    """The configuration is checked before the sweep's values: a --set the model refuses is
    named as such (it was reported as '--sweep users=100: ... --set think_time_s=inf')."""
    args = ["whatif", *TWO_TIER, "--set", "think_time_s=inf", "--sweep", "users=100"]
    line = _refused(args, "think_time_s")
    assert not line.startswith("error: --sweep"), line
