"""Every ST03N/STAD column its own field (issue 32, item 1), read from headings SAP really
writes, not from this project's generator.

Where the headings come from (looked up, not invented):
- SAP's data elements for ST03N (package SAPWL_FRONTEND), their short / medium / long /
  heading labels as sapdatasheet.org lists them: SWLMRESPTI "Ø Time", "Ø Response Time",
  "Ø Response Time (ms)", "Average response Time/Dialog Step (ms)"; SWLNRESPMT
  "ØResp.Time", "Ø Resp.Time (ms)", "Average Resp. Time / Step (ms)"; SWLNCPUTI "T CPU
  Time", "T CPU Time (s)", "Total CPU Time (s)", "Total CPU Time (in s)"; SWLNQUEUTI
  "T WaitTime", "Total Wait Time (in s)"; SWLNQUEUMTA "Average Wait Time per Transaction
  (ms)" (a mean per transaction, not per step); SWLNGENMT "Ø Gen.Time (ms)"; SWLFGTRPMT
  "Ø GUI/Trip" (per roundtrip); SWLDIAST "# Steps", "Number of Steps".
- A public STAD pipeline of an SAP load-test team (GitHub, a CGI upload script): its
  COLUMN_LIST "Response time (ms)", "Time in WPs (ms)", "Wait time (ms)", "CPU time (ms)",
  "DB req. time (ms)", "VMC elapsed time (ms)", "Memory used (kB)", "Transfered kBytes"
  (SAP's spelling), "Processing time (ms)", "Load time(ms)", "Generating time  (ms)",
  "Roll (i+w) time (ms)", "Enqueue time (ms)", "GUI time (ms)".
- The issue's own exports: "Ø Response Time (ms)" beside "Ø Time in WPs (ms)",
  "T Time in WPs (s)", German "Ø Zeit in WPs (ms)".
Expected figures are computed here from the cells written, never read back from the
importer.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from alerts.thresholds import load_thresholds
from api.config import get_settings
from api.imports.st03 import ST03Error, parse_table
from api.imports.st03columns import classify
from api.services import checks, imports, reports
from api.store import Store
from wlmon.cli import app


@pytest.fixture
def store(tmp_path) -> Store:
    return Store(tmp_path / "db.sqlite")


HEADINGS = [
    # (heading as SAP writes it, field, kind); None: not read (listed in the audit).
    ("Ø Time", "response", "avg"),
    ("Ø Response Time", "response", "avg"),
    ("Ø Response Time (ms)", "response", "avg"),
    ("Average response Time/Dialog Step (ms)", "response", "avg"),
    ("ØResp.Time", "response", "avg"),
    ("Ø Resp.Time (ms)", "response", "avg"),
    ("Average Resp. Time / Step (ms)", "response", "avg"),
    ("Response time (ms)", "response", "avg"),
    ("T Response Time (s)", "response", "total"),
    ("Ø Antwortzeit (ms)", "response", "avg"),
    ("Σ Antwortzeit (s)", "response", "total"),
    ("Ø Time in WPs (ms)", "wp_time", "avg"),
    ("T Time in WPs (s)", "wp_time", "total"),
    ("Time in WPs (ms)", "wp_time", "avg"),
    ("Ø Zeit in WPs (ms)", "wp_time", "avg"),
    ("T CPU Time", "cpu", "total"),
    ("T CPU Time (s)", "cpu", "total"),
    ("Total CPU Time (s)", "cpu", "total"),
    ("Total CPU Time (in s)", "cpu", "total"),
    ("CPU time (ms)", "cpu", "avg"),
    ("Ø CPU-Zeit (ms)", "cpu", "avg"),
    ("T WaitTime", "dispatcher_wait", "total"),
    ("Total Wait Time (in s)", "dispatcher_wait", "total"),
    ("Wait time (ms)", "dispatcher_wait", "avg"),
    ("Ø Wartezeit (ms)", "dispatcher_wait", "avg"),
    ("DB req. time (ms)", "db_request", "avg"),
    ("Ø DB Time (ms)", "db_request", "avg"),
    ("Ø DB-Zeit (ms)", "db_request", "avg"),
    ("Ø Time/DB Req. (ms)", "db_per_request", "per_request"),
    ("Ø Zeit/DB-Anf. (ms)", "db_per_request", "per_request"),
    ("Ø Roll-in Time (ms)", "roll_in", "avg"),
    ("Ø Roll Wait Time (ms)", "roll_wait", "avg"),
    ("Ø Rollwartezeit (ms)", "roll_wait", "avg"),
    ("Roll (i+w) time (ms)", "roll_in_wait", "avg"),
    ("Ø Load+Gen. Time (ms)", "load_gen", "avg"),
    ("Ø Lade- und Generierungszeit (ms)", "load_gen", "avg"),
    ("Load time(ms)", "load", "avg"),
    ("Generating time  (ms)", "generation", "avg"),
    ("Ø Gen.Time (ms)", "generation", "avg"),
    ("Enqueue time (ms)", "enqueue", "avg"),
    ("Ø Enqueue-Zeit (ms)", "enqueue", "avg"),
    ("GUI time (ms)", "gui", "avg"),
    ("Ø GUI-Zeit (ms)", "gui", "avg"),
    ("Processing time (ms)", "processing", "avg"),
    ("Ø Proc. Time (ms)", "processing", "avg"),
    ("Ø Verarbeitungszeit (ms)", "processing", "avg"),
    ("Memory used (kB)", "memory", "avg"),
    ("Ø Extended Memory (KB)", "extended_memory", "avg"),
    ("Transfered kBytes", "kbytes", "avg"),
    ("Übertragene kBytes", "kbytes", "avg"),
    ("# Steps", "steps", "count"),
    ("Number of Steps", "steps", "count"),
    ("# Dialogschritte", "steps", "count"),
    # Not a per-step figure of any field: listed as not read, never guessed.
    ("Average Wait Time per Transaction (ms)", None, None),
    ("Ø GUI/Trip", None, None),
    ("Max. Extended Memory (KB)", None, None),
    ("VMC elapsed time (ms)", None, None),
    ("Ø Time per transaction", None, None),
    ("% CPU Time", None, None),
]


@pytest.mark.parametrize(("heading", "field", "kind"), HEADINGS)
def test_each_heading_sap_writes_names_exactly_one_field(heading, field, kind) -> None:
    col = classify(0, heading)
    if field is None:
        assert col is None
    else:
        assert (col.field, col.kind) == (field, kind)


# The standard workload overview: response AND time in WPs, mean and total.
OVERVIEW_EN = (
    "Workload Overview: Task Types\n"
    "Period: 25.11.2026 10:00:00 - 25.11.2026 10:59:59\n"
    "\n"
    "Task Type Name\t# Steps\tT Response Time (s)\tØ Response Time (ms)\tT Time in WPs (s)\t"
    "Ø Time in WPs (ms)\tØ Wait Time (ms)\tØ CPU Time (ms)\tØ DB Time (ms)\n"
    "DIALOG\t12,000\t27,000.0\t2,250.0\t22,944.0\t1,912.0\t338.0\t410.0\t880.0\n"
    "BACKGROUND\t300\t14,550.0\t48,500.0\t14,539.5\t48,465.0\t35.0\t9,000.0\t20,000.0\n"
)
OVERVIEW_DE = (
    "Workload-Übersicht: Tasktypen\n"
    "Zeitraum: 25.11.2026 10:00:00 - 25.11.2026 10:59:59\n"
    "\n"
    "Tasktypname;# Dialogschritte;Σ Antwortzeit (s);Ø Antwortzeit (ms);Ø Zeit in WPs (ms);"
    "Ø Wartezeit (ms);Ø CPU-Zeit (ms)\n"
    "DIALOG;12.000;27.000,0;2.250,0;1.912,0;338,0;410,0\n"
    "Hintergrund;300;14.550,0;48.500,0;48.465,0;35,0;9.000,0\n"
)


def _report(store: Store, text: str) -> dict:
    run = imports.store_st03(store, text.encode("utf-8"), "t")
    return reports.report(store, run.id, load_thresholds())


@pytest.mark.parametrize("text", [OVERVIEW_EN, OVERVIEW_DE], ids=["en", "de"])
def test_response_and_time_in_wps_are_two_fields(store, text) -> None:
    """Was refused: "columns 'Ø Response Time (ms)' and 'Ø Time in WPs (ms)' both hold
    Response time"."""
    rep = _report(store, text)
    rows = {r["task_type"]: r for r in rep["st03"]}
    # Response from its own total column (27,000.0 s over 12,000 steps), WP time from its.
    assert rows["dialog"]["response_ms"] == pytest.approx(27_000.0 / 12_000 * 1000, abs=1e-6)
    assert rows["dialog"]["wp_time_ms"] == pytest.approx(1_912.0, abs=1e-6)
    assert rows["dialog"]["dispatcher_wait_ms"] == pytest.approx(338.0, abs=1e-6)
    assert rows["batch"]["response_ms"] == pytest.approx(48_500.0, abs=1e-6)
    assert rows["batch"]["wp_time_ms"] == pytest.approx(48_465.0, abs=1e-6)
    assert rep["benchmark"]["sd"]["dialog_response_s"] == pytest.approx(2.25)
    assert not rep["import"]["derived_fields"]


HIDDEN_RESPONSE = (
    "Period: 25.11.2026 10:00:00 - 25.11.2026 10:59:59\n"
    "Task Type Name\t# Steps\tØ Time in WPs (ms)\tØ Wait Time (ms)\tØ CPU Time (ms)\n"
    "DIALOG\t12,000\t1,912.0\t338.0\t410.0\n"
    "BACKGROUND\t300\t48,465.0\t35.0\t9,000.0\n"
)


def test_without_a_response_column_wp_time_plus_wait_is_the_response_labelled_derived(
    store,
) -> None:
    """Was silently wrong: the report showed time in WPs (1,912 ms, 48,465 ms) as the
    response, hiding the dispatcher queue."""
    rep = _report(store, HIDDEN_RESPONSE)
    rows = {r["task_type"]: r for r in rep["st03"]}
    assert rows["dialog"]["wp_time_ms"] == pytest.approx(1_912.0)
    assert rows["dialog"]["response_ms"] == pytest.approx(1_912.0 + 338.0)
    assert rows["batch"]["response_ms"] == pytest.approx(48_465.0 + 35.0)
    audit = rep["import"]
    assert "response" in audit["derived_fields"]
    assert "Time in WPs + Wait time" in audit["derived_fields"]["response"]
    assert any("response time derived" in w for w in audit["warnings"])


def test_without_response_and_wait_the_response_is_absent_and_sd_not_measured(store) -> None:
    text = (
        "Period: 25.11.2026 10:00:00 - 25.11.2026 10:59:59\n"
        "Task Type Name\t# Steps\tØ Time in WPs (ms)\tØ CPU Time (ms)\n"
        "DIALOG\t12,000\t1,912.0\t410.0\n"
    )
    rep = _report(store, text)
    row = rep["st03"][0]
    assert row["response_ms"] is None  # never the 1,912 ms of WP time
    assert row["wp_time_ms"] == pytest.approx(1_912.0)
    sd = rep["benchmark"]["sd"]
    assert sd["dialog_response_s"] is None and sd["dialog_response_below_2s"] is None
    assert any("response time is absent" in w for w in rep["import"]["warnings"])
    result = checks.check(store, rep["run"].id, load_thresholds(), think_time_s=10.0)
    sd_check = next(c for c in result["criteria"] if c["name"] == "SD: average dialog response")
    assert sd_check["status"] == "skipped"
    assert "no response time" in sd_check["detail"]


def test_stad_headings_each_their_own_field() -> None:
    """A STAD-style table's every time column read as its own field; VMC not read."""
    text = (
        "Task Type Name\t# Steps\tResponse time (ms)\tTime in WPs (ms)\tWait time (ms)\t"
        "CPU time (ms)\tDB req. time (ms)\tVMC elapsed time (ms)\tMemory used (kB)\t"
        "Transfered kBytes\tProcessing time (ms)\tLoad time(ms)\tGenerating time  (ms)\t"
        "Roll (i+w) time (ms)\tEnqueue time (ms)\tGUI time (ms)\n"
        "DIALOG\t4\t812.5\t800.0\t12.5\t300.0\t250.0\t0.0\t8,192.0\t12.5\t500.0\t"
        "20.0\t5.0\t3.0\t1.0\t40.0\n"
    )
    table = parse_table(text.encode())
    steps = 4
    expect = {
        "response": 812.5,
        "wp_time": 800.0,
        "dispatcher_wait": 12.5,
        "cpu": 300.0,
        "db_request": 250.0,
        "processing": 500.0,
        "load": 20.0,
        "generation": 5.0,
        "roll_in_wait": 3.0,
        "enqueue": 1.0,
        "gui": 40.0,
    }
    for name, ms in expect.items():
        assert table.seconds[name][0] == pytest.approx(ms * steps / 1000), name
    # Load and generation given apart: their sum is load+gen, labelled derived.
    assert table.seconds["load_gen"][0] == pytest.approx(25.0 * steps / 1000)
    assert "load_gen" in table.derived
    assert table.sizes["memory"][0] == pytest.approx(8192.0 * steps)
    assert table.sizes["kbytes"][0] == pytest.approx(12.5 * steps)
    assert table.not_read == ["VMC elapsed time (ms)"]


BUF_SYNC = (
    "Period: 25.11.2026 10:00:00 - 25.11.2026 10:59:59\n"
    "Task Type Name\t# Steps\tT Response Time (s)\tØ Response Time (ms)\tT CPU Time (s)\t"
    "Ø CPU Time (ms)\tT DB Time (s)\tØ DB Time (ms)\n"
    "DIALOG\t12,000\t27,000.0\t2,250.0\t4,920.0\t410.0\t10,560.0\t880.0\n"
    "BUF.SYNC\t90\t0.2\t2.1\t0.1\t1.0\t0.0\t0.5\n"
)


def test_a_rounded_total_never_wins_over_a_finer_mean(store) -> None:
    """BUF.SYNC: T CPU 0.1 s over 90 steps is 1.111 ms; the file's mean says 1.0 (the total
    was rounded). The finer of the two is used, and the audit says so."""
    rep = _report(store, BUF_SYNC)
    row = next(r for r in rep["st03"] if r["task_type"] == "buffer_sync")
    assert row["cpu_ms"] == pytest.approx(1.0)
    assert row["db_request_ms"] == pytest.approx(0.5)
    assert row["response_ms"] == pytest.approx(2.1)
    assert rep["import"]["precision"]["cpu"] == 1
    assert any("mean" in w and "Ø CPU Time (ms)" in w for w in rep["import"]["warnings"])
    dialog = next(r for r in rep["st03"] if r["task_type"] == "dialog")
    assert dialog["cpu_ms"] == pytest.approx(4_920.0 / 12_000 * 1000)


def test_a_mean_and_total_beyond_rounding_are_refused_naming_both_cells() -> None:
    text = BUF_SYNC.replace("\t0.1\t1.0\t", "\t0.3\t1.0\t")  # 0.3 s / 90 = 3.3 ms, not 1.0
    with pytest.raises(ST03Error) as exc:
        parse_table(text.encode())
    message = str(exc.value)
    assert "line 4 (cells '1.0' and '0.3')" in message
    assert "'Ø CPU Time (ms)'" in message and "'T CPU Time (s)'" in message


def test_an_import_s_sd_verdict_needs_a_think_time_and_bait_continuity(store, tmp_path) -> None:
    """An ST03 import got a think time of 10 s from a default ("SD: think time 10 s
    passed") and BAIT "60 consecutive minutes: yes" from one sum over the hour."""
    rep = _report(store, OVERVIEW_EN)
    assert rep["benchmark"]["sd"]["think_time_s"] is None
    bait = rep["benchmark"]["bait"]
    assert bait["sixty_consecutive_minutes"] is None
    assert "cannot show continuity" in bait["not_measured"]
    result = checks.check(store, rep["run"].id, load_thresholds())
    by = {c["name"]: c for c in result["criteria"]}
    assert by["SD: think time"]["status"] == "skipped"
    assert by["SD: average dialog response"]["status"] == "skipped"
    assert "think time is unknown" in by["SD: average dialog response"]["detail"]
    assert by["BAIT: 60 consecutive minutes measured"]["status"] == "skipped"
    given = checks.check(store, rep["run"].id, load_thresholds(), think_time_s=10.0)
    by = {c["name"]: c for c in given["criteria"]}
    # 2.25 s average dialog response: over the 2 s bound, judged now.
    assert by["SD: average dialog response"]["status"] == "failed"
    assert by["SD: think time"]["status"] == "passed"
    assert "--think-time" in by["SD: think time"]["detail"]


def test_wlmon_check_takes_think_time(tmp_path) -> None:
    export = tmp_path / "overview.txt"
    export.write_text(HIDDEN_RESPONSE, encoding="utf-8")
    env = {"WLMON_API_DB_PATH": str(tmp_path / "db.sqlite")}
    runner = CliRunner()
    get_settings.cache_clear()
    try:
        imported = runner.invoke(app, ["import", "st03", str(export)], env=env)
        run_id = imported.stdout.split()[0]
        unknown = runner.invoke(app, ["check", run_id, "--json"], env=env)
        known = runner.invoke(app, ["check", run_id, "--json", "--think-time", "10"], env=env)
        bad = runner.invoke(app, ["check", run_id, "--think-time", "-1"], env=env)
    finally:
        get_settings.cache_clear()
    assert imported.exit_code == 0, imported.output
    sd = next(c for c in json.loads(unknown.stdout)["criteria"] if c["name"].startswith("SD: a"))
    assert sd["status"] == "skipped"
    # dialog response 1,912 + 338 = 2,250 ms: over 2 s, a failure now that it is judged.
    assert known.exit_code == 1, known.output
    sd = next(c for c in json.loads(known.stdout)["criteria"] if c["name"].startswith("SD: a"))
    assert sd["status"] == "failed" and sd["value"] == pytest.approx(2.25)
    assert bad.exit_code == 2
