"""ST03N exports as SAP writes them (issue 23): every layout and format, English and German,
the period, the number format, the column table, the Total row. Files come from the
generator in st03files.py; every expected figure is computed here from the generated
values, not read back from the importer."""

from __future__ import annotations

import random

import pytest
from typer.testing import CliRunner

from alerts.thresholds import load_thresholds
from api.config import get_settings
from api.imports.st03 import ST03Error, parse_table
from api.services import checks, imports, reports
from api.services.errors import Invalid
from api.store import Store
from tests.api.st03files import Export
from wlmon.cli import app

ALL_TASK_TYPES = [
    "DIALOG",
    "UPDATE",
    "UPDATE2",
    "BACKGROUND",
    "RFC",
    "HTTP",
    "AUTOABAP",
    "BUF.SYNC",
    "SPOOL",
    "ZNEWTYPE",  # one SAP adds in a later release: kept, never refused
]
KEYS = {
    "DIALOG": "dialog",
    "UPDATE": "update",
    "UPDATE2": "update2",
    "BACKGROUND": "batch",
    "RFC": "rfc",
    "HTTP": "http",
    "AUTOABAP": "autoabap",
    "BUF.SYNC": "buffer_sync",
    "SPOOL": "spool",
    "ZNEWTYPE": "znewtype",
}
FIELDS = ["steps", "total_response", "response", "cpu", "db", "db_per_request", "wait"]
HOUR_PERIOD = {
    "en": "Period: 25.11.2026 10:00:00 - 25.11.2026 10:59:59",
    "de": "Zeitraum: 25.11.2026 10:00:00 - 25.11.2026 10:59:59",
}


@pytest.fixture
def store(tmp_path) -> Store:
    return Store(tmp_path / "db.sqlite")


def _rows(seed: int, tasks: list[str]) -> list[tuple[list[str], dict[str, float]]]:
    rng = random.Random(seed)
    rows = []
    for task in tasks:
        steps = float(rng.randint(100, 2_000_000))
        response = round(rng.uniform(1.0, 60_000.0), 1)
        rows.append(
            (
                [task],
                {
                    "steps": steps,
                    "response": response,
                    # The total as SAP computes it from the unrounded mean: within the
                    # digits shown of mean x steps.
                    "total_response": round(response * steps / 1000.0, 1),
                    "cpu": round(rng.uniform(0.0, response), 1),
                    "db": round(rng.uniform(0.0, response), 1),
                    "db_per_request": round(rng.uniform(0.1, 30.0), 1),
                    "wait": round(rng.uniform(0.0, 50.0), 1),
                },
            )
        )
    return rows


def _total(rows) -> dict[str, float]:
    steps = sum(v["steps"] for _, v in rows)
    total = {"steps": steps, "total_response": sum(v["total_response"] for _, v in rows)}
    for f in ("response", "cpu", "db", "wait"):
        total[f] = round(sum(v[f] * v["steps"] for _, v in rows) / steps, 1)
    return total


def _overview(language: str, style: str, seed: int = 1, total: bool = True, period=True):
    rows = _rows(seed, ALL_TASK_TYPES)
    return Export(
        keys=["task"],
        fields=FIELDS,
        rows=rows,
        preamble=["Workload Overview: Task Types", "Instance: Total"]
        + ([HOUR_PERIOD[language]] if period else [])
        + ["Date: 26.11.2026"],  # the print date: not the period
        language=language,
        style=style,
        total=_total(rows) if total else None,
    )


def _report(store: Store, text: str, encoding: str = "utf-8", **options) -> dict:
    run = imports.store_st03(
        store, text.encode(encoding), "t", imports.st03_options(**options) if options else None
    )
    return reports.report(store, run.id, load_thresholds())


@pytest.mark.parametrize(
    ("language", "style", "fmt"),
    [
        ("en", "point", "tabs"),
        ("de", "comma", "tabs"),
        ("de", "comma", "spreadsheet"),
        ("en", "point", "csv"),
        ("en", "point", "list"),
        ("de", "comma", "list"),
    ],
)
def test_an_overview_of_one_hour_in_every_format_gives_saps_of_steps_per_hour_over_60(
    store, language: str, style: str, fmt: str
) -> None:
    export = _overview(language, style)
    rep = _report(store, export.text(fmt))
    rows = {r["task_type"]: r for r in rep["st03"]}
    # Every task type SAP lists is kept, the unknown one too, under one key each.
    assert set(rows) == set(KEYS.values())
    assert rows["buffer_sync"]["as_exported"] == "BUF.SYNC"
    for (task,), values in export.rows:
        row = rows[KEYS[task]]
        assert row["steps"] == values["steps"]
        # Both the mean and the total are in the file: the total is read, the mean checked
        # against it, so the report's mean is total / steps.
        assert row["response_ms"] == pytest.approx(
            1000 * values["total_response"] / values["steps"], abs=5e-4
        )
        assert row["cpu_ms"] == pytest.approx(values["cpu"], abs=5e-4)
        # Ø DB Time and Ø Time/DB Req. are two fields: neither overwrites the other.
        assert row["db_request_ms"] == pytest.approx(values["db"], abs=5e-4)
        assert row["db_time_per_request_ms"] == pytest.approx(values["db_per_request"], abs=5e-4)
        assert row["dispatcher_wait_ms"] == pytest.approx(values["wait"], abs=5e-4)
        # Columns the export lacks are absent, never 0.
        assert row["enqueue_ms"] is None and row["gui_ms"] is None
    dialog_steps = dict((t, v["steps"]) for (t,), v in export.rows)["DIALOG"]
    sd = rep["benchmark"]["sd"]
    assert rep["steady_state"]["duration_s"] == 3600.0
    assert sd["dialog_steps_per_hour"] == dialog_steps
    assert sd["saps"] == round(dialog_steps / 60)
    audit = rep["import"]
    assert audit["period"]["start"] == "2026-11-25T10:00:00"
    assert audit["period"]["seconds"] == 3600.0
    assert audit["number_format"] == ("decimal comma" if style == "comma" else "decimal point")
    assert audit["total_row"]["columns_checked"]
    assert any("Date: 26.11.2026" in w for w in audit["warnings"])
    assert rep["run"].start.isoformat().startswith("2026-11-25T10:00:00")


def test_the_issue_s_german_tsv_reads_every_number_as_written(store) -> None:
    """48.500,0 ms was read as 48.5, 640,5 as 6,405 and 35,0 as 350 (a tab file)."""
    text = (
        "Tasktypname\t# Dialogschritte\tØ Antwortzeit (ms)\tØ CPU-Zeit (ms)\tØ DB-Zeit (ms)\n"
        "DIALOG\t1.743.000\t48.500,0\t640,5\t35,0\n"
    )
    row = parse_table(text.encode()).rows()[0]
    assert row.steps == 1_743_000
    assert row.seconds["response"] == pytest.approx(48_500.0 * 1_743_000 / 1000)
    assert row.seconds["cpu"] == pytest.approx(640.5 * 1_743_000 / 1000)
    assert row.seconds["db_request"] == pytest.approx(35.0 * 1_743_000 / 1000)


def test_a_german_tsv_s_times_round_trip_exactly(store) -> None:
    rng = random.Random(7)
    rows = []
    for k in range(40):
        steps = float(rng.randint(1, 9_999_999))
        rows.append(
            (
                [f"Z{k:03d}"],
                {"steps": steps, "response": round(rng.uniform(0.1, 99_999.9), 1)},
            )
        )
    export = Export(
        keys=["tx"],
        fields=["steps", "response"],
        rows=rows,
        language="de",
        style="comma",
        preamble=["Tasktyp: Dialog", HOUR_PERIOD["de"]],
    )
    rep = _report(store, export.text("tabs"))
    got = {r["transaction"]: r for r in rep["transactions"]}
    for (tx,), values in rows:
        assert got[tx]["task_type"] == "dialog"  # from the line above the table
        assert got[tx]["steps"] == values["steps"]
        assert got[tx]["response_ms"] == pytest.approx(values["response"], abs=5e-4)


def test_without_a_period_throughput_saps_and_bait_are_not_measured(store) -> None:
    """The issue: 1,743,000 steps over a made-up 1 s gave SAPS 104,580,000 and 'yes'."""
    export = _overview("en", "point", period=False)
    text = export.text("tabs")
    rep = _report(store, text)
    sd, bait = rep["benchmark"]["sd"], rep["benchmark"]["bait"]
    assert sd["saps"] is None and sd["dialog_steps_per_hour"] is None
    assert "no period" in sd["not_measured"]
    assert bait["sixty_consecutive_minutes"] is None
    assert {"saps", "throughput_steps_per_s", "dialog_steps_per_s"} <= set(rep["not_measured"])
    # A check bounding SAPS skips it, saying why: neither passed nor an error.
    run_id = rep["run"].id
    result = checks.check(
        store, run_id, load_thresholds(), "criteria:\n  - figure: saps\n    min: 29000\n"
    )
    saps = next(c for c in result["criteria"] if c["figure"] == "saps")
    assert saps["status"] == "skipped" and "not measured" in saps["detail"]
    html = reports.page(store, run_id, load_thresholds())
    assert "104,580,000" not in html and "not measured" in html
    # Given on import, the period makes them measured: steps/h / 60 of the hour given.
    dialog = next(v["steps"] for (t,), v in export.rows if t == "DIALOG")
    for options in ({"start": "2026-11-25T10:00", "end": "2026-11-25T11:00"}, {"period": "1h"}):
        sd = _report(store, text, **options)["benchmark"]["sd"]
        assert sd["saps"] == round(dialog / 60)
    sd = _report(store, text, period="PT30M")["benchmark"]["sd"]
    assert sd["saps"] == round(dialog * 2 / 60)


def test_a_period_given_that_contradicts_the_file_is_refused(store) -> None:
    text = _overview("en", "point").text("tabs")
    with pytest.raises(Invalid, match="differs from the file"):
        _report(store, text, period="2h")
    with pytest.raises(Invalid, match="period 'soon'"):
        imports.st03_options(period="soon")
    assert store.runs.list().rows == []


def test_a_total_row_that_does_not_sum_is_refused_naming_line_and_column(store) -> None:
    export = _overview("de", "comma")
    export.total = dict(export.total)
    export.total["response"] += 0.2  # more than the 0.05 the digits allow
    with pytest.raises(ST03Error) as info:
        parse_table(export.text("tabs").encode())
    line = len(export.preamble) + 1 + 1 + len(export.rows) + 1
    assert f"line {line} (Total), column 'Ø Antwortzeit (ms)'" in str(info.value)
    export.total["response"] -= 0.2
    export.total["steps"] += 1  # counts add up exactly
    with pytest.raises(ST03Error, match="column '# Dialogschritte'"):
        parse_table(export.text("tabs").encode())


@pytest.mark.parametrize(
    ("cells", "message"),
    [
        # Nothing but 1.234-like cells: either format reads them, differently.
        (["1.234", "5"], "line 2, column 'Ø Time (ms)': '1.234' reads as 1.234"),
        # A decimal comma in one cell and a decimal point in another.
        (["1,5", "2.5"], "'1,5' has a decimal comma but line 3, column 'Ø Time (ms)': '2.5'"),
    ],
)
def test_a_file_whose_number_format_is_unclear_is_refused_naming_the_cell(
    cells: list[str], message: str
) -> None:
    text = "Task type\t# Steps\tØ Time (ms)\n" + "".join(
        f"DIALOG{k}\t10\t{c}\n" for k, c in enumerate(cells)
    )
    with pytest.raises(ST03Error) as info:
        parse_table(text.encode())
    assert message in str(info.value)
    # Said on import, the format is no longer a guess.
    if cells[0] == "1.234":
        rows = parse_table(text.encode(), imports.st03_options(decimal="comma")).rows()
        assert rows[0].seconds["response"] == pytest.approx(1234 * 10 / 1000)


def test_a_windows_1252_heading_names_its_own_column() -> None:
    text = "Task type\t# Steps\tT Response Time (s)\tØ Time (ms)\nDIALOG\t10\t1,0\t100,0\n"
    with pytest.raises(ST03Error) as info:
        parse_table(text.encode("cp1252"))
    assert "line 1, column 4: bytes 0xd8" in str(info.value)


def test_a_mean_and_a_total_that_disagree_are_refused() -> None:
    text = "Task type\t# Steps\tT Response Time (s)\tØ Time (ms)\nDIALOG\t1000\t2.0\t1960.0\n"
    with pytest.raises(
        ST03Error,
        match=r"line 2 \(cells '1960.0' and '2.0'\): 'Ø Time \(ms\)' x steps gives "
        r"1,960\.000 s but "
        r"'T Response Time \(s\)' says 2\.000 s",
    ):
        parse_table(text.encode())


def test_a_transaction_profile_without_a_task_type_column(store) -> None:
    rows = [
        (["VA01"], {"steps": 581_000.0, "response": 2003.7}),
        (["VA05"], {"steps": 10.0, "response": 5.5}),
    ]
    export = Export(
        keys=["tx"], fields=["steps", "response"], rows=rows, preamble=[HOUR_PERIOD["en"]]
    )
    # Not said anywhere: kept as task type 'all', with a warning; no SAPS for 'dialog'.
    rep = _report(store, export.text("tabs"))
    assert [r["task_type"] for r in rep["st03"]] == ["all"]
    assert any("names no task type" in w for w in rep["import"]["warnings"])
    # Exported from the DIALOG node and said so on import: a dialog run.
    rep = _report(store, export.text("tabs"), task_type="DIALOG")
    assert rep["benchmark"]["sd"]["saps"] == round((581_000 + 10) / 60)
    profile = {r["transaction"]: r for r in rep["transaction_profile"]}
    assert profile["VA01"]["response_ms"] == pytest.approx(2003.7, abs=5e-4)
    assert profile["VA01"]["cpu_ms"] is None


def test_a_time_profile_s_hour_rows_become_the_run_s_series(store) -> None:
    rng = random.Random(3)
    hours = [8, 9, 11, 17]  # ST03N lists only hours with work: 10 and 12-16 had none
    rows = []
    for h in hours:
        for task in ("DIALOG", "UPDATE"):
            rows.append(
                (
                    [f"{h:02d}-{h + 1:02d}", task],
                    {
                        "steps": float(rng.randint(1000, 90_000)),
                        "response": round(rng.uniform(50, 3000), 1),
                    },
                )
            )
    export = Export(
        keys=["hour", "task"],
        fields=["steps", "response"],
        rows=rows,
        language="de",
        style="comma",
        preamble=["Zeitraum: Tag 25.11.2026"],
    )
    rep = _report(store, export.text("spreadsheet"))
    assert rep["import"]["layout"] == "time profile"
    assert rep["steady_state"]["duration_s"] == 86_400.0  # the day the export names
    profile = {(r["start_s"], r["task_type"]): r for r in rep["time_profile"]["rows"]}
    for (hour, task), values in rows:
        start = 3600.0 * int(hour[:2])
        row = profile[(start, "dialog" if task == "DIALOG" else "update")]
        assert row["steps"] == values["steps"]
        assert row["response_ms"] == pytest.approx(values["response"], abs=5e-4)
    assert profile[(36_000.0, "dialog")]["steps"] == 0  # the hour without work
    dialog = sum(v["steps"] for (h, t), v in rows if t == "DIALOG")
    assert rep["benchmark"]["sd"]["saps"] == round(dialog / 24 / 60)
    # Without the line above the table, the hour rows are the period: 08:00 to 18:00.
    export.preamble = []
    rep = _report(store, export.text("tabs"))
    assert rep["steady_state"]["duration_s"] == 10 * 3600.0
    assert rep["benchmark"]["sd"]["saps"] == round(dialog / 10 / 60)


def test_wlmon_import_st03_takes_the_period(tmp_path) -> None:
    path = tmp_path / "overview.txt"
    path.write_text(_overview("en", "point", period=False).text("tabs"), encoding="utf-8")
    env = {"WLMON_API_DB_PATH": str(tmp_path / "db.sqlite")}
    get_settings.cache_clear()
    try:
        ok = CliRunner().invoke(app, ["import", "st03", str(path), "--period", "1h"], env=env)
        bad = CliRunner().invoke(app, ["import", "st03", str(path), "--period", "x"], env=env)
        report = CliRunner().invoke(app, ["report", ok.stdout.strip()], env=env)
    finally:
        get_settings.cache_clear()
    assert ok.exit_code == 0, ok.output
    assert bad.exit_code == 2 and "period 'x'" in " ".join(bad.output.split())
    assert report.exit_code == 0, report.output
    assert "SAPS" in report.output


def test_a_count_column_tells_the_number_format() -> None:
    """Steps are shown without decimals: '1,000' steps is a thousand in any file, and the
    times of the file then read with a decimal point ('1.234' ms is 1.234)."""
    text = "Task type\t# Steps\tØ Time (ms)\nDIALOG\t1,000\t1.234\nUPDATE\t2,500\t5\n"
    rows = parse_table(text.encode()).rows()
    assert [r.steps for r in rows] == [1000.0, 2500.0]
    assert rows[0].seconds["response"] == pytest.approx(1.234 * 1000 / 1000)
    german = "Tasktyp\t# Schritte\tØ Antwortzeit (ms)\nDIALOG\t1.000\t1,234\n"
    (row,) = parse_table(german.encode()).rows()
    assert row.steps == 1000.0 and row.seconds["response"] == pytest.approx(1.234)


def test_every_series_exports_as_csv_unrounded(store, tmp_path) -> None:
    """GET /runs/{id}/series.csv and `wlmon report --csv DIR`: the time profile's hours."""
    import csv as csvmod

    rows = [([f"{h:02d}-{h + 1:02d}"], {"steps": 1000.0 * h, "response": 123.4}) for h in (8, 9)]
    export = Export(keys=["hour"], fields=["steps", "response"], rows=rows, preamble=[])
    text = export.text("tabs")
    run = imports.store_st03(store, text.encode(), "t", imports.st03_options(task_type="DIALOG"))
    got = list(csvmod.reader(reports.series_csv(store, run.id).splitlines()))
    assert got[0][:2] == ["t_s", "utc"]
    steps = got[0].index("st03.dialog.steps")
    response = got[0].index("st03.dialog.response")
    assert [float(r[0]) for r in got[1:]] == [3600.0, 7200.0]
    assert [float(r[steps]) for r in got[1:]] == [8000.0, 9000.0]
    # Total seconds, not rounded: 123.4 ms x 8000 steps.
    assert float(got[1][response]) == pytest.approx(123.4 * 8000 / 1000, rel=1e-12)
    env = {"WLMON_API_DB_PATH": str(tmp_path / "cli.sqlite")}
    path = tmp_path / "tp.txt"
    path.write_text(text, encoding="utf-8")
    get_settings.cache_clear()
    try:
        ok = CliRunner().invoke(
            app, ["import", "st03", str(path), "--task-type", "DIALOG"], env=env
        )
        out = tmp_path / "csv"
        rep = CliRunner().invoke(
            app, ["report", ok.stdout.strip(), "--csv", str(out), "--json"], env=env
        )
    finally:
        get_settings.cache_clear()
    assert rep.exit_code == 0, rep.output
    (written,) = out.iterdir()
    assert list(csvmod.reader(written.read_text().splitlines()))[1][steps] == got[1][steps]
