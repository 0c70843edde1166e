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

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column!r}: {self.text[:40]!r}"


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


def detect(cells: list[Cell], forced: str | None = None) -> str:
    """'point' or 'comma' for the file's cells (empty ones skipped); NumberError naming the
    cells that contradict each other, or the first one that could be either."""
    if forced:
        return forced
    first: dict[str, Cell] = {}
    ambiguous: Cell | None = None
    seen: set[str] = set()
    for cell in cells:
        text = _stripped(cell.text)
        if not text or text in seen:
            continue
        seen.add(text)
        as_point, as_comma = _read(text, "point"), _read(text, "comma")
        if as_point and as_comma:
            if as_point[0] != as_comma[0] and ambiguous is None:
                ambiguous = cell
        elif as_point:
            first.setdefault("point", cell)
        elif as_comma:
            first.setdefault("comma", cell)
        if len(first) == 2:
            raise NumberError(
                f"{first['comma']} has a decimal comma but {first['point']} a decimal point: "
                "one file has one number format"
            )
    if first:
        return next(iter(first))
    if ambiguous is not None:
        raise NumberError(
            f"{ambiguous} reads as {_read(_stripped(ambiguous.text), 'point')[0]:g} with a "
            f"decimal point and as {_read(_stripped(ambiguous.text), 'comma')[0]:g} with a "
            "decimal comma, and no other cell of the file tells which; give the number "
            "format (decimal=point or decimal=comma)"
        )
    return "point"  # integers only: both formats read them alike


def convert(cells: list[Cell], fmt: str) -> tuple[np.ndarray, np.ndarray]:
    """(values, half a unit of the last digit shown) per cell; an empty cell is NaN.
    NumberError naming the first cell that is not a number in the file's format."""
    values = np.empty(len(cells))
    half = np.empty(len(cells))
    cache: dict[str, tuple[float, int] | None] = {}
    for k, cell in enumerate(cells):
        text = _stripped(cell.text)
        if not text:
            values[k], half[k] = np.nan, 0.0
            continue
        if text not in cache:
            cache[text] = _read(text, fmt)
        got = cache[text]
        if got is None:
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
        values[k], half[k] = got[0], 0.5 * 10.0 ** -got[1]
    return values, half
