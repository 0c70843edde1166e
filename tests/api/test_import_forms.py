"""PerfMon files as people capture them (issue 16 section 3): typeperf's console output
redirected from cmd or PowerShell, logman CSV logs, relog CSV and TSV, several hosts and
multi-instance objects; and bad files refused at the door naming line and column (issue 17
section 5), through the API and the CLI alike."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from api.config import Settings, get_settings
from api.imports.perfmon import parse
from api.main import create_app
from api.runs import record
from tests.fixtures.perfmon import generate
from wlmon.cli import app

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "perfmon"
AUTH = {"Authorization": "Bearer t"}
HEAD = '"(PDH-CSV 4.0) (UTC)(0)"'


@pytest.fixture
def client(tmp_path):
    with TestClient(create_app(Settings(db_path=tmp_path / "db.sqlite", token="t"))) as c:
        yield c


def _report(client: TestClient, raw: bytes) -> dict:
    r = client.post("/imports/perfmon", content=raw, headers=AUTH)
    assert r.status_code == 201, r.text
    return client.get(f"/runs/{r.json()['id']}/report").json()


def _column(raw: bytes, encoding: str, path: str) -> np.ndarray:
    """A counter's readings as the csv module alone reads them (the independent check)."""
    text = raw.decode(encoding).lstrip("\ufeff")
    lines = [line for line in text.splitlines() if line.startswith('"')]
    rows = list(csv.reader(lines, delimiter="\t" if "PDH-TSV" in lines[0] else ","))
    k = rows[0].index(path)
    return np.array([float(r[k]) if r[k].strip() else np.nan for r in rows[1:]])


def test_typeperf_console_output_redirected_from_cmd_and_powershell_reads_alike(client) -> None:
    """The 4-hour capture that was refused: `typeperf ... > file` has no time zone in its
    header, an empty first line and status lines after the data."""
    cmd = (FIXTURES / "typeperf-console-cmd.txt").read_bytes()
    ps = (FIXTURES / "typeperf-console-powershell.txt").read_bytes()
    assert ps.startswith(b"\xff\xfe") and not cmd.startswith(b"\xef\xbb\xbf")
    a, b = parse(cmd), parse(ps)
    assert a.status_lines == 2 and a.zone == ""
    assert a.columns == b.columns and np.allclose(a.values, b.values, equal_nan=True)
    assert a.start.isoformat() == "2026-11-23T08:00:00+00:00"  # local time, taken as UTC
    rep = _report(client, cmd)
    cpu = next(r for r in rep["os_counters"] if r["counter"] == "Processor\\% Processor Time")
    expected = _column(cmd, "utf-8", "\\\\SAPAPP01\\Processor(_Total)\\% Processor Time")
    assert cpu["avg"] == pytest.approx(expected.mean(), abs=1e-3)
    assert cpu["samples"] == 8


def test_logman_first_sample_of_rate_counters_is_blank_not_zero(client) -> None:
    raw = (FIXTURES / "logman-utf8-bom.csv").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    data = parse(raw)
    pages = data.values[:, data.columns.index(record.parse("os.sapdb01.pages_per_s"))]
    assert np.isnan(pages[0]) and not np.isnan(pages[1:]).any()
    rows = {r["counter"]: r for r in _report(client, raw)["os_counters"]}
    assert rows["Memory\\Pages/sec"]["samples"] == 7
    assert rows["Memory\\Available MBytes"]["samples"] == 8


def test_relog_tsv_in_utf16_without_a_byte_order_mark() -> None:
    raw = (FIXTURES / "relog-tsv.tsv").read_bytes()
    assert raw[1] == 0 and not raw.startswith(b"\xff\xfe")
    data = parse(raw)
    disk = data.values[:, data.columns.index(record.parse("os.sapdb01.disk_queue"))]
    expected = _column(
        raw, "utf-16-le", "\\\\SAPDB01\\PhysicalDisk(_Total)\\Avg. Disk Queue Length"
    )
    assert np.allclose(disk, expected)


def test_two_hosts_hundreds_of_counters_standard_rows_first_then_every_other(client) -> None:
    """Seed 003 Tables 2-3 rows per host, then every other counter with avg / min / max."""
    raw = (FIXTURES / "relog-two-hosts.csv").read_bytes()
    header = next(csv.reader(io.StringIO(raw.decode().splitlines()[0])))
    assert len(header) - 1 == 304
    rep = _report(client, raw)
    rows = rep["os_counters"]
    assert len(rows) == 304  # each counter once: _Total rows became the standard rows
    for host, path_host in (("sapapp01", "SAPAPP01"), ("sapdb01", "SAPDB01")):
        mine = [r for r in rows if r["host"] == host]
        assert [r["counter"] for r in mine[:4]] == [
            "Processor\\% Processor Time",
            "Memory\\Available MBytes",
            "Memory\\Pages/sec",
            "PhysicalDisk\\Avg. Disk Queue Length",
        ]
        by_name = {r["counter"]: r for r in mine}
        for name, path in (
            ("Processor(3)\\% Processor Time", "Processor(3)\\% Processor Time"),
            ("Process(disp+work#1)\\Working Set", "Process(disp+work#1)\\Working Set"),
            (
                "Network Interface(Intel[R] Ethernet Connection X722 for 10GbE SFP+)\\Packets/sec",
                "Network Interface(Intel[R] Ethernet Connection X722 for 10GbE SFP+)\\Packets/sec",
            ),
            ("Processor\\% Processor Time", "Processor(_Total)\\% Processor Time"),
        ):
            v = _column(raw, "utf-8", f"\\\\{path_host}\\{path}")
            v = v[~np.isnan(v)]
            row = by_name[name]
            assert row["avg"] == pytest.approx(v.mean(), rel=1e-6, abs=1e-3)
            assert row["min"] == pytest.approx(v.min(), rel=1e-6, abs=1e-3)
            assert row["max"] == pytest.approx(v.max(), rel=1e-6, abs=1e-3)
    html = client.get(f"/runs/{rep['run']['id']}/report", params={"format": "html"})
    assert html.status_code == 200 and "Process(sqlservr)" in html.text


def test_without_total_the_standard_rows_come_from_the_instances() -> None:
    """CPU: the mean of the processors present in the sample; disk queue: the sum."""
    text = (
        f'{HEAD},"\\\\h\\Processor(0)\\% Processor Time","\\\\h\\Processor(1)\\% Processor Time",'
        '"\\\\h\\PhysicalDisk(0 C:)\\Avg. Disk Queue Length",'
        '"\\\\h\\PhysicalDisk(1 D:)\\Avg. Disk Queue Length","\\\\h\\Memory\\Available KBytes"\n'
        '"11/23/2026 08:00:00.000","10","30","0.5","1.5","2048"\n'
        '"11/23/2026 08:00:15.000","20"," ","1","2","4096"\n'
    )
    data = parse(text.encode())
    col = {str(c): data.values[:, k] for k, c in enumerate(data.columns)}
    assert col["os.h.cpu_pct"].tolist() == [20.0, 20.0]
    assert col["os.h.disk_queue"].tolist() == [2.0, 3.0]
    assert col["os.h.available_mb"].tolist() == [2.0, 4.0]
    assert data.sources["os.h.cpu_pct"] == "mean of 2 instances of Processor\\% Processor Time"
    # The instances stay listed as counters of their own.
    assert data.names["os.h.processor_0_processor_time"] == "Processor(0)\\% Processor Time"


def test_hosts_named_by_address_keep_their_parts() -> None:
    text = f'{HEAD},"\\\\10.0.0.5\\Memory\\Pages/sec"\n"11/23/2026 08:00:00.000","1"\n'
    data = parse(text.encode())
    # The run record escapes the dots of a column's parts: the address is the host, whole.
    assert [c.parts for c in data.columns] == [("10.0.0.5", "pages_per_s")]
    assert data.host_names == {"10.0.0.5": "10.0.0.5"}


ROW = '"11/23/2026 08:00:00.000"'
CPU = '"\\\\H\\Processor(_Total)\\% Processor Time"'
MEM = '"\\\\H\\Memory\\Available MBytes"'
OTHER = '"\\\\H\\System\\Threads"'
BAD = [
    (
        b"\xef\xbb\xbf" + "\ufeffx".encode("utf-16-le"),
        "line 1, column 1: a UTF-8 byte-order mark followed by a UTF-16 one",
    ),
    (
        f'"(PDH-CSV 4.0) (X)(99999999999999)",{OTHER}\n{ROW},"1"\n'.encode(),
        "time-zone bias 99999999999999 minutes is outside",
    ),
    (f'"(PDH-CSV 4.0) (X)(-1000)",{OTHER}\n{ROW},"1"\n'.encode(), "line 1, column 1: time-zone"),
    (
        f'{HEAD},{OTHER},{MEM}\n{ROW},"1","{"9" * 200_000}"\n'.encode(),
        "line 2, column 3: field larger than field limit",
    ),
    (
        f'{HEAD},{OTHER},{MEM}\n{ROW},"1","NaN"\n'.encode(),
        "line 2, column 3: 'NaN' is not a finite",
    ),
    (f'{HEAD},{OTHER}\n{ROW},"inf"\n'.encode(), "line 2, column 2: 'inf' is not a finite"),
    (f'{HEAD},{OTHER}\n{ROW},"1e300"\n'.encode(), "line 2, column 2: '1e300' is outside"),
    (
        f'{HEAD},{OTHER},{CPU}\n{ROW},"1","250"\n'.encode(),
        "line 2, column 3: '250' is outside 0..100",
    ),
    (f'{HEAD},{MEM}\n{ROW},"-5"\n'.encode(), "line 2, column 2: '-5' is outside"),
    (
        f'{HEAD},{OTHER}\n{ROW},"1"\n"11/23/2026 07:59:59.000","2"\n'.encode(),
        "line 3, column 1: time stamp 11/23/2026 07:59:59 is not after",
    ),
    (f'{HEAD},{OTHER}\n"02/30/2026 08:00:00.000","1"\n'.encode(), "line 2, column 1: time stamp"),
    (f'{HEAD},{OTHER}\n"11/23/0001 08:00:00.000","1"\n'.encode(), "year out of range"),
    (
        f'{HEAD},{OTHER},{MEM}\n{ROW},"1","2"\n{ROW[:-1]}1","1","'.encode() + b'\xff2"\n',
        # Not UTF-8 in its first megabyte: read as Windows-1252, so the cell is text.
        "line 3, column 3: 'ÿ2' is not a number",
    ),
    (f'{HEAD},{OTHER}\n{ROW},"1"\r"x"\n'.encode(), "line 2, column 2: new-line character"),
    (
        f'"(PDH-CSV 4.0) (X)({"9" * 40})",{OTHER}\n{ROW},"1"\n'.encode(),
        f"time-zone bias {'9' * 20}... (40 characters) minutes",
    ),
]


@pytest.mark.parametrize(("raw", "message"), BAD, ids=[m for _, m in BAD])
def test_bad_files_are_a_422_naming_line_and_column_and_store_nothing(
    client, raw: bytes, message: str
) -> None:
    r = client.post("/imports/perfmon", content=raw, headers=AUTH)
    assert r.status_code == 422, r.text
    assert message in r.json()["detail"]
    assert client.get("/runs").json() == []


@pytest.mark.parametrize(("raw", "message"), BAD[:4], ids=[m for _, m in BAD[:4]])
def test_the_cli_prints_an_error_line_not_a_traceback(tmp_path, raw: bytes, message: str) -> None:
    """Issue 17: a huge time-zone offset or a field over the csv limit ended in a traceback."""
    bad = tmp_path / "bad.csv"
    bad.write_bytes(raw)
    get_settings.cache_clear()
    try:
        env = {"WLMON_API_DB_PATH": str(tmp_path / "db.sqlite")}
        result = CliRunner().invoke(app, ["import", "perfmon", str(bad)], env=env)
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert message in " ".join(result.output.split())
    assert "Traceback" not in result.output


def test_a_generated_day_long_capture_agrees_with_the_generator() -> None:
    """The bench's generator: what it writes is what the import reads (both encodings)."""
    for encoding in ("utf-8", "utf-16"):
        buf = io.BytesIO()
        columns = generate.write(buf, "typeperf", encoding, samples=30, per_host=50)
        data = parse(buf.getvalue())
        assert len(columns) == 100 and data.values.shape == (30, 100)
        expected = generate.values(columns, 30)
        k = columns.index("\\\\SAPDB01\\Memory\\Available MBytes")
        got = data.values[:, data.columns.index(record.parse("os.sapdb01.available_mb"))]
        assert np.allclose(got, expected[:, k], atol=1e-6)


def test_an_upload_waits_on_disk_and_is_removed_after_the_import(
    client, monkeypatch, tmp_path
) -> None:
    """Uploads wait in a temporary file the worker streams, not in memory; none is left."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    raw = (FIXTURES / "relog-two-hosts.csv").read_bytes()
    assert len(raw) > 100 * 1024
    rows = _report(client, raw)["os_counters"]
    assert len(rows) == 304
    assert list(tmp_path.glob("wlmon-upload-*")) == []


def test_a_binary_log_is_refused_with_the_relog_command_to_convert_it(client) -> None:
    raw = b"\x00\x01\x02\x03" + bytes(range(256)) * 4
    r = client.post("/imports/perfmon", content=raw, headers=AUTH)
    assert r.status_code == 422
    assert "line 1, column 1" in r.json()["detail"]
    assert "relog file.blg -f csv" in r.json()["detail"]
