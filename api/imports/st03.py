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
the field separator, as German ST03 exports write them); tab-separated files too. UTF-8 or
UTF-16, with or without a byte-order mark. Every number must be finite, at least 0 and at
most 10^15: anything else is a damaged cell, refused naming its line and column.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np

from api.imports.text import FileError, Lines, csv_column

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
MAX_VALUE = 1e15  # steps or milliseconds beyond this are a damaged cell


class ST03Error(FileError):
    """The export cannot be read; the message names the line and the column."""


@dataclass
class ST03Row:
    task_type: str
    transaction: str
    steps: float
    seconds: dict[str, float]  # part -> total seconds


@dataclass
class ST03Table:
    """The export by columns: one entry per row in each."""

    task_types: list[str]
    transactions: list[str]
    steps: np.ndarray
    seconds: dict[str, np.ndarray]  # part -> total seconds per row

    def rows(self) -> list[ST03Row]:
        return [
            ST03Row(
                task,
                tx,
                float(self.steps[k]),
                {part: float(v[k]) for part, v in self.seconds.items()},
            )
            for k, (task, tx) in enumerate(zip(self.task_types, self.transactions, strict=True))
        ]


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


def _clean(cell: str, decimal_comma: bool) -> str:
    text = cell.strip().replace("\u00a0", "").replace(" ", "")
    text = text.replace(".", "").replace(",", ".") if decimal_comma else text.replace(",", "")
    return text or "0"


def _numbers(cells: list[str], lines: list[int], col: str, decimal_comma: bool) -> np.ndarray:
    """A column's numbers, converted at once (per cell only to name a bad one)."""
    try:
        if decimal_comma:
            raise ValueError  # "1,96" would not read as 1.96
        values = np.array(cells, dtype=np.float64)
    except ValueError:
        cleaned = [_clean(c, decimal_comma) for c in cells]
        try:
            values = np.array(cleaned, dtype=np.float64)
        except ValueError:
            k = next(k for k, c in enumerate(cleaned) if not _is_number(c))
            raise ST03Error(
                f"line {lines[k]}, column {col!r}: {cells[k][:40]!r} is not a number"
            ) from None
    bad = ~np.isfinite(values) | (values < 0.0) | (values > MAX_VALUE)
    if bad.any():
        k = int(np.argmax(bad))
        raise ST03Error(
            f"line {lines[k]}, column {col!r}: {cells[k][:40]!r} is not a number from 0 to "
            f"{MAX_VALUE:g}"
        )
    return values


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _delimiter(header: str) -> str:
    counts = {d: header.count(d) for d in (";", ",", "\t")}
    return max(counts, key=lambda d: counts[d])


def _rows(lines: Lines, rest: Iterator[str], delimiter: str) -> Iterator[list[str]]:
    reader = csv.reader(rest, delimiter=delimiter)
    while True:
        try:
            yield next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            col = csv_column(lines.last, str(exc), delimiter)
            raise ST03Error(f"line {lines.number}, column {col}: {exc}") from None


def parse(source: BinaryIO | bytes) -> list[ST03Row]:
    return parse_table(source).rows()


def parse_table(source: BinaryIO | bytes) -> ST03Table:
    stream = io.BytesIO(source) if isinstance(source, bytes | bytearray) else source
    try:
        lines = Lines(stream)
        return _parse(lines)
    except ST03Error:
        raise
    except FileError as exc:
        raise ST03Error(str(exc)) from None


def _parse(lines: Lines) -> ST03Table:
    it = iter(lines)
    first = next((line for line in it if line.strip()), None)
    if first is None:
        raise ST03Error("line 1: empty file")
    delimiter = _delimiter(first)
    lines.delimiter = delimiter
    header_line = lines.number
    header = [h.strip() for h in next(_rows(lines, iter([first]), delimiter))]
    lower = [h.lower() for h in header]
    try:
        task_col = next(i for i, h in enumerate(lower) if "task type" in h or h == "task")
    except StopIteration:
        raise ST03Error(f"line {header_line}: no 'Task type' column") from None
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
        raise ST03Error(f"line {header_line}: no 'Steps' column")
    parts = {
        i: c
        for i, h in enumerate(header)
        if i not in (task_col, tx_col, steps_col) and (c := _column(h))
    }
    if not parts:
        raise ST03Error(f"line {header_line}: no time column (e.g. 'Avg. response time (ms)')")
    if "response" not in {part for _, part in parts.values()}:
        # The report's summary and its rules start from the response time per step.
        raise ST03Error(
            f"line {header_line}: no response-time column ('Avg. response time (ms)' or "
            "'Total response time (s)')"
        )
    decimal_comma = delimiter == ";"
    tasks: list[str] = []
    txs: list[str] = []
    numbers: list[int] = []
    cells: dict[int, list[str]] = {i: [] for i in (steps_col, *parts)}
    for row in _rows(lines, it, delimiter):
        n = lines.number
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) < len(header):
            raise ST03Error(f"line {n}: {len(row)} fields, the header has {len(header)}")
        task = TASK_TYPES.get(row[task_col].strip().lower())
        if task is None:
            raise ST03Error(
                f"line {n}, column {header[task_col]!r}: unknown task type {row[task_col][:40]!r}"
            )
        tasks.append(task)
        txs.append(row[tx_col].strip() if tx_col is not None else "")
        numbers.append(n)
        for i, column in cells.items():
            column.append(row[i])
    if not tasks:
        raise ST03Error(f"line {header_line + 1}: no rows after the header")
    steps = _numbers(cells[steps_col], numbers, header[steps_col], decimal_comma)
    seconds = {}
    for i, (kind, part) in parts.items():
        value = _numbers(cells[i], numbers, header[i], decimal_comma)
        seconds[part] = value if kind == "total" else value * steps / 1000.0
    return ST03Table(tasks, txs, steps, seconds)
