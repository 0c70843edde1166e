"""The period an ST03/ST03N export covers, from the lines SAP writes above the table
("Period: 25.11.2026 10:00:00 - 11:00:00", "Zeitraum: Tag 25.11.2026", "From ... To ...",
"Week 48/2026", "Monat 11.2026") or from the user (`--from/--to`, `--period`).

Only lines whose label names a period are read: a print date ("Date: ...") is not the
period. Times are the SAP system's local time; the file does not say its zone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

DATE = (
    r"(?:(?P<d1>\d{1,2})\.(?P<m1>\d{1,2})\.(?P<y1>\d{4})"  # DD.MM.YYYY (SAP's default)
    r"|(?P<y2>\d{4})[-./](?P<m2>\d{1,2})[-./](?P<d2>\d{1,2})"  # YYYY-MM-DD, YYYY.MM.DD
    r"|(?P<m3>\d{1,2})[/-](?P<d3>\d{1,2})[/-](?P<y3>\d{4}))"  # MM/DD/YYYY, MM-DD-YYYY
)
TIME = r"(?P<H>\d{1,2}):(?P<M>\d{2})(?::(?P<S>\d{2}))?"
TOKEN = re.compile(
    rf"{DATE}(?:[ T,]+{TIME})?|(?P<H2>\d{{1,2}}):(?P<M2>\d{{2}})(?::(?P<S2>\d{{2}}))?"
)
WEEK = re.compile(r"\b(?:week|woche|kw)\s*(\d{1,2})\s*[/.]\s*(\d{4})", re.I)
MONTH = re.compile(r"\b(?:month|monat)\s*(\d{1,2})\s*[/.]\s*(\d{4})", re.I)
LABEL = re.compile(
    r"^\s*(period|zeitraum|analy[sz]ed|analysierte|analyse|from|to|von|bis|start|end|ende|beginn|"
    r"first record|last record|erster satz|letzter satz|time interval|zeitintervall|"
    r"interval|intervall|day|tag|week|woche|month|monat)\b",
    re.I,
)
STARTS = {"from", "von", "start", "beginn", "first record", "erster satz"}
ENDS = {"to", "bis", "end", "ende", "last record", "letzter satz"}


class PeriodError(ValueError):
    pass


@dataclass(frozen=True)
class Period:
    """[start, end) in the SAP system's local time; start None if only the length is known."""

    start: datetime | None
    end: datetime | None
    seconds: float
    source: str

    def as_meta(self) -> dict:
        return {
            "start": self.start.isoformat() if self.start else None,
            "end": self.end.isoformat() if self.end else None,
            "seconds": self.seconds,
            "source": self.source,
        }


def _token(m: re.Match) -> tuple[date | None, time | None]:
    g = m.groupdict()
    day = None
    for d, mo, y in (("d1", "m1", "y1"), ("d2", "m2", "y2"), ("d3", "m3", "y3")):
        if g[y]:
            day = date(int(g[y]), int(g[mo]), int(g[d]))
    at = None
    hour = g["H"] if g["H"] is not None else g["H2"]
    if hour is not None:
        h = int(hour)
        mi, s = int(g["M"] or g["M2"]), int(g["S"] or g["S2"] or 0)
        if h == 24:  # "24:00": midnight at the end of the day
            return (day + timedelta(days=1) if day else None), time()
        at = time(h, mi, s)
    return day, at


def _end(day: date, at: time | None) -> datetime:
    """The end of a period SAP writes as its last second (10:59:59 -> 11:00:00) or as a
    date alone (the end of that day)."""
    if at is None:
        return datetime.combine(day + timedelta(days=1), time())
    end = datetime.combine(day, at)
    return end + timedelta(seconds=1) if at.second == 59 else end


def from_preamble(lines: list[tuple[int, str]]) -> tuple[Period | None, list[str]]:
    """The period the lines above the table name, and notes on lines not taken as one."""
    notes: list[str] = []
    start = end = None
    where: list[int] = []
    for number, raw in lines:
        text = raw.replace("\t", " ").strip(" |;,\r\n")
        label = LABEL.match(text)
        if not label:
            if TOKEN.search(text) and re.search(r"\d{4}", text):
                notes.append(f"line {number}: {text[:60]!r} not read as the period")
            continue
        word = label.group(1).lower()
        try:
            if w := WEEK.search(text):
                monday = date.fromisocalendar(int(w.group(2)), int(w.group(1)), 1)
                start, end = (
                    datetime.combine(monday, time()),
                    datetime.combine(monday + timedelta(days=7), time()),
                )
                where.append(number)
                continue
            if m := MONTH.search(text):
                first = date(int(m.group(2)), int(m.group(1)), 1)
                nxt = date(first.year + first.month // 12, first.month % 12 + 1, 1)
                start, end = datetime.combine(first, time()), datetime.combine(nxt, time())
                where.append(number)
                continue
            tokens = [_token(m) for m in TOKEN.finditer(text[label.end() :])]
        except ValueError as exc:
            raise PeriodError(f"line {number}: {text[:60]!r}: {exc}") from None
        if not tokens:
            continue
        where.append(number)
        day = next((d for d, _ in tokens if d), None) or (start.date() if start else None)
        if day is None:
            raise PeriodError(f"line {number}: {text[:60]!r} names times but no date")
        if word in ENDS:
            d, t = tokens[0]
            end = _end(d or day, t)
            continue
        d, t = tokens[0]
        start = datetime.combine(d or day, t or time())
        if word in STARTS:
            continue
        if len(tokens) >= 2:
            d2, t2 = tokens[1]
            end = _end(d2 or (d or day), t2)
        else:
            end = _end(d or day, None if t is None else t)
            if t is not None:
                raise PeriodError(f"line {number}: {text[:60]!r} gives a start but no end")
    if start is None and end is None:
        return None, notes
    lines_named = ", ".join(str(n) for n in dict.fromkeys(where))
    if start is None or end is None:
        raise PeriodError(f"line {lines_named}: a period needs a start and an end")
    if end <= start:
        raise PeriodError(f"line {lines_named}: the period ends ({end}) before it starts ({start})")
    return Period(
        start, end, (end - start).total_seconds(), f"the file (line {lines_named})"
    ), notes


DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|d)\s*$", re.I)
ISO_DURATION = re.compile(r"^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$", re.I)


def parse_duration(text: str) -> float:
    """'1h', '90min', '3600s', '1d' or ISO 8601 'PT1H' as seconds."""
    if m := DURATION.match(text):
        factor = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}[m.group(2).lower()]
        seconds = float(m.group(1)) * factor
    elif (m := ISO_DURATION.match(text.strip())) and any(m.groups()):
        d, h, mi, s = (int(x or 0) for x in m.groups())
        seconds = float(d * 86400 + h * 3600 + mi * 60 + s)
    else:
        raise PeriodError(f"period {text!r}: give a length such as 1h, 90min, 3600s or PT1H")
    if seconds <= 0:
        raise PeriodError(f"period {text!r}: must be longer than 0 s")
    return seconds


def _moment(text: str, option: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise PeriodError(
            f"{option} {text!r}: give a date and time such as 2026-11-25T10:00"
        ) from None
    return moment.replace(tzinfo=None)


def from_options(start: str | None, end: str | None, length: str | None) -> Period | None:
    """The period the user gives: --from and --to, --from and --period, or --period alone."""
    if not (start or end or length):
        return None
    if end and not start:
        raise PeriodError("a period's end (to) needs its start (from)")
    if start and end and length:
        raise PeriodError("give from with to or with period, not all three")
    seconds = parse_duration(length) if length else None
    if start:
        a = _moment(start, "from")
        b = _moment(end, "to") if end else a + timedelta(seconds=seconds or 0)
        if b <= a:
            raise PeriodError(f"to {b.isoformat()} is not after from {a.isoformat()}")
        return Period(a, b, (b - a).total_seconds(), "the import's from/to")
    return Period(None, None, float(seconds or 0.0), "the import's period")


def reconcile(file: Period | None, given: Period | None) -> Period | None:
    """One period: the file's or the user's; both must agree, else neither is guessed."""
    if file is None or given is None:
        return file or given
    same_length = abs(file.seconds - given.seconds) < 1.0
    same_start = given.start is None or given.start == file.start
    if not (same_length and same_start):
        raise PeriodError(
            f"the period given ({given.start or ''} {given.seconds:g} s) differs from "
            f"{file.source} ({file.start} to {file.end}, {file.seconds:g} s)"
        )
    return file
