"""User- and file-supplied text in the command line's tables is printed as given, never read
as rich markup: "[/b]" is a closing tag to rich (MarkupError, a traceback instead of the
table), "[b]" a style (the text silently loses it)."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml
from typer.testing import CliRunner

from api.config import get_settings
from landscape_model.catalog import DATA_DIR
from wlmon.cli import app

runner = CliRunner()
WIDE = {"COLUMNS": "250"}  # no cell cut or wrapped: each name is found whole


def _rename_host(doc: dict, old: str, new: str) -> dict:
    """The landscape with host `old` called `new` wherever it is named."""
    doc = dict(doc)
    doc["app_servers"] = {**doc["app_servers"], "hosts": [new]}
    doc["instance_overrides"] = {
        k.replace(old, new): v for k, v in doc.get("instance_overrides", {}).items()
    }
    doc["central_services"] = {**doc["central_services"], "host": new}
    doc["database"] = {**doc["database"], "host": new}
    return doc


def test_simulate_prints_names_from_the_users_files_as_given(tmp_path: Path) -> None:
    """A scenario, a fault and a landscape of the user's (--data-dir, --landscape): their
    names and texts reach the title, the per-instance table and the notes."""
    data = tmp_path / "data"
    shutil.copytree(DATA_DIR, data)
    scenario = yaml.safe_load((data / "scenarios" / "sd-two-tier.yml").read_text())
    scenario |= {"name": "s[b]", "bent": ["kept [/note] as written"]}
    (data / "scenarios" / "s[b].yml").write_text(yaml.safe_dump(scenario))
    fault = yaml.safe_load((data / "faults" / "db-bottleneck.yml").read_text())
    (data / "faults" / "f[b].yml").write_text(yaml.safe_dump(fault | {"name": "f[b]"}))
    land = yaml.safe_load((data / "landscapes" / "sd-two-tier.yml").read_text())
    landscape = tmp_path / "bracket.yml"
    landscape.write_text(yaml.safe_dump(_rename_host(land, "sapsrv", "a[/b]")))
    args = ["simulate", "--data-dir", str(data), "--scenario", "s[b]", "--fault", "f[b]"]
    args += ["--landscape", str(landscape), "--duration", "1m", "--engine", "analytic"]
    result = runner.invoke(app, args, env=WIDE)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "ST03 workload summary — s[b] (" in out and "faults: f[b])" in out
    # sd-two-tier's central instance has 2 dialog work processes, the others 3: the
    # per-instance table is printed, each instance named after its host.
    assert "a[/b]_D00" in out and "a[/b]_D01" in out
    assert "kept [/note] as written" in out


def test_whatif_prints_the_instances_of_the_users_landscape_as_given(tmp_path: Path) -> None:
    """The per-instance table of `wlmon whatif` names the landscape file's instances."""
    land = yaml.safe_load((DATA_DIR / "landscapes" / "sd-two-tier.yml").read_text())
    landscape = tmp_path / "bracket.yml"
    landscape.write_text(yaml.safe_dump(_rename_host(land, "sapsrv", "a[/b]")))
    args = ["whatif", "--scenario", "sd-two-tier", "--landscape", str(landscape)]
    result = runner.invoke(app, [*args, "--sweep", "users=800", "--no-max-users"], env=WIDE)
    assert result.exit_code == 0, result.output
    assert "a[/b]_D00" in result.stdout and "a[/b]_D07" in result.stdout


def test_st05_top_prints_sql_and_labels_as_given(monkeypatch) -> None:
    """SQL Server quotes names in brackets: "[VBAP]" was read as a style and dropped,
    "[/b]" raised MarkupError. The live path (Prometheus's labels, the statement's text)."""
    row = {
        "elapsed_ms": 12.0,
        "executions": 3.0,
        "records": 3.0,
        "per_execution_ms": 4.0,
        "table": "T[/b]",
        "operation": "SELECT",
        "sql": 'SELECT [MANDT], [VBELN] FROM [VBAP] WHERE "X" = ?',
    }
    monkeypatch.setattr("wlmon.cli.st05.from_prometheus", lambda *args: [row])
    result = runner.invoke(app, ["st05", "top", "--window", "5m"], env=WIDE)
    assert result.exit_code == 0, result.output
    assert "T[/b]" in result.stdout
    assert 'SELECT [MANDT], [VBELN] FROM [VBAP] WHERE "X" = ?' in result.stdout


def test_runs_lists_a_label_as_given(tmp_path: Path) -> None:
    """A run's label (--label) and an import's file name are the user's text."""
    env = {"WLMON_API_DB_PATH": str(tmp_path / "db.sqlite"), **WIDE}
    capture = Path(__file__).parent / "fixtures" / "perfmon" / "relog-utf8.csv"
    get_settings.cache_clear()
    try:
        args = ["import", "perfmon", str(capture), "--label", "a[/b] [b]bold?"]
        imported = runner.invoke(app, args, env=env)
        assert imported.exit_code == 0, imported.output
        listed = runner.invoke(app, ["runs"], env=env)
        assert listed.exit_code == 0, listed.output
        assert "a[/b] [b]bold?" in listed.stdout
        report = runner.invoke(app, ["report", imported.stdout.strip()], env=env)
        assert report.exit_code == 0, report.output
    finally:
        get_settings.cache_clear()


def test_fleet_lists_a_description_as_given(tmp_path: Path, monkeypatch) -> None:
    """The fleet file is the user's: a SID's description is printed as written."""
    fleet = {
        "prometheus_replicas": 1,
        "alertmanager_peers": 1,
        "sids": [{"sid": "QAS", "scenario": "sd-two-tier", "description": "q[/a] [b]s"}],
    }
    (tmp_path / "f.yml").write_text(yaml.safe_dump(fleet, sort_keys=False))
    monkeypatch.setenv("WLMON_FLEET_FILE", str(tmp_path / "f.yml"))
    listed = runner.invoke(app, ["fleet", "list"], env=WIDE)
    assert listed.exit_code == 0, listed.output
    assert "q[/a] [b]s" in listed.stdout
