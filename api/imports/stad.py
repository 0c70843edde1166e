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
import re
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
    for k, (number, text) in enumerate(lines[:120]):
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
            lines, kind = tabular.lines, tabular.kind
        else:
            text = Lines(stream, delimiter=None)
            lines = [(text.number, t) for t in text]
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


def _parse(lines: list[tuple[int, str]], options: st03.Options) -> Steps:
    hk, delimiter, header, span = _header(lines)
    header_line = lines[hk][0]
    roles = _roles(header)
    preamble = [(n, t.replace(formats.CELL, " ").replace(" / ", " ")) for n, t in lines[:hk]]
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
    rows = [
        (n, r)
        for n, r in st03._rows(lines[hk + span :], delimiter)
        if r[roles["started"]].strip() and STAMP.match(numbers.plain(r[roles["started"]]).strip())
    ]
    if not rows:
        raise ST03Error(f"line {header_line + span}: no step rows after the heading")
    day0 = period.start.date() if period and period.start else None
    stamps = _stamps(rows, roles, header, day0)
    lines_of = [n for n, _ in rows]
    cells = {
        c.index: numbers.Column(c.heading, [r[c.index] for _, r in rows], lines_of) for c in columns
    }
    fmt = numbers.detect(list(cells.values()), options.decimal)
    per_step: dict[str, np.ndarray] = {}
    sizes: dict[str, np.ndarray] = {}
    seen: dict[str, str] = {}
    for c in columns:
        if c.field in seen:
            raise ST03Error(
                f"line {header_line}: columns {seen[c.field]!r} and {c.heading!r} both hold "
                f"{c.label}"
            )
        seen[c.field] = c.heading
        v, _ = numbers.convert(cells[c.index], fmt)
        v = np.nan_to_num(v, nan=0.0) * c.scale
        (sizes if c.size else per_step)[c.field] = v
    if "load_gen" not in per_step and "load" in per_step and "generation" in per_step:
        per_step["load_gen"] = per_step["load"] + per_step["generation"]  # labelled below
    if "response" not in per_step and "dispatcher_wait" in per_step:
        per_step["response"] = per_step["wp_time"] + per_step["dispatcher_wait"]
        notes.append("response time derived per step: time in WPs + wait time")
    tasks = (
        [st03.task_key(numbers.plain(r[roles["task"]]).strip() or "all") for _, r in rows]
        if "task" in roles
        else ["all"] * len(rows)
    )
    txs = [numbers.plain(r[roles["transaction"]]).strip() for _, r in rows]
    servers = (
        sorted({numbers.plain(r[roles["server"]]).strip() for _, r in rows} - {""})
        if "server" in roles
        else []
    )
    users = (
        len({numbers.plain(r[roles["user"]]).strip() for _, r in rows}) if "user" in roles else 0
    )
    start = period.start if period and period.start else min(stamps).replace(second=0)
    end = (
        period.end
        if period and period.end
        else max(stamps).replace(second=0) + timedelta(minutes=1)
    )
    offset = np.array([(s - start).total_seconds() for s in stamps])
    if offset.min() < 0 or offset.max() >= (end - start).total_seconds():
        k = int(np.argmax((offset < 0) | (offset >= (end - start).total_seconds())))
        raise ST03Error(
            f"line {lines_of[k]}: step at {stamps[k]} lies outside the period {start} to {end}"
        )
    count = int(np.ceil((end - start).total_seconds() / BUCKET_S))
    table = ST03Table(
        task_types=tasks,
        transactions=txs,
        steps=np.ones(len(rows)),
        seconds={f: v / 1000.0 for f, v in per_step.items()},
        sizes={f: v for f, v in sizes.items()},
        layout="STAD statistical records (one row per step)",
        file_format=st03.FORMAT_NAMES.get(delimiter, "text"),
        number_format=fmt,
        task_names={},
        period=st03period.Period(
            start,
            end,
            (end - start).total_seconds(),
            period.source if period else "the steps (first to last minute)",
        ),
        sample=(offset // BUCKET_S).astype(np.int64),
        sample_ends_s=BUCKET_S * np.arange(1, count + 1, dtype=np.float64),
        columns=[
            {"heading": c.heading, "field": c.field, "kind": "per step", "label": c.label}
            for c in columns
        ],
        not_read=not_read,
        notes=notes,
        derived={"load_gen": "Load time + Generating time"} if "load" in per_step else {},
    )
    for (_, r), key in zip(rows, tasks, strict=True):
        if "task" in roles:
            table.task_names.setdefault(key, numbers.plain(r[roles["task"]]).strip())
    return Steps(
        table, _percentiles(per_step.get("response"), tasks, txs), len(rows), servers, users
    )


def _stamps(rows, roles: dict[str, int], header: list[str], day0: date | None) -> list[datetime]:
    """Each step's start: its own date, else the date column's, else the period's; a time
    before the one above it is the next day."""
    out: list[datetime] = []
    day = day0
    last: datetime | None = None
    for n, r in rows:
        m = STAMP.match(numbers.plain(r[roles["started"]]).strip())
        if m.group("iso"):
            day = date.fromisoformat(m.group("iso"))
        elif m.group("y"):
            day = date(int(m.group("y")), int(m.group("m")), int(m.group("d")))
        elif "date" in roles:
            text = numbers.plain(r[roles["date"]]).strip()
            dm = re.match(r"^(\d{1,2})\.(\d{1,2})\.(\d{4})$|^(\d{4})-(\d{2})-(\d{2})", text)
            if dm is None:
                raise ST03Error(f"line {n}, column {header[roles['date']]!r}: {text!r} is no date")
            g = dm.groups()
            day = (
                date(int(g[2]), int(g[1]), int(g[0]))
                if g[0]
                else date(int(g[3]), int(g[4]), int(g[5]))
            )
        if day is None:
            raise ST03Error(
                f"line {n}: step started at {m.group(0)!r} but the file names no date "
                "('Analysed time: DD.MM.YYYY ...' above the table, or a date column): give "
                "--from/--to"
            )
        at = datetime.combine(day, datetime.min.time()) + timedelta(
            hours=int(m.group("H")), minutes=int(m.group("M")), seconds=int(m.group("S"))
        )
        if last is not None and at < last and not (m.group("iso") or m.group("y")):
            at += timedelta(days=1)  # past midnight: STAD lists the steps in order
            day = at.date()
        out.append(at)
        last = at
    return out


def _nearest_rank(values: np.ndarray) -> dict[str, float]:
    ordered = np.sort(values)
    return {
        name: float(ordered[max(0, int(np.ceil(q * ordered.size)) - 1)]) / 1000.0
        for name, q in QUANTILES.items()
    }


def _percentiles(response_ms: np.ndarray | None, tasks: list[str], txs: list[str]) -> dict:
    """Exact percentiles of the response per task type and per transaction: the nearest
    rank over every step (no histogram, no interpolation)."""
    if response_ms is None:
        return {"by_task_type": [], "by_transaction": []}
    task_arr, tx_arr = np.array(tasks), np.array(txs)
    by_task, by_tx = [], []
    for task in dict.fromkeys(tasks):
        mine = task_arr == task
        by_task.append(
            {"task_type": task, "steps": int(mine.sum()), **_nearest_rank(response_ms[mine])}
        )
        for tx in dict.fromkeys(tx_arr[mine].tolist()):
            sel = mine & (tx_arr == tx)
            by_tx.append(
                {
                    "task_type": task,
                    "transaction": tx,
                    "steps": int(sel.sum()),
                    **_nearest_rank(response_ms[sel]),
                }
            )
    return {"by_task_type": by_task, "by_transaction": by_tx}
