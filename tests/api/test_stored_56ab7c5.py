"""Runs stored by the code before issue 32 item 0 (commit 56ab7c5) still load, and their
reports give the figures that code gave (tests/fixtures/runs/generate_56ab7c5.py made both)."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from alerts.thresholds import load_thresholds
from api.config import Settings
from api.main import create_app
from api.runs.record import Column, ColumnKind, RunRecord
from api.runs.report import figures
from api.runs.storage import RunRow, StoredRunError
from api.services import reports
from api.store import Store

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "runs"


@pytest.mark.parametrize("kind", ["st03", "perfmon"])
def test_a_run_stored_at_56ab7c5_gives_the_same_figures(tmp_path, kind: str) -> None:
    shutil.copy(RUNS / "stored-56ab7c5.sqlite", tmp_path / "db.sqlite")
    before = json.loads((RUNS / "stored-56ab7c5.reports.json").read_text())[kind]
    store = Store(tmp_path / "db.sqlite")
    now = reports.report(store, before["run"]["id"], load_thresholds())
    old, new = figures(before), figures(now)
    assert old, "the stored report has figures to compare"
    assert set(new) == set(old)
    for name, (value, _, _) in old.items():
        assert new[name].value == pytest.approx(value, rel=1e-9, abs=1e-12), name
    for row_old, row_new in zip(before["st03"], now["st03"], strict=True):
        for key, value in row_old.items():
            if isinstance(value, float):
                assert row_new[key] == pytest.approx(value, rel=1e-9), key
            else:
                assert row_new[key] == value, key


def _stored_api(tmp_path: Path) -> TestClient:
    shutil.copy(RUNS / "stored-56ab7c5.sqlite", tmp_path / "db.sqlite")
    return TestClient(create_app(Settings(db_path=tmp_path / "db.sqlite", token="t")))


def test_the_store_reads_the_56ab7c5_rows_as_typed_rows(tmp_path) -> None:
    """The rows that code wrote (ISO text) come back typed: aware UTC datetimes equal to
    the text the old report held, kind and status as stored."""
    shutil.copy(RUNS / "stored-56ab7c5.sqlite", tmp_path / "db.sqlite")
    before = json.loads((RUNS / "stored-56ab7c5.reports.json").read_text())
    store = Store(tmp_path / "db.sqlite")
    listed = {r.id: r for r in store.runs.list().rows}
    assert set(listed) == {rep["run"]["id"] for rep in before.values()}
    for rep in before.values():
        old = rep["run"]
        row = store.runs.get(old["id"])
        assert isinstance(row, RunRow) and row == listed[old["id"]]
        for key in ("start", "end", "created_at"):
            when = getattr(row, key)
            assert when.utcoffset() == timedelta(0), key
            # Parsed independently of storage.py: the same instant the old text names.
            text = old[key]
            assert text.endswith("+00:00")
            layout = "%Y-%m-%dT%H:%M:%S.%f%z" if "." in text else "%Y-%m-%dT%H:%M:%S%z"
            assert when == datetime.strptime(text, layout), key
        assert (row.kind, row.status, row.scenario, row.label, row.message) == (
            old["kind"],
            old["status"],
            old["scenario"],
            old["label"],
            old["message"],
        )
        assert row.ramp_up_s == old["ramp_up_s"]


@pytest.mark.parametrize("kind", ["st03", "perfmon"])
def test_get_run_answers_the_bytes_the_56ab7c5_code_answered(tmp_path, kind: str) -> None:
    """GET /runs/{id} of a stored run: the same JSON, byte for byte, as that code's answer
    (its report holds the row it answered; FastAPI writes compact JSON in the schema's
    order), and the report's `run` the same document."""
    old = json.loads((RUNS / "stored-56ab7c5.reports.json").read_text())[kind]["run"]
    expected = json.dumps(old, ensure_ascii=False, separators=(",", ":")).encode()
    with _stored_api(tmp_path) as api:
        one = api.get(f"/runs/{old['id']}")
        listed = api.get("/runs")
        report = api.get(f"/runs/{old['id']}/report")
    assert one.status_code == 200, one.text
    assert one.content == expected
    assert [r for r in listed.json() if r["id"] == old["id"]] == [old]
    assert report.status_code == 200, report.text
    assert report.json()["run"] == old


def test_a_stored_time_without_its_offset_is_refused_naming_the_column(tmp_path) -> None:
    """Every version wrote times with their UTC offset; one without is not taken for UTC
    silently: GET answers 409 naming the run and the column, and nothing is changed."""
    shutil.copy(RUNS / "stored-56ab7c5.sqlite", tmp_path / "db.sqlite")
    old = json.loads((RUNS / "stored-56ab7c5.reports.json").read_text())["perfmon"]["run"]
    store = Store(tmp_path / "db.sqlite")
    store._conn.execute(
        "UPDATE runs SET start = ? WHERE id = ?", ("2026-11-23T09:00:00", old["id"])
    )
    with pytest.raises(StoredRunError, match="stored start '2026-11-23T09:00:00' has no UTC"):
        store.runs.get(old["id"])
    with _stored_api(tmp_path) as api:
        one = api.get(f"/runs/{old['id']}")
        report = api.get(f"/runs/{old['id']}/report")
    for r in (one, report):
        assert r.status_code == 409, r.text
        assert old["id"] in r.json()["detail"] and "start" in r.json()["detail"]
    assert store._conn.execute("SELECT count(*) FROM runs").fetchone()[0] == 2


def damage(db: Path, run_id: str) -> None:
    """A row this version cannot read (a start without its offset), written past the store."""
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("UPDATE runs SET start = ? WHERE id = ?", ("2026-11-23T09:00:00", run_id))


def test_one_unreadable_row_does_not_hide_the_others_from_get_runs(tmp_path) -> None:
    """GET /runs answered 500 when one stored row could not be read. Now it lists the rows
    it can read, unchanged, and names the one it cannot in X-Unreadable-Runs; GET /runs/{id}
    of that one says why (409), and nothing is changed in the store."""
    reps = json.loads((RUNS / "stored-56ab7c5.reports.json").read_text())
    bad, good = reps["perfmon"]["run"], reps["st03"]["run"]
    with _stored_api(tmp_path) as api:
        whole = api.get("/runs")
        assert whole.status_code == 200 and "X-Unreadable-Runs" not in whole.headers
        damage(tmp_path / "db.sqlite", bad["id"])
        listed = api.get("/runs")
        one = api.get(f"/runs/{bad['id']}")
    assert listed.status_code == 200, listed.text
    assert listed.json() == [good]
    assert listed.headers["X-Unreadable-Runs"] == bad["id"]
    assert listed.headers["X-Total-Count"] == "2"
    assert one.status_code == 409 and "has no UTC offset" in one.json()["detail"]


def test_a_stored_record_comes_back_keyed_by_typed_columns(tmp_path) -> None:
    """Issue 32 item 0: a record's series are keyed by Column (kind and parts), text only
    inside the store. The names in the stored blob, read here past storage.py, are the
    keys' text; a name given where a key is meant is refused, not silently never found."""
    shutil.copy(RUNS / "stored-56ab7c5.sqlite", tmp_path / "db.sqlite")
    store = Store(tmp_path / "db.sqlite")
    with contextlib.closing(sqlite3.connect(tmp_path / "db.sqlite")) as conn:
        blobs = dict(conn.execute("SELECT run_id, series FROM run_data").fetchall())
    assert len(blobs) == 2
    for run_id, blob in blobs.items():
        stored = np.load(io.BytesIO(blob))
        data = store.runs.data(run_id)
        assert data is not None
        assert all(isinstance(c, Column) and isinstance(c.kind, ColumnKind) for c in data.columns)
        assert [str(c) for c in data.columns] == [str(n) for n in stored["columns"]]
        for k, c in enumerate(data.columns):
            assert np.array_equal(data.series(c), stored["values"][:, k], equal_nan=True)
        name = str(data.columns[0])
        assert not data.has(name)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="Column keys"):
            RunRecord(data.times, [name], data.values[:, :1], None, None, data.meta)
