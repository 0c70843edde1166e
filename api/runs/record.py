"""A run's data, the one record every producer writes and every consumer reads: its series
(one column per name, values per sample), the cumulative counters around its steady state,
and its metadata (source, period, zone, interval, checksum, derivations, warnings, fault
windows). Model runs, real-time runs, Prometheus windows, PerfMon and ST03 imports produce
it; the report, the HTML page, checks, comparisons and the CSV export read it.

A series is keyed by its `Column`: its kind (`ColumnKind`) and its parts (task type, host,
bucket bound, ...). Only the store writes a column as text, and reads it back here
(`Column.parse`): the kind and its parts joined by dots, each part escaped (backslash and
dot), so any host, instance, transaction or counter name round-trips:
`os.sap01\\.corp\\.local.cpu_pct` is host `sap01.corp.local`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import numpy as np

from exporters.vocabulary import DIALOG_RESPONSE, INDICATORS

if TYPE_CHECKING:  # an importer or a report never loads the model to name a type
    from landscape_model.engine import Totals

# The layout of a run's stored blobs and metadata. 0: before versions were written; 1: the
# same arrays, column parts unescaped (a dotted host or bucket bound was ambiguous); 2: the
# parts escaped and the metadata typed. storage.py upgrades older runs on reading.
SCHEMA_VERSION = 2

SEP, ESC = ".", "\\"


class ColumnKind(StrEnum):
    """What a series measures, and so the parts that name it (KINDS)."""

    ST03 = "st03"  # per task type: steps and seconds per component
    TX = "tx"  # the same per transaction
    HIST = "hist"  # steps per response-time bucket (not cumulative)
    TXHIST = "txhist"
    INST = "inst"  # per SAP instance, dialog steps and indicator sums
    OS = "os"  # OS counters per host
    LOAD = "load"  # the load driven: users logged on at the sample's end


# Each kind of column and the names of its parts, in order.
KINDS: dict[ColumnKind, tuple[str, ...]] = {
    ColumnKind.ST03: ("task", "field"),
    ColumnKind.TX: ("task", "transaction", "field"),
    ColumnKind.HIST: ("task", "le"),
    ColumnKind.TXHIST: ("task", "transaction", "le"),
    ColumnKind.INST: ("instance", "field"),
    ColumnKind.OS: ("host", "key"),
    ColumnKind.LOAD: ("field",),
}


# Per instance, the dialog-step sums of what the alert rules watch: the whitepaper
# indicators and the response time (inst.INSTANCE.FIELD).
INSTANCE_SERIES: tuple[str, ...] = (
    *(i.component for i in INDICATORS),
    DIALOG_RESPONSE.component,
)


class ColumnError(ValueError):
    """A column name this version cannot read; the message names it."""


def escape(part: str) -> str:
    return part.replace(ESC, ESC + ESC).replace(SEP, ESC + SEP)


def split(name: str) -> list[str]:
    """The parts of a name, unescaped: the inverse of joining escaped parts with dots."""
    if ESC not in name:  # most names: nothing escaped (a run of 10^5 columns loads each)
        return name.split(SEP)
    parts, cur, k = [], [], 0
    while k < len(name):
        ch = name[k]
        if ch == ESC:
            if k + 1 == len(name):
                raise ColumnError(f"column {name!r}: ends in a lone backslash")
            cur.append(name[k + 1])
            k += 2
            continue
        if ch == SEP:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        k += 1
    parts.append("".join(cur))
    return parts


@dataclass(frozen=True)
class Column:
    """One series' key: its kind and its parts (task type, host, bucket bound, ...). A kind
    given as text (a stored name's) is checked and held as its ColumnKind."""

    kind: ColumnKind
    parts: tuple[str, ...]

    def __post_init__(self) -> None:
        try:
            kind = ColumnKind(self.kind)
        except ValueError:
            raise ColumnError(f"column kind {self.kind!r}: one of {', '.join(KINDS)}") from None
        object.__setattr__(self, "kind", kind)
        names = KINDS[kind]
        if len(self.parts) != len(names):
            raise ColumnError(
                f"a {self.kind} column has {len(names)} parts ({', '.join(names)}), "
                f"not {len(self.parts)}: {self.parts!r}"
            )

    def __str__(self) -> str:
        return SEP.join([self.kind, *map(escape, self.parts)])

    @classmethod
    def parse(cls, name: str) -> Column:
        kind, *parts = split(name)
        return cls(kind, tuple(parts))

    def part(self, what: str) -> str:
        """The part called `what` (host, task, le, ...)."""
        return self.parts[KINDS[self.kind].index(what)]

    @property
    def last(self) -> str:
        """The field, key or bucket bound: what the series measures of its owner."""
        return self.parts[-1]

    @property
    def owner(self) -> tuple[str, ...]:
        """Whose series it is: the parts before the last (task; task and transaction; host)."""
        return self.parts[:-1]


def col(kind: ColumnKind | str, *parts: str) -> Column:
    """A series' key: col("os", "sap01.corp.local", "cpu_pct")."""
    return Column(ColumnKind(kind), tuple(str(p) for p in parts))


def parse(name: str) -> Column:
    """A stored column name's key (storage reads its names with this)."""
    return Column.parse(name)


def of_kind(columns: list[Column], kind: ColumnKind | str) -> list[Column]:
    """The columns of one kind, in the run's order."""
    return [c for c in columns if c.kind == kind]


@dataclass(frozen=True)
class FaultWindow:
    """A fault the run injected (or an event named one), seconds from the run's start;
    end None: until the run's end."""

    name: str
    start_s: float
    end_s: float | None = None


def fault_windows(plan) -> list[FaultWindow]:
    """A run plan's faults (RunSpec.faults: name, start_s, end_s) as the record keeps them."""
    return [FaultWindow(f.name, float(f.start_s), f.end_s) for f in plan]


@dataclass
class RunMeta:
    """What a reader needs to trust the series: where they come from and how they were read.
    `details` holds what only one source has (the model's statements, an import's layout)."""

    source: str  # simulated | prometheus | perfmon | st03
    sid: str = ""
    period: dict[str, Any] | None = None  # an import's period: start, end, seconds, source
    time_zone: str | None = None
    interval_s: float | None = None  # the series' sample interval
    checksum: str | None = None  # SHA-256 of an imported file
    derivations: dict[str, str] = field(default_factory=dict)  # column -> how it was derived
    warnings: list[str] = field(default_factory=list)
    fault_windows: list[FaultWindow] = field(default_factory=list)
    gaps: list[dict[str, Any]] | None = None  # None: the source has no clock to find gaps by
    transactions: list[str] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"schema_version": SCHEMA_VERSION, **asdict(self)}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> RunMeta:
        """Today's layout, or the flat dict of schema 0 and 1 (every key side by side)."""
        doc = dict(doc)
        if int(doc.pop("schema_version", 0)) >= 2:
            faults = [FaultWindow(**f) for f in doc.pop("fault_windows", [])]
            return cls(**doc, fault_windows=faults)
        typed = {
            "sid": doc.pop("sid", ""),
            "period": doc.pop("period", None),
            "time_zone": doc.pop("time_zone", None),
            "derivations": doc.pop("standard_sources", None) or {},
            "warnings": doc.pop("warnings", None) or [],
            "gaps": doc.pop("gaps", None),
            "transactions": doc.pop("transactions", None) or [],
            "hosts": doc.pop("hosts", None) or [],
        }
        # Schema 1 wrote no source for simulated runs.
        return cls(source=doc.pop("source", "simulated"), **typed, details=doc)


@dataclass
class RunRecord:
    """A run's series, and the cumulative counters at the start and end of its steady state.

    Only a simulated run has the counters (ST05 statements, buffer pools): PerfMon and ST03
    imports and windows read from Prometheus carry series alone, so both are None there.
    """

    times: np.ndarray  # seconds since the run's start, end of each interval
    columns: list[Column]  # the series' keys; storage alone writes them as text
    values: np.ndarray  # [time, column]
    steady_start: Totals | None
    steady_end: Totals | None
    meta: RunMeta

    def __post_init__(self) -> None:
        # A stored name given where a key is meant would never be found: refused here.
        if not all(isinstance(c, Column) for c in self.columns):
            raise TypeError("RunRecord.columns holds Column keys (record.col), not names")
        self._index = {c: i for i, c in enumerate(self.columns)}

    @property
    def index(self) -> dict[Column, int]:
        return self._index

    def has(self, key: Column) -> bool:
        return key in self._index

    def series(self, key: Column) -> np.ndarray:
        return self.values[:, self._index[key]]

    def of_kind(self, kind: ColumnKind | str) -> list[Column]:
        return of_kind(self.columns, kind)

    def owners(self, kind: ColumnKind | str) -> list[tuple[str, ...]]:
        """Distinct owners of a kind's columns (hosts of `os`, task types of `st03`), in the
        run's order."""
        return list(dict.fromkeys(c.owner for c in self.of_kind(kind)))
