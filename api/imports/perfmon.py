"""Windows Performance Monitor CSV, as typeperf, relog and logman write it.

Layout: a header row whose first cell is `(PDH-CSV 4.0) (<time zone>)(<offset minutes>)`
and whose other cells are counter paths `\\\\HOST\\Object(Instance)\\Counter`; then one row
per sample, the time stamp first (`MM/DD/YYYY HH:MM:SS.mmm`, local time of the machine);
a blank sample is `" "`. typeperf may add lines after the data ("Exiting, please wait...",
"The command completed successfully."). Files come in UTF-16 (with a BOM) or UTF-8.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import pairwise

import numpy as np

HEADER = re.compile(r"^\(PDH-CSV 4\.0\) \((?P<zone>[^)]*)\)\((?P<offset>-?\d+)\)$")
PATH = re.compile(
    r"^\\\\(?P<host>[^\\]+)\\(?P<object>[^\\(]+)(\((?P<instance>[^)]*)\))?\\(?P<counter>.+)$"
)
TRAILERS = ("Exiting", "The command completed", "Der Befehl wurde", "La commande")
MAX_BYTES = 50 * 1024 * 1024
# PerfMon counter -> the report's OS counter key (seed 003's four)
KNOWN = {
    ("Processor", "_Total", "% Processor Time"): "cpu_pct",
    ("Memory", None, "Available MBytes"): "available_mb",
    ("Memory", None, "Pages/sec"): "pages_per_s",
    ("PhysicalDisk", "_Total", "Avg. Disk Queue Length"): "disk_queue",
}


class PerfmonError(ValueError):
    """The file cannot be read; the message names the line and the problem."""


@dataclass
class PerfmonData:
    start: datetime
    end: datetime
    times: np.ndarray  # seconds since start
    columns: list[str]  # os.<host>.<key>
    values: np.ndarray  # [time, column], NaN for blank samples
    names: dict[str, str]  # column -> PerfMon counter path without the host
    hosts: list[str]


def _decode(raw: bytes) -> str:
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return raw.decode("utf-16")
    if raw[:4].count(b"\x00") >= 1:  # UTF-16 without a BOM
        return raw.decode("utf-16-le")
    return raw.decode("utf-8-sig")


def _key(obj: str, instance: str | None, counter: str) -> str:
    known = KNOWN.get((obj, instance, counter))
    if known:
        return known
    label = f"{obj}({instance})\\{counter}" if instance else f"{obj}\\{counter}"
    return re.sub(r"[^A-Za-z0-9]+", "_", label).strip("_").lower()


def parse(raw: bytes) -> PerfmonData:
    if len(raw) > MAX_BYTES:
        raise PerfmonError(f"file is {len(raw)} bytes; at most {MAX_BYTES} are accepted")
    try:
        text = _decode(raw)
    except UnicodeDecodeError as exc:
        raise PerfmonError(f"line 1: not UTF-8 or UTF-16 text ({exc.reason})") from exc
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        raise PerfmonError("line 1: empty file")
    head = HEADER.match(rows[0][0].strip()) if rows[0] else None
    if head is None:
        raise PerfmonError(
            'line 1: expected a "(PDH-CSV 4.0) (time zone)(offset)" header as the first cell'
        )
    offset = timedelta(minutes=int(head["offset"]))
    columns, names, hosts = [], {}, []
    for k, cell in enumerate(rows[0][1:], start=2):
        m = PATH.match(cell.strip())
        if m is None:
            raise PerfmonError(
                f"line 1, column {k}: {cell!r} is not a counter path "
                "\\\\HOST\\Object(Instance)\\Counter"
            )
        host = m["host"].lower()
        col = f"os.{host}.{_key(m['object'], m['instance'], m['counter'])}"
        if col in names:
            raise PerfmonError(f"line 1, column {k}: counter {cell!r} appears twice")
        columns.append(col)
        names[col] = cell.strip().split("\\", 3)[-1]
        if host not in hosts:
            hosts.append(host)
    stamps, values = [], []
    for n, row in enumerate(rows[1:], start=2):
        if not row or all(not c.strip() for c in row):
            continue
        if row[0].startswith(TRAILERS):
            break
        if len(row) != len(columns) + 1:
            raise PerfmonError(f"line {n}: {len(row)} cells, the header has {len(columns) + 1}")
        try:
            local = datetime.strptime(row[0].strip(), "%m/%d/%Y %H:%M:%S.%f")
        except ValueError as exc:
            raise PerfmonError(
                f"line {n}: time stamp {row[0]!r} is not MM/DD/YYYY HH:MM:SS.mmm"
            ) from exc
        # The offset is the zone's bias in minutes (UTC = local + bias), as PDH writes it.
        stamps.append((local + offset).replace(tzinfo=UTC))
        sample = []
        for k, cell in enumerate(row[1:], start=2):
            cell = cell.strip()
            if cell == "":
                sample.append(np.nan)
                continue
            try:
                sample.append(float(cell))
            except ValueError as exc:
                raise PerfmonError(f"line {n}, column {k}: {cell!r} is not a number") from exc
        values.append(sample)
    if not stamps:
        raise PerfmonError("line 2: no samples after the header")
    for i, (a, b) in enumerate(pairwise(stamps)):
        if b <= a:
            raise PerfmonError(f"line {i + 3}: time stamps must increase")
    start = stamps[0]
    times = np.array([(s - start).total_seconds() for s in stamps])
    return PerfmonData(
        start, stamps[-1], times, columns, np.array(values, dtype=float), names, hosts
    )
