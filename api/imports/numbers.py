"""A file's number format, decided once for the whole file from the cells that can only be
read one way, never guessed per cell.

Two formats exist in SAP exports (the user's decimal notation in SU01): decimal point with
`,` grouping thousands (1,743,000.5) and decimal comma with `.` grouping (1.743.000,5);
spaces, no-break spaces and apostrophes group thousands in either. A cell such as `1.234`
or `1,234` reads differently in the two; if no other cell of the file tells which format it
is, the file is refused naming that cell.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

NUMERIC = "\x1f"  # a cell stored as a number (XLSX): its value follows, no locale to read
GROUPING = re.compile(r"[\s\u00a0\u202f']")
POINT = re.compile(r"(\d+|\d{1,3}(?:,\d{3})+)(?:\.(\d+))?")
COMMA = re.compile(r"(\d+|\d{1,3}(?:\.\d{3})+)(?:,(\d+))?")
FORMATS = {"point": (POINT, ",", "."), "comma": (COMMA, ".", ",")}


class NumberError(ValueError):
    pass


@dataclass(frozen=True)
class Cell:
    line: int
    column: str
    text: str
    count: bool = False  # a count (steps, requests): SAP shows it without decimals

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column!r}: {plain(self.text)[:40]!r}"


def plain(text: str) -> str:
    """A cell's text without the mark of a number cell."""
    return text.removeprefix(NUMERIC)


def _stored(text: str) -> tuple[float, int]:
    """(value, decimals stored) of a number cell: the digits its shortest repr has."""
    body = text[len(NUMERIC) :]
    value = float(body)
    mantissa, _, exponent = body.lower().partition("e")
    decimals = len(mantissa.partition(".")[2].rstrip("0")) - (int(exponent) if exponent else 0)
    return value, max(0, decimals)


def _read(text: str, fmt: str) -> tuple[float, int] | None:
    """(value, decimals shown) of a cell in a format, None if it is not one."""
    pattern, group, point = FORMATS[fmt]
    m = pattern.fullmatch(text)
    if m is None:
        return None
    decimals = len(m.group(2) or "")
    return float(text.replace(group, "").replace(point, ".")), decimals


def _stripped(text: str) -> str:
    return GROUPING.sub("", text.strip())


@dataclass
class Column:
    """One column's cells as written, with their lines (for messages only)."""

    heading: str
    texts: list[str]
    lines: list[int]
    count: bool = False  # a count (steps, requests): SAP shows it without decimals

    def cell(self, text: str) -> Cell:
        k = self.texts.index(text)
        return Cell(self.lines[k], self.heading, text, self.count)


def _readings(text: str, count: bool) -> tuple[tuple[float, int] | None, tuple[float, int] | None]:
    as_point, as_comma = _read(text, "point"), _read(text, "comma")
    if count:
        # A count is written without decimals: a reading that has some is not it
        # ("1,000" steps is a thousand, not 1.000).
        as_point = as_point if as_point and not as_point[1] else None
        as_comma = as_comma if as_comma and not as_comma[1] else None
    return as_point, as_comma


def detect(
    columns: list[Column], forced: str | None = None, default: str | None = "point"
) -> str | None:
    """'point' or 'comma' for the file's cells (empty ones skipped); NumberError naming the
    cells that contradict each other, or the first one that could be either. Each distinct
    text is looked at once (a column repeats its values)."""
    if forced:
        return forced
    first: dict[str, Cell] = {}
    ambiguous: Cell | None = None
    for col in columns:
        for raw in dict.fromkeys(col.texts):
            if raw.startswith(NUMERIC):
                continue  # a number cell: no format to read it in
            text = _stripped(raw)
            if not text or text.isdigit():
                continue  # empty, or digits only: both formats read it alike
            as_point, as_comma = _readings(text, col.count)
            if as_point and as_comma:
                if as_point[0] != as_comma[0] and ambiguous is None:
                    ambiguous = col.cell(raw)
            elif as_point and "point" not in first:
                first["point"] = col.cell(raw)
            elif as_comma and not as_point and "comma" not in first:
                first["comma"] = col.cell(raw)
            if len(first) == 2:
                comma, point = first["comma"], first["point"]
                raise NumberError(
                    f"{comma} has a decimal comma but {point} a decimal point: "
                    "one file has one number format"
                    if comma.line <= point.line
                    else f"{point} has a decimal point but {comma} a decimal comma: "
                    "one file has one number format"
                )
    if first:
        return next(iter(first))
    if ambiguous is not None:
        text = _stripped(ambiguous.text)
        raise NumberError(
            f"{ambiguous} reads as {_read(text, 'point')[0]:g} with a decimal point and as "
            f"{_read(text, 'comma')[0]:g} with a decimal comma, and no other cell of the file "
            "tells which; give the number format (decimal=point or decimal=comma)"
        )
    return default  # integers only: both formats read them alike


def _one(col: Column, raw: str, fmt: str) -> tuple[float, float]:
    """One cell's (value, half a unit of its last digit); NumberError naming it."""
    if raw.startswith(NUMERIC):
        value, decimals = _stored(raw)
        if not np.isfinite(value):
            raise NumberError(f"{col.cell(raw)} is not a finite number")
        return value, 0.5 * 10.0**-decimals
    text = _stripped(raw)
    if not text:
        return np.nan, 0.0
    got = _read(text, fmt)
    if got is None:
        cell = col.cell(raw)
        other = "comma" if fmt == "point" else "point"
        bare = text.strip("-")
        if bare != text and (_read(bare, fmt) or _read(bare, other)):
            raise NumberError(f"{cell} is not a number from 0 to 1e+15 (negative)")
        why = (
            f"not a number with a decimal {fmt} like the rest of the file"
            if _read(text, other)
            else "not a number"
        )
        raise NumberError(f"{cell} is {why}")
    return got[0], 0.5 * 10.0 ** -got[1]


def convert(col: Column, fmt: str) -> tuple[np.ndarray, np.ndarray]:
    """(values, half a unit of the last digit shown) per cell; an empty cell is NaN.
    NumberError naming the first cell that is not a number in the file's format."""
    lookup = {raw: _one(col, raw, fmt) for raw in dict.fromkeys(col.texts)}
    pairs = np.array([lookup[t] for t in col.texts], dtype=np.float64).reshape(-1, 2)
    return pairs[:, 0].copy(), pairs[:, 1].copy()


def values(col: Column, fmt: str, seen: dict[str, float]) -> np.ndarray:
    """The cells' values (an empty cell NaN), as `convert` reads them, for a file read in
    parts: `seen` holds the texts already read (each read once, the rest looked up in C).
    NumberError naming the first cell of the part that is not a number."""
    new = set(col.texts).difference(seen)
    try:
        for raw in new:
            seen[raw] = _one(col, raw, fmt)[0]
    except NumberError:
        for raw in col.texts:  # the first bad cell in the file's order, not the set's
            if raw in new:
                _one(col, raw, fmt)
        raise
    return np.fromiter(map(seen.__getitem__, col.texts), dtype=np.float64, count=len(col.texts))
