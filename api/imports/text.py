"""Reading an uploaded text file line by line, streamed: its encoding from the byte-order
mark (or the zero bytes of UTF-16 without one), decoding errors and csv errors as messages
naming the line and the column, so an import never holds the whole decoded file at once."""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
from collections.abc import Iterator
from typing import BinaryIO

CHUNK = 1 << 20  # bytes decoded at a time


class FileError(ValueError):
    """The file cannot be read; the message names the line and the column."""


def encoding(head: bytes) -> tuple[str, int]:
    """(codec, bytes of byte-order mark to skip) for a file starting with `head`."""
    if head.startswith(codecs.BOM_UTF8):
        if head[3:5] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
            raise FileError(
                "line 1, column 1: a UTF-8 byte-order mark followed by a UTF-16 one (the file "
                "was converted twice); save it once, as UTF-8 or UTF-16"
            )
        return "utf-8", 3
    if head.startswith(codecs.BOM_UTF16_LE):
        return "utf-16-le", 2
    if head.startswith(codecs.BOM_UTF16_BE):
        return "utf-16-be", 2
    # UTF-16 without a mark: ASCII text has a zero byte beside every character.
    if len(head) >= 2 and head[1] == 0 and head[0] != 0:
        return "utf-16-le", 0
    if len(head) >= 2 and head[0] == 0 and head[1] != 0:
        return "utf-16-be", 0
    return "utf-8", 0


def guess_delimiter(text: str) -> str:
    """The delimiter a line uses most (tab, semicolon, comma; comma if none)."""
    counts = {d: text.count(d) for d in ("\t", ";", ",", "|")}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] else ","


def cell_at(line: str, position: int, delimiter: str) -> int:
    """The 1-based csv column holding character `position` of `line` (quotes respected)."""
    column, quoted = 1, False
    for ch in line[:position]:
        if ch == '"':
            quoted = not quoted
        elif ch == delimiter and not quoted:
            column += 1
    return column


def _spans(line: str, delimiter: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each csv cell of `line`."""
    start, quoted = 0, False
    for i, ch in enumerate(line):
        if ch == '"':
            quoted = not quoted
        elif ch == delimiter and not quoted:
            yield start, i
            start = i + 1
    yield start, len(line)


def csv_column(line: str, message: str, delimiter: str) -> int:
    """The column a csv.Error on `line` is about."""
    if "field larger than field limit" in message:
        limit = csv.field_size_limit()
        for k, (a, b) in enumerate(_spans(line, delimiter), start=1):
            if b - a > limit:
                return k
    stripped = line.rstrip("\r\n")
    for ch in ("\r", "\n", "\0"):
        if ch in stripped:
            return cell_at(line, stripped.index(ch), delimiter)
    return max(1, cell_at(line, len(line), delimiter))


class Lines:
    """The decoded lines of a binary stream (newline kept); `number` is the line last given.

    Decoding errors become a FileError naming the line and column of the first bad byte.
    """

    def __init__(
        self, stream: BinaryIO, delimiter: str | None = ",", legacy: str | None = None
    ) -> None:
        """`legacy`: the 8-bit code page of a file without a byte-order mark whose first
        megabyte is not UTF-8 (Windows-1252 for a German Windows' tools): decided once,
        from the bytes, and kept in `codec` for the run's audit."""
        self.stream = stream
        self.number = 0
        self.last = ""
        self.delimiter = delimiter
        head = stream.read(8)
        self.codec, skip = encoding(head)
        if legacy and self.codec == "utf-8" and not skip:
            head += stream.read(CHUNK)
            try:
                codecs.getincrementaldecoder("utf-8")("strict").decode(head, False)
            except UnicodeDecodeError:
                self.codec = legacy
        self._head = head[skip:]

    def _bad_bytes(self, exc: UnicodeDecodeError, pending: str) -> FileError:
        good = codecs.decode(exc.object[: exc.start], self.codec, "replace")
        text = pending + good
        line = self.number + 1 + text.count("\n")
        current = text[text.rfind("\n") + 1 :]
        bad = " ".join(f"0x{b:02x}" for b in exc.object[exc.start : min(exc.end, exc.start + 4)])
        name = {"utf-8": "UTF-8", "utf-16-le": "UTF-16", "utf-16-be": "UTF-16"}.get(
            self.codec, self.codec
        )
        # Before the caller knows the delimiter (a bad byte in the header line), the line
        # so far says which it is: a tab-separated "Ø" in column 4 is column 4, not 1.
        delimiter = self.delimiter or guess_delimiter(current)
        return FileError(
            f"line {line}, column {cell_at(current, len(current), delimiter)}: bytes "
            f"{bad} are not {name} text ({exc.reason}); save the file as UTF-8 or UTF-16"
        )

    def __iter__(self) -> Iterator[str]:
        decoder = codecs.getincrementaldecoder(self.codec)("strict")
        pending, chunk = "", self._head
        first = True
        while True:
            final = not chunk
            try:
                text = decoder.decode(chunk, final)
            except UnicodeDecodeError as exc:
                raise self._bad_bytes(exc, pending) from None
            if first and text:
                text, first = text.removeprefix("\ufeff"), False
            pieces = (pending + text).split("\n")
            pending = pieces.pop()
            for piece in pieces:
                self.number += 1
                self.last = piece + "\n"
                yield self.last
            if final:
                break
            chunk = self.stream.read(CHUNK)
        if pending:
            self.number += 1
            self.last = pending
            yield pending


class Digest:
    """A binary stream whose bytes are hashed (SHA-256) as a parser reads them, so an
    import names the file it read without reading it twice or holding it whole."""

    def __init__(self, source: BinaryIO | bytes) -> None:
        self._stream = io.BytesIO(source) if isinstance(source, bytes | bytearray) else source
        self._sha = hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        data = self._stream.read(size)
        self._sha.update(data)
        return data

    def hexdigest(self) -> str:
        """The whole file's digest: what the parser left unread is read (and hashed) first."""
        while self.read(1 << 20):
            pass
        return self._sha.hexdigest()
