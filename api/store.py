"""The API's embedded database (SQLite): notifications received from Alertmanager."""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Iterable
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
    forwarded_to_loki INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS notifications_alertname ON notifications (alertname, status);
CREATE INDEX IF NOT EXISTS notifications_sid ON notifications (sid, status);
CREATE INDEX IF NOT EXISTS notifications_status ON notifications (status);
CREATE INDEX IF NOT EXISTS notifications_unforwarded ON notifications (id)
    WHERE forwarded_to_loki = 0;
"""

INSERT_SQL = (
    "INSERT INTO notifications (received_at, receiver, group_key, status, alertname, severity,"
    " sid, sap_instance, fingerprint, starts_at, ends_at, labels, annotations)"
    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"
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
)


class Store:
    """One SQLite file; a lock serialises writers (FastAPI runs sync routes in threads)."""

    def __init__(self, path: Path, max_bytes: int | None = None) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self.max_bytes = max_bytes
        self._cap(self._conn)
        # In WAL mode NORMAL still survives a crash of the process (not of the machine) and
        # spares a sync of the disk on every commit: one per webhook call.
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._lock = threading.Lock()
        with self._lock:
            self._conn.executescript(SCHEMA)
        self.runs = RunStore(self._conn, self._lock)
        self.path = path
        self._fast: sqlite3.Connection | None = None
        self._fast_lock = threading.Lock()
        self._checkpointer: sqlite3.Connection | None = None

    def _cap(self, conn: sqlite3.Connection) -> None:
        """The size cap, per connection: past it a write fails with SQLITE_FULL, exactly
        as on a full disk."""
        if self.max_bytes is not None:
            page = conn.execute("PRAGMA page_size").fetchone()[0]
            conn.execute(f"PRAGMA max_page_count = {max(1, self.max_bytes // page)}")

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
                self._fast = sqlite3.connect(
                    self.path, check_same_thread=False, isolation_level=None, timeout=0
                )
                self._fast.execute("PRAGMA synchronous=NORMAL")
                self._cap(self._fast)
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
            self._checkpointer = sqlite3.connect(
                self.path, check_same_thread=False, isolation_level=None
            )
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
