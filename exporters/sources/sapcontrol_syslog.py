"""The ABAP system log (SM21) through ABAPReadSyslog: which entries are new since the last
reading, counted by severity and message id, and their text sent to the log store.

ABAPReadSyslog answers the entries the instance's syslog holds now, not "since": an entry
is new when the last answer did not have it (as a multiset: two identical lines in one
second are two entries). The first answer of an instance is its history, not news: it is
the baseline, neither counted nor sent, so a restart of the exporter neither counts an
instance's whole log again nor sends it to the log store twice (VictoriaLogs keeps every
copy of a line). Message ids are free to grow (SE92 defines thousands): those allow-listed
(WLMON_SAPCONTROL_SYSLOG_MESSAGE_IDS) are labels, every other one counts as `other`; the
text never becomes a label, it goes to the log store as the line.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterable
from typing import Protocol

from exporters.sapcontrol.schema import Record

# SyslogEntry `Severity` (a STATE-COLOR) -> the `severity` label.
SEVERITY = {
    "SAPControl-RED": "red",
    "SAPControl-YELLOW": "yellow",
    "SAPControl-GREEN": "green",
    "SAPControl-GRAY": "gray",
}
SEVERITIES = ("red", "yellow", "green", "gray")
FIELDS = ("Time", "Typ", "Client", "User", "Tcode", "MNo", "Text", "Severity")


class LineSink(Protocol):
    """Where lines go (exporters.sinks.loki.LokiSink: buffered, never blocks a scrape)."""

    def emit(self, labels: dict[str, str], line: str, ts_ns: int | None = None) -> None: ...


def _key(row: Record) -> tuple:
    return tuple(str(row.get(f) or "") for f in FIELDS)


def message_id(row: Record, allowed: frozenset[str]) -> str:
    mno = str(row.get("MNo") or "").strip().upper()
    return mno if mno in allowed else "other"


def severity(row: Record) -> str:
    return SEVERITY.get(str(row.get("Severity") or ""), "gray")


class SyslogReader:
    """New entries per instance and their counts since the exporter started."""

    def __init__(self, allowed: Iterable[str], sink: LineSink | None = None) -> None:
        self.allowed = frozenset(m.strip().upper() for m in allowed)
        self.sink = sink
        self._last: dict[str, Counter] = {}
        self._counts: dict[str, Counter] = {}

    def grid(self) -> list[tuple[str, str]]:
        """Every (severity, message id) series an instance has from its first reading: a
        counter that appeared only at its first increment would hide that increment from
        increase()."""
        return [(s, m) for s in SEVERITIES for m in (*sorted(self.allowed), "other")]

    def read(self, instance: str, labels: dict[str, str], rows: list[Record]) -> None:
        """Take one answer of `instance`: count what is new and send its text."""
        now = Counter(_key(r) for r in rows)
        before = self._last.get(instance)
        self._last[instance] = now
        counts = self._counts.setdefault(instance, Counter())
        if before is None:
            return  # the baseline
        fresh = now - before
        ts = time.time_ns()
        for row in rows:
            key = _key(row)
            if fresh[key] <= 0:
                continue
            fresh[key] -= 1
            sev, mid = severity(row), message_id(row, self.allowed)
            counts[(sev, mid)] += 1
            if self.sink is not None:
                self.sink.emit({**labels, "severity": sev}, _line(row), ts)

    def counts(self, instance: str) -> dict[tuple[str, str], int] | None:
        """(severity, message id) -> entries since the baseline; None before it."""
        if instance not in self._counts:
            return None
        counts = self._counts[instance]
        return {k: counts.get(k, 0) for k in {*self.grid(), *counts}}


def _line(row: Record) -> str:
    """One JSON line with SM21's columns under their WSDL names (LogsQL's unpack_json
    splits it); the message id as SAP gives it, not bounded: it is not a label here."""
    return json.dumps({f: str(row.get(f) or "") for f in FIELDS}, ensure_ascii=False)
