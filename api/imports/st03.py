"""ST03 / ST03N workload exports (CSV), per task type or per transaction, as runs.

Accepted columns (case, spaces, "Ø"/"Avg."/"Average" and units in brackets are ignored):

- grouping: `Task type` (DIALOG, UPDATE, BACKGROUND, RFC, ...) and optionally
  `Transaction` (or `Report or transaction name`);
- steps: `Steps`, `# Steps`, `Number of steps` or `Dialog steps`;
- averages in ms: `Avg. response time`, `Avg. CPU time`, `Avg. DB time` (or `DB req.
  time`), `Avg. wait time`, `Avg. roll-in time`, `Avg. roll-out time`, `Avg. enqueue
  time`, `Avg. load+gen time`, `Avg. GUI time`, `Avg. processing time`;
- totals in s: the same with `Total` instead of `Avg.` (`Total response time (s)`).

Numbers may use a thousands separator (`1,743,000`) or a decimal comma (`1,96` with `;` as
the field separator, as German ST03 exports write them).
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

PARTS = {
    "response": "response",
    "cpu": "cpu",
    "db": "db_request",
    "dbreq": "db_request",
    "database": "db_request",
    "wait": "dispatcher_wait",
    "rollin": "roll_in",
    "rollout": "roll_out",
    "enqueue": "enqueue",
    "loadgen": "load_gen",
    "gui": "gui",
    "processing": "processing",
}
TASK_TYPES = {
    "dialog": "dialog",
    "dia": "dialog",
    "update": "update",
    "upd": "update",
    "update2": "update2",
    "background": "batch",
    "batch": "batch",
    "btc": "batch",
    "rfc": "rfc",
    "http": "http",
}
MAX_BYTES = 10 * 1024 * 1024


class ST03Error(ValueError):
    """The export cannot be read; the message names the line and the column."""


@dataclass
class ST03Row:
    task_type: str
    transaction: str
    steps: float
    seconds: dict[str, float]  # part -> total seconds


def _norm(header: str) -> str:
    h = header.lower().replace("ø", "").replace("(ms)", "").replace("(s)", "")
    h = re.sub(r"\b(avg|average|time|req|requests?)\b\.?", " ", h)
    return re.sub(r"[^a-z0-9#+]+", "", h)


def _column(header: str) -> tuple[str, str] | None:
    """(kind, part) for a header: kind is 'avg' or 'total'."""
    low = header.lower()
    kind = "total" if "total" in low or low.strip().startswith("t ") else "avg"
    stripped = re.sub(r"^\s*(t|total)\s+", "", header, flags=re.IGNORECASE)
    key = _norm(stripped).replace("total", "").replace("+", "")
    if key in PARTS:
        return kind, PARTS[key]
    return None


def _number(cell: str, line: int, col: str, decimal_comma: bool) -> float:
    text = cell.strip().replace("\u00a0", "").replace(" ", "")
    text = text.replace(".", "").replace(",", ".") if decimal_comma else text.replace(",", "")
    try:
        return float(text) if text else 0.0
    except ValueError as exc:
        raise ST03Error(f"line {line}, column {col!r}: {cell!r} is not a number") from exc


def parse(raw: bytes) -> list[ST03Row]:
    if len(raw) > MAX_BYTES:
        raise ST03Error(f"file is {len(raw)} bytes; at most {MAX_BYTES} are accepted")
    try:
        text = (
            raw.decode("utf-16")
            if raw.startswith((b"\xff\xfe", b"\xfe\xff"))
            else raw.decode("utf-8-sig")
        )
    except UnicodeDecodeError as exc:
        raise ST03Error(f"line 1: not UTF-8 or UTF-16 text ({exc.reason})") from exc
    lines = text.splitlines()
    if not lines:
        raise ST03Error("line 1: empty file")
    delimiter = ";" if lines[0].count(";") > lines[0].count(",") else ","
    rows = list(csv.reader(io.StringIO(text), delimiter=delimiter))
    header = [h.strip() for h in rows[0]]
    lower = [h.lower() for h in header]
    try:
        task_col = next(i for i, h in enumerate(lower) if "task type" in h or h == "task")
    except StopIteration:
        raise ST03Error("line 1: no 'Task type' column") from None
    tx_col = next((i for i, h in enumerate(lower) if "transaction" in h or "report" in h), None)
    steps_col = next(
        (
            i
            for i, h in enumerate(header)
            if _norm(h) in ("steps", "#steps", "numberofsteps", "dialogsteps")
        ),
        None,
    )
    if steps_col is None:
        raise ST03Error("line 1: no 'Steps' column")
    parts = {
        i: c
        for i, h in enumerate(header)
        if i not in (task_col, tx_col, steps_col) and (c := _column(h))
    }
    if not parts:
        raise ST03Error("line 1: no time column (e.g. 'Avg. response time (ms)')")
    out = []
    for n, row in enumerate(rows[1:], start=2):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) < len(header):
            raise ST03Error(f"line {n}: {len(row)} fields, the header has {len(header)}")
        task = TASK_TYPES.get(row[task_col].strip().lower())
        if task is None:
            raise ST03Error(
                f"line {n}, column {header[task_col]!r}: unknown task type {row[task_col]!r}"
            )
        steps = _number(row[steps_col], n, header[steps_col], delimiter == ";")
        seconds: dict[str, float] = {}
        for i, (kind, part) in parts.items():
            value = _number(row[i], n, header[i], delimiter == ";")
            seconds[part] = value if kind == "total" else value * steps / 1000.0
        out.append(ST03Row(task, row[tx_col].strip() if tx_col is not None else "", steps, seconds))
    if not out:
        raise ST03Error("line 2: no rows after the header")
    return out
