"""ST03 exports (per task type, per transaction, German number format) as runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.config import Settings
from api.imports.st03 import ST03Error, parse
from api.main import create_app

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
        ("Steps,Avg. response time (ms)\n10,5\n", "no 'Task type' column"),
        ("Task type,Avg. response time (ms)\nDIALOG,5\n", "no 'Steps' column"),
        ("Task type,Steps\nDIALOG,5\n", "no time column"),
        (
            "Task type,Steps,Avg. response time (ms)\nDIALOG,ten,5\n",
            "line 2, column 'Steps': 'ten' is not a number",
        ),
        (
            "Task type,Steps,Avg. response time (ms)\nSPOOLZ,1,5\n",
            "line 2, column 'Task type': unknown task type",
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
    for steps, response in (("464,800", 249), ("464,800", 300)):
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
