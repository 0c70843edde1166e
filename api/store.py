"""The API's embedded database (SQLite): notifications received from Alertmanager."""

from __future__ import annotations

import errno
import fcntl
import json
import logging
import os
import shutil
import sqlite3
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from api.runs.storage import RunStore

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS notifications (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    received_at TEXT NOT NULL,
    receiver TEXT NOT NULL,
    group_key TEXT NOT NULL,
    status TEXT NOT NULL,
    alertname TEXT NOT NULL,
    severity TEXT NOT NULL,
    sid TEXT NOT NULL,
    sap_instance TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    starts_at TEXT NOT NULL,
    ends_at TEXT,
    labels TEXT NOT NULL,
    annotations TEXT NOT NULL,
    forwarded_to_loki INTEGER NOT NULL DEFAULT 0,
    generator_url TEXT NOT NULL DEFAULT '',
    dashboard_url TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS notifications_alertname ON notifications (alertname, status);
CREATE INDEX IF NOT EXISTS notifications_sid ON notifications (sid, status);
CREATE INDEX IF NOT EXISTS notifications_status ON notifications (status);
CREATE INDEX IF NOT EXISTS notifications_unforwarded ON notifications (id)
    WHERE forwarded_to_loki = 0;
"""

INSERT_SQL = (
    "INSERT INTO notifications (received_at, receiver, group_key, status, alertname, severity,"
    " sid, sap_instance, fingerprint, starts_at, ends_at, labels, annotations, generator_url,"
    " dashboard_url) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)

COLUMNS = (
    "id",
    "received_at",
    "receiver",
    "group_key",
    "status",
    "alertname",
    "severity",
    "sid",
    "sap_instance",
    "fingerprint",
    "starts_at",
    "ends_at",
    "labels",
    "annotations",
    "forwarded_to_loki",
    "generator_url",
    "dashboard_url",
)
# Columns added after the first release: a database of an older API gains them at open.
ADDED_COLUMNS = {
    "generator_url": "TEXT NOT NULL DEFAULT ''",
    "dashboard_url": "TEXT NOT NULL DEFAULT ''",
}


def is_full(exc: BaseException) -> bool:
    """SQLite's SQLITE_FULL (the disk, or max_page_count) or the OS's ENOSPC. By the text
    too: an error raised in a worker process reaches the API pickled, without its code."""
    if isinstance(exc, sqlite3.Error):
        return getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or (
            "database or disk is full" in str(exc)
        )
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


# Room the cap leaves before a page of data no longer fits: with more free on the disk, the
# cap, not the disk, refused the write.
_DISK_SLACK = 1024 * 1024


def limit_met(db_path: Path, max_bytes: int | None, exc: BaseException) -> str:
    """Which limit refused a write (the cap and the setting that raises it, or the disk),
    or the error itself when it is not one of room."""
    if not is_full(exc):
        return f"the API's database {db_path} failed a write: {exc}"
    try:
        free = shutil.disk_usage(db_path.parent).free
    except OSError:
        free = 0
    if max_bytes is not None and free > _DISK_SLACK:
        why = (
            f"its size cap of {max_bytes} bytes is reached (WLMON_API_DB_MAX_BYTES; raise it, "
            "or delete runs)"
        )
    else:
        cap = f", cap WLMON_API_DB_MAX_BYTES={max_bytes}" if max_bytes is not None else ""
        why = f"the disk is full ({free} bytes free{cap})"
    return f"the API's database {db_path} cannot grow: {why}"


def refusal(db_path: Path, max_bytes: int | None, exc: BaseException) -> str:
    """What a refused write is answered with (API) or printed as (CLI)."""
    return (
        f"{limit_met(db_path, max_bytes, exc)}; nothing of this request was stored, what was "
        "stored before is kept"
    )


def connect(path: Path, max_bytes: int | None, *, timeout: float = 5.0) -> sqlite3.Connection:
    """The one way any process (the API, its workers, the CLI, their threads) opens the
    runs database: the same pragmas everywhere, and the size cap on every connection.

    SQLite's `max_page_count` holds per connection and is not stored in the file: a
    connection opened without it grew the database past WLMON_API_DB_MAX_BYTES (issue 38:
    4 MiB cap, 8.56 MB file, written by the workers and `wlmon run --fast`). Past the cap
    a write fails with SQLITE_FULL, exactly as on a full disk, and rolls back."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=timeout)
    # WAL lets readers go on beside a writer; set once per file (it is persistent), asked
    # first so a connection that must not wait (timeout 0) takes no lock for it.
    if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        conn.execute("PRAGMA journal_mode=WAL")
    # In WAL mode NORMAL still survives a crash of the process (not of the machine) and
    # spares a sync of the disk on every commit: one per webhook call.
    conn.execute("PRAGMA synchronous=NORMAL")
    if max_bytes is not None:
        page = conn.execute("PRAGMA page_size").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {max(1, max_bytes // page)}")
    return conn


@dataclass(frozen=True)
class Database:
    """Where the runs database is and how large it may grow: what a process that opens it
    (a worker, the CLI) is given, so none opens it without the cap."""

    path: Path
    max_bytes: int | None = None


@dataclass(frozen=True)
class FailureRecord:
    count: int = 0  # writes refused since the database was created, by any process
    failed_at: float = 0.0  # wall clock of the last one (0: never)
    ok_at: float = 0.0  # wall clock of the last write known to succeed after it
    message: str = ""


class WriteFailures:
    """Failed writes to the database, kept beside it in a file every process shares: the
    API's /healthz and its `write_failures_total` count a refusal met by a worker, by the
    CLI or by a run's driver as well as its own.

    One record of RECORD_BYTES, allocated when the database is opened and rewritten in
    place (under an exclusive lock): updating it needs no new block, so it is still
    written when the disk itself is full."""

    RECORD_BYTES = 4096

    def __init__(self, db_path: Path) -> None:
        self.path = db_path.with_name(db_path.name + ".write-failures")
        self._seen: tuple[int, FailureRecord] | None = None

    def allocate(self) -> None:
        """Create the record if there is none (at open, while there is room)."""
        try:
            with open(self.path, "xb") as f:
                f.write(self._encode(FailureRecord()))
        except FileExistsError:
            pass
        except OSError as exc:  # the failures will be seen by the process that meets them
            log.warning("cannot create %s: %s", self.path, exc)

    @classmethod
    def _encode(cls, rec: FailureRecord) -> bytes:
        doc = {"count": rec.count, "failed_at": rec.failed_at, "ok_at": rec.ok_at}
        doc["message"] = rec.message[: cls.RECORD_BYTES - 200]
        raw = json.dumps(doc).encode()
        while len(raw) > cls.RECORD_BYTES - 1:  # non-ASCII escapes grow the message
            doc["message"] = doc["message"][: len(doc["message"]) // 2]
            raw = json.dumps(doc).encode()
        return raw.ljust(cls.RECORD_BYTES - 1) + b"\n"

    @staticmethod
    def _decode(raw: bytes) -> FailureRecord:
        try:
            doc = json.loads(raw.decode() or "{}")
            return FailureRecord(
                int(doc.get("count", 0)),
                float(doc.get("failed_at", 0.0)),
                float(doc.get("ok_at", 0.0)),
                str(doc.get("message", "")),
            )
        except (ValueError, UnicodeDecodeError):
            return FailureRecord()

    def _update(self, change) -> FailureRecord | None:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            log.warning("cannot open %s: %s", self.path, exc)
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            old = self._decode(os.pread(fd, self.RECORD_BYTES, 0))
            new = change(old)
            if new is not None and new != old:
                os.pwrite(fd, self._encode(new), 0)
            return new or old
        except OSError as exc:
            log.warning("cannot update %s: %s", self.path, exc)
            return None
        finally:
            os.close(fd)

    def record(self, message: str) -> None:
        """A write was refused (any process): counted, and the API turns degraded."""
        now = time.time()
        self._update(lambda r: FailureRecord(r.count + 1, now, r.ok_at, message))

    def ok(self) -> None:
        """A write went through: the storage takes data again. Cheap when nothing failed
        since (one stat of the record), as it follows every webhook insert."""
        rec = self.read()
        if rec.failed_at <= rec.ok_at:
            return
        now = time.time()
        self._update(
            lambda r: (
                FailureRecord(r.count, r.failed_at, now, r.message)
                if r.failed_at > r.ok_at
                else None
            )
        )

    def read(self) -> FailureRecord:
        try:
            mtime = os.stat(self.path).st_mtime_ns
        except OSError:
            return FailureRecord()
        if self._seen is not None and self._seen[0] == mtime:
            return self._seen[1]
        try:
            with open(self.path, "rb") as f:
                rec = self._decode(f.read(self.RECORD_BYTES))
        except OSError:
            return FailureRecord()
        self._seen = (mtime, rec)
        return rec


class Store:
    """One SQLite file; a lock serialises writers (FastAPI runs sync routes in threads)."""

    def __init__(self, path: Path, max_bytes: int | None = None) -> None:
        self._conn = connect(path, max_bytes)
        self.max_bytes = max_bytes
        self.failures = WriteFailures(path)
        self.failures.allocate()
        self._lock = threading.Lock()
        with self._lock:
            self._conn.executescript(SCHEMA)
            have = {r[1] for r in self._conn.execute("PRAGMA table_info(notifications)")}
            for name, decl in ADDED_COLUMNS.items():
                if name not in have:
                    self._conn.execute(f"ALTER TABLE notifications ADD COLUMN {name} {decl}")
        self.runs = RunStore(self._conn, self._lock)
        self.path = path
        self._fast: sqlite3.Connection | None = None
        self._fast_lock = threading.Lock()
        self._checkpointer: sqlite3.Connection | None = None

    @classmethod
    def open(cls, db: Database) -> Store:
        return cls(db.path, db.max_bytes)

    @property
    def database(self) -> Database:
        return Database(self.path, self.max_bytes)

    def add_notifications(self, receiver: str, group_key: str, alerts: Iterable[dict]) -> list[int]:
        """All alerts of one webhook call, in one transaction: all stored or none."""
        with self._lock:
            return _insert_notifications(self._conn, "BEGIN", receiver, group_key, alerts)

    def try_add_notifications(
        self, receiver: str, group_key: str, alerts: Iterable[dict]
    ) -> list[int] | None:
        """As add_notifications, but never waiting: None when another writer (a worker
        storing an import, a thread of this process) holds the database or its connection.

        For the event loop, which must not wait, yet loses more to a hop to a thread and
        back (the GIL handed over at each SQLite call: the webhook's p99 went from about
        40 ms to 100-300 ms at 200 requests/s) than an uncontended insert costs (0.2 ms).
        Its own connection never checkpoints the WAL (a checkpoint syncs the disk): the
        checkpoint thread does (`checkpoint`)."""
        if not self._fast_lock.acquire(blocking=False):
            return None
        try:
            if self._fast is None:
                # timeout 0: SQLITE_BUSY at once instead of sleeping in the busy handler.
                self._fast = connect(self.path, self.max_bytes, timeout=0)
                self._fast.execute("PRAGMA wal_autocheckpoint=0")
            # IMMEDIATE takes the write lock first, or fails before any work.
            return _insert_notifications(self._fast, "BEGIN IMMEDIATE", receiver, group_key, alerts)
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            return None
        finally:
            self._fast_lock.release()

    def add_notifications_waiting(
        self, receiver: str, group_key: str, alerts: Iterable[dict], wait_s: float = 5.0
    ) -> list[int]:
        """From a thread: try_add_notifications, again every millisecond while another
        writer holds the database (for up to `wait_s`, then waiting as add_notifications
        does). SQLite's own busy handler sleeps in steps growing to 100 ms: a webhook call
        would sleep on for tens of milliseconds after a worker's write was done."""
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            ids = self.try_add_notifications(receiver, group_key, alerts)
            if ids is not None:
                return ids
            time.sleep(0.001)
        return self.add_notifications(receiver, group_key, alerts)

    def checkpoint(self) -> None:
        """Copy the WAL's pages into the database file without waiting for anyone
        (PASSIVE), on a connection of its own: from a thread, away from the requests."""
        if self._checkpointer is None:
            self._checkpointer = connect(self.path, self.max_bytes)
        self._checkpointer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    def checkpoint_until(self, stop: threading.Event, every_s: float = 2.0) -> None:
        """Checkpoint every `every_s` until `stop` (the API's thread for it)."""
        while not stop.wait(every_s):
            try:
                self.checkpoint()
            except sqlite3.Error as exc:  # the next round tries again
                log.warning("WAL checkpoint failed: %s", exc)

    def prune_notifications(self, before: datetime) -> int:
        """Notifications received before `before` that the log store has (retention); how many. One
        not yet forwarded stays, so a long outage of the log store loses nothing to retention."""
        with self._lock:
            cur = self._conn.execute(
                "DELETE FROM notifications WHERE received_at < ? AND forwarded_to_loki = 1",
                (before.astimezone(UTC).isoformat(),),
            )
        return cur.rowcount

    def mark_forwarded(self, ids: Iterable[int]) -> None:
        ids = list(ids)
        if not ids:
            return
        with self._lock:
            marks = ",".join("?" * len(ids))
            self._conn.execute(
                f"UPDATE notifications SET forwarded_to_loki = 1 WHERE id IN ({marks})", ids
            )

    def firing_revision(self) -> int:
        """The newest firing notification (0: none): a report that lists the alerts fired in
        a run's window may be out of date once this moves (Alertmanager may tell late)."""
        with self._lock:
            row = self._conn.execute(
                "SELECT MAX(id) FROM notifications WHERE status = 'firing'"
            ).fetchone()
        return int(row[0] or 0)

    def fired_between(self, start: datetime, end: datetime, sid: str) -> list[dict]:
        """The alerts of `sid` that started firing in [start, end], once each (Alertmanager
        repeats a firing alert every group interval), in order."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT alertname, severity, sap_instance, starts_at, annotations"
                " FROM notifications WHERE status = 'firing' AND sid = ? ORDER BY id",
                (sid,),
            ).fetchall()
        seen, out = set(), []
        for alertname, severity, instance, starts_at, notes in rows:
            at = datetime.fromisoformat(starts_at.replace("Z", "+00:00"))
            key = (alertname, instance, starts_at)
            if key in seen or not start <= at <= end:
                continue
            seen.add(key)
            out.append(
                {
                    "alertname": alertname,
                    "severity": severity,
                    "sap_instance": instance,
                    "starts_at": at.astimezone(UTC).isoformat(),
                    "summary": json.loads(notes).get("summary", ""),
                }
            )
        return sorted(out, key=lambda a: (a["starts_at"], a["alertname"], a["sap_instance"]))

    def notifications(
        self,
        *,
        status: str | None = None,
        alertname: str | None = None,
        unforwarded: bool = False,
        limit: int = 100,
    ) -> list[dict]:
        where, args = [], []
        if status:
            where.append("status = ?")
            args.append(status)
        if alertname:
            where.append("alertname = ?")
            args.append(alertname)
        if unforwarded:
            where.append("forwarded_to_loki = 0")
        sql = f"SELECT {', '.join(COLUMNS)} FROM notifications"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY id DESC LIMIT ?"
        with self._lock:
            rows = self._conn.execute(sql, [*args, limit]).fetchall()
        out = []
        for row in rows:
            item = dict(zip(COLUMNS, row, strict=True))
            item["labels"] = json.loads(item["labels"])
            item["annotations"] = json.loads(item["annotations"])
            item["forwarded_to_loki"] = bool(item["forwarded_to_loki"])
            out.append(item)
        return out


def _insert_notifications(
    conn: sqlite3.Connection, begin: str, receiver: str, group_key: str, alerts: Iterable[dict]
) -> list[int]:
    now = datetime.now(UTC).isoformat()
    ids = []
    conn.execute(begin)
    try:
        for a in alerts:
            labels = a["labels"]
            cur = conn.execute(
                INSERT_SQL,
                (
                    now,
                    receiver,
                    group_key,
                    a["status"],
                    labels.get("alertname", ""),
                    labels.get("severity", ""),
                    labels.get("sid", ""),
                    labels.get("sap_instance", ""),
                    a.get("fingerprint", ""),
                    a["starts_at"],
                    a.get("ends_at"),
                    json.dumps(labels, sort_keys=True),
                    json.dumps(a.get("annotations", {}), sort_keys=True),
                    a.get("generator_url", ""),
                    a.get("dashboard_url", ""),
                ),
            )
            ids.append(int(cur.lastrowid))
        conn.execute("COMMIT")
    except BaseException:
        # SQLite rolls back by itself on some errors (SQLITE_FULL: a full disk): a second
        # rollback would fail and hide the error that matters.
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return ids
