"""STAD exports (issue 32, item 3): SAP's statistical records, one line per dialog step,
imported as a run with exact percentiles.

The layout is the one a public pipeline of an SAP load-test team reads (GitHub, a CGI
upload script for STAD text and XLSX downloads): an `Analysed time:` line above the table,
the heading `Started, Server, Step, Typ, Transaction or jobname, User, Response time (ms),
Time in WPs (ms), Wait time (ms), CPU time (ms), DB req. time (ms), VMC elapsed time (ms),
Memory used (kB), Transfered kBytes, Processing time (ms), Load time (ms), Generating time
(ms), Roll (i+w) time (ms), Enqueue time (ms), GUI time (ms)`, which the text download splits
over two lines aligned at their right end (that script pairs them from the right), rows
starting with a tab, German files with decimal commas. Every expected figure (sums, exact
percentiles by nearest rank, steps per minute) is computed here from the generated steps.
"""

from __future__ import annotations

import math
import random

import pytest
from typer.testing import CliRunner

from alerts.thresholds import load_thresholds
from api.config import get_settings
from api.imports.st03 import ST03Error
from api.imports.stad import parse
from api.runs.junit import to_junit
from api.services import checks, imports, reports
from api.services.errors import Invalid
from api.store import Store
from wlmon.cli import app

EN_TOP = [
    "Started",
    "Server",
    "Step",
    "Typ",
    "Transaction or",
    "User",
    "Response",
    "Time in",
    "Wait",
    "CPU time",
    "DB req.",
    "VMC elapsed",
    "Memory used",
    "Transfered",
    "Processing",
    "Load time",
    "Generating",
    "Roll (i+w)",
    "Enqueue",
    "GUI time",
]
EN_LOW = [
    "jobname",
    "",
    "time (ms)",
    "WPs (ms)",
    "time (ms)",
    "(ms)",
    "time (ms)",
    "time (ms)",
    "(kB)",
    "kBytes",
    "time (ms)",
    "(ms)",
    "time (ms)",
    "time (ms)",
    "time (ms)",
    "(ms)",
]
DE_HEAD = [
    "Startzeit",
    "Server",
    "Schritt",
    "Typ",
    "Transaktion oder Jobname",
    "Benutzer",
    "Antwortzeit (ms)",
    "Zeit in WPs (ms)",
    "Wartezeit (ms)",
    "CPU-Zeit (ms)",
    "DB-Anf.-Zeit (ms)",
    "VMC-Zeit (ms)",
    "Belegter Speicher (kB)",
    "Übertragene kBytes",
    "Verarbeitungszeit (ms)",
    "Ladezeit (ms)",
    "Generierungszeit (ms)",
    "Roll (i+w) time (ms)",
    "Enqueue-Zeit (ms)",
    "GUI-Zeit (ms)",
]
TASKS = {"DIA": "dialog", "BTC": "batch", "UPD": "update"}


def _steps(seed: int, n: int) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for t in sorted(rng.randint(10 * 3600, 11 * 3600 - 1) for _ in range(n)):
        typ = rng.choice(["DIA"] * 6 + ["BTC", "UPD"])
        wp = round(rng.uniform(50.0, 3000.0), 1)
        wait = round(rng.uniform(0.0, 400.0), 1)
        out.append(
            {
                "t": t,
                "server": rng.choice(["sapapp1_PRD_00", "sapapp2_PRD_00"]),
                "typ": typ,
                "tx": rng.choice(["VA01", "VA02", "ME21N"]) if typ == "DIA" else "RSM13000",
                "user": f"USER{rng.randint(1, 9):02d}",
                "wp": wp,
                "wait": wait,
                "response": round(wp + wait, 1),
                "cpu": round(wp * 0.4, 1),
                "db": round(wp * 0.3, 1),
                "mem": float(rng.randint(1000, 90000)),
            }
        )
    return out


def _num(v: float, comma: bool, decimals: int = 1) -> str:
    text = f"{v:,.{decimals}f}"
    return text.replace(",", "_").replace(".", ",").replace("_", ".") if comma else text


def _text(steps: list[dict], german: bool = False) -> str:
    lines = [
        ("Analysierte Zeit: 25.11.2026 / 10:00:00 - 25.11.2026 / 11:00:00")
        if german
        else "Analysed time: 25.11.2026 / 10:00:00 - 25.11.2026 / 11:00:00",
        "",
    ]
    if german:
        lines.append("\t" + "\t".join(DE_HEAD))
    else:
        lines.append("\t" + "\t".join(EN_TOP))
        lines.append("\t" * (len(EN_TOP) - len(EN_LOW) + 1) + "\t".join(EN_LOW))
    for k, s in enumerate(steps):
        h, m, sec = s["t"] // 3600, s["t"] // 60 % 60, s["t"] % 60
        cells = [
            f"{h:02d}:{m:02d}:{sec:02d}",
            s["server"],
            str(k + 1),
            s["typ"],
            s["tx"],
            s["user"],
        ]
        values = [
            s["response"],
            s["wp"],
            s["wait"],
            s["cpu"],
            s["db"],
            0.0,
            s["mem"],
            12.5,
            s["wp"] - s["cpu"],
            1.0,
            0.0,
            2.0,
            0.5,
            0.0,
        ]
        cells += [_num(v, german) for v in values]
        lines.append("\t" + "\t".join(cells))
    return "\r\n".join(lines) + "\r\n"


def _rank(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


@pytest.mark.parametrize("german", [False, True], ids=["en", "de"])
def test_a_stad_export_gives_exact_percentiles_and_every_part(tmp_path, german) -> None:
    steps = _steps(3, 400)
    store = Store(tmp_path / "db.sqlite")
    run = imports.store_stad(store, _text(steps, german).encode("utf-8"), "stad")
    rep = reports.report(store, run.id, load_thresholds())
    assert rep["steady_state"]["duration_s"] == 3600.0
    rows = {r["task_type"]: r for r in rep["st03"]}
    for typ, key in TASKS.items():
        mine = [s for s in steps if s["typ"] == typ]
        assert rows[key]["steps"] == len(mine)
        assert rows[key]["response_ms"] == pytest.approx(
            sum(s["response"] for s in mine) / len(mine), abs=1e-3
        )
        assert rows[key]["wp_time_ms"] == pytest.approx(
            sum(s["wp"] for s in mine) / len(mine), abs=1e-3
        )
        assert rows[key]["memory_kb"] == pytest.approx(
            sum(s["mem"] for s in mine) / len(mine), abs=1e-3
        )
    # Load (1.0 ms) and generation (0.0 ms) per step: load+gen their sum, labelled derived.
    assert rows["dialog"]["load_gen_ms"] == pytest.approx(1.0)
    assert "load_gen" in rep["import"]["derived_fields"]
    pct = {r["task_type"]: r for r in rep["percentiles"]["by_task_type"]}
    for typ, key in TASKS.items():
        values = [s["response"] for s in steps if s["typ"] == typ]
        for name, q in (("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99)):
            assert pct[key][f"{name}_s"] == pytest.approx(_rank(values, q) / 1000, abs=1e-9)
    by_tx = {(r["task_type"], r["transaction"]): r for r in rep["percentiles"]["by_transaction"]}
    va01 = [s["response"] for s in steps if s["tx"] == "VA01"]
    assert by_tx[("dialog", "VA01")]["p95_s"] == pytest.approx(_rank(va01, 0.95) / 1000)
    assert "exact" in rep["percentiles"]["source"]
    # Steps per minute: the run's series, one sample a minute.
    per_minute = [0] * 60
    for s in steps:
        per_minute[(s["t"] - 36000) // 60] += 1
    over = rep["time_profile"]
    assert sum(r["steps"] for r in over["rows"]) == len(steps)
    assert rep["import"]["layout"].startswith("STAD")
    assert rep["benchmark"]["bait"]["sixty_consecutive_minutes"] is None


def test_steps_past_midnight_start_the_next_day_and_a_missing_date_is_refused() -> None:
    text = (
        "Analysed time: 25.11.2026 / 23:00:00 - 26.11.2026 / 01:00:00\n"
        "Started\tTyp\tTransaction or jobname\tResponse time (ms)\n"
        "23:59:58\tDIA\tVA01\t100.0\n"
        "00:00:03\tDIA\tVA01\t300.0\n"
    )
    steps = parse(text.encode())
    assert steps.steps == 2
    assert list(steps.table.sample) == [59, 60]  # minute 59 of the period, then minute 60
    with pytest.raises(ST03Error, match="names no date"):
        parse(text.split("\n", 1)[1].encode())


def test_wlmon_import_stad_prints_the_run_and_the_report_its_percentiles(tmp_path) -> None:
    path = tmp_path / "stad.txt"
    path.write_text(_text(_steps(5, 120)), encoding="utf-8")
    env = {"WLMON_API_DB_PATH": str(tmp_path / "db.sqlite"), "COLUMNS": "120"}
    get_settings.cache_clear()
    try:
        runner = CliRunner()
        goals = tmp_path / "nfr.csv"
        goals.write_text(TARGETS, encoding="utf-8")
        ok = runner.invoke(app, ["import", "stad", str(path), "--targets", str(goals)], env=env)
        shown = runner.invoke(app, ["report", ok.stdout.strip()], env=env)
        bad = runner.invoke(app, ["import", "stad", str(path), "--tz", "Nowhere/City"], env=env)
    finally:
        get_settings.cache_clear()
    assert ok.exit_code == 0, ok.output
    assert shown.exit_code == 0, shown.output
    assert "p95" in shown.stdout and "VA01" in shown.stdout
    assert (
        "target ME21N mean" in shown.stdout and "target ZNOTRUN mean: not measured" in shown.stdout
    )
    assert bad.exit_code == 2


# The NFR sheet as the public pipeline writes it (`TCODE`, `Target Response Time
# (Seconds)`), with an optional statistic column.
TARGETS = (
    "TCODE,Target Response Time (Seconds),Statistic\n"
    "VA01,1.5,p95\n"
    "VA02,5,mean\n"
    "ME21N,0.2,mean\n"
    "ZNOTRUN,1,mean\n"
)


def test_targets_per_transaction_are_judged_in_report_check_and_junit(tmp_path) -> None:
    steps = _steps(3, 400)
    store = Store(tmp_path / "db.sqlite")
    run = imports.store_stad(store, _text(steps).encode(), "stad", None, TARGETS.encode())
    rep = reports.report(store, run.id, load_thresholds())
    got = {t["transaction"]: t for t in rep["targets"]}
    va01 = [s["response"] for s in steps if s["tx"] == "VA01" and s["typ"] == "DIA"]
    p95 = _rank(va01, 0.95) / 1000
    assert got["VA01"]["measured_s"] == pytest.approx(p95)
    assert got["VA01"]["passed"] is (p95 <= 1.5)
    va02 = [s["response"] for s in steps if s["tx"] == "VA02"]
    assert got["VA02"]["measured_s"] == pytest.approx(sum(va02) / len(va02) / 1000, abs=1e-6)
    assert got["VA02"]["passed"] is True
    assert got["ME21N"]["passed"] is False
    assert got["ZNOTRUN"]["measured_s"] is None and got["ZNOTRUN"]["passed"] is None
    result = checks.check(store, run.id, load_thresholds())
    by = {c["name"]: c for c in result["criteria"]}
    assert by["target VA01 p95"]["status"] == ("passed" if p95 <= 1.5 else "failed")
    assert by["target ME21N mean"]["status"] == "failed"
    assert by["target ZNOTRUN mean"]["status"] == "skipped"
    xml = to_junit(result)
    assert xml.count('name="target ') == 4
    with pytest.raises(Invalid, match="no unit"):
        imports.store_stad(store, _text(steps).encode(), "x", None, b"TCODE;Target\nVA01;1\n")


@pytest.fixture
def api(tmp_path):
    from fastapi.testclient import TestClient

    from api.config import Settings
    from api.main import create_app

    settings = Settings(db_path=tmp_path / "db.sqlite", token="t", stad_max_bytes=200_000)
    with TestClient(create_app(settings)) as client:
        yield client


AUTH = {"Authorization": "Bearer t"}


def test_post_imports_stad_takes_the_export_targets_and_zone(api) -> None:
    steps = _steps(5, 300)
    r = api.post(
        "/imports/stad",
        files={
            "file": ("stad.txt", _text(steps, german=True).encode("utf-8"), "text/plain"),
            "targets": ("nfr.csv", TARGETS.encode(), "text/csv"),
        },
        data={"tz": "Europe/Berlin", "label": "day 1"},
        headers=AUTH,
    )
    assert r.status_code == 201, r.text
    run = r.json()
    assert run["label"] == "day 1" and run["scenario"] == "stad"
    # 10:00 in Berlin on 25 November (CET, UTC+1) is 09:00 UTC.
    assert run["start"].startswith("2026-11-25T09:00:00")
    rep = api.get(f"/runs/{run['id']}/report").json()
    dialog = [s["response"] for s in steps if s["typ"] == "DIA"]
    pct = {p["task_type"]: p for p in rep["percentiles"]["by_task_type"]}
    assert pct["dialog"]["steps"] == len(dialog)
    assert pct["dialog"]["p90_s"] == pytest.approx(_rank(dialog, 0.9) / 1000)
    va01 = [s["response"] for s in steps if s["tx"] == "VA01"]
    got = {t["transaction"]: t for t in rep["targets"]}
    assert got["VA01"]["measured_s"] == pytest.approx(_rank(va01, 0.95) / 1000)
    assert rep["window"]["zone"] == "Europe/Berlin"
    assert (
        rep["window"]["start_local"].startswith("2026-11-25")
        and "10:00" in (rep["window"]["start_local"])
    )


@pytest.mark.parametrize(
    ("kwargs", "status", "message"),
    [
        ({"content": b"Started\tTyp\n"}, 415, "multipart/form-data"),
        ({"files": {"targets": ("t.csv", b"x", "text/csv")}}, 422, "no part 'file'"),
        (
            {"files": {"file": ("s.txt", b"x", "text/plain")}, "data": {"tz": "Mars/Base"}},
            422,
            "tz 'Mars/Base'",
        ),
        (
            {"files": {"file": ("s.txt", b"Started\tServer\n1\t2\n", "text/plain")}},
            422,
            "no STAD heading",
        ),
        (
            {"files": {"file": ("s.txt", b"x", "text/plain")}, "data": {"colour": "red"}},
            422,
            "field 'colour' is not read",
        ),
        ({"files": {"file": ("s.txt", b"x" * 250_000, "text/plain")}}, 413, "STAD import limit"),
    ],
    ids=["not-multipart", "no-file", "bad-zone", "not-stad", "unknown-field", "too-large"],
)
def test_post_imports_stad_refuses_with_a_message(api, kwargs, status, message) -> None:
    r = api.post("/imports/stad", headers=AUTH, **kwargs)
    assert r.status_code == status, r.text
    assert message in r.json()["detail"]
    assert api.get("/runs").json() == [] or all(
        x["scenario"] != "stad" for x in api.get("/runs").json()
    )


def _console_capture(day: str, minutes: int) -> tuple[bytes, list[float]]:
    """A typeperf console capture (local time, no zone) from 10:00 of `day`, every 15 s:
    CPU and available memory; the CPU's mean per minute as computed here."""
    rng = random.Random(11)
    lines = [
        '"(PDH-CSV 4.0)","\\\\SAPAPP01\\Processor(_Total)\\% Processor Time",'
        '"\\\\SAPAPP01\\Memory\\Available MBytes"'
    ]
    means = []
    for m in range(minutes):
        cpu = [round(rng.uniform(5, 95), 3) for _ in range(4)]
        means.append(sum(cpu) / 4)
        for k, c in enumerate(cpu):
            lines.append(f'"{day} 10:{m:02d}:{15 * k:02d}.000","{c}","{4000 + m}"')
    return ("\r\n".join(lines) + "\r\n").encode(), means


def test_a_perfmon_capture_of_the_same_hours_joins_the_stad_run(api) -> None:
    steps = _steps(9, 300)
    capture, means = _console_capture("11/25/2026", 60)
    r = api.post(
        "/imports/stad",
        files={
            "file": ("stad.txt", _text(steps).encode(), "text/plain"),
            "perfmon": ("os.csv", capture, "text/csv"),
        },
        data={"tz": "Europe/Berlin"},
        headers=AUTH,
    )
    assert r.status_code == 201, r.text
    rep = api.get(f"/runs/{r.json()['id']}/report").json()
    cpu = next(row for row in rep["os_counters"] if row["key"] == "cpu_pct")
    assert cpu["samples"] == 60  # one a minute: the STAD run's intervals
    assert cpu["avg"] == pytest.approx(sum(means) / len(means), abs=1e-6)
    assert cpu["max"] == pytest.approx(max(means), abs=1e-6)  # of the minute means
    assert cpu["min"] == pytest.approx(min(means), abs=1e-6)
    per_minute = [0] * 60
    for s in steps:
        per_minute[(s["t"] - 36000) // 60] += 1
    assert sum(r["steps"] for r in rep["time_profile"]["rows"]) == len(steps)
    assert any("PerfMon capture joined" in w for w in rep["warnings"])


def test_a_capture_of_other_hours_is_refused_naming_both_windows(api) -> None:
    capture, _ = _console_capture("11/24/2026", 10)
    r = api.post(
        "/imports/stad",
        files={
            "file": ("stad.txt", _text(_steps(9, 50)).encode(), "text/plain"),
            "perfmon": ("os.csv", capture, "text/csv"),
        },
        headers=AUTH,
    )
    assert r.status_code == 422
    detail = r.json()["detail"]
    assert "2026-11-24 10:00:00 to 2026-11-24 10:09:45" in detail
    assert "2026-11-25 10:00:00 to 2026-11-25 11:00:00" in detail
    assert "do not overlap" in detail


def test_wlmon_import_stad_joins_perfmon_or_names_both_windows(tmp_path) -> None:
    path, os_file, other = tmp_path / "stad.txt", tmp_path / "os.csv", tmp_path / "old.csv"
    path.write_text(_text(_steps(5, 120)), encoding="utf-8")
    os_file.write_bytes(_console_capture("11/25/2026", 60)[0])
    other.write_bytes(_console_capture("11/24/2026", 5)[0])
    env = {"WLMON_API_DB_PATH": str(tmp_path / "db.sqlite"), "COLUMNS": "200"}
    get_settings.cache_clear()
    try:
        runner = CliRunner()
        ok = runner.invoke(app, ["import", "stad", str(path), "--perfmon", str(os_file)], env=env)
        bad = runner.invoke(app, ["import", "stad", str(path), "--perfmon", str(other)], env=env)
    finally:
        get_settings.cache_clear()
    assert ok.exit_code == 0, ok.output
    assert "PerfMon capture joined (2 counters, 1 host(s)" in ok.output
    assert bad.exit_code != 0 and "Traceback" not in bad.output
    assert "2026-11-24 10:00:00 to 2026-11-24 10:04:45" in " ".join(bad.output.split())


def test_wlmon_import_st03_joins_a_capture_of_its_period(tmp_path) -> None:
    """An ST03N export of 10:00-11:00 and a console capture of the same hour: one run whose
    CPU is the capture's minute means' mean (the hour is one interval: their mean)."""
    export = tmp_path / "st03.csv"
    export.write_text(
        "Task type,# Steps,Avg. response time (ms)\nDIALOG,3600,950\n", encoding="utf-8"
    )
    capture, means = _console_capture("11/25/2026", 60)
    os_file = tmp_path / "os.csv"
    os_file.write_bytes(capture)
    env = {"WLMON_API_DB_PATH": str(tmp_path / "db.sqlite"), "COLUMNS": "200"}
    args = ["import", "st03", str(export), "--from", "2026-11-25T10:00", "--to"]
    get_settings.cache_clear()
    try:
        runner = CliRunner()
        ok = runner.invoke(app, [*args, "2026-11-25T11:00", "--perfmon", str(os_file)], env=env)
        store = Store(tmp_path / "db.sqlite")
        rep = reports.report(store, ok.stdout.strip().splitlines()[0], load_thresholds())
        bare = runner.invoke(
            app, ["import", "st03", str(export), "--perfmon", str(os_file)], env=env
        )
    finally:
        get_settings.cache_clear()
    assert ok.exit_code == 0, ok.output
    cpu = next(row for row in rep["os_counters"] if row["key"] == "cpu_pct")
    assert cpu["avg"] == pytest.approx(sum(means) / len(means), abs=1e-6)
    assert bare.exit_code != 0 and "no period" in bare.output
