"""The SQL text of a model statement, as SAP's DB2 interface would send it, and its hash.

ST05 shows statements by text; metrics carry only the hash (never SQL text in a label),
the text goes to Loki with the trace records.
"""

from __future__ import annotations

import hashlib
import re

_COLUMN = re.compile(r"\b([A-Z][A-Z0-9_]*)\b(?=\s*(=|>=|<=|<|>|IN\b|LIKE\b))")


def _quote_columns(where: str) -> str:
    return _COLUMN.sub(r'"\1"', where)


def sql_text(table: str, op: str, where: str = "") -> str:
    cond = '"MANDT" = ?' + (f" AND {_quote_columns(where)}" if where else "")
    if op == "SELECT":
        return f'SELECT * FROM "{table}" WHERE {cond} FOR FETCH ONLY WITH UR'
    if op == "INSERT":
        return f'INSERT INTO "{table}" VALUES ( ? , ? , ... )'
    if op == "UPDATE":
        return f'UPDATE "{table}" SET ... WHERE {cond}'
    if op == "DELETE":
        return f'DELETE FROM "{table}" WHERE {cond}'
    raise ValueError(f"unknown SQL operation {op!r}")


def statement_hash(text: str) -> str:
    """A stable 16-hex-digit id of a statement text (like DB2's executable id, shorter)."""
    return hashlib.sha1(text.encode()).hexdigest()[:16]
