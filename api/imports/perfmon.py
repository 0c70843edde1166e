"""Windows Performance Monitor CSV, in every form typeperf, relog and logman write it.

Layout: a header row whose first cell is `(PDH-CSV 4.0) (<time zone>)(<bias minutes>)` as
`typeperf -o`, `relog -f csv` and logman CSV logs write it, or plain `(PDH-CSV 4.0)` as
typeperf writes to the console (local time, no zone); `PDH-TSV` for tab-separated files.
The other cells are counter paths `\\\\HOST\\Object(Instance)\\Counter`. Then one row per
sample, the time stamp first (`MM/DD/YYYY HH:MM:SS.mmm`, local time of the machine); a blank
sample is `" "` (logman's first sample of a rate counter, relog's gaps). The console form
adds status lines ("Exiting, please wait...", "The command completed successfully.", in
any language): unquoted lines that are neither header nor data, skipped and counted.

Files come in UTF-16 or UTF-8, with or without a byte-order mark, and are read streamed.
The four counters of seed 003 Tables 2-3 are stored per host under the report's standard
names (from `_Total`, or the instances when a file has no `_Total`); every counter is kept.
"""

from __future__ import annotations

import csv
import io
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import BinaryIO

import numpy as np

from api.imports import plausible
from api.imports.pdhnames import english
from api.imports.text import FileError, Lines, cell_at, csv_column
from api.imports.winzones import iana
from api.runs.record import Column, col
from exporters.vocabulary import (
    AVAILABLE_MB,
    CPU_PCT,
    DISK_QUEUE,
    OS_COUNTER_BY_KEY,
    PAGES_PER_S,
)

HEADER = re.compile(
    r"^\(PDH-(?P<kind>CSV|TSV) 4\.0\)\s*(?:\((?P<zone>.*)\)\s*\((?P<bias>[-+]?\d+)\))?\s*$"
)
PATH = re.compile(
    r"^\\\\(?P<host>[^\\]+)\\(?P<object>[^\\(]+)(\((?P<instance>.*)\))?\\(?P<counter>[^\\]+)$"
)
STAMP = re.compile(r"^\s*(\d{1,2})/(\d{1,2})/(\d{4}) (\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?\s*$")
# As a German spreadsheet writes it back: DD.MM.YYYY HH:MM:SS,mmm.
DOTTED = re.compile(
    r"^\s*(\d{1,2})\.(\d{1,2})\.(\d{4}) (\d{1,2}):(\d{2}):(\d{2})(?:[.,](\d{1,6}))?\s*$"
)
MAX_BIAS_MIN = 16 * 60  # time zones run from UTC-12 to UTC+14
MAX_VALUE = 1e18  # larger is a damaged cell, not a reading (and would overflow the means)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class PerfmonError(FileError):
    """The file cannot be read; the message names the line and the column."""


@dataclass(frozen=True)
class Counter:
    host: str  # as the file writes it
    object: str
    instance: str | None
    counter: str
    written: str = ""  # the path as a localized Windows wrote it, when translated

    @property
    def path(self) -> str:
        """Without the host, as the report prints it."""
        inst = f"({self.instance})" if self.instance is not None else ""
        return f"{self.object}{inst}\\{self.counter}"


@dataclass
class PerfmonData:
    start: datetime
    end: datetime
    times: np.ndarray  # seconds since start
    columns: list[Column]  # os.<host>.<key>
    values: np.ndarray  # [time, column], NaN for blank samples
    names: dict[str, str]  # column (stored name) -> counter path without the host
    hosts: list[str]  # host keys of the columns, in file order
    host_names: dict[str, str] = field(default_factory=dict)  # key -> as the file writes it
    sources: dict[str, str] = field(default_factory=dict)  # standard column -> how derived
    zone: str = ""
    status_lines: int = 0
    damaged_lines: list[int] = field(default_factory=list)  # lines of NULs, skipped
    notes: list[str] = field(default_factory=list)  # how times were placed, for the audit
    localized: dict[str, str] = field(default_factory=dict)  # column -> path as written
    encoding: str = ""


def _std(key: str) -> tuple[str, str]:
    """(object, counter) of a standard counter as the vocabulary names it, in the lower
    case paths are matched in."""
    c = OS_COUNTER_BY_KEY[key]
    return c.object.lower(), c.name.lower()


# The report's standard counters (seed 003 Tables 2-3): where each comes from, in order of
# preference: one counter (object, instance, counter, scale), or the instances of one. The
# first is the vocabulary's own counter; the others read the same in another object or unit.
SINGLE = {
    CPU_PCT: [
        (_std(CPU_PCT)[0], "_total", _std(CPU_PCT)[1], 1.0),
        ("processor information", "_total", "% processor time", 1.0),
    ],
    AVAILABLE_MB: [
        (_std(AVAILABLE_MB)[0], None, _std(AVAILABLE_MB)[1], 1.0),
        ("memory", None, "available kbytes", 1 / 1024),
        ("memory", None, "available bytes", 1 / 1048576),
    ],
    PAGES_PER_S: [(_std(PAGES_PER_S)[0], None, _std(PAGES_PER_S)[1], 1.0)],
    DISK_QUEUE: [(_std(DISK_QUEUE)[0], "_total", _std(DISK_QUEUE)[1], 1.0)],
}
# Without _Total: the mean of the processors' busy time, the sum of the disks' queues.
FROM_INSTANCES = {
    CPU_PCT: (*_std(CPU_PCT), "mean"),
    DISK_QUEUE: (*_std(DISK_QUEUE), "sum"),
}
# Readings that cannot be outside these (PDH caps percentages of _Total at 100).
BOUNDS = {
    ("processor", "% processor time"): (0.0, 100.0),
    ("processor information", "% processor time"): (0.0, 100.0),
    ("memory", "available mbytes"): (0.0, MAX_VALUE),
    ("memory", "available kbytes"): (0.0, MAX_VALUE),
    ("memory", "available bytes"): (0.0, MAX_VALUE),
    ("memory", "pages/sec"): (0.0, MAX_VALUE),
    ("physicaldisk", "avg. disk queue length"): (0.0, MAX_VALUE),
}


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "counter"


def _host_key(host: str) -> str:
    # Column names escape their parts (api/runs/record.py): an FQDN or an IP address keeps
    # its dots; the original spelling stays in the run's host_names.
    return re.sub(r"[^a-z0-9_.-]+", "-", host.lower()).strip("-.") or "host"


def _looks_like(first: str) -> str:
    """What a first cell that is no PerfMon header looks like, in words (not a guess at
    the tool): binary bytes, a known other format, or the text itself."""
    shown = first[:60]
    binary = sum(1 for ch in first[:200] if not ch.isprintable() and ch not in "\t\r\n")
    if binary > len(first[:200]) // 10:
        kind = (
            f"binary data ({binary} control characters in the first {len(first[:200])}); "
            "a binary log (.blg) is read once converted: relog file.blg -f csv -o file.csv"
        )
    elif first.lstrip().startswith(("<?xml", "<")):
        kind = f"XML or HTML ({shown!r}), not a CSV or TSV capture"
    else:
        kind = f"text {shown!r}"
    return (
        f'the file starts with {kind}; a PerfMon capture\'s first cell is "(PDH-CSV 4.0)" or '
        '"(PDH-CSV 4.0) (time zone)(bias)" (PDH-TSV for tab-separated)'
    )


def _header_delimiter(stripped: str) -> str:
    """Tab for PDH-TSV; else the character after the first cell: ',' as the Windows tools
    write it, ';' where a German spreadsheet saved it again."""
    if stripped.startswith(('"(PDH-TSV', "(PDH-TSV")):
        return "\t"
    if stripped.startswith('"'):
        end = stripped.find('"', 1)
        after = stripped[end + 1 : end + 2] if end > 0 else ""
        return after if after in (",", ";", "\t") else ","
    cut = min((i for i in (stripped.find(","), stripped.find(";")) if i >= 0), default=-1)
    return stripped[cut] if cut >= 0 else ","


def _header(line: str, number: int) -> tuple[str, str, float, list[Counter]]:
    """(delimiter, zone, bias in minutes, counters) of the header line."""
    stripped = line.strip()
    delimiter = _header_delimiter(stripped)
    try:
        cells = next(csv.reader([stripped], delimiter=delimiter))
    except csv.Error as exc:
        col = csv_column(line, str(exc), delimiter)
        raise PerfmonError(f"line {number}, column {col}: {exc}") from None
    head = HEADER.match(cells[0].strip())
    if head is None:
        raise PerfmonError(f"line {number}, column 1: {_looks_like(cells[0])}")
    zone, bias = head["zone"] or "", 0
    if head["bias"] is not None:
        text = head["bias"]
        bias = int(text) if len(text.lstrip("+-")) <= 5 else MAX_BIAS_MIN + 1
        if abs(bias) > MAX_BIAS_MIN:
            # The number as written; one too long to read is cut, saying so.
            shown = text if len(text) <= 30 else f"{text[:20]}... ({len(text)} characters)"
            raise PerfmonError(
                f"line {number}, column 1: time-zone bias {shown} minutes is outside "
                f"-{MAX_BIAS_MIN}..{MAX_BIAS_MIN}"
            )
    if len(cells) < 2:
        raise PerfmonError(f"line {number}: the header names no counter")
    counters, seen = [], set()
    for k, cell in enumerate(cells[1:], start=2):
        m = PATH.match(cell.strip())
        if m is None:
            raise PerfmonError(
                f"line {number}, column {k}: {cell[:80]!r} is not a counter path "
                "\\\\HOST\\Object(Instance)\\Counter"
            )
        obj, name, translated = english(m["object"].strip(), m["counter"].strip())
        written = f"{m['object'].strip()}" + (
            f"({m['instance']})" if m["instance"] is not None else ""
        )
        c = Counter(
            m["host"],
            obj,
            m["instance"],
            name,
            f"{written}\\{m['counter'].strip()}" if translated else "",
        )
        key = (c.host.lower(), c.path.lower())
        if key in seen:
            raise PerfmonError(f"line {number}, column {k}: counter {cell!r} appears twice")
        seen.add(key)
        counters.append(c)
    return delimiter, zone, bias, counters


def _seconds(cell: str, number: int) -> float:
    """Seconds since 1970 of a local time stamp `MM/DD/YYYY HH:MM:SS.mmm`."""
    m = STAMP.match(cell)
    if m is not None:
        month, day, year, hour, minute, second = (int(g) for g in m.groups()[:6])
    elif (m := DOTTED.match(cell)) is not None:
        day, month, year, hour, minute, second = (int(g) for g in m.groups()[:6])
    else:
        raise PerfmonError(
            f"line {number}, column 1: time stamp {cell[:40]!r} is not MM/DD/YYYY HH:MM:SS.mmm "
            "(or DD.MM.YYYY HH:MM:SS,mmm)"
        )
    if not 1970 <= year <= 9000:
        raise PerfmonError(f"line {number}, column 1: time stamp {cell!r}: year out of range")
    try:
        local = datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    except ValueError as exc:
        raise PerfmonError(f"line {number}, column 1: time stamp {cell!r}: {exc}") from None
    fraction = float(f"0.{m[7]}") if m[7] else 0.0
    return (local - EPOCH).total_seconds() + fraction


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _sample(
    cells: list[str], number: int, low: np.ndarray, high: np.ndarray, comma: bool = False
) -> np.ndarray:
    """One row's readings, NaN where blank; refused when not a finite number in range.
    `comma`: a `;` file, whose numbers have a decimal comma (and no grouping)."""
    if comma:
        for k, c in enumerate(cells):
            if "." in c and "," in c:
                raise PerfmonError(
                    f"line {number}, column {k + 2}: {c[:40]!r} has a decimal comma and a "
                    "point: a ';' file's numbers have one decimal comma and no grouping"
                )
        cells = [c.replace(",", ".") for c in cells]
    try:
        values = np.array(cells, dtype=np.float64)
        blank = None
    except ValueError:  # blank samples, or a cell that is not a number
        blank = np.array([not c.strip() for c in cells])
        try:
            values = np.array(
                ["nan" if b else c for c, b in zip(cells, blank, strict=True)], dtype=np.float64
            )
        except ValueError:
            k = next(k for k, c in enumerate(cells) if c.strip() and not _is_number(c))
            raise PerfmonError(
                f"line {number}, column {k + 2}: {cells[k][:40]!r} is not a number"
            ) from None
    finite = np.isfinite(values)
    if blank is not None:
        finite |= blank
    if not finite.all():
        k = int(np.argmin(finite))
        raise PerfmonError(
            f"line {number}, column {k + 2}: {cells[k][:40]!r} is not a finite number"
        )
    outside = (values < low) | (values > high)
    if outside.any():
        k = int(np.argmax(outside))
        raise PerfmonError(
            f"line {number}, column {k + 2}: {cells[k][:40]!r} is outside "
            f"{low[k]:g}..{high[k]:g} for this counter"
        )
    return values


def _bounds(counters: list[Counter]) -> tuple[np.ndarray, np.ndarray]:
    low = np.full(len(counters), -MAX_VALUE)
    high = np.full(len(counters), MAX_VALUE)
    for k, c in enumerate(counters):
        low[k], high[k] = BOUNDS.get((c.object.lower(), c.counter.lower()), (low[k], high[k]))
    return low, high


def _combine(block: np.ndarray, how: str) -> np.ndarray:
    """Mean or sum per row over the instances present in the row (NaN if none)."""
    present = ~np.isnan(block)
    count = present.sum(axis=1)
    total = np.where(present, block, 0.0).sum(axis=1)
    out = np.full(block.shape[0], np.nan)
    np.divide(total, count if how == "mean" else 1.0, out=out, where=count > 0)
    return out


def _standard(
    counters: list[Counter], values: np.ndarray
) -> tuple[dict[tuple[str, str], np.ndarray], dict[tuple[str, str], str], set[int]]:
    """Per (host, key): the standard series, how it was found, and the columns it replaces."""
    by_host: dict[str, dict[tuple[str, str | None, str], int]] = defaultdict(dict)
    for k, c in enumerate(counters):
        inst = c.instance.lower() if c.instance is not None else None
        by_host[c.host][(c.object.lower(), inst, c.counter.lower())] = k
    series, sources, replaced = {}, {}, set()
    for host, index in by_host.items():
        for key, choices in SINGLE.items():
            found = next(
                ((index[(o, i, n)], scale) for o, i, n, scale in choices if (o, i, n) in index),
                None,
            )
            if found is not None:
                k, scale = found
                series[(host, key)] = values[:, k] * scale
                sources[(host, key)] = counters[k].path + (f" x {scale:g}" if scale != 1 else "")
                if scale == 1:
                    replaced.add(k)  # the same reading: listed once, as the standard row
                continue
            if key in FROM_INSTANCES:
                obj, name, how = FROM_INSTANCES[key]
                cols = [
                    k
                    for (o, i, n), k in index.items()
                    if o == obj and n == name and i is not None and "_total" not in i
                ]
                if cols:
                    series[(host, key)] = _combine(values[:, cols], how)
                    sources[(host, key)] = (
                        f"{how} of {len(cols)} instances of {counters[cols[0]].object}"
                        f"\\{counters[cols[0]].counter}"
                    )
    return series, sources, replaced


def _records(
    lines: Lines,
    rest: Iterator[str],
    status: list[int],
    damaged: list[int],
    delimiter: str,
    width: int,
) -> Iterator[str]:
    """The csv lines of the data part. Status lines (unquoted text: typeperf's messages) are
    counted in `status`; lines of nothing but NUL bytes (a log cut short by a crash, its
    preallocated tail) in `damaged`. A line that has a row's cells but does not start like
    one, or has NUL bytes among its text, is damaged data: refused naming it."""
    for line in rest:
        if "\0" in line:
            if not line.replace("\0", "").strip():
                damaged.append(lines.number)
                continue
            col = cell_at(line, line.index("\0"), delimiter)
            raise PerfmonError(
                f"line {lines.number}, column {col}: NUL bytes inside the line (the file is "
                "damaged there)"
            )
        head = line.lstrip()
        if not head:
            continue
        if head[0] == '"' or head[0].isdigit():
            yield line
        elif '"' in line or not head[0].isprintable() or "\ufffd" in line:
            raise PerfmonError(
                f"line {lines.number}, column 1: a row of {line.count(delimiter) + 1} cells "
                f"starting with {head[0]!r} (U+{ord(head[0]):04X}), not a quoted time stamp: "
                "the line is damaged"
            )
        else:
            status.append(lines.number)


def parse(source: BinaryIO | bytes, now: datetime | None = None) -> PerfmonData:
    """The capture; `now` (default: the clock) bounds its plausible time stamps."""
    stream = io.BytesIO(source) if isinstance(source, bytes | bytearray) else source
    first = stream.read(16)
    try:
        lines = Lines(_Prefixed(first, stream), legacy="cp1252")
        data = _parse(lines, now or datetime.now(UTC))
        data.encoding = lines.codec
        return data
    except PerfmonError:
        raise
    except FileError as exc:
        message = str(exc)
        if message.startswith("line 1,"):
            # Undecodable from the start: say what the bytes are, not a guess at the tool.
            shown = " ".join(f"{b:02x}" for b in first[:8])
            message += (
                f"; the file starts with the bytes {shown}, not the text of a PerfMon "
                "capture (a binary log, .blg, is read once converted: relog file.blg -f csv "
                "-o file.csv)"
            )
        raise PerfmonError(message) from None


class _Prefixed:
    """A stream with its first bytes already read (kept to describe a refused file)."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self._head, self._rest = head, rest

    def read(self, size: int = -1) -> bytes:
        if not self._head:
            return self._rest.read(size)
        if size < 0:
            out, self._head = self._head + self._rest.read(), b""
            return out
        out, self._head = self._head[:size], self._head[size:]
        if len(out) < size:
            out += self._rest.read(size - len(out))
        return out


def _parse(lines: Lines, now: datetime) -> PerfmonData:
    it = iter(lines)
    header = next((line for line in it if line.strip()), None)
    if header is None:
        raise PerfmonError("line 1: empty file")
    delimiter, zone, bias, counters = _header(header, lines.number)
    lines.delimiter = delimiter
    low, high = _bounds(counters)
    width = len(counters) + 1
    status: list[int] = []
    damaged: list[int] = []
    reader = csv.reader(_records(lines, it, status, damaged, delimiter, width), delimiter=delimiter)
    stamps: list[float] = []
    numbers: list[int] = []
    rows: list[np.ndarray] = []
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            col = csv_column(lines.last, str(exc), delimiter)
            raise PerfmonError(f"line {lines.number}, column {col}: {exc}") from None
        n = lines.number
        if len(row) != width:
            raise PerfmonError(f"line {n}: {len(row)} cells, the header has {width}")
        stamps.append(_seconds(row[0], n))
        numbers.append(n)
        rows.append(_sample(row[1:], n, low, high, delimiter == ";"))
    if not stamps:
        raise PerfmonError(f"line {lines.number + 1}: no samples after the header")
    values = np.vstack(rows)
    del rows
    utc, notes = _utc(np.asarray(stamps), numbers, zone, bias)
    times = utc - utc[0]
    start = datetime.fromtimestamp(float(utc[0]), UTC)
    end = datetime.fromtimestamp(float(utc[-1]), UTC)
    data = _columns(counters, values, times, start, end, zone, len(status))
    data.damaged_lines = damaged
    data.notes = [*notes, *_implausible(utc, numbers, now)]
    return data


def _implausible(utc: np.ndarray, numbers: list[int], now: datetime) -> list[str]:
    """A warning naming the first sample stamped before 1990 or after the import."""
    low = (plausible.EARLIEST - EPOCH).total_seconds()
    high = (now + plausible.AHEAD - EPOCH).total_seconds()
    bad = np.nonzero((utc < low) | (utc > high))[0]
    if not bad.size:
        return []
    k = int(bad[0])
    stamp = datetime.fromtimestamp(float(utc[k]), UTC)
    why = plausible.out_of_range(stamp, now) or "out of range"
    return [plausible.clock_warning(f"line {numbers[k]}", stamp, why, bad.size - 1)]


def _utc(
    local: np.ndarray, numbers: list[int], zone: str, bias: float
) -> tuple[np.ndarray, list[str]]:
    """Each sample's UTC seconds from its local stamp (seconds since 1970 as if UTC).

    With a zone this importer knows (winzones) whose offset at the first sample matches
    the header's bias, every stamp is placed by the zone's rules: across a change to
    summer time the clock jumps an hour and the samples stay an interval apart; across the
    change back, the repeated hour is told apart by order (first pass, then second). A
    stamp that does not exist in the zone, or that does not come after the one before it
    even so, is refused naming its line. Otherwise the header's fixed bias applies
    (UTC = local + bias) and a stamp going backwards is refused naming its line."""
    tz = iana(zone) if zone else None
    notes: list[str] = []
    if tz is not None:
        first = datetime.fromtimestamp(float(local[0]), UTC).replace(tzinfo=None)
        offset = first.replace(tzinfo=tz).utcoffset()
        if offset is None or abs(offset.total_seconds() + 60.0 * bias) > 0.5:
            notes.append(
                f"the header's zone {zone!r} ({tz.key}) is at UTC{_hours(offset)} at the first "
                f"sample but its bias says UTC{-bias / 60:+g} h: the fixed bias is used"
            )
            tz = None
    if tz is None:
        utc = local + 60.0 * bias
        back = np.nonzero(np.diff(utc) <= 0)[0]
        if back.size:
            k = int(back[0]) + 1
            raise PerfmonError(
                f"line {numbers[k]}, column 1: time stamp "
                f"{_stamp(local[k])} is not after the one before it ({_stamp(local[k - 1])})"
                + (
                    f"; the header's zone {zone!r} is not one this importer can place a "
                    "daylight-saving change in: split the capture with relog -b/-e"
                    if zone
                    else "; the file names no time zone (console output): split the capture "
                    "with relog -b/-e"
                )
            )
        return utc, notes
    out = np.empty(local.size)
    cache: dict[float, tuple[float, float, bool]] = {}
    previous = -np.inf
    changes = 0
    for k, t in enumerate(local.tolist()):
        got = cache.get(t)
        if got is None:
            wall = datetime.fromtimestamp(t, UTC).replace(tzinfo=None)
            early, late = wall.replace(tzinfo=tz, fold=0), wall.replace(tzinfo=tz, fold=1)
            real = early.astimezone(UTC).astimezone(tz).replace(tzinfo=None) == wall
            got = (early.timestamp(), late.timestamp(), real)
            cache[t] = got
        early_s, late_s, real = got
        if not real:
            raise PerfmonError(
                f"line {numbers[k]}, column 1: time stamp {_stamp(t)} does not exist in "
                f"{zone} ({tz.key}): the clocks went forward over it"
            )
        value = early_s if early_s > previous else late_s
        if value <= previous:
            raise PerfmonError(
                f"line {numbers[k]}, column 1: time stamp {_stamp(t)} is not after the one "
                f"before it ({_stamp(local[k - 1])}), even in {zone} ({tz.key})"
            )
        if k and (t - local[k - 1]) - (value - previous) != 0:
            changes += 1
        out[k] = value
        previous = value
    if changes:
        notes.append(
            f"{changes} daylight-saving change(s) inside the capture, placed by {zone} "
            f"({tz.key}): each sample's UTC time follows the zone's rules"
        )
    return out, notes


def _hours(offset) -> str:
    return f"{offset.total_seconds() / 3600:+g} h" if offset is not None else "?"


def _stamp(t: float) -> str:
    return datetime.fromtimestamp(float(t), UTC).strftime("%m/%d/%Y %H:%M:%S")


def _columns(
    counters: list[Counter],
    values: np.ndarray,
    times: np.ndarray,
    start: datetime,
    end: datetime,
    zone: str,
    status_lines: int,
) -> PerfmonData:
    """The standard counters per host first, then every other counter of the host."""
    series, sources, replaced = _standard(counters, values)
    hosts: dict[str, str] = {}
    for c in counters:
        if c.host not in hosts:
            key, n = _host_key(c.host), 1
            while key in hosts.values():  # "DB.01" and "db-01": two hosts, two keys
                n += 1
                key = f"{_host_key(c.host)}-{n}"
            hosts[c.host] = key
    columns, names, derived, parts = [], {}, {}, []
    localized: dict[str, str] = {}
    used: set[Column] = set()
    for host, hkey in hosts.items():
        for key in SINGLE:
            if (host, key) in series:
                name = col("os", hkey, key)
                columns.append(name)
                used.add(name)
                # The run's metadata names columns as the store writes them (text).
                names[str(name)] = sources[(host, key)]
                derived[str(name)] = sources[(host, key)]
                parts.append(series[(host, key)][:, None])
    other = [k for k, c in enumerate(counters) if k not in replaced]
    for k in other:
        c = counters[k]
        base = _slug(c.path)
        name, n = col("os", hosts[c.host], base), 1
        while name in used:  # two paths with the same letters and digits
            n += 1
            name = col("os", hosts[c.host], f"{base}_{n}")
        used.add(name)
        columns.append(name)
        names[str(name)] = c.path
        if c.written:
            localized[str(name)] = c.written
    matrix = np.hstack([*parts, values[:, other]]) if parts else values[:, other]
    return PerfmonData(
        start=start,
        end=end,
        times=times,
        columns=columns,
        values=matrix,
        names=names,
        hosts=list(hosts.values()),
        host_names={v: k for k, v in hosts.items()},
        sources=derived,
        zone=zone,
        status_lines=status_lines,
        localized=localized,
    )
