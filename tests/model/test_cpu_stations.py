"""Per CPU station figures: `wlmon simulate --json` carries them as `wlmon whatif` does
(one type), from the run's own counters, with both engines; the table fits 80 columns."""

from __future__ import annotations

import json
from dataclasses import asdict, fields

import pytest
from typer.testing import CliRunner

from landscape_model.cpu_stations import CpuStationFigures
from landscape_model.whatif import Configuration, WhatIf, solve_point
from wlmon.cli import app, common

# The console made now, at collection, as a terminal's: rich fixes a console's width when
# it is made under a COLUMNS, and the first command run here would otherwise make it
# (wlmon.cli imports its modules on use) with this module's COLUMNS for every later test.
assert common.console

runner = CliRunner()


def _simulate(*args: str, columns: int = 400) -> str:
    result = runner.invoke(
        app,
        ["simulate", "--scenario", "sd-two-tier-8core", "--duration", "2m", *args],
        env={"COLUMNS": str(columns)},
    )
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module")
def solved():
    """The analytic solver's point of the pinned 8-core landscape at its scenario users."""
    model = WhatIf("sd-two-tier-8core")
    return solve_point(model.scenario(Configuration("8")))


@pytest.mark.parametrize("engine", ["analytic", "des"])
def test_simulate_json_carries_every_cpu_station_as_whatif_does(engine, solved) -> None:
    doc = json.loads(_simulate("--engine", engine, "--json"))
    stations = doc["cpu_stations"]
    expected = [asdict(st) for st in solved.cpu_stations]
    # One type: the same fields, in the same order, with the same JSON types.
    assert [f.name for f in fields(CpuStationFigures)] == list(expected[0])
    for got, want in zip(stations, expected, strict=True):
        assert list(got) == list(want)
        assert {k: type(v) for k, v in got.items()} == {k: type(v) for k, v in want.items()}
        assert (got["station"], got["host"], got["cores"], got["tenants"]) == (
            want["station"],
            want["host"],
            want["cores"],
            want["tenants"],
        )
    assert stations[0]["cores"] == [0]
    # Seed 004: the database and the central services (enqueue and message server) run on
    # the central instance's core.
    assert stations[0]["tenants"] == ["instance:sapsrv_D00", "database", "central_services"]
    assert [st["tenants"] for st in stations[1:]] == [
        [f"instance:sapsrv_D0{k}"] for k in range(1, 8)
    ]
    # Counted over the run: the analytic engine at its steady state is the solver's point;
    # the DES, two minutes of random steps, near it.
    tolerance = 0.02 if engine == "analytic" else 0.12
    for got, want in zip(stations, expected, strict=True):
        assert got["cpu_util"] == pytest.approx(want["cpu_util"], rel=tolerance), got["station"]
    # The core the database shares is the busiest; the stations make up the host's CPU.
    assert stations[0]["cpu_util"] > max(st["cpu_util"] for st in stations[1:])
    host = doc["hosts"][0]
    assert sum(st["cpu_util"] for st in stations) / 8 == pytest.approx(host["cpu_util"], rel=0.03)


def test_simulate_table_shows_pinned_stations_in_80_columns() -> None:
    out = _simulate(columns=80)
    table = out[out.index("CPU per station") :].splitlines()
    assert len(table) == 4 + 8 + 1  # title, rules and heads, a row per core, the bottom
    assert "sapsrv_D00, database" in table[4]
    assert all(len(line) <= 80 for line in table)


def test_simulate_table_leaves_out_stations_nobody_is_pinned_to() -> None:
    """All cores shared (`sd-two-tier`): one station per host, which the host's CPU says."""
    result = runner.invoke(
        app, ["simulate", "--scenario", "sd-two-tier", "--duration", "1m"], env={"COLUMNS": "80"}
    )
    assert result.exit_code == 0, result.output
    assert "CPU per station" not in result.stdout
