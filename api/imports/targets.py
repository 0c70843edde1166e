"""Target response times per transaction (an NFR sheet): `TCODE` -> target, optionally
which statistic (mean, p90, p95, p99; mean unless given), as load-test teams keep them
beside their STAD exports (a public pipeline's sheet: `TCODE`, `Target Response Time
(Seconds)`). Any form ST03 reads (XLSX, HTML, text with tabs, `;`, `,`); the unit from the
heading (`(s)`, `(Seconds)`, `(ms)`); numbers by file."""

from __future__ import annotations

import io
import re
from typing import BinaryIO

from api.imports import formats, numbers, st03
from api.imports.st03 import ST03Error
from api.imports.st03columns import key_name
from api.imports.text import FileError, Lines

TX = {"tcode", "transaction", "transaction code", "transaktion", "transaktionscode", "report"}
STATISTICS = {
    "mean": "mean",
    "avg": "mean",
    "average": "mean",
    "p90": "p90",
    "p95": "p95",
    "p99": "p99",
    "p50": "p50",
    "median": "p50",
}


def parse(source: BinaryIO | bytes) -> list[dict]:
    """[{transaction, statistic, target_s, line}]; ST03Error naming the line and column."""
    stream = io.BytesIO(source) if isinstance(source, bytes | bytearray) else source
    try:
        tabular, stream = formats.read(stream)
        if tabular is not None:
            lines = tabular.lines
        else:
            text = Lines(stream, delimiter=None)
            lines = [(text.number, t) for t in text]
    except FileError as exc:
        raise ST03Error(f"targets: {exc}") from None
    for k, (number, text) in enumerate(lines):
        delimiter = st03._delimiter(text)
        if delimiter is None:
            continue
        cells = [numbers.plain(c).strip() for c in st03._cells(text, delimiter, number)]
        tx = next((i for i, c in enumerate(cells) if key_name(c) in TX), None)
        target = next(
            (i for i, c in enumerate(cells) if "target" in c.lower() or "ziel" in c.lower()), None
        )
        if tx is None or target is None:
            continue
        stat = next(
            (i for i, c in enumerate(cells) if key_name(c) in ("statistic", "statistik", "stat")),
            None,
        )
        unit = cells[target].lower()
        scale = 0.001 if re.search(r"\(\s*ms\s*\)|millisec", unit) else 1.0
        if scale == 1.0 and not re.search(r"\(\s*s(ec(onds?)?)?\s*\)|sekunden", unit):
            raise ST03Error(
                f"targets line {number}, column {cells[target]!r}: no unit ('(s)', '(Seconds)' "
                "or '(ms)')"
            )
        rows = [(n, [c.strip() for c in r]) for n, r in st03._rows(lines[k + 1 :], delimiter)]
        rows = [(n, r) for n, r in rows if len(r) > max(tx, target) and r[tx]]
        col = numbers.Column(cells[target], [r[target] for _, r in rows], [n for n, _ in rows])
        fmt = numbers.detect([col])
        values, _ = numbers.convert(col, fmt)
        out = []
        for (n, r), v in zip(rows, values, strict=True):
            statistic = "mean"
            if stat is not None and len(r) > stat and r[stat]:
                statistic = STATISTICS.get(r[stat].lower())
                if statistic is None:
                    raise ST03Error(
                        f"targets line {n}, column {cells[stat]!r}: {r[stat]!r} is none of "
                        "mean, p50, p90, p95, p99"
                    )
            if not v > 0:
                raise ST03Error(f"targets line {n}: the target must be a positive number")
            out.append(
                {
                    "transaction": numbers.plain(r[tx]),
                    "statistic": statistic,
                    "target_s": float(v) * scale,
                    "line": n,
                }
            )
        if not out:
            raise ST03Error(f"targets line {number}: no target rows after the heading")
        return out
    raise ST03Error(
        "targets: no heading with a transaction ('TCODE', 'Transaction') and a target "
        "('Target Response Time (Seconds)') column"
    )
