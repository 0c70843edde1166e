"""A run's row as the rest of wlmon sees it, read from the runs table without the rest of
the store (no numpy, no model): `wlmon down` asks which runs are running while the CLI's
stack commands load nothing of the API's heavy parts. api/runs/storage.py writes the rows
and reads them through the same `_row`."""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, get_args


class StoredRunError(ValueError):
    """A stored run this version cannot read; the message says why."""


RunKind = Literal["simulated", "realtime", "external", "imported"]
RunStatus = Literal["running", "finished", "failed", "cancelled", "interrupted"]


@dataclass(frozen=True)
class RunRow:
    """A run's row as the rest of wlmon sees it: times aware in UTC. The table holds them
    as ISO text, which only this module reads and writes; api/schemas.py Run writes them
    back as the same text (datetime.isoformat of the UTC time)."""

    id: str
    kind: RunKind
    status: RunStatus
    scenario: str
    label: str
    start: datetime
    end: datetime  # planned while running, actual once ended
    ramp_up_s: float
    created_at: datetime
    message: str  # why a run failed or ended early; empty when fine


@dataclass(frozen=True)
class Unreadable:
    """A stored row this version cannot read: its id and why (StoredRunError's message)."""

    id: str
    reason: str


@dataclass(frozen=True)
class RunPage:
    """A page of the runs table: the rows read, and those that could not be. One damaged
    row does not hide the others (GET /runs and `wlmon runs` list them and name it)."""

    rows: list[RunRow]
    unreadable: list[Unreadable]


@dataclass(frozen=True)
class LeftRunning:
    """A run an API left 'running': its row, the spec it was started with, its driver's
    last sign of life (None when never) and its planned-stop mark ('' after a crash)."""

    row: RunRow
    spec: dict
    alive_at: datetime | None
    stopped: str


# The row's columns as RunRow holds them (what GET /runs and GET /runs/{id} answer).
RUN_KEYS = tuple(f.name for f in fields(RunRow))


def stored_time(text: str, column: str, run_id: str) -> datetime:
    """A stored time: ISO 8601 with its offset, as every version wrote it."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError as exc:
        raise StoredRunError(f"run {run_id}: stored {column} {text!r} is not a time") from exc
    if when.tzinfo is None:
        raise StoredRunError(f"run {run_id}: stored {column} {text!r} has no UTC offset")
    return when.astimezone(UTC)


def run_row(values: tuple) -> RunRow:
    raw = dict(zip(RUN_KEYS, values, strict=True))
    run_id = raw["id"]
    for column, allowed in (("kind", RunKind), ("status", RunStatus)):
        if raw[column] not in get_args(allowed):
            raise StoredRunError(f"run {run_id}: stored {column} {raw[column]!r} is not known")
    for column in ("start", "end", "created_at"):
        raw[column] = stored_time(raw[column], column, run_id)
    try:
        raw["ramp_up_s"] = float(raw["ramp_up_s"])
    except (TypeError, ValueError) as exc:
        raise StoredRunError(
            f"run {run_id}: stored ramp_up_s {raw['ramp_up_s']!r} is not a number"
        ) from exc
    return RunRow(**raw)


def running_in(db: Path) -> list[RunRow]:
    """Runs stored as running in the database at `db`, oldest first, read only: nothing is
    created or migrated (the CLI asks while the stack's API may be writing it). An
    sqlite3.Error when it cannot be read."""
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        rows = conn.execute(
            f"SELECT {', '.join(RUN_KEYS)} FROM runs WHERE status = 'running' ORDER BY created_at"
        ).fetchall()
    return [run_row(r) for r in rows]
