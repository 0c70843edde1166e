"""Nothing hidden (issue 32, item 7) and no invented decimals (item 5): `wlmon import` prints
every warning after the run id, `wlmon report` (text, JSON, HTML) shows the warnings first,
the CLI's ST03 table holds every field the file had within 80 columns, `compare` lists the
figures only one run has, calls runs whose figures agree repeatable and prints numbers for
people; the HTML shows an import's means with the file's own decimals."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from alerts.thresholds import load_thresholds
from api.config import get_settings
from api.runs.html import render
from api.services import imports, reports
from api.store import Store
from wlmon.cli import app

# A workload overview with a print date (a warning), time in WPs and wait but no response
# (a derived response: a warning) and nine task types (wider than 80 columns in one table).
TASKS = ["DIALOG", "UPDATE", "UPDATE2", "BACKGROUND", "RFC", "HTTP", "AUTOABAP", "BUF.SYNC"]
OVERVIEW = (
    "Period: 25.11.2026 10:00:00 - 25.11.2026 10:59:59\n"
    "Date: 26.11.2026\n"
    "Task Type Name\t# Steps\tØ Time in WPs (ms)\tØ Wait Time (ms)\tØ CPU Time (ms)\t"
    "Ø DB Time (ms)\tØ Load+Gen. Time (ms)\tØ GUI Time (ms)\tØ Proc. Time (ms)\t"
    "Ø Roll Wait Time (ms)\tØ Time/DB Req. (ms)\t# DB Req.\n"
    + "".join(
        f"{t}\t{1000 * (k + 1):,}\t1,912.0\t338.0\t410.0\t880.0\t3.5\t120.4\t1,000.2\t55.0\t0.5\t"
        f"{2000 * (k + 1):,}\n"
        for k, t in enumerate(TASKS)
    )
)
FIELD_LABELS = [
    "Steps",
    "Response ms",
    "Dispatcher wait ms",
    "CPU ms",
    "DB request ms",
    "Load+gen ms",
    "Processing ms",
    "GUI ms",
    "Time in WPs ms",
    "Roll wait ms",
    "DB ms per request",
    "DB requests",
]


def _perfmon(values: list[float], host: str = "SAPAPP1", extra: bool = False) -> str:
    heads = [f"\\\\{host}\\Processor(_Total)\\% Processor Time"]
    if extra:
        heads.append(f"\\\\{host}\\Memory\\Available MBytes")
    lines = ['"(PDH-CSV 4.0) (W. Europe Standard Time)(-60)",' + ",".join(f'"{h}"' for h in heads)]
    for k, v in enumerate(values):
        cells = [f'"{v:.3f}"'] + ([f'"{29050.0 + k:.1f}"'] if extra else [])
        lines.append(f'"11/25/2026 10:{k:02d}:00.000",' + ",".join(cells))
    return "\r\n".join(lines) + "\r\n"


@pytest.fixture
def cli(tmp_path):
    env = {"WLMON_API_DB_PATH": str(tmp_path / "db.sqlite"), "COLUMNS": "80"}
    get_settings.cache_clear()
    yield CliRunner(), env
    get_settings.cache_clear()


def test_import_prints_the_run_id_then_every_warning(cli, tmp_path) -> None:
    runner, env = cli
    path = tmp_path / "overview.txt"
    path.write_text(OVERVIEW, encoding="utf-8")
    result = runner.invoke(app, ["import", "st03", str(path)], env=env)
    assert result.exit_code == 0, result.output
    assert re.fullmatch(r"[0-9a-f]{12}\n", result.stdout)  # the id alone: scripts take it
    warnings = " ".join(result.stderr.split())
    assert "warning: line 2: 'Date: 26.11.2026' not read as the period" in warnings
    assert "response time derived" in warnings


def test_report_shows_warnings_first_in_text_json_and_html(cli, tmp_path) -> None:
    runner, env = cli
    path = tmp_path / "overview.txt"
    path.write_text(OVERVIEW, encoding="utf-8")
    run_id = runner.invoke(app, ["import", "st03", str(path)], env=env).stdout.strip()
    text = runner.invoke(app, ["report", run_id], env=env)
    assert text.exit_code == 0, text.output
    first = text.stdout.splitlines()[0]
    assert first.startswith("warning: line 2: 'Date: 26.11.2026'")
    doc = json.loads(runner.invoke(app, ["report", run_id, "--json"], env=env).stdout)
    assert next(iter(doc)) == "warnings"
    assert any("response time derived" in w for w in doc["warnings"])
    page = tmp_path / "report.html"
    html = runner.invoke(app, ["report", run_id, "--html", str(page)], env=env)
    assert html.exit_code == 0, html.output
    body = page.read_text(encoding="utf-8")
    assert 0 < body.index('id="warnings"') < body.index('id="checks"')
    assert "Date: 26.11.2026" in body[body.index('id="warnings"') : body.index('id="checks"')]


def test_the_st03_table_shows_every_field_within_80_columns(cli, tmp_path) -> None:
    runner, env = cli
    path = tmp_path / "overview.txt"
    path.write_text(OVERVIEW, encoding="utf-8")
    run_id = runner.invoke(app, ["import", "st03", str(path)], env=env).stdout.strip()
    out = runner.invoke(app, ["report", run_id], env=env).stdout
    st03 = out[: out.index("Time profile") if "Time profile" in out else len(out)]
    for label in FIELD_LABELS:
        assert f"│ {label}" in st03, label
    widest = max(len(line) for line in st03.splitlines())
    assert widest <= 80, widest
    for key in ("dialog", "update", "update2", "batch", "rfc", "http", "autoabap"):
        assert f" {key} ┃" in st03 or f" {key} │" in st03, key
    assert "buffer_sync" in st03
    # Fields the file does not have are not shown as zeros: enqueue, roll-in are absent.
    assert "Enqueue ms" not in st03 and "Roll-in ms" not in st03


def test_compare_lists_one_sided_figures_calls_agreeing_captures_repeatable(cli, tmp_path):
    runner, env = cli
    a, b, c = (tmp_path / n for n in ("a.csv", "b.csv", "c.csv"))
    a.write_text(_perfmon([10.0, 12.0, 14.0]), encoding="utf-8")
    b.write_text(_perfmon([10.0, 12.0, 14.0]), encoding="utf-8")  # the same capture again
    c.write_text(_perfmon([10.0, 12.0, 14.0], extra=True), encoding="utf-8")
    ids = [
        runner.invoke(app, ["import", "perfmon", str(p)], env=env).stdout.strip() for p in (a, b, c)
    ]
    same = runner.invoke(app, ["compare", ids[0], ids[1], "--json"], env=env)
    doc = json.loads(same.stdout)
    assert doc["repeatable"] is True, doc["criterion"]  # was "not repeatable"
    assert doc["only_in_base"] == [] and doc["only_in_new"] == []
    more = json.loads(runner.invoke(app, ["compare", ids[0], ids[2], "--json"], env=env).stdout)
    only = {f["figure"]: f["value"] for f in more["only_in_new"]}
    assert only["os.sapapp1.available_mb.avg"] == pytest.approx(29051.0)
    assert only["os.sapapp1.available_mb.max"] == pytest.approx(29052.0)
    shown = runner.invoke(app, ["compare", ids[0], ids[2]], env=env).stdout
    assert "only in" in shown and "os.sapapp1.available_mb.max 29,052" in " ".join(shown.split())
    assert not re.search(r"\d[eE][+-]\d", shown)  # never 2.905e+04


def test_the_html_shows_an_import_s_means_with_the_file_s_decimals(tmp_path) -> None:
    """BUF.SYNC's CPU was shown as 1.111 (a rounded total over 90 steps): 1.0 as written."""
    text = (
        "Period: 25.11.2026 10:00:00 - 25.11.2026 10:59:59\n"
        "Task Type Name\t# Steps\tT Response Time (s)\tØ Response Time (ms)\tT CPU Time (s)\t"
        "Ø CPU Time (ms)\n"
        "DIALOG\t12,000\t27,000.0\t2,250.0\t4,920.0\t410.0\n"
        "BUF.SYNC\t90\t0.2\t2.1\t0.1\t1.0\n"
    )
    store = Store(tmp_path / "db.sqlite")
    run = imports.store_st03(store, text.encode(), "t")
    stored, data = reports.load(store, run.id)
    doc = reports.report_of(store, stored, data, load_thresholds(), top=20, interval_s=3600.0)
    page = render(doc, data, load_thresholds())
    st03 = page[page.index('id="st03"') : page.index('id="percentiles"')]
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", st03)
    assert "1.0" in cells and "2.1" in cells and "410.0" in cells
    assert "1.111" not in st03 and "1.000" not in st03


def test_tz_stores_the_period_in_utc_and_shows_it_in_both(cli, tmp_path) -> None:
    """`wlmon runs` listed the SAP system's local time under 'start (UTC)': with --tz the
    period's local 10:00 in Berlin (UTC+1 in November) is stored as 09:00 UTC."""
    runner, env = cli
    path = tmp_path / "overview.txt"
    path.write_text(OVERVIEW, encoding="utf-8")
    ok = runner.invoke(app, ["import", "st03", str(path), "--tz", "Europe/Berlin"], env=env)
    assert ok.exit_code == 0, ok.output
    doc = json.loads(runner.invoke(app, ["report", ok.stdout.strip(), "--json"], env=env).stdout)
    assert doc["run"]["start"].startswith("2026-11-25T09:00:00")
    window = doc["window"]
    assert window["zone"] == "Europe/Berlin"
    assert window["start_utc"].startswith("2026-11-25T09:00:00")
    assert window["start_local"].startswith("2026-11-25T10:00:00+01:00")
    bad = runner.invoke(app, ["import", "st03", str(path), "--tz", "Mars/Olympus"], env=env)
    assert bad.exit_code == 2 and "tz 'Mars/Olympus'" in " ".join(bad.output.split())
    # 02:30 on the night clocks go forward does not exist in Berlin: refused, not guessed.
    gap = tmp_path / "gap.txt"
    gap.write_text(
        OVERVIEW.replace(
            "25.11.2026 10:00:00 - 25.11.2026 10:59:59", "29.03.2026 02:30:00 - 29.03.2026 03:29:59"
        ),
        encoding="utf-8",
    )
    skipped = runner.invoke(app, ["import", "st03", str(gap), "--tz", "Europe/Berlin"], env=env)
    assert skipped.exit_code == 2 and "does not exist in Europe/Berlin" in " ".join(
        skipped.output.split()
    )


def test_runs_says_when_an_import_s_start_is_not_utc(cli, tmp_path) -> None:
    runner, env = cli
    path = tmp_path / "overview.txt"
    path.write_text(OVERVIEW, encoding="utf-8")
    local = runner.invoke(app, ["import", "st03", str(path)], env=env).stdout.strip()
    no_start = tmp_path / "nostart.txt"
    no_start.write_text(OVERVIEW.split("\n", 1)[1], encoding="utf-8")
    placed = runner.invoke(app, ["import", "st03", str(no_start), "--period", "1h"], env=env)
    listed = {
        r["id"]: r for r in json.loads(runner.invoke(app, ["runs", "--json"], env=env).stdout)
    }
    assert "local time (no --tz)" in listed[local]["message"]
    assert "placed at the import" in listed[placed.stdout.strip()]["message"]
