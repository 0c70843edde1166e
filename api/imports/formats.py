"""What an uploaded export is, decided from its bytes (never from its name), and the tables
SAP GUI writes in other forms than text read into the lines the text parser reads.

SAP GUI saves an ALV list as "Spreadsheet" (XLSX: a ZIP of Office Open XML), "Excel in
MHTML format" (a .xls that is MIME-wrapped HTML), "HTML format" (List -> Save -> Local
file), or text (tabs, `;`, unconverted): the text forms go to the text parser as they are.
XLSX is read by openpyxl in read-only (streaming) mode within limits on the unzipped size,
the compression ratio, rows and cells, so a ZIP bomb is refused before it is inflated; its
numeric cells are numbers (`NUMERIC` + the value), never read through a locale. HTML and
MHTML tables are text cells, read as the text forms' are. Anything else is refused naming
what it is (PDF, an image, a binary Excel 97 file, an OpenDocument spreadsheet, a ZIP of
other files, binary data such as a PerfMon .blg) and what would be read.
"""

from __future__ import annotations

import email
import email.policy
import io
import re
import zipfile
from dataclasses import dataclass
from datetime import date, datetime, time
from html.parser import HTMLParser
from typing import BinaryIO

from api.imports.numbers import NUMERIC
from api.imports.st03columns import KEY_COLUMNS, key_name
from api.imports.text import FileError, encoding

CELL = "\x1e"  # between the cells of a table's line (no quoting: cells are cells already)
HEAD = 4096
MAX_UNZIPPED = 256 * 2**20  # bytes an XLSX may inflate to
MAX_RATIO = 100.0  # inflated / compressed of one part over 1 MiB: beyond it, a ZIP bomb
MAX_ROWS = 250_000
MAX_CELLS = 10_000_000
WHAT_WORKS = (
    "export the list as 'Spreadsheet' (XLSX), 'Excel in MHTML format', HTML (List -> Save "
    "-> Local file) or text ('Text with Tabs', 'Unconverted')"
)
IMAGES = {
    b"\x89PNG\r\n\x1a\n": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"GIF87a": "a GIF image",
    b"GIF89a": "a GIF image",
    b"BM": "a BMP image",
    b"II*\x00": "a TIFF image",
    b"MM\x00*": "a TIFF image",
}


@dataclass
class Tabular:
    """A table-shaped export as numbered lines of CELL-separated cells (a line break in a
    cell is a space), and what it was."""

    kind: str  # 'XLSX (sheet ...)', 'Excel in MHTML format', 'HTML'
    lines: list[tuple[int, str]]
    numeric: bool  # its number cells are numbers (XLSX), not text


class Peeked:
    """A binary stream whose first bytes were looked at, read again from the start."""

    def __init__(self, stream: BinaryIO, head: bytes) -> None:
        self._stream, self._head = stream, head

    def read(self, size: int = -1) -> bytes:
        if self._head:
            if size < 0:
                data, self._head = self._head + self._stream.read(), b""
                return data
            data, self._head = self._head[:size], self._head[size:]
            if len(data) < size:
                data += self._stream.read(size - len(data))
            return data
        return self._stream.read(size)


def _text_head(head: bytes) -> str:
    codec, skip = encoding(head)
    return head[skip:].decode(codec, "replace").lstrip().lower()


def sniff(head: bytes) -> str:
    """'xlsx-or-zip', 'mhtml', 'html', 'text', or the name of what is refused."""
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return "zip"
    if head.startswith(b"%PDF"):
        return "a PDF document"
    if head.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
        return "a binary Excel 97-2003 workbook (.xls) or another OLE2 file"
    for magic, name in IMAGES.items():
        if head.startswith(magic):
            return name
    text = _text_head(head)
    if text.startswith("mime-version:") or (
        "content-type: multipart/related" in text[:1024] and "boundary" in text[:1024]
    ):
        return "mhtml"
    if text.startswith(("<!doctype html", "<html", "<table", "<meta", "<head", "<body")) or (
        text.startswith("<") and "<table" in text
    ):
        return "html"
    if text.startswith("<?xml") and "urn:schemas-microsoft-com:office:spreadsheet" in text:
        return "an Excel 2003 XML spreadsheet (SpreadsheetML)"
    codec, skip = encoding(head)
    sample = head[skip : skip + 512].decode(codec, "replace")
    control = sum(1 for ch in sample if (ord(ch) < 32 and ch not in "\t\r\n") or ch == "\ufffd")
    raw = head[skip : skip + 512]
    raw_control = sum(1 for b in raw if b < 32 and b not in (0, 9, 10, 13))
    if (sample and control > len(sample) // 10) or (not skip and raw_control > len(raw) // 10):
        return (
            f"binary data ({control} control characters in the first {len(sample)}; a PerfMon "
            ".blg log, for one, is no ST03 export)"
        )
    return "text"


def read(stream: BinaryIO) -> tuple[Tabular | None, BinaryIO]:
    """The export as a table when it is XLSX, MHTML or HTML (None: text, for the text
    parser), and the stream to read it from; FileError naming what the file is otherwise."""
    head = stream.read(HEAD)
    again = Peeked(stream, head)
    kind = sniff(head)
    if kind == "text":
        return None, again
    if kind == "zip":
        return _xlsx(again.read()), again
    if kind == "mhtml":
        return _mhtml(again.read()), again
    if kind == "html":
        return Tabular("HTML", _html_lines(_decode_html(again.read())), False), again
    raise FileError(f"line 1: the file is {kind}, not an ST03 export; {WHAT_WORKS}")


# --- XLSX -----------------------------------------------------------------------------


def _zip_members(body: bytes) -> zipfile.ZipFile:
    try:
        archive = zipfile.ZipFile(io.BytesIO(body))
        infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise FileError(f"line 1: a damaged ZIP archive ({exc}); {WHAT_WORKS}") from None
    total = sum(i.file_size for i in infos)
    if total > MAX_UNZIPPED:
        raise FileError(
            f"line 1: the ZIP archive inflates to {total:,} bytes, over the limit of "
            f"{MAX_UNZIPPED:,} (a ZIP bomb, or an export too large to import at once)"
        )
    for i in infos:
        if i.file_size > 2**20 and i.file_size > MAX_RATIO * max(i.compress_size, 1):
            raise FileError(
                f"line 1: part {i.filename!r} of the ZIP archive inflates {i.compress_size:,} "
                f"bytes to {i.file_size:,} (over {MAX_RATIO:g} times): refused as a ZIP bomb"
            )
    return archive


def _xlsx(body: bytes) -> Tabular:
    archive = _zip_members(body)
    names = set(archive.namelist())
    if "xl/workbook.xml" not in names:
        if "mimetype" in names and b"opendocument.spreadsheet" in archive.read("mimetype"):
            what = "an OpenDocument spreadsheet (.ods)"
        elif "word/document.xml" in names:
            what = "a Word document (.docx)"
        else:
            shown = ", ".join(sorted(names)[:5]) + (", ..." if len(names) > 5 else "")
            what = f"a ZIP archive of other files ({shown})"
        raise FileError(f"line 1: the file is {what}, not an ST03 export; {WHAT_WORKS}")
    import openpyxl  # imported here: only an XLSX upload pays for it

    try:
        book = openpyxl.load_workbook(io.BytesIO(body), read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises many kinds for a damaged workbook
        raise FileError(f"line 1: a damaged XLSX workbook ({type(exc).__name__}: {exc})") from None
    try:
        sheets = []
        for sheet in book.worksheets:
            lines = _sheet_lines(sheet)
            sheets.append((sheet.title, lines))
    finally:
        book.close()
    return Tabular(
        "XLSX (sheet " + ", ".join(repr(t) for t, _ in sheets) + ")",
        _pick(sheets),
        True,
    )


def _pick(sheets: list[tuple[str, list[tuple[int, str]]]]) -> list[tuple[int, str]]:
    """The sheet the export is on: the only one, or the first whose first 120 lines hold
    a heading the parser knows (the caller refuses naming the sheets when none does)."""
    keys = {n for names in KEY_COLUMNS.values() for n in names}
    for _, lines in sheets:
        for _, text in lines[:120]:
            if any(key_name(c) in keys for c in text.split(CELL)):
                return lines
    return sheets[0][1] if sheets else []


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int | float):
        return NUMERIC + repr(float(value)) if isinstance(value, float) else NUMERIC + str(value)
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, date):
        return value.strftime("%Y-%m-%d")
    if isinstance(value, time):
        return value.strftime("%H:%M:%S")
    return re.sub(r"[\x1e\x1f\r\n]+", " ", str(value))


def _sheet_lines(sheet) -> list[tuple[int, str]]:
    lines: list[tuple[int, str]] = []
    cells = 0
    for number, row in enumerate(sheet.iter_rows(values_only=True), start=1):
        if number > MAX_ROWS:
            raise FileError(f"sheet {sheet.title!r}: more than {MAX_ROWS:,} rows")
        cells += len(row)
        if cells > MAX_CELLS:
            raise FileError(f"sheet {sheet.title!r}: more than {MAX_CELLS:,} cells")
        texts = [_cell(v) for v in row]
        while texts and not texts[-1]:
            texts.pop()
        lines.append((number, CELL.join(texts)))
    return lines


# --- HTML and MHTML -------------------------------------------------------------------


def _mhtml(body: bytes) -> Tabular:
    message = email.message_from_bytes(body, policy=email.policy.default)
    best = None
    for part in message.walk():
        if part.get_content_type() == "text/html":
            try:
                html = part.get_content()
            except (LookupError, UnicodeDecodeError) as exc:
                raise FileError(f"the MHTML's HTML part cannot be decoded: {exc}") from None
            if best is None or html.lower().count("<tr") > best.lower().count("<tr"):
                best = html
    if best is None:
        raise FileError(
            "line 1: a MIME (MHTML) file without an HTML part: not an 'Excel in MHTML format' "
            f"export; {WHAT_WORKS}"
        )
    return Tabular("Excel in MHTML format", _html_lines(best), False)


def _decode_html(body: bytes) -> str:
    codec, skip = encoding(body[:8])
    if codec == "utf-8" and not skip:
        declared = re.search(rb"charset\s*=\s*[\"']?([A-Za-z0-9_-]+)", body[:4096])
        if declared:
            codec = declared.group(1).decode("ascii").lower()
    try:
        return body[skip:].decode(codec)
    except LookupError:
        raise FileError(f"line 1: the HTML declares charset {codec!r}, which is unknown") from None
    except UnicodeDecodeError as exc:
        line = body[: exc.start].count(b"\n") + 1
        raise FileError(
            f"line {line}: bytes 0x{body[exc.start]:02x} are not {codec} text, the HTML's "
            "encoding; save it again as UTF-8"
        ) from None


class _Tables(HTMLParser):
    """Every table row as its cells, and the text between tables as lines (the title and
    the period SAP writes above the table), in document order."""

    BLOCK = frozenset({"p", "div", "br", "h1", "h2", "h3", "h4", "h5", "h6", "li", "tr", "table"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self.row: list[str] | None = None
        self.cell: list[str] | None = None
        self.text: list[str] = []
        self.skip = 0

    def _flush_text(self) -> None:
        line = " ".join("".join(self.text).split())
        if line:
            self.lines.append(line)
        self.text = []

    def handle_starttag(self, tag, attrs) -> None:
        if tag in ("script", "style", "head", "title"):
            self.skip += 1
        elif tag == "tr":
            self._flush_text()
            self.row = []
        elif tag in ("td", "th") and self.row is not None:
            self.cell = []
        elif tag in self.BLOCK and self.row is None:
            self._flush_text()
        elif tag == "br" and self.cell is not None:
            self.cell.append(" ")

    def handle_endtag(self, tag) -> None:
        if tag in ("script", "style", "head", "title"):
            self.skip = max(0, self.skip - 1)
        elif tag in ("td", "th") and self.cell is not None and self.row is not None:
            self.row.append(" ".join("".join(self.cell).split()))
            self.cell = None
        elif tag == "tr" and self.row is not None:
            if self.cell is not None:  # an unclosed last cell
                self.row.append(" ".join("".join(self.cell).split()))
                self.cell = None
            while self.row and not self.row[-1]:
                self.row.pop()
            if self.row:
                self.lines.append(CELL.join(self.row))
            self.row = None
        elif tag in self.BLOCK and self.row is None:
            self._flush_text()

    def handle_data(self, data) -> None:
        if self.skip:
            return
        if self.cell is not None:
            self.cell.append(data)
        elif self.row is None:
            self.text.append(data)


def _html_lines(html: str) -> list[tuple[int, str]]:
    parser = _Tables()
    parser.feed(html)
    parser.close()
    parser._flush_text()
    if len(parser.lines) > MAX_ROWS:
        raise FileError(f"the HTML has more than {MAX_ROWS:,} rows")
    return list(enumerate(parser.lines, start=1))
