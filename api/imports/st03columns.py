"""Which field an ST03/ST03N column heading names: the one table docs/imports.md prints.

A heading is read in words, not matched letter for letter, because SAP's headings change
with the release, the language and the user's layout ("Ø Time (ms)", "Ø Response Time
(ms)", "Ø Antwortzeit (ms)", "T Response Time (s)", "Σ Antwortzeit (s)"). A heading is
first split into its kind (average per step, average per database request, total, count),
its unit and its words; the words then name exactly one field. A heading that names none
is listed as not read (never dropped silently); one that could be two is refused.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# field -> (label, words that name it; English and German, after _words()). Order matters
# only in that the first field whose words all occur wins *and no other field matches*;
# two matches are an error the caller reports.
TIME_FIELDS: dict[str, tuple[str, tuple[tuple[str, ...], ...]]] = {
    "response": ("Response time", (("resp",), ("antwort",), ("reponse",))),
    # Time in work processes: the response time less the dispatcher wait (SAP: "Time in
    # WPs", "Zeit in WPs"). Its own field: never read as the response time.
    "wp_time": (
        "Time in WPs",
        (("wp",), ("wps",), ("work", "process"), ("workproz",), ("arbeitsproz",)),
    ),
    "cpu": ("CPU time", (("cpu",),)),
    "db_request": ("DB time", (("db",), ("database",), ("datenbank",), ("base", "donn"))),
    "db_procedure": ("DB procedure time", (("db", "proc"), ("datenbank", "proz"))),
    "dispatcher_wait": ("Wait time", (("wait",), ("warte",), ("attente",))),
    "roll_wait": (
        "Roll wait time",
        (("roll", "wait"), ("rollwarte",), ("roll", "warte"), ("roll", "attente")),
    ),
    # STAD's "Roll (i+w) time": roll-in and roll wait together, neither alone.
    "roll_in_wait": ("Roll-in+wait time", (("roll", "i", "w"),)),
    "roll_in": ("Roll-in time", (("roll", "in"), ("rollin",))),
    "roll_out": ("Roll-out time", (("roll", "out"), ("rollout",))),
    # "Load+Gen. Time" (ST03N) is one field; "Load time" and "Generating time" (STAD, the
    # data elements' "Ø Gen.Time") are two others.
    "load_gen": (
        "Load+generation time",
        (("load", "gen"), ("load", "generat"), ("lade", "gen"), ("lade", "generier")),
    ),
    "load": ("Load time", (("load",), ("lade",), ("chargement",))),
    "generation": ("Generation time", (("gen",), ("generat",), ("generier",))),
    "enqueue": ("Enqueue time", (("enqueue",), ("lock",), ("sperr",))),
    "gui": ("GUI time", (("gui",),)),
    "frontend_net": (
        "Frontend network time",
        (("frontend", "net"), ("gui", "net"), ("frontend", "netz"), ("gui", "netz")),
    ),
    "processing": (
        "Processing time",
        (("processing",), ("proc",), ("verarbeitung",), ("traitement",)),
    ),
    "rfc": ("RFC+CPIC time", (("rfc",),)),
}
# A field that names a more specific one wins over the general one it contains
# ("Roll wait" is not "Wait", "DB proc." is not "DB", "GUI net" is not "GUI").
SPECIFIC = {
    "roll_wait": {"dispatcher_wait", "roll_in", "roll_out"},
    "load_gen": {"load", "generation"},
    "db_procedure": {"db_request", "processing"},
    "frontend_net": {"gui"},
}
# Sizes per step in KB (never times, never counts): memory used, extended memory, bytes
# transferred to and from the front end (STAD "Memory used (kB)", "Transfered kBytes").
SIZE_FIELDS: dict[str, tuple[str, tuple[tuple[str, ...], ...]]] = {
    "memory": ("Memory used", (("memory",), ("speicher",))),
    "extended_memory": (
        "Extended memory",
        (("extended", "memory"), ("ext", "mem"), ("erweitert", "speicher")),
    ),
    "kbytes": (
        "Transferred kBytes",
        (("transfer",), ("kbytes",), ("ubertr",), ("uebertr",)),
    ),
}
SIZE_SPECIFIC = {"extended_memory": {"memory"}}
COUNT_FIELDS: dict[str, tuple[str, tuple[tuple[str, ...], ...]]] = {
    "steps": (
        "Steps",
        (
            ("steps",),
            ("step",),
            ("dialog", "steps"),
            ("schritte",),
            ("dialogschritte",),
            ("schritt",),
            ("etapes",),
            ("etape",),
        ),
    ),
    "db_requests": (
        "DB requests",
        (("db", "req"), ("db", "requests"), ("db", "calls"), ("db", "anf"), ("db", "aufrufe")),
    ),
}
KEY_COLUMNS = {
    "task_type": {
        "task type",
        "task type name",
        "tasktype",
        "task",
        "tasktyp",
        "tasktypname",
        "type de tache",
        "nom du type de tache",
    },
    "transaction": {
        "transaction",
        "transaction code",
        "tcode",
        "report or transaction name",
        "report or transaction",
        "transaction or report",
        "transaction report",
        "report transaction",
        "program or transaction",
        "entry point",
        "transaktion",
        "transaktionscode",
        "report oder transaktionsname",
        "report oder transaktion",
        "transaktion report",
        "programm oder transaktion",
        "einstiegspunkt",
        "programme ou transaction",
        "nom du programme ou de la transaction",
    },
    "hour": {
        "time",
        "hour",
        "time interval",
        "interval",
        "zeit",
        "uhrzeit",
        "stunde",
        "zeitintervall",
        "intervall",
        "heure",
    },
}
# Words that say a heading is an average per step, per database request, or a total.
AVG_WORDS = {
    "avg",
    "average",
    "mean",
    "durchschn",
    "durchschnitt",
    "mittel",
    "mittl",
    "moyen",
    "moyenne",
    "moy",
}
TOTAL_WORDS = {"t", "total", "sum", "summe", "ges", "gesamt", "somme"}
PER_REQUEST = re.compile(r"/\s*(db|database)[\s.-]*(req|request|anf|anforderung)", re.I)
# "(ms)", "(in s)" (the data elements' 40-character headings), "[ms]" (STATS), "(kB)".
UNIT = re.compile(r"[(\[]\s*(?:in\s+)?(ms|s|sec|kb|kbytes|mb|bytes|%|µs|us)\s*[)\]]", re.I)
# A mean over something else than a step ("per Transaction", "/Roundtrip", "/Trip"): no
# field the report sums per step; listed as not read.
OTHER_DENOMINATOR = re.compile(
    r"(?:\bper\b|/)\s*(?:transaction|transact|transaktion|roundtrip|trip|call|aufruf)", re.I
)
MAX_WORDS = {"max", "maximum", "min", "minimum", "peak", "hochstwert", "maximal"}
TIME_WORDS = {"time", "zeit", "ti", "temps"}


class ColumnError(ValueError):
    pass


@dataclass(frozen=True)
class Column:
    """What one heading holds: `field` of `kind` ('avg' ms per step, 'per_request' ms per
    database request, 'total' s, 'count'), the factor to ms (avg) or s (total). A size
    field (SIZE_FIELDS) is 'avg' KB per step or 'total' KB, its factor to KB."""

    index: int
    heading: str
    field: str
    kind: str
    scale: float = 1.0

    @property
    def size(self) -> bool:
        return self.field in SIZE_FIELDS

    @property
    def label(self) -> str:
        if self.kind == "count":
            return COUNT_FIELDS[self.field][0]
        if self.size:
            base = SIZE_FIELDS[self.field][0]
            return {"avg": f"{base}, mean per step (KB)", "total": f"{base}, total (KB)"}[self.kind]
        base = "DB time" if self.field == "db_per_request" else TIME_FIELDS[self.field][0]
        return {
            "avg": f"{base}, mean per step (ms)",
            "per_request": f"{base}, mean per DB request (ms)",
            "total": f"{base}, total (s)",
        }[self.kind]


def _ascii(text: str) -> str:
    text = text.replace("ß", "ss")
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


def key_name(heading: str) -> str:
    """A heading as the words KEY_COLUMNS lists ('Report or Transaction Name' ->
    'report or transaction name')."""
    words = re.sub(r"[^a-z0-9]+", " ", _ascii(heading.lower())).split()
    return " ".join(words)


def _words(heading: str) -> list[str]:
    """The heading's words with the marks SAP writes in front of a figure spelled out:
    Ø/∅ as 'avg', Σ/∑ as 'total', '#' as 'count'; hyphens split ('Roll-in' -> roll, in;
    'DB-Zeit' -> db, zeit)."""
    h = heading.replace("Ø", " avg ").replace("ø", " avg ").replace("∅", " avg ")
    h = h.replace("Σ", " total ").replace("∑", " total ").replace("#", " count ")
    h = UNIT.sub(" ", h)
    h = _ascii(h.lower())
    return re.sub(r"[^a-z0-9]+", " ", h).split()


def _matches(words: list[str], table: dict) -> list[str]:
    found = []
    for field, (_, alternatives) in table.items():
        for alt in alternatives:
            if all(any(w == a or (len(a) >= 4 and w.startswith(a)) for w in words) for a in alt):
                found.append(field)
                break
    return found


def _kind(heading: str, words: list[str], unit: str) -> str:
    """'avg' or 'total' from the heading's words, else from its unit; ColumnError when
    neither says or both do."""
    is_avg = bool(AVG_WORDS & set(words))
    is_total = bool(TOTAL_WORDS & set(words)) or (words[:1] == ["t"])
    if is_avg and is_total:
        raise ColumnError(f"column {heading!r} says both average and total")
    if is_avg or is_total:
        return "avg" if is_avg else "total"
    if unit == "ms":
        return "avg"
    if unit in ("s", "sec"):
        return "total"
    raise ColumnError(
        f"column {heading!r}: neither 'Ø'/'Avg.' (ms per step) nor 'T'/'Total' "
        "(seconds) nor a unit in brackets says what it holds"
    )


def _one(heading: str, found: list[str]) -> str:
    if len(found) > 1:
        raise ColumnError(
            f"column {heading!r} could be any of {', '.join(found)}: rename it to one"
        )
    return found[0]


def _size(index: int, heading: str, words: list[str], unit: str) -> Column | None:
    """A size column (memory, kBytes): mean KB per step unless it says total."""
    sizes = _matches(words, SIZE_FIELDS)
    for specific, general in SIZE_SPECIFIC.items():
        if specific in sizes:
            sizes = [f for f in sizes if f not in general]
    if not sizes:
        return None
    field = _one(heading, sizes)
    is_total = bool(TOTAL_WORDS & set(words)) or (words[:1] == ["t"])
    scale = {"mb": 1024.0, "bytes": 1 / 1024}.get(unit, 1.0)
    return Column(index, heading, field, "total" if is_total else "avg", scale)


def classify(index: int, heading: str) -> Column | None:
    """The column a heading names, None if it names no field; ColumnError if it is
    unclear (which kind, or two fields)."""
    unit_match = UNIT.search(heading)
    unit = unit_match.group(1).lower() if unit_match else ""
    words = _words(heading)
    if MAX_WORDS & set(words) or OTHER_DENOMINATOR.search(heading):
        return None  # a maximum, or a mean per transaction/roundtrip: not a per-step sum
    if unit == "%" or "%" in heading:
        return None  # shares ("% CPU Time"): not a time or a count the report reads
    if unit in ("kb", "kbytes", "mb", "bytes") or "kbytes" in words:
        return _size(index, heading, words, unit)
    per_request = bool(PER_REQUEST.search(heading))
    is_avg = bool(AVG_WORDS & set(words))
    times = _matches(words, TIME_FIELDS)
    for specific, general in SPECIFIC.items():
        if specific in times:
            times = [f for f in times if f not in general]
    counts = _matches(words, COUNT_FIELDS)
    has_time_word = bool(TIME_WORDS & set(words)) or unit in ("ms", "s", "sec", "µs", "us")
    if per_request:
        # "Ø Time/DB Req. (ms)": the database time per request, not per step.
        return Column(index, heading, "db_per_request", "per_request", _to_ms(unit, heading))
    if counts and not (times and has_time_word):
        if is_avg:
            return None  # "Ø DB calls": a mean count per step, no figure the report reads
        return Column(index, heading, _one(heading, counts), "count")
    rest = [w for w in words if w not in AVG_WORDS | TOTAL_WORDS]
    if (
        not times
        and rest in (["time"], ["zeit"], ["ti"])
        and (is_avg or unit or bool(TOTAL_WORDS & set(words)) or words[:1] == ["t"])
    ):
        # "Ø Time (ms)", "T Time (s)", "Ø Zeit": ST03N's response time column, and only
        # that: any other word ("Ø Time in WPs") names another field or none.
        times = ["response"]
    if not times:
        if not has_time_word and _matches(words, SIZE_FIELDS):
            return _size(index, heading, words, unit)
        return None
    field = _one(heading, times)
    kind = _kind(heading, words, unit)
    if kind == "avg":
        return Column(index, heading, field, "avg", _to_ms(unit, heading))
    return Column(index, heading, field, "total", _to_s(unit, heading))


def _to_ms(unit: str, heading: str) -> float:
    return {"": 1.0, "ms": 1.0, "s": 1000.0, "sec": 1000.0, "µs": 1e-3, "us": 1e-3}[unit]


def _to_s(unit: str, heading: str) -> float:
    return {"": 1.0, "s": 1.0, "sec": 1.0, "ms": 1e-3, "µs": 1e-6, "us": 1e-6}[unit]
