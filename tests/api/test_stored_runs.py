"""Runs stored by an earlier wlmon still load (issue 23): the blobs carry a schema version,
and a run stored before versions existed (tests/fixtures/runs, written by the code of
b69e707) reads and reports as it did."""

from __future__ import annotations

import io
import shutil
import sqlite3
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from alerts.thresholds import load_thresholds
from api.runs.storage import SCHEMA_VERSION, StoredRunError
from api.services import reports
from api.store import Store

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "runs"
OLD = GOLDEN / "stored-before-schema-versions.sqlite"


@pytest.fixture
def old_db(tmp_path) -> Path:
    path = tmp_path / "old.sqlite"
    shutil.copy(OLD, path)
    return path


def _blob(path: Path, column: str) -> bytes:
    with sqlite3.connect(path) as conn:
        return conn.execute(f"SELECT {column} FROM run_data").fetchone()[0]


def _set_blob(path: Path, column: str, arrays: dict) -> None:
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    with sqlite3.connect(path) as conn:
        conn.execute(f"UPDATE run_data SET {column} = ?", (buf.getvalue(),))


def test_a_run_stored_before_schema_versions_loads_and_reports(old_db) -> None:
    assert "schema_version" not in np.load(io.BytesIO(_blob(old_db, "series"))).files
    store = Store(old_db)
    (run,) = store.runs.list()
    rep = reports.report(store, run["id"], load_thresholds())
    dialog = next(r for r in rep["st03"] if r["task_type"] == "dialog")
    assert dialog["steps"] > 0 and dialog["response_ms"] > 0
    assert rep["top_sql"] and rep["bufferpools"]  # the counters blobs read back
    sd = rep["benchmark"]["sd"]
    assert sd["saps"] == round(sd["dialog_steps_per_hour"] / 60)


def test_a_run_stored_now_carries_its_schema_version(old_db, tmp_path) -> None:
    old = Store(old_db)
    (run,) = old.runs.list()
    data = old.runs.data(run["id"])
    new = Store(tmp_path / "new.sqlite")
    fields = {k: run[k] for k in ("kind", "scenario", "label", "ramp_up_s")}
    run_id = new.runs.add(
        **fields, start=datetime.fromisoformat(run["start"]), duration_s=600.0, spec={}, data=data
    )
    path = tmp_path / "new.sqlite"
    for column in ("series", "steady_start", "steady_end"):
        assert int(np.load(io.BytesIO(_blob(path, column)))["schema_version"]) == SCHEMA_VERSION
    assert (
        reports.report(new, run_id, load_thresholds())["st03"]
        == reports.report(old, run["id"], load_thresholds())["st03"]
    )


def test_a_field_missing_from_old_counters_takes_its_default_or_is_named(old_db) -> None:
    arrays = dict(np.load(io.BytesIO(_blob(old_db, "steady_end"))))
    store = Store(old_db)
    (run,) = store.runs.list()
    # A field added later with a default (as db_cpu_seconds has one): older runs load.
    _set_blob(old_db, "steady_end", {k: v for k, v in arrays.items() if k != "db_cpu_seconds"})
    assert store.runs.data(run["id"]).steady_end.db_cpu_seconds == 0.0
    # One without: a clear refusal naming it, not a KeyError (the API answers 409).
    _set_blob(old_db, "steady_end", {k: v for k, v in arrays.items() if k != "stmt_rows"})
    with pytest.raises(StoredRunError, match="no 'stmt_rows'"):
        store.runs.data(run["id"])
    # A blob from a newer wlmon says so.
    _set_blob(old_db, "steady_end", {**arrays, "schema_version": np.array(SCHEMA_VERSION + 1)})
    with pytest.raises(StoredRunError, match="stored by a newer wlmon"):
        store.runs.data(run["id"])
