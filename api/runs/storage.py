"""Runs in the API's SQLite: the row, and its recorded data as compressed numpy blobs."""

from __future__ import annotations

import io
import json
import sqlite3
import threading
import uuid
from dataclasses import fields
from datetime import UTC, datetime

import numpy as np

from api.runs.recorder import RunData
from exporters.model.engine import Totals

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    scenario TEXT NOT NULL,
    label TEXT NOT NULL,
    start TEXT NOT NULL,
    end TEXT NOT NULL,
    ramp_up_s REAL NOT NULL,
    spec TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS run_data (
    run_id TEXT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    series BLOB NOT NULL,
    steady_start BLOB,
    steady_end BLOB,
    meta TEXT NOT NULL
);
"""


def _npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def _totals_blob(t: Totals | None) -> bytes | None:
    if t is None:
        return None
    return _npz(**{f.name: np.asarray(getattr(t, f.name)) for f in fields(Totals)})


def _totals(blob: bytes | None) -> Totals | None:
    if blob is None:
        return None
    data = np.load(io.BytesIO(blob))
    return Totals(
        **{
            f.name: (data[f.name] if data[f.name].ndim else float(data[f.name]))
            for f in fields(Totals)
        }
    )


class RunStore:
    def __init__(self, conn: sqlite3.Connection, lock: threading.Lock) -> None:
        self._conn = conn
        self._lock = lock
        with self._lock:
            self._conn.executescript(SCHEMA)

    def add(
        self,
        *,
        kind: str,
        scenario: str,
        label: str,
        start: datetime,
        duration_s: float,
        ramp_up_s: float,
        spec: dict,
        data: RunData,
    ) -> str:
        """The run and its data in one transaction: both stored or neither."""
        run_id = uuid.uuid4().hex[:12]
        end = datetime.fromtimestamp(start.timestamp() + duration_s, UTC)
        series = _npz(times=data.times, values=data.values, columns=np.array(data.columns))
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                self._conn.execute(
                    "INSERT INTO runs VALUES (?,?,?,?,?,?,?,?,?,?)",
                    (
                        run_id,
                        kind,
                        "finished",
                        scenario,
                        label,
                        start.isoformat(),
                        end.isoformat(),
                        ramp_up_s,
                        json.dumps(spec, default=str),
                        datetime.now(UTC).isoformat(),
                    ),
                )
                self._conn.execute(
                    "INSERT INTO run_data VALUES (?,?,?,?,?)",
                    (
                        run_id,
                        series,
                        _totals_blob(data.steady_start),
                        _totals_blob(data.steady_end),
                        json.dumps(data.meta),
                    ),
                )
                self._conn.execute("COMMIT")
            except Exception:
                self._conn.execute("ROLLBACK")
                raise
        return run_id

    def list(self) -> list[dict]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, kind, status, scenario, label, start, end, ramp_up_s, created_at"
                " FROM runs ORDER BY created_at DESC"
            ).fetchall()
        keys = (
            "id",
            "kind",
            "status",
            "scenario",
            "label",
            "start",
            "end",
            "ramp_up_s",
            "created_at",
        )
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def get(self, run_id: str) -> dict | None:
        return next((r for r in self.list() if r["id"] == run_id), None)

    def data(self, run_id: str) -> RunData | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT series, steady_start, steady_end, meta FROM run_data WHERE run_id = ?",
                (run_id,),
            ).fetchone()
        if row is None:
            return None
        series = np.load(io.BytesIO(row[0]))
        return RunData(
            series["times"],
            [str(c) for c in series["columns"]],
            series["values"],
            _totals(row[1]),
            _totals(row[2]),
            json.loads(row[3]),
        )
