"""STAD / STATS exports: SAP's statistical records, one line per dialog step, read into the
table an ST03 export becomes (so the same report reads them) plus exact percentiles.

What SAP GUI writes (looked up: a public pipeline of an SAP load-test team reads these):
lines above the table (`Analysed time: 25.11.2026 / 10:00:00 - 25.11.2026 / 11:00:00`),
then the heading `Started | Server | Step | Typ | Transaction or jobname | User | Response
time (ms) | Time in WPs (ms) | Wait time (ms) | CPU time (ms) | DB req. time (ms) | ...`,
which the text download splits over two lines (`Response` / `time (ms)`), then one row per
step. Formats as ST03's (`formats`: XLSX, MHTML, HTML, text with tabs, `;`, `,`), headings
by meaning (`st03columns`: each a mean per step, here the step's own value), numbers by
file (`numbers`). A step's time of day comes with the period's date (or its own); steps
going back in time start the next day (STAD lists them in order).
"""

from __future__ import annotations

import io
import itertools
import re
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import BinaryIO

import numpy as np

from api.imports import formats, numbers, st03, st03columns, st03period
from api.imports.st03 import ST03Error, ST03Table
from api.imports.st03columns import key_name
from api.imports.text import FileError, Lines

KEYS = {
    "started": {"started", "start time", "startzeit", "gestartet", "start", "beginn"},
    "server": {"server", "instance", "instanz", "application server", "anwendungsserver"},
    "task": {"typ", "type", "task type", "tasktyp"},
    "transaction": {
        "transaction or jobname",
        "transaktion oder jobname",
        "transaction",
        "transaktion",
        "tcode",
        "report",
        "program",
        "programm",
    },
    "user": {"user", "benutzer"},
    "date": {"date", "datum", "start date", "startdatum"},
}
HEAD_LINES = 120  # the heading is looked for in these
CHUNK = 50_000  # steps read, converted and packed at a time: memory bounded by it
MAX_TEXTS = 200_000  # number texts remembered per column (each read once)
BUCKET_S = 60.0  # the run's series: steps and times per minute
QUANTILES = {"p50": 0.50, "p90": 0.90, "p95": 0.95, "p99": 0.99}
STAMP = re.compile(
    r"^(?:(?P<d>\d{1,2})\.(?P<m>\d{1,2})\.(?P<y>\d{4})|(?P<iso>\d{4}-\d{2}-\d{2}))?[ T/]*"
    r"(?P<H>\d{1,2}):(?P<M>\d{2}):(?P<S>\d{2})$"
)


@dataclass
class Steps:
    table: ST03Table  # one row per minute, task type and transaction: what the report reads
    percentiles: dict  # exact, per task type and per transaction (nearest rank)
    steps: int
    servers: list[str]
    users: int


def _roles(cells: list[str]) -> dict[str, int]:
    roles: dict[str, int] = {}
    for i, c in enumerate(cells):
        for role, names in KEYS.items():
            if key_name(c) in names and role not in roles:
                roles[role] = i
    return roles


def _header(lines: list[tuple[int, str]]) -> tuple[int, str, list[str], int]:
    """(index, delimiter, headings, lines it spans) of the heading: the first line with a
    'Started' and a transaction column; a second line that continues it (the text
    download's `Response` / `time (ms)`) merged cell by cell."""
    for k, (number, text) in enumerate(lines[:HEAD_LINES]):
        delimiter = st03._delimiter(text)
        if delimiter is None:
            continue
        cells = [c.strip() for c in st03._cells(text, delimiter, number)]
        merged = None
        if k + 1 < len(lines):
            nxt = [c.strip() for c in st03._cells(lines[k + 1][1], delimiter, number + 1)]
            if not any(STAMP.match(numbers.plain(c)) for c in nxt) and any(
                "(" in c or "time" in c.lower() or "zeit" in c.lower() for c in nxt
            ):
                # A shorter second line continues the last headings (the text download
                # leaves the first ones, Started and Server, without a second part).
                width = max(len(cells), len(nxt))
                top = [""] * (width - len(cells)) + cells
                low = [""] * (width - len(nxt)) + nxt
                merged = [f"{a} {b}".strip() for a, b in zip(top, low, strict=True)]
        for heading, span in ((merged, 2), (cells, 1)):
            if heading is None:
                continue
            roles = _roles(heading)
            if "started" in roles and "transaction" in roles:
                return k, delimiter, heading, span
    raise ST03Error(
        "no STAD heading ('Started' and 'Transaction or jobname', German 'Startzeit', "
        f"'Transaktion oder Jobname') in the first 120 lines; {st03.LANGUAGES}"
    )


def parse(source: BinaryIO | bytes, options: st03.Options | None = None) -> Steps:
    options = options or st03.Options()
    stream = io.BytesIO(source) if isinstance(source, bytes | bytearray) else source
    try:
        tabular, stream = formats.read(stream)
        if tabular is not None:
            lines: Iterator[tuple[int, str]] = iter(tabular.lines)
            kind = tabular.kind
        else:
            text = Lines(stream, delimiter=None)
            lines = ((text.number, t) for t in text)  # streamed: a million steps are 200 MB
            kind = ""
        out = _parse(lines, options)
        if kind:
            out.table.file_format = kind
        return out
    except ST03Error:
        raise
    except (FileError, st03columns.ColumnError, numbers.NumberError) as exc:
        raise ST03Error(str(exc)) from None
    except st03period.PeriodError as exc:
        raise ST03Error(str(exc)) from None


class _Codes:
    """Strings of a column as small integers (a million steps name a few hundred
    transactions): the names once, a compact array of codes per step."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.raw: list[str] = []  # first spelling of each, as the file writes it
        self.codes = array("i")
        self._cells: dict[str, int] = {}  # a cell as written -> its code

    def extend(self, cells: tuple[str, ...]) -> None:
        known = self._cells
        for cell in dict.fromkeys(cells):
            if cell not in known:
                text = numbers.plain(cell).strip()
                code = self.ids.get(text)
                if code is None:
                    code = self.ids[text] = len(self.ids)
                    self.raw.append(text)
                known[cell] = code
        self.codes.extend(map(known.__getitem__, cells))

    def names(self) -> list[str]:
        return list(self.ids)


def _parse(lines: Iterator[tuple[int, str]], options: st03.Options) -> Steps:
    head = list(itertools.islice(lines, HEAD_LINES + 1))
    hk, delimiter, header, span = _header(head)
    header_line = head[hk][0]
    roles = _roles(header)
    preamble = [(n, t.replace(formats.CELL, " ").replace(" / ", " ")) for n, t in head[:hk]]
    period, notes = st03period.from_preamble(preamble)
    period = st03period.reconcile(period, options.period)
    columns, not_read = [], []
    for i, h in enumerate(header):
        if i in roles.values() or not h:
            continue
        col = st03columns.classify(i, h)
        if col is None or col.kind == "count":
            not_read.append(h)
        elif col.kind != "avg":
            raise ST03Error(f"line {header_line}, column {h!r}: a step's record has no totals")
        else:
            columns.append(col)
    if not any(c.field in ("response", "wp_time") for c in columns):
        raise ST03Error(f"line {header_line}: no 'Response time (ms)' or 'Time in WPs (ms)'")
    seen: dict[str, str] = {}
    for c in columns:
        if c.field in seen:
            raise ST03Error(
                f"line {header_line}: columns {seen[c.field]!r} and {c.heading!r} both hold "
                f"{c.label}"
            )
        seen[c.field] = c.heading
    day0 = period.start.date() if period and period.start else None
    clock = _Clock(roles, header, day0)
    text_roles = [r for r in ("task", "transaction", "server", "user") if r in roles]
    codes = {r: _Codes() for r in text_roles}
    values: dict[str, list[np.ndarray]] = {c.field: [] for c in columns}
    line_of = array("q")
    read: dict[tuple[str, str], dict[str, float]] = {}
    fmt = options.decimal  # decided by the first cells that tell (numbers.detect)
    rest = itertools.chain(head[hk + span :], lines)
    while chunk := list(itertools.islice(rest, CHUNK)):
        if delimiter in "\t;," and not any('"' in t for _, t in chunk):
            # No quoting in this part: a split is what csv would give. Rules and blank lines
            # become rows without a time, left out below as titles are.
            rows = [(n, t.rstrip("\r\n").split(delimiter)) for n, t in chunk]
        else:
            rows = list(st03._rows(chunk, delimiter))
        # By columns (a transpose in C, short rows padded), not cell by cell.
        by_column = list(itertools.zip_longest(*(r for _, r in rows), fillvalue=""))
        if len(by_column) <= roles["started"]:
            continue
        stamps = list(map(clock.read, by_column[roles["started"]]))
        keep = [k for k, s in enumerate(stamps) if s is not None]  # steps, not titles/totals
        if not keep:
            continue
        if len(keep) < len(rows):
            by_column = [[cells[k] for k in keep] for cells in by_column]
            stamps = [stamps[k] for k in keep]
            rows = [rows[k] for k in keep]
        lines_of = [n for n, _ in rows]
        clock.extend(stamps, lines_of, by_column[roles["started"]], by_column)
        line_of.extend(lines_of)
        for role in text_roles:
            codes[role].extend(by_column[roles[role]])
        cells = [numbers.Column(c.heading, list(by_column[c.index]), lines_of) for c in columns]
        if fmt is None:
            # Cells that read alike either way (digits only) decide nothing: the next chunk's
            # may; a cell that reads two ways with nothing to tell is refused as in ST03.
            fmt = numbers.detect(cells, None, default=None)
        use = fmt or "point"
        for c, cell in zip(columns, cells, strict=True):
            seen_texts = read.setdefault((c.field, use), {})
            if len(seen_texts) > MAX_TEXTS:
                seen_texts.clear()  # bounded: a column of ever new values is read per part
            v = numbers.values(cell, use, seen_texts)
            values[c.field].append(np.nan_to_num(v, nan=0.0) * c.scale)
    if not line_of:
        raise ST03Error(f"line {header_line + span}: no step rows after the heading")
    n_steps = len(line_of)
    per_step: dict[str, np.ndarray] = {}
    sizes: dict[str, np.ndarray] = {}
    for c in columns:
        (sizes if c.size else per_step)[c.field] = np.concatenate(values.pop(c.field))
    if "load_gen" not in per_step and "load" in per_step and "generation" in per_step:
        per_step["load_gen"] = per_step["load"] + per_step["generation"]  # labelled below
    if "response" not in per_step and "dispatcher_wait" in per_step:
        per_step["response"] = per_step["wp_time"] + per_step["dispatcher_wait"]
        notes.append("response time derived per step: time in WPs + wait time")
    seconds = np.frombuffer(clock.seconds, dtype=np.int64)
    first, last = clock.at(int(seconds.min())), clock.at(int(seconds.max()))
    start = period.start if period and period.start else first.replace(second=0)
    end = period.end if period and period.end else last.replace(second=0) + timedelta(minutes=1)
    offset = seconds - clock.epoch(start)
    span_s = (end - start).total_seconds()
    outside = (offset < 0) | (offset >= span_s)
    if outside.any():
        k = int(np.argmax(outside))
        raise ST03Error(
            f"line {line_of[k]}: step at {clock.at(int(seconds[k]))} lies outside the period "
            f"{start} to {end}"
        )
    count = int(np.ceil(span_s / BUCKET_S))
    none = np.zeros(n_steps, dtype=np.int32)
    task_codes = np.frombuffer(codes["task"].codes, dtype=np.int32) if "task" in codes else none
    tx_codes = np.frombuffer(codes["transaction"].codes, dtype=np.int32)
    task_keys = (
        [st03.task_key(t or "all") for t in codes["task"].names()] if "task" in codes else ["all"]
    )
    tx_names = codes["transaction"].names()
    sample = (offset // int(BUCKET_S)).astype(np.int64)
    # The report's table: one row per minute, task type and transaction (sums of the steps),
    # not one per step: a million steps of a few hundred transactions are ~10^5 rows.
    n_tx = max(len(tx_names), 1)
    group = (sample * len(task_keys) + task_codes) * n_tx + tx_codes
    keys, inverse = np.unique(group, return_inverse=True)
    g_tx = keys % n_tx
    g_task = keys // n_tx % len(task_keys)
    table = ST03Table(
        task_types=[task_keys[k] for k in g_task],
        transactions=[tx_names[k] for k in g_tx],
        steps=np.bincount(inverse, minlength=keys.size).astype(np.float64),
        seconds={
            f: np.bincount(inverse, weights=v, minlength=keys.size) / 1000.0
            for f, v in per_step.items()
        },
        sizes={f: np.bincount(inverse, weights=v, minlength=keys.size) for f, v in sizes.items()},
        layout="STAD statistical records (one row per step)",
        file_format=st03.FORMAT_NAMES.get(delimiter, "text"),
        number_format=fmt or "point",
        task_names={},
        period=st03period.Period(
            start,
            end,
            span_s,
            period.source if period else "the steps (first to last minute)",
        ),
        sample=keys // (n_tx * len(task_keys)),
        sample_ends_s=BUCKET_S * np.arange(1, count + 1, dtype=np.float64),
        columns=[
            {"heading": c.heading, "field": c.field, "kind": "per step", "label": c.label}
            for c in columns
        ],
        not_read=not_read,
        notes=notes,
        derived={"load_gen": "Load time + Generating time"} if "load" in per_step else {},
    )
    if "task" in codes:
        for key, raw in zip(task_keys, codes["task"].raw, strict=True):
            table.task_names.setdefault(key, raw)
    servers = sorted(set(codes["server"].names()) - {""}) if "server" in codes else []
    users = len(codes["user"].ids) if "user" in codes else 0
    return Steps(
        table,
        _percentiles(per_step.get("response"), task_codes, task_keys, tx_codes, tx_names),
        n_steps,
        servers,
        users,
    )


class _Clock:
    """Each step's start as seconds on one scale (days since 1970 and the time of day): its
    own date, else the date column's, else the period's; a time before the one above it is
    the next day (STAD lists the steps in order). Texts seen once are read once."""

    def __init__(self, roles: dict[str, int], header: list[str], day0: date | None) -> None:
        self.started, self.date = roles["started"], roles.get("date")
        self.header = header
        self.day = day0.toordinal() if day0 else None
        self.last: int | None = None
        self.seconds = array("q")
        self._stamps: dict[str, tuple[int | None, int] | None] = {}
        self._dates: dict[str, int | None] = {}

    def read(self, cell: str) -> tuple[int | None, int] | None:
        got = self._stamps.get(cell, False)
        if got is not False:
            return got
        m = STAMP.match(numbers.plain(cell).strip())
        if m is None:
            got = None
        else:
            day = None
            if m.group("iso"):
                day = date.fromisoformat(m.group("iso")).toordinal()
            elif m.group("y"):
                day = date(int(m.group("y")), int(m.group("m")), int(m.group("d"))).toordinal()
            got = (day, int(m.group("H")) * 3600 + int(m.group("M")) * 60 + int(m.group("S")))
        if len(self._stamps) < 1_000_000:
            self._stamps[cell] = got
        return got

    def _column_date(self, n: int, text: str) -> int:
        text = numbers.plain(text).strip()
        if text not in self._dates:
            dm = re.match(r"^(\d{1,2})\.(\d{1,2})\.(\d{4})$|^(\d{4})-(\d{2})-(\d{2})", text)
            if dm is None:
                self._dates[text] = None
            else:
                g = dm.groups()
                day = (
                    date(int(g[2]), int(g[1]), int(g[0]))
                    if g[0]
                    else date(int(g[3]), int(g[4]), int(g[5]))
                )
                self._dates[text] = day.toordinal()
        got = self._dates[text]
        if got is None:
            raise ST03Error(f"line {n}, column {self.header[self.date]!r}: {text!r} is no date")
        return got

    def extend(self, stamps: list, lines: list[int], started, by_column: list) -> None:
        """The steps of one part of the file, in order (`stamps` as `read` gives them)."""
        dates = by_column[self.date] if self.date is not None else None
        day, last, out = self.day, self.last, self.seconds
        for k, (own, tod) in enumerate(stamps):
            if own is not None:
                day = own
            elif dates is not None:
                day = self._column_date(lines[k], dates[k])
            if day is None:
                raise ST03Error(
                    f"line {lines[k]}: step started at {started[k].strip()!r} but the file "
                    "names no date ('Analysed time: DD.MM.YYYY ...' above the table, or a date "
                    "column): give --from/--to"
                )
            at = day * 86400 + tod
            if last is not None and at < last and own is None:
                at += 86400  # past midnight: STAD lists the steps in order
                day += 1
            out.append(at)
            last = at
        self.day, self.last = day, last

    @staticmethod
    def epoch(when: datetime) -> int:
        return when.date().toordinal() * 86400 + when.hour * 3600 + when.minute * 60 + when.second

    @staticmethod
    def at(seconds: int) -> datetime:
        day, tod = divmod(seconds, 86400)
        return datetime.combine(date.fromordinal(day), datetime.min.time()) + timedelta(seconds=tod)


def _ranked(values: np.ndarray, keys: np.ndarray) -> dict[int, tuple[int, dict[str, float]]]:
    """Per key: (steps, the nearest rank of each quantile in s), from one sort of every
    step by key then value (no histogram, no interpolation)."""
    order = np.lexsort((values, keys))
    k, v = keys[order], values[order]
    starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    ends = np.r_[starts[1:], k.size]
    out = {}
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        n = e - s
        out[int(k[s])] = (
            n,
            {
                name: float(v[s + max(0, int(np.ceil(q * n)) - 1)]) / 1000.0
                for name, q in QUANTILES.items()
            },
        )
    return out


def _first_seen(keys: np.ndarray) -> list[int]:
    uniq, first = np.unique(keys, return_index=True)
    return uniq[np.argsort(first)].tolist()


def _percentiles(
    response_ms: np.ndarray | None,
    task_codes: np.ndarray,
    task_keys: list[str],
    tx_codes: np.ndarray,
    tx_names: list[str],
) -> dict:
    """Exact percentiles of the response per task type and per transaction: the nearest
    rank over every step. Task types whose names differ but mean one type (DIA, Dialog) are
    one key."""
    if response_ms is None:
        return {"by_task_type": [], "by_transaction": []}
    key_ids = {k: i for i, k in enumerate(dict.fromkeys(task_keys))}
    task = np.array([key_ids[k] for k in task_keys], dtype=np.int64)[task_codes]
    names = list(key_ids)
    pair = task * max(len(tx_names), 1) + tx_codes
    by_task_rank, by_pair_rank = _ranked(response_ms, task), _ranked(response_ms, pair)
    pairs_in_order = _first_seen(pair)
    by_task, by_tx = [], []
    for t in _first_seen(task):
        n, ranks = by_task_rank[t]
        by_task.append({"task_type": names[t], "steps": n, **ranks})
        for p in pairs_in_order:
            if p // max(len(tx_names), 1) != t:
                continue
            n, ranks = by_pair_rank[p]
            by_tx.append(
                {
                    "task_type": names[t],
                    "transaction": tx_names[p % max(len(tx_names), 1)],
                    "steps": n,
                    **ranks,
                }
            )
    return {"by_task_type": by_task, "by_transaction": by_tx}
