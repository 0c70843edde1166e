"""Users' own landscapes: --set, --landscape, and placements such as two-tier hosts."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from typer.testing import CliRunner

from landscape_model.catalog import Catalog, ConfigError
from landscape_model.engine import Simulation
from landscape_model.network import compile_network
from landscape_model.solver import Solver
from landscape_model.summary import point_figures
from wlmon.cli import app


def test_set_reaches_named_list_entries_and_any_field() -> None:
    sc = Catalog().scenario(
        "sd-benchmark-2003",
        settings=[
            "users=3000",
            "landscape.database.disks.kind=ssd",
            "landscape.database.bufferpools.MIX4K.pages=84000",
            "transactions.VA01.dialog.statements.0.calls=0.5",
        ],
    )
    assert sc.users == 3000
    assert sc.landscape.database.disks.kind == "ssd"
    pools = {p.name: p.pages for p in sc.landscape.database.bufferpools}
    assert pools["MIX4K"] == 84000 and pools["MIX4KIX"] == 40000
    assert sc.transactions["VA01"].dialog.statements[0].calls == 0.5


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("landscape.databse.cpus=8", "--set landscape.databse.cpus: no field 'landscape.databse'"),
        ("landscape.database.bufferpools.NOPE.pages=1", "no entry named 'NOPE' (known: IBMDEF"),
        ("landscape.database.disks.kind=tape", "landscape.database.disks.kind: Input should be"),
        ("users=-5", "users: Input should be greater than 0"),
        ("landscape.database.foo=1", "landscape.database.foo: Extra inputs are not permitted"),
        ("users", "expected path=value"),
    ],
)
def test_a_bad_setting_is_an_error_naming_its_path(setting: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        Catalog().scenario("sd-benchmark-2003", settings=[setting])


def test_cli_reports_a_bad_setting_without_a_traceback() -> None:
    result = CliRunner().invoke(app, ["simulate", "--duration", "1m", "--set", "users=-5"])
    assert result.exit_code == 2
    assert "users: Input should be greater than 0" in result.output
    assert "Traceback" not in result.output


def test_cli_bounds_the_users_before_any_array_is_sized() -> None:
    """10^14 users would ask the engines for arrays of terabytes: a clear error instead."""
    result = CliRunner().invoke(
        app,
        ["simulate", "--duration", "1m", "--set", "users=100000000000000"],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 2
    assert "users: Input should be less than or equal to 10000000" in result.output
    assert "MemoryError" not in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(
    ("setting", "path"),
    [
        ("landscape.instance.dialog_work_processes=1000000000", "dialog_work_processes"),
        ("landscape.app_servers.cpus=1000000000", "app_servers.cpus"),
        ("landscape.instance.update_work_processes=1000000000", "update_work_processes"),
        ("landscape.database.disks.count=1000000000", "disks.count"),
        ("landscape.app_servers.instances_per_host=1000000000", "instances_per_host"),
    ],
)
def test_counts_that_size_arrays_have_an_upper_bound(setting: str, path: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(path)):
        Catalog().scenario("sd-benchmark-2003", settings=[setting])


def test_per_cpu_instances_are_bounded_too() -> None:
    settings = ["landscape.app_servers.cpus=5000"]
    with pytest.raises(ConfigError, match="per-cpu on 5000 CPUs gives 5000 instances"):
        Catalog().scenario("sd-two-tier", settings=settings)


def test_a_landscape_file_replaces_the_scenarios_landscape(tmp_path) -> None:
    doc = Catalog().scenario_document("sd-benchmark-2003")["landscape"]
    doc["database"]["disks"]["count"] = 112
    path = tmp_path / "mine.yml"
    path.write_text(yaml.safe_dump(doc))
    sc = Catalog().scenario("sd-benchmark-2003", landscape=path)
    assert sc.landscape.database.disks.count == 112
    with pytest.raises(ConfigError, match="no such file"):
        Catalog().scenario("sd-benchmark-2003", landscape=tmp_path / "none.yml")


def test_two_tier_host_is_one_host_shared_by_the_database_and_every_instance() -> None:
    sc = Catalog().scenario("sd-two-tier", settings=["landscape.app_servers.cpus=4"])
    assert [h.name for h in sc.landscape.hosts] == ["sapsrv"]
    solver = Solver(compile_network(sc), histogram_samples=10)
    op = solver.solve()
    assert op.instances == [f"sapsrv_D0{k}" for k in range(4)]
    assert op.wp_total[:, 0].tolist() == [2, 3, 3, 3]  # seed 004: central instance 2 + 1
    assert op.wp_total[:, 1].tolist() == [1, 1, 1, 1]
    # The database's CPU station is the host's: one station serves both.
    assert solver.db_cpu_station == solver.host_station["sapsrv"]
    sim = Simulation("sd-two-tier", settings=["landscape.app_servers.cpus=4"])
    sim.run(60)
    snap = sim.snapshot()
    assert snap.os_hosts == ["sapsrv"]
    busy = snap.totals.os_cpu_busy_seconds[0] / 60 / 4
    assert busy == pytest.approx(op.host_cpu_util[0] + op.db_cpu_util, rel=0.02)


def test_more_cores_carry_more_users_on_the_two_tier_host() -> None:
    x = {}
    for cpus in (2, 4):
        sc = Catalog().scenario(
            "sd-two-tier", settings=[f"landscape.app_servers.cpus={cpus}", "users=800"]
        )
        x[cpus] = point_figures(Solver(compile_network(sc), histogram_samples=10).solve(), sc)
    assert x[4]["dialog_steps_per_s"] > 1.8 * x[2]["dialog_steps_per_s"]
    assert x[4]["avg_dialog_response_s"] < x[2]["avg_dialog_response_s"]


def test_a_database_on_an_application_host_with_other_cpus_is_an_error() -> None:
    with pytest.raises(ConfigError, match=r"database\.cpus: 4 differs from host 'sapsrv'"):
        Catalog().scenario("sd-two-tier", settings=["landscape.database.cpus=4"])
    with pytest.raises(ConfigError, match="database: host 'dbhost' is not an application"):
        Catalog().scenario("sd-two-tier", settings=["landscape.database.host=dbhost"])


def test_cli_runs_a_scenario_from_a_data_directory_of_ones_own(tmp_path) -> None:
    src = Catalog().data_dir
    for kind in ("landscapes", "scenarios", "faults"):
        (tmp_path / kind).mkdir()
    land = yaml.safe_load((src / "landscapes" / "sd-two-tier.yml").read_text())
    land["name"], land["app_servers"]["cpus"] = "mine", 2
    (tmp_path / "landscapes" / "mine.yml").write_text(yaml.safe_dump(land))
    scenario = yaml.safe_load((src / "scenarios" / "sd-benchmark-2003.yml").read_text())
    scenario |= {"name": "mine", "landscape": "mine", "users": 150, "targets": []}
    (tmp_path / "scenarios" / "mine.yml").write_text(yaml.safe_dump(scenario))
    result = CliRunner().invoke(
        app,
        ["simulate", "--data-dir", str(tmp_path), "--scenario", "mine", "--duration", "2m",
         "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["scenario"] == "mine" and doc["summary"][0]["steps"] > 0
    missing = CliRunner().invoke(app, ["simulate", "--data-dir", str(tmp_path / "none")])
    assert missing.exit_code == 2
    assert "no scenarios/ directory" in " ".join(missing.output.split())  # rich wraps lines
