"""ST03 / ST03N exports as SAP writes them, read into one table of rows.

Layouts: the workload overview (a row per task type), the transaction profile (a row per
transaction, with or without a task-type column) and the time profile (a row per hour).
Formats: "Text with Tabs", "Spreadsheet" (`;` or `,`), and the unconverted list (the
`|`-framed ALV list, with its rules and repeated page headings). Headings in English or
German: which field each column holds is decided by `st03columns` (the table in
docs/imports.md). The number format is decided once per file (`numbers`); the period from
the lines above the table (`st03period`) or from the hour rows. A Total row is not data:
it is checked against the sum of the rows and refused if they do not add up.

UTF-8 or UTF-16, with or without a byte-order mark. Every number must be finite, at least
0 and at most 10^15: anything else is a damaged cell, refused naming its line and column.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import BinaryIO

import numpy as np

from api.imports import formats, numbers, st03columns, st03period
from api.imports.st03columns import KEY_COLUMNS, Column, ColumnError, key_name
from api.imports.st03period import Period, PeriodError
from api.imports.text import FileError, Lines, csv_column

# The task types SAP lists (ST03N, "Workload Overview"), English and German, by the key a
# run stores them under; anything else is kept under its own name.
TASK_TYPES = {
    "dialog": "dialog",
    "dia": "dialog",
    "update": "update",
    "upd": "update",
    "verbuchung": "update",
    "update2": "update2",
    "upd2": "update2",
    "verbuchung2": "update2",
    "background": "batch",
    "batch": "batch",
    "btc": "batch",
    "hintergrund": "batch",
    "rfc": "rfc",
    "http": "http",
    "https": "https",
    "autoabap": "autoabap",
    "buf.sync": "buffer_sync",
    "buffer sync": "buffer_sync",
    "buf sync": "buffer_sync",
    "spool": "spool",
    "b.input": "batch_input",
    "batch input": "batch_input",
    "cpic": "cpic",
    "ale": "ale",
}
TOTAL_WORDS = {"total", "totals", "sum", "summe", "gesamt", "gesamtsumme", "insgesamt", "somme"}
ALL_TASKS = "all"  # the file names no task type
MAX_VALUE = 1e15  # steps or milliseconds beyond this are a damaged cell
HEADER_SEARCH = 60  # lines above the table SAP may write (title, period, instance, ...)
HOUR = re.compile(
    r"^(?:(?P<date>\d{1,2}\.\d{1,2}\.\d{4}|\d{4}-\d{2}-\d{2})\s+)?"
    r"(?P<h1>\d{1,2})(?::(?P<m1>\d{2}))?(?::\d{2})?"
    r"(?:\s*(?:-{1,2}|–|to|bis)\s*(?P<h2>\d{1,2})(?::(?P<m2>\d{2}))?(?::\d{2})?)?"
    r"(?:\s*(?:h|uhr))?$",
    re.I,
)
RULE = re.compile(r"^[\s|\-+=_]*$")


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
    """The export by columns: one entry per row in each, the Total row left out."""

    task_types: list[str]
    transactions: list[str]
    steps: np.ndarray
    seconds: dict[str, np.ndarray]  # field -> total seconds per row (fields in the file)
    counts: dict[str, np.ndarray] = field(default_factory=dict)  # db_requests
    sizes: dict[str, np.ndarray] = field(default_factory=dict)  # field -> total KB per row
    derived: dict[str, str] = field(default_factory=dict)  # field -> how (not in the file)
    precision: dict[str, int] = field(default_factory=dict)  # field -> decimals of its mean
    text_numbers: bool = True  # some number is written as text (False: XLSX number cells)
    layout: str = "workload overview"
    file_format: str = "csv"
    number_format: str = "point"
    task_names: dict[str, str] = field(default_factory=dict)  # key -> as the file writes it
    period: Period | None = None
    sample: np.ndarray | None = None  # per row, its hour's index in `sample_ends_s`
    sample_ends_s: np.ndarray | None = None  # end of each hour, s after the period's start
    columns: list[dict] = field(default_factory=list)  # heading -> field, kind
    not_read: list[str] = field(default_factory=list)
    total_row: dict | None = None
    notes: list[str] = field(default_factory=list)

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


def task_key(name: str) -> str:
    """The key a task type is stored under: SAP's types by one name, others by theirs."""
    low = " ".join(name.strip().lower().split())
    if low in TASK_TYPES:
        return TASK_TYPES[low]
    return re.sub(r"[^a-z0-9]+", "_", low).strip("_")


def _split_list(line: str) -> list[str]:
    """The cells of an unconverted-list line (`|cell|cell|`)."""
    inner = line.strip().strip("\r\n")
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") else inner
    return [c.strip() for c in inner.split("|")]


def _delimiter(line: str) -> str | None:
    if formats.CELL in line:
        return formats.CELL  # a table read from XLSX or HTML: its cells are given
    if line.lstrip().startswith("|"):
        return "|"
    counts = {d: line.count(d) for d in ("\t", ";", ",")}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] else None


def _rows(lines: list[tuple[int, str]], delimiter: str):
    """(line, cells) of the table's rows: blank lines, rules and a list's titles between
    its framed rows skipped; one csv reader for all of them (one per line is slow)."""
    kept = [
        (n, t)
        for n, t in lines
        if t.strip() and not RULE.match(t) and (delimiter != "|" or t.lstrip().startswith("|"))
    ]
    if delimiter == "|":
        rows = (_split_list(t) for _, t in kept)
    elif delimiter == formats.CELL:
        rows = (t.split(formats.CELL) for _, t in kept)
    else:
        rows = csv.reader((t.rstrip("\r\n") for _, t in kept), delimiter=delimiter)
    k = 0
    while True:
        try:
            row = next(rows)
        except StopIteration:
            return
        except csv.Error as exc:
            number, text = kept[min(k, len(kept) - 1)]
            col = csv_column(text, str(exc), delimiter)
            raise ST03Error(f"line {number}, column {col}: {exc}") from None
        number = kept[k][0]
        k += 1
        if "".join(row).strip():
            yield number, row


def _cells(line: str, delimiter: str, number: int) -> list[str]:
    if delimiter == "|":
        return _split_list(line)
    if delimiter == formats.CELL:
        return line.split(formats.CELL)
    if '"' not in line:  # no quoting: a split is what csv would give, and much faster
        return line.rstrip("\r\n").split(delimiter)
    try:
        return next(csv.reader([line.rstrip("\r\n")], delimiter=delimiter))
    except csv.Error as exc:
        col = csv_column(line, str(exc), delimiter)
        raise ST03Error(f"line {number}, column {col}: {exc}") from None
    except StopIteration:
        return []


FORMAT_NAMES = {
    "\t": "text with tabs",
    ";": "spreadsheet (;)",
    ",": "csv (,)",
    "|": "unconverted list",
    formats.CELL: "table",  # XLSX or HTML: parse_table names it
}


@dataclass
class Options:
    """What the user says about a file that the file may not: its period, its task type
    (a transaction profile exported from one task type's node) and its number format."""

    period: Period | None = None
    task_type: str | None = None
    decimal: str | None = None  # 'point' or 'comma'
    tz: str | None = None  # the SAP system's IANA zone (--tz): its local times to UTC


def parse(source: BinaryIO | bytes) -> list[ST03Row]:
    return parse_table(source).rows()


def parse_table(source: BinaryIO | bytes, options: Options | None = None) -> ST03Table:
    stream = io.BytesIO(source) if isinstance(source, bytes | bytearray) else source
    try:
        # The format from the bytes: XLSX, MHTML and HTML as tables, text as it is.
        tabular, stream = formats.read(stream)
        if tabular is not None:
            try:
                table = _parse(tabular.lines, options or Options())
            except ST03Error as exc:
                # Say which file it was: "XLSX (sheet 'Sheet1'): line 1: no 'Task type' ..."
                raise ST03Error(f"{tabular.kind}: {exc}") from None
            table.file_format = tabular.kind
            if tabular.numeric and table.number_format == "point" and not table.text_numbers:
                table.number_format = "numbers"
            return table
        lines = Lines(stream, delimiter=None)
        return _parse(list(_numbered(lines)), options or Options())
    except ST03Error:
        raise
    except (FileError, ColumnError, numbers.NumberError, PeriodError) as exc:
        raise ST03Error(str(exc)) from None


def _numbered(lines: Lines):
    for text in lines:
        yield lines.number, text


def _find_header(lines: list[tuple[int, str]]) -> tuple[int, str, list[str]]:
    """(index in lines, delimiter, headings) of the table's heading line."""
    for k, (number, text) in enumerate(lines[: HEADER_SEARCH * 2]):
        if not text.strip() or RULE.match(text):
            continue
        delimiter = _delimiter(text)
        if delimiter is None:
            continue
        cells = [c.strip() for c in _cells(text, delimiter, number)]
        # "Task type:" is a label above the table (its value beside it), not a heading.
        if any(
            key_name(c) in names and not c.endswith(":")
            for c in cells
            for names in KEY_COLUMNS.values()
        ):
            return k, delimiter, cells
    first = next((n for n, t in lines if t.strip()), None)
    if first is None:
        raise ST03Error("line 1: empty file")
    heading = _likely_heading(lines[: HEADER_SEARCH * 2])
    if heading is not None:
        number, cells = heading
        shown = ", ".join(repr(c) for c in cells[:4]) + (", ..." if len(cells) > 4 else "")
        raise ST03Error(
            f"line {number}: headings {shown} name no 'Task type', transaction or hour "
            f"column: {LANGUAGES}"
        )
    raise ST03Error(
        f"line {first}: no 'Task type', transaction or hour column in the first "
        f"{HEADER_SEARCH} lines (is this an ST03/ST03N export?)"
    )


LANGUAGES = (
    "headings are read in English, German and French (e.g. 'Task Type Name', "
    "'Tasktypname', 'Type de tâche', '# Steps', 'Ø Response Time (ms)'); export with the "
    "logon language EN, DE or FR"
)


def _likely_heading(lines: list[tuple[int, str]]) -> tuple[int, list[str]] | None:
    """The line that looks like a table's heading (3 or more cells, most of them words,
    not numbers): what a refusal names when no heading is one the parser reads."""
    for number, text in lines:
        delimiter = _delimiter(text)
        if delimiter is None or RULE.match(text):
            continue
        cells = [c.strip() for c in _cells(text, delimiter, number) if c.strip()]
        words = [c for c in cells if re.search(r"[^\W\d_]{2}", c)]
        if len(cells) >= 3 and len(words) >= 0.7 * len(cells):
            return number, cells
    return None


def _preamble_task(lines: list[tuple[int, str]]) -> str | None:
    for _, text in lines:
        m = re.match(r"^\s*\|?\s*(task\s*type|tasktyp)\s*[:\t;|]\s*([^\t;|]+)", text, re.I)
        if m:
            return m.group(2).strip()
    return None


def _parse(lines: list[tuple[int, str]], options: Options) -> ST03Table:
    hk, delimiter, header = _find_header(lines)
    header_line = lines[hk][0]
    roles: dict[str, int] = {}
    for i, h in enumerate(header):
        for role, names in KEY_COLUMNS.items():
            if key_name(h) in names and role not in roles:
                roles[role] = i
    # A sheet's or HTML table's cells above the heading read as one line of text each
    # ("Zeitraum" | "25.11.2026" | "10:00:00" | ...: a date and its time in two cells).
    preamble = [(n, t.replace(formats.CELL, " ")) for n, t in lines[:hk]]
    file_period, notes = st03period.from_preamble(preamble)
    period = st03period.reconcile(file_period, options.period)
    columns: list[Column] = []
    not_read: list[str] = []
    for i, h in enumerate(header):
        if i in roles.values() or not h:
            continue
        try:
            col = st03columns.classify(i, h)
        except ColumnError as exc:
            raise ST03Error(f"line {header_line}, {exc}") from None
        if col is None:
            not_read.append(h)
        else:
            columns.append(col)
    seen: dict[tuple[str, str], Column] = {}
    for col in columns:
        other = seen.setdefault((col.field, col.kind), col)
        if other is not col:
            raise ST03Error(
                f"line {header_line}: columns {other.heading!r} and {col.heading!r} both hold "
                f"{col.label}"
            )
    steps_col = next((c for c in columns if c.field == "steps"), None)
    if steps_col is None:
        unread = ", ".join(repr(h) for h in not_read[:4]) + (", ..." if len(not_read) > 4 else "")
        raise ST03Error(
            f"line {header_line}: no 'Steps' column ('# Steps', 'Number of Steps')"
            + (f"; not read: {unread}; {LANGUAGES}" if not_read else "")
        )
    if not any(c.kind in ("avg", "total") for c in columns):
        raise ST03Error(f"line {header_line}: no time column (e.g. 'Ø Time (ms)')")
    if not any(c.field in ("response", "wp_time") for c in columns):
        # The report's summary and its rules start from the response time per step (or the
        # time in work processes, from which with the wait it is derived).
        raise ST03Error(
            f"line {header_line}: no response-time column ('Ø Time (ms)', 'Avg. response "
            "time (ms)', 'T Response Time (s)', 'Ø Antwortzeit (ms)') and no time in work "
            "processes ('Ø Time in WPs (ms)', 'Ø Zeit in WPs (ms)')"
        )
    # The rows, the Total row kept apart.
    task_col, tx_col, hour_col = (roles.get(r) for r in ("task_type", "transaction", "hour"))
    fixed_task = None
    if task_col is None:
        named = options.task_type or _preamble_task(preamble)
        fixed_task = named or ALL_TASKS
        if not named:
            notes.append("the file names no task type: its rows are stored as task type 'all'")
    elif options.task_type:
        raise ST03Error(
            f"line {header_line}: the file has a task-type column {header[task_col]!r}; "
            "a task type given for the import would contradict it"
        )
    data: list[tuple[int, list[str]]] = []
    total: tuple[int, list[str]] | None = None
    key_cols = [c for c in (task_col, tx_col, hour_col) if c is not None]
    for number, row in _rows(lines[hk + 1 :], delimiter):
        if row[0].strip() == header[0] and [c.strip() for c in row] == header:
            continue  # an unconverted list repeats its heading on every page
        if len(row) < len(header):
            raise ST03Error(f"line {number}: {len(row)} fields, the header has {len(header)}")
        keys = [numbers.plain(row[c]).strip(" *").lower() for c in key_cols]
        if any(k in TOTAL_WORDS for k in keys):
            if total is not None:
                raise ST03Error(f"line {number}: a second Total row (the first is line {total[0]})")
            total = (number, row)
            continue
        data.append((number, row))
    if not data:
        raise ST03Error(f"line {header_line + 1}: no rows after the header")
    # Numbers: one format for the file, decided from every numeric cell.
    lines_of = [n for n, _ in data]
    cells = {
        c.index: numbers.Column(
            c.heading, [r[c.index] for _, r in data], lines_of, c.kind == "count"
        )
        for c in columns
    }
    every = list(cells.values())
    if total is not None:
        every += [
            numbers.Column(c.heading, [total[1][c.index]], [total[0]], c.kind == "count")
            for c in columns
        ]
    fmt = numbers.detect(every, options.decimal)
    text_numbers = any(
        t.strip() and not t.startswith(numbers.NUMERIC) for c in every for t in c.texts
    )
    values: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for c in columns:
        v, half = numbers.convert(cells[c.index], fmt)
        _check_range(v, cells[c.index])
        values[c.index] = (v, half)
    steps, _ = values[steps_col.index]
    _check_empty(steps_col, values, cells, None)
    for c in columns:
        if c is not steps_col:
            _check_empty(c, values, cells, steps)
    seconds, counts, derived = _fields(columns, values, steps, lines_of, cells)
    sizes = {k: seconds.pop(k) for k in list(seconds) if k in st03columns.SIZE_FIELDS}
    derived_fields = _derive(seconds, derived)
    # Task types and transactions per row.
    task_names: dict[str, str] = {}
    tasks: list[str] = []
    for n, r in data:
        name = fixed_task if task_col is None else numbers.plain(r[task_col]).strip()
        if not name:
            raise ST03Error(f"line {n}, column {header[task_col]!r}: no task type")
        key = task_key(name)
        if not key:
            raise ST03Error(f"line {n}, column {header[task_col]!r}: {name!r} is no task type")
        task_names.setdefault(key, name)
        tasks.append(key)
    txs = [numbers.plain(r[tx_col]).strip() if tx_col is not None else "" for _, r in data]
    table = ST03Table(
        task_types=tasks,
        transactions=txs,
        steps=steps,
        seconds={k: v for k, v in seconds.items() if k != "db_per_request"},
        counts=counts,
        sizes=sizes,
        derived=derived_fields,
        precision=_precision(columns, values),
        text_numbers=text_numbers,
        layout="time profile"
        if hour_col is not None
        else ("transaction profile" if tx_col is not None else "workload overview"),
        file_format=FORMAT_NAMES[delimiter],
        number_format=fmt,
        task_names=task_names,
        period=period,
        columns=[
            {"heading": c.heading, "field": c.field, "kind": c.kind, "label": c.label}
            for c in columns
        ],
        not_read=not_read,
        notes=notes + derived,
    )
    if "db_per_request" in seconds:
        table.seconds["db_per_request"] = seconds["db_per_request"]
    if total is not None:
        table.total_row = _check_total(total, columns, values, fmt, steps, seconds)
    if hour_col is not None:
        _hours(table, data, hour_col, header[hour_col])
    return table


def _cell(col: numbers.Column, k: int) -> numbers.Cell:
    return numbers.Cell(col.lines[k], col.heading, col.texts[k])


def _check_range(v: np.ndarray, col: numbers.Column) -> None:
    bad = np.isfinite(v) & ((v < 0.0) | (v > MAX_VALUE))
    if bad.any():
        k = int(np.argmax(bad))
        raise ST03Error(f"{_cell(col, k)} is not a number from 0 to {MAX_VALUE:g}")


def _check_empty(col: Column, values: dict, cells: dict, steps: np.ndarray | None) -> None:
    """An empty cell is 'not given'. A column empty in every row is absent; one with values
    in some rows may be empty only where the row has no steps (nothing to average)."""
    v, _ = values[col.index]
    empty = np.isnan(v)
    if not empty.any() or empty.all():
        return
    where = empty if steps is None else empty & (steps > 0)
    if where.any():
        k = int(np.argmax(where))
        raise ST03Error(
            f"{_cell(cells[col.index], k)} is empty but the column has values in other rows"
        )
    v[empty] = 0.0


def _fields(
    columns: list[Column],
    values: dict,
    steps: np.ndarray,
    lines_of: list[int],
    cells: dict[int, numbers.Column] | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], list[str]]:
    """Total seconds per field and row (from the total column, or mean x steps), the counts,
    and notes on what was derived. A field given both as mean and total is checked: the
    two must agree within the digits shown."""
    seconds: dict[str, np.ndarray] = {}
    counts: dict[str, np.ndarray] = {}
    notes: list[str] = []
    by_field: dict[str, dict[str, Column]] = {}
    for c in columns:
        by_field.setdefault(c.field, {})[c.kind] = c
    for name, kinds in by_field.items():
        if "count" in kinds:
            v, _ = values[kinds["count"].index]
            if np.isnan(v).all():
                continue
            counts[name] = v
            continue
        total, avg = kinds.get("total"), kinds.get("avg")
        # A time's mean is ms per step and its total s; a size's mean KB per step and its
        # total KB.
        per = 1.0 if name in st03columns.SIZE_FIELDS else 1000.0
        has_total = total is not None and not np.isnan(values[total.index][0]).all()
        has_avg = avg is not None and not np.isnan(values[avg.index][0]).all()
        if has_total:
            t, t_half = values[total.index]
            secs = t * total.scale
            if has_avg:
                a, a_half = values[avg.index]
                implied = a * avg.scale * steps / per
                implied_slack = a_half * avg.scale * steps / per
                total_slack = t_half * total.scale
                slack = implied_slack + total_slack
                off = np.abs(implied - secs) > slack + 1e-9 * np.maximum(secs, 1.0)
                if off.any():
                    k = int(np.argmax(off))
                    unit = "KB" if per == 1.0 else "s"
                    shown = (
                        f" (cells {numbers.plain(cells[avg.index].texts[k])!r} and "
                        f"{numbers.plain(cells[total.index].texts[k])!r})"
                        if cells
                        else ""
                    )
                    raise ST03Error(
                        f"line {lines_of[k]}{shown}: {avg.heading!r} x steps gives "
                        f"{implied[k]:,.3f} {unit} but {total.heading!r} says "
                        f"{secs[k]:,.3f} {unit}, more than the digits shown allow "
                        f"(± {slack[k]:,.3f} {unit}): the mean and the total disagree"
                    )
                # Both agree within their digits: per row the one with fewer digits lost
                # wins (a total of 0.1 s over 90 steps says less than a mean of 1.0 ms).
                finer = implied_slack < total_slack
                if finer.any():
                    secs = np.where(finer, implied, secs)
                    notes.append(
                        f"{avg.label.split(',')[0]}: in {int(finer.sum())} row(s) the mean "
                        f"{avg.heading!r} shows more digits than the total {total.heading!r}: "
                        "the mean is used there"
                    )
            seconds[name] = secs
        elif has_avg:
            a, _ = values[avg.index]
            seconds[name] = a * avg.scale * steps / per
    if "db_per_request" in by_field:
        col = by_field["db_per_request"]["per_request"]
        per, _ = values[col.index]
        if not np.isnan(per).all():
            per_s = per * col.scale / 1000.0
            if "db_requests" in counts:
                n = counts["db_requests"]
                notes.append("DB time per request: weighted by the DB requests column")
            elif "db_request" in seconds:
                n = np.divide(seconds["db_request"], per_s, out=np.zeros_like(per), where=per > 0)
                notes.append(
                    "DB time per request: weighted by DB time / time per request (the file "
                    "has no DB-request count)"
                )
            else:
                raise ST03Error(
                    f"column {col.heading!r}: a time per DB request needs a DB-request count "
                    "or a DB time column beside it to be summed over rows"
                )
            seconds["db_per_request"] = per_s * n
            counts["db_per_request_n"] = n
    return seconds, counts, notes


def _derive(seconds: dict[str, np.ndarray], notes: list[str]) -> dict[str, str]:
    """Fields the file does not hold but two of its fields give exactly, each named in the
    audit as derived. Response is never taken from another single column: without it, the
    time in work processes plus the dispatcher wait is the response (SAP's definition),
    or the response is absent."""
    derived: dict[str, str] = {}
    if "response" not in seconds and "wp_time" in seconds:
        if "dispatcher_wait" in seconds:
            seconds["response"] = seconds["wp_time"] + seconds["dispatcher_wait"]
            derived["response"] = "Time in WPs + Wait time (the file has no response time)"
            notes.append(
                "response time derived: time in work processes + wait time (the file has "
                "no response-time column)"
            )
        else:
            notes.append(
                "the file has no response-time column and no wait time: response time is "
                "absent (time in work processes is shown as itself, never as the response)"
            )
    if "load_gen" not in seconds and "load" in seconds and "generation" in seconds:
        seconds["load_gen"] = seconds["load"] + seconds["generation"]
        derived["load_gen"] = "Load time + Generation time"
    return derived


def _precision(columns: list[Column], values: dict) -> dict[str, int]:
    """Per field, the decimals its mean per step is shown with in the file: what the
    report shows, never more (a field given only as a total has no such figure)."""
    out: dict[str, int] = {}
    for c in columns:
        if c.kind != "avg" or c.scale != 1.0:
            continue
        v, half = values[c.index]
        shown = half[~np.isnan(v) & (half > 0)]
        if shown.size:
            out[c.field] = max(0, round(-float(np.log10(2 * float(shown.min())))))
    return out


def _check_total(
    total: tuple[int, list[str]],
    columns: list[Column],
    values: dict,
    fmt: str,
    steps: np.ndarray,
    seconds: dict[str, np.ndarray],
) -> dict:
    """The Total row against the rows' sum, column by column, within the digits shown:
    counts exactly, totals within half a unit of each cell, means weighted by steps."""
    number, row = total
    checked = []
    for c in columns:
        got, half = numbers.convert(numbers.Column(c.heading, [row[c.index]], [number]), fmt)
        if np.isnan(got[0]):
            continue
        value, slack_t = float(got[0]), float(half[0])
        rows_v, rows_half = values[c.index]
        if np.isnan(rows_v).all():
            continue  # a column empty in every row is absent: nothing to sum
        if c.kind == "count":
            # Counts shown as whole numbers add up exactly.
            whole = slack_t == 0.5 and bool(np.all(rows_half == 0.5))
            expect = float(np.nansum(rows_v))
            slack = 0.0 if whole else slack_t + float(np.sum(rows_half))
        elif c.kind == "total":
            expect = float(np.nansum(rows_v))
            slack = slack_t + float(np.sum(rows_half))
        elif c.kind == "avg":
            n = float(steps.sum())
            expect = float(np.nansum(rows_v * steps)) / n if n else 0.0
            slack = slack_t + (float(np.sum(rows_half * steps)) / n if n else 0.0)
        else:
            continue  # per request: its weights are not in the Total row
        if abs(value - expect) > slack + 1e-9 * max(abs(expect), 1.0):
            raise ST03Error(
                f"line {number} (Total), column {c.heading!r}: {row[c.index]!r} but the rows "
                f"add up to {expect:,.6g} (± {slack:.3g} for the digits shown): the rows do "
                "not sum to the Total (a task type or page missing, or another period?)"
            )
        checked.append(c.heading)
    return {"line": number, "columns_checked": checked}


def _hours(table: ST03Table, data: list[tuple[int, list[str]]], col: int, heading: str) -> None:
    """Each hour row's place in the period: the run's time series. The period is the
    file's (or the user's), else first to last hour. Hours absent from the profile had no
    steps (ST03N lists only hours with work); they are zeros in the series."""
    slots: list[tuple[datetime, datetime]] = []
    dated = None
    for n, r in data:
        m = HOUR.match(numbers.plain(r[col]).strip())
        if m is None:
            raise ST03Error(f"line {n}, column {heading!r}: {r[col][:40]!r} is not an hour")
        day = _date(m.group("date")) if m.group("date") else None
        if dated is None:
            dated = day is not None
        elif dated != (day is not None):
            raise ST03Error(f"line {n}, column {heading!r}: some hours have a date, some not")
        h1, m1 = int(m.group("h1")), int(m.group("m1") or 0)
        if m.group("h2") is None:
            h2, m2 = h1 + 1, m1
        else:
            h2, m2 = int(m.group("h2")), int(m.group("m2") or 0)
        base = datetime.combine(day or date(2000, 1, 1), datetime.min.time())
        a = base + timedelta(hours=h1, minutes=m1)
        b = base + timedelta(hours=h2, minutes=m2)
        if b <= a:
            b += timedelta(days=1)  # 23-00: the hour up to midnight
        if not (0 <= h1 <= 24 and 0 <= m1 < 60 and 0 <= h2 <= 24 and 0 <= m2 < 60):
            raise ST03Error(f"line {n}, column {heading!r}: {r[col][:40]!r} is not an hour")
        slots.append((a, b))
    widths = {b - a for a, b in slots}
    if len(widths) > 1:
        raise ST03Error(f"column {heading!r}: the rows' intervals differ in length")
    width = widths.pop().total_seconds()
    period = table.period
    if period is not None and period.seconds > 86400.0 + 1e-6 and not dated:
        # ST03N sums each hour over the days of a longer period: no series, totals only.
        table.notes.append(
            f"time profile over {period.seconds / 86400:g} days: each hour row sums the days; "
            "read as totals, not as a time series"
        )
        return
    if period is not None and period.start is not None:
        day0 = datetime.combine(period.start.date(), datetime.min.time())
        if not dated:
            slots = [
                (day0 + (a - datetime(2000, 1, 1)), day0 + (b - datetime(2000, 1, 1)))
                for a, b in slots
            ]
        start, end = period.start, period.end
    else:
        start, end = min(a for a, _ in slots), max(b for _, b in slots)
        if period is None:
            table.period = Period(
                start if dated else None,
                end if dated else None,
                (end - start).total_seconds(),
                f"the time profile's rows (first hour to last; column {heading!r})",
            )
        elif abs(period.seconds - (end - start).total_seconds()) > 1.0:
            raise ST03Error(
                f"the period given ({period.seconds:g} s) differs from the hour rows' "
                f"({(end - start).total_seconds():g} s)"
            )
    index = np.empty(len(slots), dtype=np.int64)
    for k, ((a, b), (n, _)) in enumerate(zip(slots, data, strict=True)):
        offset = (a - start).total_seconds()
        if a < start or b > end or abs(offset / width - round(offset / width)) > 1e-9:
            raise ST03Error(
                f"line {n}, column {heading!r}: {a:%H:%M}-{b:%H:%M} lies outside the period "
                f"{start} to {end} or off its {width:g} s grid"
            )
        index[k] = round(offset / width)
    count = round((end - start).total_seconds() / width)
    table.sample = index
    table.sample_ends_s = width * np.arange(1, count + 1, dtype=np.float64)


def _date(text: str) -> date:
    if "-" in text:
        return date.fromisoformat(text)
    d, m, y = (int(x) for x in text.split("."))
    return date(y, m, d)
