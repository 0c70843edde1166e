"""The size and row limits of an import, one set for the API and `wlmon import` (defaults in
api/config.py): bytes refused before a byte is parsed, rows counted as line breaks before
the parse (a PerfMon worker needs about 2.9 times the file's size in memory, docs/api.md)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from fastapi import status

from api.config import Settings
from api.services.errors import ServiceError

Kind = Literal["perfmon", "st03", "stad"]
NAMES = {"perfmon": "PerfMon", "st03": "ST03", "stad": "STAD"}


class TooLarge(ServiceError):
    status_code = status.HTTP_413_CONTENT_TOO_LARGE


@dataclass(frozen=True)
class ImportLimits:
    kind: Kind
    max_bytes: int
    max_rows: int

    @property
    def bytes_setting(self) -> str:
        return f"WLMON_API_{self.kind.upper()}_MAX_BYTES"

    @property
    def rows_setting(self) -> str:
        return f"WLMON_API_{self.kind.upper()}_MAX_ROWS"

    def too_many_bytes(self, size: int | None = None) -> TooLarge:
        have = f"{size:,} bytes: " if size is not None else "file "
        return TooLarge(
            f"{have}over the {NAMES[self.kind]} import limit of {self.max_bytes:,} bytes "
            f"({_mib(self.max_bytes)}; setting {self.bytes_setting})"
        )

    def check_size(self, size: int) -> None:
        if size > self.max_bytes:
            raise self.too_many_bytes(size)

    def check_rows(self, path: Path) -> None:
        """Refuse a file of more rows than the limit, counted as line breaks in a streamed
        read (no parse) that stops as soon as the count is over."""
        lines, tail = 0, b""
        with path.open("rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                lines += chunk.count(b"\n")
                tail = (tail + chunk)[-2:]
                if lines > self.max_rows + 1:  # the header and more rows than allowed
                    raise self._too_many_rows(f"more than {self.max_rows:,}")
        # UTF-16 files count too: their line break is 0A 00. The header is not a row.
        rows = lines + (0 if tail.endswith((b"\n", b"\n\x00")) else 1) - 1
        if rows > self.max_rows:
            raise self._too_many_rows(f"{rows:,}")

    def _too_many_rows(self, rows: str) -> TooLarge:
        return TooLarge(
            f"the file has {rows} rows, over the {NAMES[self.kind]} import limit of "
            f"{self.max_rows:,} rows (setting {self.rows_setting})"
        )


def _mib(n: int) -> str:
    return f"{n / 2**20:g} MiB"


def limits(settings: Settings, kind: Kind) -> ImportLimits:
    if kind == "perfmon":
        return ImportLimits(kind, settings.perfmon_max_bytes, settings.perfmon_max_rows)
    if kind == "stad":
        return ImportLimits(kind, settings.stad_max_bytes, settings.stad_max_rows)
    return ImportLimits(kind, settings.st03_max_bytes, settings.st03_max_rows)
