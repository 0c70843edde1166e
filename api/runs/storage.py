"""Runs in the API's SQLite: the row, and its recorded data as compressed numpy blobs."""

from __future__ import annotations

import io
import json
import sqlite3
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import MISSING, fields
from datetime import UTC, datetime
from typing import Any

import numpy as np

from api.runs.record import SCHEMA_VERSION, ColumnError, RunMeta, RunRecord, col, parse
from api.runs.rows import (
    RUN_KEYS,
    LeftRunning,
    RunKind,
    RunPage,
    RunRow,
    RunStatus,
    StoredRunError,
    Unreadable,
    run_row,
    stored_time,
)
from landscape_model.engine import Totals

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
    created_at TEXT NOT NULL,
    message TEXT NOT NULL DEFAULT '',
    updated_at TEXT NOT NULL DEFAULT '',
    alive_at TEXT NOT NULL DEFAULT '',
    stopped TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS run_data (
    run_id TEXT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    series BLOB NOT NULL,
    steady_start BLOB,
    steady_end BLOB,
    meta TEXT NOT NULL
);
"""


# The layout of a run's stored blobs is record.SCHEMA_VERSION. A reader meets older blobs for
# as long as the database lives: a field added to Totals needs a default in the dataclass or
# an upgrade in _upgrade_totals; column names of schema 0 and 1 are upgraded by
# _upgrade_columns. tests/api/test_stored_runs.py loads runs stored by schemas 0 and 1.


def _npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def _totals_blob(t: Totals | None) -> bytes | None:
    if t is None:
        return None
    return _npz(
        schema_version=np.array(SCHEMA_VERSION),
        **{f.name: np.asarray(getattr(t, f.name)) for f in fields(Totals)},
    )


def _version(data) -> int:
    version = int(data["schema_version"]) if "schema_version" in data.files else 0
    if version > SCHEMA_VERSION:
        raise StoredRunError(
            f"stored by a newer wlmon (run schema {version}); this one reads up to "
            f"{SCHEMA_VERSION}: upgrade wlmon to read it"
        )
    return version


def _upgrade_totals(arrays: dict, version: int) -> dict:
    """Arrays of an older blob in today's layout. Version 0 and 1 hold the same fields;
    a field added later lands here (or as a default in Totals)."""
    return arrays


def _totals(blob: bytes | None) -> Totals | None:
    if blob is None:
        return None
    data = np.load(io.BytesIO(blob))
    version = _version(data)
    arrays = _upgrade_totals({k: data[k] for k in data.files if k != "schema_version"}, version)
    values = {}
    for f in fields(Totals):
        if f.name in arrays:
            v = arrays[f.name]
            values[f.name] = v if v.ndim else float(v)
        elif f.default is not MISSING:
            values[f.name] = f.default  # a field added since, with a default: older runs
        elif f.default_factory is not MISSING:
            values[f.name] = f.default_factory()
        else:
            raise StoredRunError(
                f"the stored counters (run schema {version}) have no {f.name!r}: a field "
                "added to Totals needs a default or an upgrade in api/runs/storage.py"
            )
    return Totals(**values)


def _data_blobs(data: RunRecord) -> tuple[bytes, bytes | None, bytes | None, str]:
    """The run_data columns after the id. Compressed before the transaction: the database
    is locked for writers (API, workers, CLI) while one is open, and compressing a day of
    series takes a while."""
    series = _npz(
        schema_version=np.array(SCHEMA_VERSION),
        times=data.times,
        values=data.values,
        columns=np.array([str(c) for c in data.columns]),  # the only place keys become text
    )
    return (
        series,
        _totals_blob(data.steady_start),
        _totals_blob(data.steady_end),
        json.dumps(data.meta.to_json()),
    )


def _now() -> str:
    return datetime.now(UTC).isoformat()


class RunStore:
    def __init__(self, conn: sqlite3.Connection, lock: threading.Lock) -> None:
        self._conn = conn
        self._lock = lock
        with self._lock:
            self._conn.executescript(SCHEMA)
            columns = {r[1] for r in self._conn.execute("PRAGMA table_info(runs)")}
            if "message" not in columns:  # a database from before real-time runs
                self._conn.execute("ALTER TABLE runs ADD COLUMN message TEXT NOT NULL DEFAULT ''")
            if "updated_at" not in columns:  # a database from before cached reports
                self._conn.execute(
                    "ALTER TABLE runs ADD COLUMN updated_at TEXT NOT NULL DEFAULT ''"
                )
            for column in ("alive_at", "stopped"):  # a database from before resumed runs
                if column not in columns:
                    self._conn.execute(
                        f"ALTER TABLE runs ADD COLUMN {column} TEXT NOT NULL DEFAULT ''"
                    )

    def alive(self, run_id: str, when: datetime) -> None:
        """The run's driver was alive at `when` (its last check of the exporter): after a crash,
        the last moment the run is known to have gone to plan. Not a change of the run:
        `updated_at` stays."""
        with self._lock:
            self._conn.execute(
                "UPDATE runs SET alive_at = ? WHERE id = ?",
                (when.astimezone(UTC).isoformat(), run_id),
            )

    def stopped(self, run_id: str, when: datetime, why: str) -> None:
        """The API stopped on purpose while the run was in progress (a planned stop): the run
        stays 'running' for the next API to resume or end, which tells it from a crash by
        this mark."""
        with self._lock:
            self._conn.execute(
                "UPDATE runs SET stopped = ?, alive_at = ? WHERE id = ?",
                (why, when.astimezone(UTC).isoformat(), run_id),
            )

    def note(self, run_id: str, message: str) -> None:
        """The message of a run in progress (a resumed one says when and why it stopped)."""
        with self._lock:
            self._conn.execute(
                "UPDATE runs SET message = ?, updated_at = ? WHERE id = ?",
                (message, _now(), run_id),
            )

    def left_running(self) -> list[LeftRunning]:
        """Runs an API left 'running'."""
        keys = (*RUN_KEYS, "spec", "alive_at", "stopped")
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {', '.join(keys)} FROM runs WHERE status = 'running'"
            ).fetchall()
        out = []
        for values in rows:
            row = run_row(values[: len(RUN_KEYS)])
            spec, alive_at, stopped = values[len(RUN_KEYS) :]
            alive = stored_time(alive_at, "alive_at", row.id) if alive_at else None
            out.append(LeftRunning(row, json.loads(spec), alive, stopped))
        return out

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                yield
                self._conn.execute("COMMIT")
            except Exception:
                # SQLite already rolled back after SQLITE_FULL: do not hide that error.
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise

    def begin(self, **row: Any) -> str:
        """A run in progress (kind, scenario, label, start, duration_s, ramp_up_s, spec): its
        row now, its data when it ends (`finish`)."""
        return self._create("running", None, **row)

    def add(self, *, data: RunRecord, **row: Any) -> str:
        """A finished run and its data in one transaction: both stored or neither."""
        return self._create("finished", data, **row)

    def finish(
        self,
        run_id: str,
        status: RunStatus,
        end: datetime,
        data: RunRecord | None,
        message: str = "",
    ) -> None:
        """The run's final status and actual end, and its data, in one transaction."""
        blobs = None if data is None else _data_blobs(data)
        with self._transaction():
            self._conn.execute(
                "UPDATE runs SET status = ?, end = ?, message = ?, updated_at = ?, stopped = ''"
                " WHERE id = ?",
                (status, end.astimezone(UTC).isoformat(), message, _now(), run_id),
            )
            if blobs is not None:
                self._conn.execute("INSERT INTO run_data VALUES (?,?,?,?,?)", (run_id, *blobs))

    def _create(
        self,
        status: RunStatus,
        data: RunRecord | None,
        *,
        kind: RunKind,
        scenario: str,
        label: str,
        start: datetime,
        duration_s: float,
        ramp_up_s: float,
        spec: dict,
    ) -> str:
        run_id = uuid.uuid4().hex[:12]
        blobs = None if data is None else _data_blobs(data)
        with self._transaction():
            self._insert_run(
                run_id, kind, status, scenario, label, start, duration_s, ramp_up_s, spec
            )
            if blobs is not None:
                self._conn.execute("INSERT INTO run_data VALUES (?,?,?,?,?)", (run_id, *blobs))
        return run_id

    def _insert_run(
        self, run_id, kind, status, scenario, label, start, duration_s, ramp_up_s, spec
    ) -> None:
        end = datetime.fromtimestamp(start.timestamp() + duration_s, UTC)
        now = _now()
        self._conn.execute(
            "INSERT INTO runs (id, kind, status, scenario, label, start, end, ramp_up_s, spec,"
            " created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (
                run_id,
                kind,
                status,
                scenario,
                label,
                start.astimezone(UTC).isoformat(),
                end.isoformat(),
                ramp_up_s,
                json.dumps(spec, default=str),
                now,
                now,
            ),
        )

    def list(self, limit: int | None = None, offset: int = 0) -> RunPage:
        """Newest first; a page of `limit` rows from `offset` when given. A row this version
        cannot read is named in the page's `unreadable`, not raised: the others still list."""
        sql = f"SELECT {', '.join(RUN_KEYS)} FROM runs ORDER BY created_at DESC, id"
        args: tuple = ()
        if limit is not None:
            sql += " LIMIT ? OFFSET ?"
            args = (limit, offset)
        with self._lock:
            rows = self._conn.execute(sql, args).fetchall()
        page = RunPage([], [])
        for r in rows:
            try:
                page.rows.append(run_row(r))
            except StoredRunError as exc:
                page.unreadable.append(Unreadable(str(r[0]), str(exc)))
        return page

    def count(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0])

    def delete(self, run_id: str) -> bool:
        """A run and its data, in one transaction; False when there is no such run."""
        with self._transaction():
            self._conn.execute("DELETE FROM run_data WHERE run_id = ?", (run_id,))
            cur = self._conn.execute("DELETE FROM runs WHERE id = ?", (run_id,))
        return cur.rowcount > 0

    def prune(self, before: datetime) -> int:
        """Ended runs created before `before`, with their data (retention); how many."""
        cutoff = before.astimezone(UTC).isoformat()
        old = "SELECT id FROM runs WHERE status != 'running' AND created_at < ?"
        with self._transaction():
            self._conn.execute(f"DELETE FROM run_data WHERE run_id IN ({old})", (cutoff,))
            cur = self._conn.execute(
                "DELETE FROM runs WHERE status != 'running' AND created_at < ?", (cutoff,)
            )
        return cur.rowcount

    def get(self, run_id: str) -> RunRow | None:
        with self._lock:
            row = self._conn.execute(
                f"SELECT {', '.join(RUN_KEYS)} FROM runs WHERE id = ?", (run_id,)
            ).fetchone()
        return None if row is None else run_row(row)

    def revision(self, run_id: str) -> tuple[str, str, str] | None:
        """(kind, status, updated_at) of the run, None when there is none: what a cached
        report of it is valid for. Every change of a run row sets updated_at."""
        with self._lock:
            row = self._conn.execute(
                "SELECT kind, status, updated_at, created_at FROM runs WHERE id = ?", (run_id,)
            ).fetchone()
        if row is None:
            return None
        kind, status, updated_at, created_at = row
        # Rows from before the column carry ''; they have not changed since.
        return kind, status, updated_at or created_at

    def data(self, run_id: str) -> RunRecord | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT series, steady_start, steady_end, meta FROM run_data WHERE run_id = ?",
                (run_id,),
            ).fetchone()
        if row is None:
            return None
        series = np.load(io.BytesIO(row[0]))
        version = _version(series)
        meta = RunMeta.from_json(json.loads(row[3]))
        names = [str(c) for c in series["columns"]]
        if version < 2:
            names = _upgrade_columns(names, meta)
        try:
            columns = [parse(c) for c in names]
        except ColumnError as exc:
            raise StoredRunError(f"run {run_id}: a stored column cannot be read: {exc}") from exc
        return RunRecord(
            series["times"], columns, series["values"], _totals(row[1]), _totals(row[2]), meta
        )


def _legacy_owner(rest: str, known: list[str]) -> tuple[str, str]:
    """(owner, rest after it) of a schema-1 name's remainder whose owner may hold dots: the
    longest known owner it starts with, else its first dotted part (as schema 1 read it)."""
    for name in sorted(known, key=len, reverse=True):
        if rest.startswith(name + "."):
            return name, rest[len(name) + 1 :]
    head, _, tail = rest.partition(".")
    return head, tail


def _legacy(name: str, meta: RunMeta, tasks: list[str]) -> str:
    """A schema 0/1 column name (parts joined unescaped) in today's escaped form. The
    field, key or indicator never holds a dot; a bucket bound may (0.5), a task type of an
    ST03 export may (buf.sync), a Prometheus host may (sap01.corp.local): the run's own
    lists of task types and transactions settle where they end."""
    kind, _, rest = name.partition(".")
    txs = meta.transactions
    if kind in ("st03", "inst"):
        owner, _, last = rest.rpartition(".")
        return str(col(kind, owner, last))
    if kind == "os":
        # PerfMon and model host keys have no dot, and neither have counter keys; a
        # Prometheus host may: its keys are the four standard ones, without a dot.
        if meta.source == "prometheus":
            host, _, key = rest.rpartition(".")
        else:
            host, _, key = rest.partition(".")
        return str(col(kind, host, key))
    if kind == "tx":
        middle, _, last = rest.rpartition(".")
        task, tx = _legacy_owner(middle, tasks)
        return str(col(kind, task, tx, last))
    if kind == "hist":
        return str(col(kind, *_legacy_owner(rest, tasks)))
    if kind == "txhist":
        task, rest = _legacy_owner(rest, tasks)
        return str(col(kind, task, *_legacy_owner(rest, txs)))
    raise StoredRunError(f"stored column {name!r}: unknown kind {kind!r}")


def _upgrade_columns(columns: list[str], meta: RunMeta) -> list[str]:
    """Schema 0/1 names in today's form, and the metadata keyed by them renamed too."""
    tasks = [c.split(".", 1)[1].rpartition(".")[0] for c in columns if c.startswith("st03.")]
    try:
        new = [_legacy(c, meta, list(dict.fromkeys(tasks))) for c in columns]
    except ColumnError as exc:
        raise StoredRunError(f"a stored column name cannot be read: {exc}") from exc
    rename = dict(zip(columns, new, strict=True))
    meta.derivations = {rename.get(k, k): v for k, v in meta.derivations.items()}
    for key in ("counter_names", "localized_names"):
        if isinstance(meta.details.get(key), dict):
            meta.details[key] = {rename.get(k, k): v for k, v in meta.details[key].items()}
    if meta.source == "prometheus":  # schema 1 listed a dotted host by its first part
        meta.hosts = sorted({parse(c).part("host") for c in new if c.startswith("os.")})
    return new
