"""ST03 exports (per task type, per transaction, German number format) as runs."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from api.config import Settings, get_settings
from api.imports.st03 import ST03Error, parse
from api.main import create_app
from wlmon.cli import app

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "st03"
AUTH = {"Authorization": "Bearer t"}


@pytest.fixture
def client(tmp_path):
    with TestClient(create_app(Settings(db_path=tmp_path / "db.sqlite", token="t"))) as c:
        yield c


def test_seed_000_table_5_as_an_st03_export_reads_back(client) -> None:
    """Seed 000 Table 5: 1,743,000 dialog steps, 1.960 s response, DB 319 ms / 83 ms."""
    r = client.post(
        "/imports/st03", content=(FIXTURES / "per-task-type.csv").read_bytes(), headers=AUTH
    )
    assert r.status_code == 201, r.text
    rep = client.get(f"/runs/{r.json()['id']}/report").json()
    rows = {row["task_type"]: row for row in rep["st03"]}
    assert rows["dialog"]["steps"] == 1_743_000
    assert rows["dialog"]["response_ms"] == pytest.approx(1960)
    assert rows["dialog"]["db_request_ms"] == pytest.approx(319)
    assert rows["update"]["db_request_ms"] == pytest.approx(83)
    assert rows["batch"]["cpu_ms"] == pytest.approx(2100)


def test_per_transaction_totals_with_decimal_commas() -> None:
    rows = parse((FIXTURES / "per-transaction-de.csv").read_bytes())
    va01 = next(r for r in rows if r.transaction == "VA01")
    assert va01.steps == 581000
    assert va01.seconds["response"] == pytest.approx(1164.162)
    assert va01.seconds["db_request"] == pytest.approx(185339)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Steps,Avg. response time (ms)\n10,5\n", "no 'Task type', transaction or hour column"),
        ("Task type,Avg. response time (ms)\nDIALOG,5\n", "no 'Steps' column"),
        ("Task type,Steps\nDIALOG,5\n", "no time column"),
        (
            "Task type,Steps,Avg. response time (ms)\nDIALOG,ten,5\n",
            "line 2, column 'Steps': 'ten' is not a number",
        ),
        (
            "Task type,Steps,Avg. response time (ms)\nDIALOG,10,5\nTotal,11,5\n",
            "line 3 (Total), column 'Steps': '11' but the rows add up to 10",
        ),
    ],
)
def test_bad_exports_name_line_and_column_and_store_nothing(
    client, text: str, message: str
) -> None:
    with pytest.raises(ST03Error) as info:
        parse(text.encode())
    assert message in str(info.value)
    r = client.post("/imports/st03", content=text.encode(), headers=AUTH)
    assert r.status_code == 422 and message in r.json()["detail"]
    assert client.get("/runs").json() == []


# Two exports of update and batch work only: ST03 rows on both sides, no dialog row.
NO_DIALOG = (
    "Task type,# Steps,Avg. response time (ms),Avg. DB time (ms)\n"
    'UPDATE,"{steps}",{response},83\n'
    "BACKGROUND,120,5400,2900\n"
)


def test_two_imports_without_a_dialog_row_compare_figure_by_figure(client) -> None:
    """No dialog row means no benchmark figures; the ST03 figures still compare (was a 500)."""
    ids = []
    # "1,464,800": grouped thousands, so the file's format is the decimal point.
    for steps, response in (("1,464,800", 249), ("1,464,800", 300)):
        body = NO_DIALOG.format(steps=steps, response=response).encode()
        r = client.post("/imports/st03", content=body, headers=AUTH)
        assert r.status_code == 201, r.text
        ids.append(r.json()["id"])
    r = client.get("/runs/compare", params={"base": ids[0], "new": ids[1]})
    assert r.status_code == 200, r.text
    doc = r.json()
    figures = {f["figure"]: f for f in doc["figures"]}
    assert "dialog_steps_per_hour" not in figures
    assert figures["update_response_ms"]["verdict"] == "worse"
    assert figures["update_response_ms"]["delta_pct"] == pytest.approx(20.48, abs=0.01)
    assert doc["repeatable"] is False  # no throughput and response figures to judge by


HEADER = "Task type,Transaction,Steps,Avg. response time (ms),Avg. DB time (ms)\n"


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("DIALOG,VA01,10,NaN,5", "line 2, column 'Avg. response time (ms)': 'NaN' is not a number"),
        ("DIALOG,VA01,10,5,inf", "line 2, column 'Avg. DB time (ms)': 'inf' is not a number"),
        ("DIALOG,VA01,-10,5,5", "line 2, column 'Steps': '-10' is not a number from 0"),
        ("DIALOG,VA01,10,1e300,5", "line 2, column 'Avg. response time (ms)': '1e300'"),
    ],
)
def test_values_that_would_break_the_report_are_refused_at_the_door(
    client, row: str, message: str
) -> None:
    """Issue 17: NaN/inf/negative values imported (201) and the report then answered 500."""
    r = client.post("/imports/st03", content=(HEADER + row + "\n").encode(), headers=AUTH)
    assert r.status_code == 422, r.text
    assert message in r.json()["detail"]
    assert client.get("/runs").json() == []


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"\xef\xbb\xbf\xff\xfe" + HEADER.encode("utf-16-le"), "line 1, column 1: a UTF-8 byte"),
        (
            (HEADER + "DIALOG,VA01,10,5,5\nDIALOG,VA02,1\xe9,5,5\n").encode("latin-1"),
            "line 3, column 3",
        ),
        (
            (HEADER + 'DIALOG,VA01,10,5,"' + "9" * 200_000 + '"\n').encode(),
            "line 2, column 5: field",
        ),
    ],
)
def test_undecodable_and_oversized_cells_name_line_and_column(
    client, raw: bytes, message: str
) -> None:
    r = client.post("/imports/st03", content=raw, headers=AUTH)
    assert r.status_code == 422, r.text
    assert message in r.json()["detail"]


def test_utf16_and_tab_separated_exports_read_like_the_csv(client) -> None:
    csv_text = (FIXTURES / "per-task-type.csv").read_text()
    rows = list(csv.reader(csv_text.splitlines()))
    tsv = "\n".join("\t".join(r) for r in rows) + "\n"
    expected = parse(csv_text.encode())
    for raw in (b"\xff\xfe" + csv_text.encode("utf-16-le"), tsv.encode("utf-16-le")):
        got = parse(raw)
        assert [(r.task_type, r.steps) for r in got] == [(r.task_type, r.steps) for r in expected]
        assert got[0].seconds["response"] == pytest.approx(expected[0].seconds["response"])


def test_thousands_of_transactions_import_and_report_every_one(client) -> None:
    """The 9 MB export that took 89 s was quadratic in its transactions (bench/imports.py
    times it); here: all 5,000 come back in the report, in the export's order."""
    body = HEADER + "".join(f"DIALOG,Z{k:05d},{k + 1},{100 + k % 7},20\n" for k in range(5000))
    r = client.post("/imports/st03", content=body.encode(), headers=AUTH)
    assert r.status_code == 201, r.text
    rep = client.get(f"/runs/{r.json()['id']}/report").json()
    assert [t["transaction"] for t in rep["transactions"]] == [f"Z{k:05d}" for k in range(5000)]
    assert rep["transactions"][7]["response_ms"] == pytest.approx(100.0)


def test_wlmon_import_st03(tmp_path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(HEADER + "DIALOG,VA01,10,NaN,5\n")
    env = {"WLMON_API_DB_PATH": str(tmp_path / "db.sqlite")}
    get_settings.cache_clear()
    try:
        ok = CliRunner().invoke(
            app, ["import", "st03", str(FIXTURES / "per-task-type.csv")], env=env
        )
        failed = CliRunner().invoke(app, ["import", "st03", str(bad)], env=env)
    finally:
        get_settings.cache_clear()
    assert ok.exit_code == 0 and len(ok.stdout.strip()) == 12, ok.output
    assert failed.exit_code == 2
    assert "'NaN' is not a number" in " ".join(failed.output.split())


def test_the_period_is_a_field_of_the_upload(client) -> None:
    """Seed 000 Table 5's hour: 1,743,000 dialog steps, SAPS 29,050 (steps/h / 60)."""
    body = (FIXTURES / "per-task-type.csv").read_bytes()
    r = client.post("/imports/st03", content=body, headers=AUTH)
    sd = client.get(f"/runs/{r.json()['id']}/report").json()["benchmark"]["sd"]
    assert sd["saps"] is None and "no period" in sd["not_measured"]
    for params in ({"period": "1h"}, {"from": "2026-11-25T10:00", "to": "2026-11-25T11:00"}):
        r = client.post("/imports/st03", content=body, headers=AUTH, params=params)
        assert r.status_code == 201, r.text
        rep = client.get(f"/runs/{r.json()['id']}/report").json()
        assert rep["benchmark"]["sd"]["saps"] == 29_050
        assert rep["benchmark"]["sd"]["dialog_steps_per_hour"] == 1_743_000
    before = len(client.get("/runs").json())
    r = client.post("/imports/st03", content=body, headers=AUTH, params={"to": "2026-11-25"})
    assert r.status_code == 422 and "end (to) needs its start (from)" in r.json()["detail"]
    assert len(client.get("/runs").json()) == before


def test_series_csv_over_the_api(client) -> None:
    body = (FIXTURES / "per-task-type.csv").read_bytes()
    run_id = client.post(
        "/imports/st03", content=body, headers=AUTH, params={"period": "1h"}
    ).json()["id"]
    r = client.get(f"/runs/{run_id}/series.csv")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    head, row = r.text.splitlines()
    columns = head.split(",")
    assert row.split(",")[columns.index("st03.dialog.steps")] == "1743000.0"
    assert client.get("/runs/nope/series.csv").status_code == 404
