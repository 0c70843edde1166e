"""The forms SAP GUI saves an ST03N list in (issue 32, item 2), each decided from the bytes:
XLSX ("Spreadsheet"), "Excel in MHTML format", HTML (List -> Save -> Local file), besides
text; and a refusal that names what a file is.

The files are written here from the formats themselves, not with the library the importer
reads them with: the XLSX by hand as Office Open XML parts (ECMA-376: [Content_Types].xml,
the workbook, its relationships, shared strings and a worksheet whose number cells are
`<c><v>` and whose text cells are `t="s"`), as SAP's ALV export writes numbers as numbers
(SAP Gateway's XLSX notes: the ALV export tool sets the decimals from the currency and
quantity references); the MHTML as a MIME multipart/related message with a quoted-printable
HTML part (RFC 2557, what Excel's "Single File Web Page" and SAP's XLS_MHTML write); the
HTML as a table with the title and period above it. Expected figures are computed here from
the cells written.
"""

from __future__ import annotations

import io
import quopri
import zipfile
from xml.sax.saxutils import escape

import pytest
from fastapi.testclient import TestClient

from alerts.thresholds import load_thresholds
from api.config import Settings
from api.imports import formats
from api.imports.st03 import ST03Error, parse_table
from api.main import create_app
from api.services import imports, reports
from api.store import Store

PREAMBLE = ["Workload Overview: Task Types", "Period: 25.11.2026 10:00:00 - 25.11.2026 10:59:59"]
HEADING = [
    "Task Type Name",
    "# Steps",
    "T Response Time (s)",
    "Ø Response Time (ms)",
    "Ø Time in WPs (ms)",
    "Ø Wait Time (ms)",
    "Ø CPU Time (ms)",
]
ROWS = [
    ["DIALOG", 12000, 27000.0, 2250.0, 1912.0, 338.0, 410.0],
    ["BACKGROUND", 300, 14550.0, 48500.0, 48465.0, 35.0, 9000.0],
    ["BUF.SYNC", 90, 0.2, 2.1, 2.0, 0.1, 1.0],
]


@pytest.fixture
def store(tmp_path) -> Store:
    return Store(tmp_path / "db.sqlite")


def _col(k: int) -> str:
    return "ABCDEFGHIJ"[k]


def xlsx(rows: list[list], sheet: str = "Sheet1") -> bytes:
    """An XLSX workbook of one sheet, its parts written by hand (shared strings for text,
    `<v>` numbers for numbers)."""
    strings: list[str] = []
    xml_rows = []
    for r, row in enumerate(rows, start=1):
        cells = []
        for k, value in enumerate(row):
            ref = f"{_col(k)}{r}"
            if isinstance(value, str):
                strings.append(value)
                cells.append(f'<c r="{ref}" t="s"><v>{len(strings) - 1}</v></c>')
            else:
                cells.append(f'<c r="{ref}"><v>{value!r}</v></c>')
        xml_rows.append(f'<row r="{r}">{"".join(cells)}</row>')
    main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    parts = {
        "[Content_Types].xml": (
            '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
            'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
            '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-'
            'officedocument.spreadsheetml.sheet.main+xml"/>'
            '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.'
            'openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
            '<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.'
            'openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>'
        ),
        "_rels/.rels": (
            '<?xml version="1.0" encoding="UTF-8"?>'
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
            'relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/'
            'officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>'
            "</Relationships>"
        ),
        "xl/workbook.xml": (
            f'<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="{main}" '
            f'xmlns:r="{rel}"><sheets><sheet name="{escape(sheet)}" sheetId="1" r:id="rId1"/>'
            "</sheets></workbook>"
        ),
        "xl/_rels/workbook.xml.rels": (
            '<?xml version="1.0" encoding="UTF-8"?>'
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
            'relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/'
            'officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>'
            '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/'
            '2006/relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>'
        ),
        "xl/sharedStrings.xml": (
            f'<?xml version="1.0" encoding="UTF-8"?><sst xmlns="{main}" count="{len(strings)}">'
            + "".join(f"<si><t>{escape(s)}</t></si>" for s in strings)
            + "</sst>"
        ),
        "xl/worksheets/sheet1.xml": (
            f'<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="{main}"><sheetData>'
            + "".join(xml_rows)
            + "</sheetData></worksheet>"
        ),
    }
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in parts.items():
            z.writestr(name, text)
    return buf.getvalue()


def _sap_number(value, decimals: int) -> str:
    return f"{value:,.{decimals}f}"


def html_table(language_rows: list[list[str]], preamble: list[str]) -> str:
    head = "".join(f"<p>{escape(line)}</p>" for line in preamble)
    rows = []
    for k, row in enumerate(language_rows):
        tag = "th" if k == 0 else "td"
        rows.append("<tr>" + "".join(f"<{tag}>{escape(c)}</{tag}>" for c in row) + "</tr>")
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>ST03N</title>'
        "<style>td {text-align: right}</style></head><body>"
        f"{head}<table border=1>{''.join(rows)}</table></body></html>"
    )


def _text_rows() -> list[list[str]]:
    out = [HEADING]
    for row in ROWS:
        out.append([row[0], _sap_number(row[1], 0)] + [_sap_number(v, 1) for v in row[2:]])
    return out


def mhtml(html: str) -> bytes:
    body = quopri.encodestring(html.encode("utf-8")).decode("ascii")
    return (
        "MIME-Version: 1.0\r\n"
        "X-Document-Type: Workbook\r\n"
        'Content-Type: multipart/related; boundary="----=_NextPart_ST03N"\r\n'
        "\r\n"
        "------=_NextPart_ST03N\r\n"
        "Content-Location: file:///C:/export.htm\r\n"
        "Content-Transfer-Encoding: quoted-printable\r\n"
        'Content-Type: text/html; charset="utf-8"\r\n'
        "\r\n"
        f"{body}\r\n"
        "------=_NextPart_ST03N--\r\n"
    ).encode("ascii")


def _check(rep: dict) -> None:
    rows = {r["task_type"]: r for r in rep["st03"]}
    for name, steps, total_resp, resp, wp, wait, cpu in ROWS:
        key = {"DIALOG": "dialog", "BACKGROUND": "batch", "BUF.SYNC": "buffer_sync"}[name]
        row = rows[key]
        assert row["steps"] == steps
        # The finer of mean and total per row: a mean to 0.1 ms over fewer than 1,000 steps
        # says more than a total to 0.1 s (BUF.SYNC: 0.2 s / 90 = 2.222 ms, the mean 2.1).
        finer = resp if steps < 1000 else 1000 * total_resp / steps
        assert row["response_ms"] == pytest.approx(finer, abs=1e-6)
        assert row["wp_time_ms"] == pytest.approx(wp, abs=1e-6)
        assert row["dispatcher_wait_ms"] == pytest.approx(wait, abs=1e-6)
        assert row["cpu_ms"] == pytest.approx(cpu, abs=1e-6)
    assert rep["import"]["period"]["seconds"] == 3600.0


def test_an_xlsx_export_reads_its_number_cells_as_numbers(store) -> None:
    body = xlsx([[line] for line in PREAMBLE] + [[]] + [HEADING] + ROWS)
    assert body[:2] == b"PK"
    run = imports.store_st03(store, body, "xlsx")
    rep = reports.report(store, run.id, load_thresholds())
    _check(rep)
    assert rep["import"]["file_format"] == "XLSX (sheet 'Sheet1')"
    assert rep["import"]["number_format"].startswith("number cells")


def test_an_xlsx_with_text_numbers_reads_them_in_the_file_s_format() -> None:
    """A German workbook whose numbers are text cells (a sheet typed in by hand)."""
    rows = [
        ["Tasktypname", "# Dialogschritte", "Ø Antwortzeit (ms)"],
        ["DIALOG", "1.743.000", 48500.5],
    ]
    table = parse_table(xlsx(rows))
    assert table.steps[0] == 1_743_000
    assert table.seconds["response"][0] == pytest.approx(48_500.5 * 1_743_000 / 1000)


@pytest.mark.parametrize("form", ["html", "mhtml"])
def test_html_and_mhtml_exports_read_like_text(store, form) -> None:
    page = html_table(_text_rows(), PREAMBLE)
    body = page.encode("utf-8") if form == "html" else mhtml(page)
    run = imports.store_st03(store, body, form)
    rep = reports.report(store, run.id, load_thresholds())
    _check(rep)
    expected = "HTML" if form == "html" else "Excel in MHTML format"
    assert rep["import"]["file_format"] == expected
    assert rep["import"]["number_format"] == "decimal point"


def test_an_xlsx_without_the_export_s_sheet_is_refused_naming_it() -> None:
    body = xlsx([["Material", "Plant", "Quantity"], ["4711", "1000", 5.0]], sheet="Stock")
    with pytest.raises(ST03Error) as exc:
        parse_table(body)
    message = str(exc.value)
    assert message.startswith("XLSX (sheet 'Stock')")
    assert "'Material'" in message and "English, German and French" in message


@pytest.mark.parametrize(
    ("body", "what"),
    [
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", "a PDF document"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "a PNG image"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", "a JPEG image"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504), "Excel 97-2003"),
        (bytes(range(256)) * 4, "binary data"),
    ],
)
def test_a_file_that_is_no_export_is_refused_naming_what_it_is(body, what) -> None:
    with pytest.raises(ST03Error) as exc:
        parse_table(body)
    message = str(exc.value)
    assert what in message
    assert "'Spreadsheet' (XLSX)" in message  # and what would be read


def test_a_zip_of_other_files_is_named_as_such() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("report.txt", "hello")
    with pytest.raises(ST03Error, match=r"a ZIP archive of other files \(report.txt\)"):
        parse_table(buf.getvalue())


def test_a_zip_bomb_is_refused_before_it_is_inflated(monkeypatch) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("xl/workbook.xml", "<workbook/>")
        z.writestr("xl/worksheets/sheet1.xml", b"\0" * (8 * 2**20))  # ~1000x
    body = buf.getvalue()
    assert len(body) < 100_000
    with pytest.raises(ST03Error, match="ZIP bomb"):
        parse_table(body)
    # The total inflated size has its own limit.
    monkeypatch.setattr(formats, "MAX_UNZIPPED", 2**20)
    monkeypatch.setattr(formats, "MAX_RATIO", 1e9)
    with pytest.raises(ST03Error, match="inflates to 8,388,6"):
        parse_table(body)


def test_an_xlsx_over_the_row_limit_is_refused(monkeypatch) -> None:
    monkeypatch.setattr(formats, "MAX_ROWS", 3)
    with pytest.raises(ST03Error, match="more than 3 rows"):
        parse_table(xlsx([HEADING, *ROWS]))


def test_a_french_export_is_read_and_another_language_refused_naming_the_heading() -> None:
    """The issue's French export: `1 743 000` and `1 960,0` with no-break spaces."""
    french = (
        "Type de tâche\tNombre d'étapes\tTemps de réponse moyen (ms)\tTemps CPU moyen (ms)\n"
        "DIALOG\t1\u00a0743\u00a0000\t1\u00a0960,0\t35,0\n"
    )
    table = parse_table(french.encode("utf-8"))
    assert table.steps[0] == 1_743_000
    assert table.seconds["response"][0] == pytest.approx(1_960.0 * 1_743_000 / 1000)
    italian = (
        "Tipo di task\tNumero di passi\tTempo di risposta medio (ms)\nDIALOG\t1.743.000\t1.960,0\n"
    )
    with pytest.raises(ST03Error) as exc:
        parse_table(italian.encode("utf-8"))
    message = str(exc.value)
    assert "'Tipo di task'" in message and "English, German and French" in message


@pytest.mark.parametrize(
    "period",
    [
        ["Period:", "25.11.2026 10:00:00", "-", "25.11.2026 10:59:59"],
        ["Zeitraum", "25.11.2026", "10:00:00", "25.11.2026", "10:59:59"],
    ],
)
def test_a_sheet_s_period_and_task_type_in_cells_above_the_table(period) -> None:
    """A date and its time in two cells were read as two dates (00:00 to 10:00, 10 h)."""
    rows = [
        period,
        ["Task type:", "DIALOG"],
        [],
        ["Report or Transaction Name", *HEADING[1:]],
        *[[f"T{k}", *r[1:]] for k, r in enumerate(ROWS)],
    ]
    table = parse_table(xlsx(rows))
    assert table.period.seconds == 3600.0
    assert table.period.start.isoformat() == "2026-11-25T10:00:00"
    assert table.task_types == ["dialog"] * len(ROWS)


def test_the_upload_reads_an_xlsx_and_refuses_a_pdf_with_a_422(tmp_path) -> None:
    auth = {"Authorization": "Bearer t"}
    with TestClient(create_app(Settings(db_path=tmp_path / "db.sqlite", token="t"))) as c:
        body = xlsx([[line] for line in PREAMBLE] + [[], HEADING, *ROWS])
        r = c.post("/imports/st03", content=body, headers=auth)
        assert r.status_code in (200, 201), r.text
        rep = c.get(f"/runs/{r.json()['id']}/report").json()
        _check(rep)
        assert rep["import"]["file_format"] == "XLSX (sheet 'Sheet1')"
        pdf = c.post("/imports/st03", content=b"%PDF-1.7\n1 0 obj", headers=auth)
        assert pdf.status_code == 422 and "a PDF document" in pdf.json()["detail"]
