"""What-if sweeps and the most users under the SD benchmark's 2 s bound."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from landscape_model.catalog import ConfigError
from landscape_model.whatif import Configuration, WhatIf, parse_sweep
from wlmon.cli import app

TWO_CORES = ("landscape.app_servers.cpus=2",)


def test_sweeps_parse_ranges_and_lists() -> None:
    assert parse_sweep("users=200:1000:200") == ("users", [200, 400, 600, 800, 1000])
    assert parse_sweep("landscape.database.disks.count=28,56") == (
        "landscape.database.disks.count",
        [28, 56],
    )
    with pytest.raises(ConfigError, match="start <= stop"):
        parse_sweep("users=10:1:1")
    with pytest.raises(ConfigError, match="expected label"):
        Configuration.parse(": users=3")


def test_most_users_under_two_seconds_is_the_edge_of_the_bound() -> None:
    model = WhatIf("sd-two-tier", settings=TWO_CORES)
    best = model.max_users(Configuration("two cores"))
    assert best is not None and best.response_s < 2.0
    above = model.sweep(Configuration("two cores"), "users", [int(best.users * 1.01) + 1])[0]
    assert above.response_s >= 2.0


def test_cli_sweeps_configurations_side_by_side_with_json_and_a_chart(tmp_path) -> None:
    chart = tmp_path / "sizing.svg"
    result = CliRunner().invoke(
        app,
        [
            "whatif",
            "--scenario", "sd-two-tier",
            "--set", "landscape.app_servers.cpus=2",
            "--sweep", "users=100:300:100",
            "--config", "hdd:",
            "--config", "ssd: landscape.database.disks.kind=ssd",
            "--json",
            "--chart", str(chart),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert [c["label"] for c in doc["configurations"]] == ["hdd", "ssd"]
    for c in doc["configurations"]:
        assert [p["users"] for p in c["points"]] == [100, 200, 300]
        assert c["max_users"]["response_s"] < 2.0
    hdd, ssd = (c["points"][0]["parts_s"]["db_request"] for c in doc["configurations"])
    assert ssd < hdd  # the disks' kind reaches DB request time
    assert chart.read_text().lstrip().startswith("<?xml")


def test_cli_names_a_bad_sweep_path() -> None:
    result = CliRunner().invoke(app, ["whatif", "--sweep", "landscape.nope=1,2"])
    assert result.exit_code == 2
    assert "landscape.nope: Extra inputs" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("sweep", "message"),
    [
        # Three points, the second far beyond any landscape: the path is named.
        (
            "users=1:100000000000000:50000000000000",
            "users: Input should be less than or equal to 10000000",
        ),
        # 10^14 points would not fit in memory: refused before any is made.
        ("users=1:100000000000000:1", "--sweep users: 100,000,000,000,000 points, at most"),
    ],
)
def test_cli_refuses_an_absurd_sweep_with_a_clear_error(sweep: str, message: str) -> None:
    result = CliRunner().invoke(
        app, ["whatif", "--sweep", sweep, "--no-max-users"], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 2
    assert message in result.output
    assert "MemoryError" not in result.output and "Traceback" not in result.output


def test_cli_without_the_search_prints_no_most_users_table() -> None:
    """--no-max-users: the sweep's table only, not a 'none' row for a search never run."""
    result = CliRunner().invoke(
        app,
        ["whatif", "--scenario", "sd-two-tier", "--sweep", "users=200,400", "--no-max-users"],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    assert "What-if over users" in result.output
    assert "Most users" not in result.output and "none" not in result.output


def test_per_instance_answers_add_up_and_show_the_central_instance() -> None:
    """sd-two-tier: the central instance has 2 dialog work processes, the others 3. The
    JSON carries every instance and host; the instances' steps add up to the whole."""
    result = CliRunner().invoke(
        app, ["whatif", "--scenario", "sd-two-tier", "--sweep", "users=800", "--json"]
    )
    assert result.exit_code == 0, result.output
    point = json.loads(result.output)["configurations"][0]["points"][0]
    inst = point["instances"]
    assert [i["instance"] for i in inst] == [f"sapsrv_D0{k}" for k in range(8)]
    assert sum(i["users"] for i in inst) == 800
    total = point["saps"] * 60 / 3600  # SAPS = dialog steps per hour / 60
    assert sum(i["dialog_steps_per_s"] for i in inst) == pytest.approx(total, rel=1e-6)
    central, other = inst[0], inst[1]
    assert central["dispatcher_wait_s"] > 2 * other["dispatcher_wait_s"]
    assert central["busy_dialog_work_processes"] <= 2.0 + 1e-9
    assert set(point["host_cpu"]) == {"sapsrv"}
    assert point["host_cpu"]["sapsrv"] == pytest.approx(point["utilisation"]["host_cpu"])


def test_whatif_tables_fit_an_80_column_terminal() -> None:
    result = CliRunner().invoke(
        app,
        ["whatif", "--scenario", "sd-two-tier", "--sweep", "users=200:1000:400"],
        env={"COLUMNS": "80"},
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "…" not in result.output  # no column collapsed into an ellipsis
    assert any("sapsrv_D00" in line for line in lines)  # the instances differ: shown


@pytest.mark.parametrize(("columns", "wide"), [("80", False), ("200", True)])
def test_simulate_tables_fit_the_terminal(columns: str, wide: bool) -> None:
    """ST03's summary (twelve columns) turns a quarter and the calibration's explanations
    leave its table where 80 columns cannot hold them; a wide terminal keeps ST03's layout."""
    result = CliRunner().invoke(
        app,
        ["simulate", "--scenario", "sd-benchmark-2003", "--duration", "1m"],
        env={"COLUMNS": columns},
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(len(line) for line in lines) <= int(columns)
    assert "…" not in result.output
    assert any("task_type" in line for line in lines) == wide
    assert any("1,743,000" in line for line in lines)  # Table 5's steps/h, whole
    assert any("dialog_steps_per_hour" in line for line in lines)
