"""The run record's column names round-trip any name (issue 23 item 1): a host called
sap01.corp.local, counter names with backslashes, brackets, slashes, hashes, commas, spaces
and quotes, bucket bounds with dots. Checked by property (hypothesis) and on the names
that broke schema 1; and a Prometheus window with an FQDN host reports that host."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from alerts.thresholds import load_thresholds
from api.runs import fromprom
from api.runs.record import KINDS, Column, ColumnError, RunMeta, col, parse, split
from api.runs.report import build_report
from tests.api.rows import run_row

parts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=30)
kinds = st.sampled_from(sorted(KINDS))


@given(kind=kinds, data=st.data())
def test_any_parts_round_trip(kind, data) -> None:
    values = tuple(data.draw(parts) for _ in KINDS[kind])
    key = col(kind, *values)
    name = str(key)  # what the store writes
    back = parse(name)
    assert (back.kind, back.parts) == (kind, values) and back == key
    # The name has exactly as many unescaped dots as separators: nothing leaks between parts.
    assert len(split(name)) == len(values) + 1


@pytest.mark.parametrize(
    "kind, values",
    [
        ("os", ("sap01.corp.local", "cpu_pct")),
        ("os", ("db01", "\\\\DB01\\PhysicalDisk(0 C:)\\Avg. Disk sec/Read")),
        ("os", ("10.0.0.7", 'Process(disp+work#2)\\"% Processor Time", total')),
        ("hist", ("dialog", "0.5")),
        ("txhist", ("buf.sync", "Z.REPORT\\", "+Inf")),
        ("tx", ("dialog", "", "steps")),
        ("st03", ("dialog", "\\.")),
    ],
)
def test_names_that_broke_schema_1_round_trip(kind, values) -> None:
    c = parse(str(col(kind, *values)))
    assert c.parts == values and c.last == values[-1] and c.owner == values[:-1]


def test_a_name_that_is_no_column_is_refused_naming_it() -> None:
    with pytest.raises(ColumnError, match="kind 'ost'"):
        parse("ost.a.b")
    with pytest.raises(ColumnError, match="2 parts"):
        parse("os.a.b.c")  # a dotted host written unescaped
    with pytest.raises(ColumnError, match="lone backslash"):
        parse("os.a.b\\")
    assert Column("os", ("a.b", "c")) == parse("os.a\\.b.c")


def test_metadata_round_trips_through_json() -> None:
    import json

    from api.runs.record import FaultWindow

    meta = RunMeta(
        source="perfmon",
        checksum="ab" * 32,
        interval_s=15.0,
        fault_windows=[FaultWindow("db-bottleneck", 240.0, None)],
        derivations={str(col("os", "h.x", "cpu_pct")): "_Total"},
        details={"encoding": "cp1252"},
    )
    assert RunMeta.from_json(json.loads(json.dumps(meta.to_json()))) == meta


def test_a_prometheus_window_with_an_fqdn_host_reports_that_host(monkeypatch) -> None:
    start = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)

    def answer(url, query, start, end, step) -> list[dict]:
        labels = {"task_type": "dialog", "host": "sap01.corp.local", "le": "+Inf"}
        stamps = start.timestamp() + step * np.arange(1, 5)
        return [{"metric": labels, "values": [[t, "1"] for t in stamps]}]

    monkeypatch.setattr(fromprom, "_range", answer)
    monkeypatch.setattr(fromprom, "_instant", lambda url, query, at: [])
    data = fromprom.read_window(
        "http://prometheus", "BMK", start, start + timedelta(minutes=4), 60, None, None
    )
    assert data.meta.hosts == ["sap01.corp.local"]
    report = build_report(run_row(), data, thresholds=load_thresholds())
    assert {(r["host"], r["key"]) for r in report["os_counters"]} == {
        ("sap01.corp.local", k) for k in ("cpu_pct", "available_mb", "pages_per_s", "disk_queue")
    }
    assert report["benchmark"]["bait"]["avg_cpu_pct_by_host"] == {"sap01.corp.local": 1.0}


def test_an_imports_audit_over_http_is_key_import_with_the_files_sha256(tmp_path) -> None:
    """The schema names the audit `import`; the API answered `import_` before. The digest
    is computed here with hashlib over the bytes sent, the interval from the file's stamps."""
    import hashlib
    from pathlib import Path

    from fastapi.testclient import TestClient

    from api.config import Settings
    from api.main import create_app

    raw = (Path(__file__).parents[1] / "fixtures" / "perfmon" / "relog-two-hosts.csv").read_bytes()
    settings = Settings(db_path=tmp_path / "db.sqlite", token="t")
    with TestClient(create_app(settings)) as client:
        r = client.post("/imports/perfmon", content=raw, headers={"Authorization": "Bearer t"})
        assert r.status_code == 201, r.text
        doc = client.get(f"/runs/{r.json()['id']}/report").json()
    assert "import_" not in doc
    audit = doc["import"]
    assert audit["sha256"] == hashlib.sha256(raw).hexdigest()
    assert audit["interval_s"] == pytest.approx(15.0)  # the relog capture's 15 s samples
    assert audit["standard_sources"]  # how each standard row was derived, by host: counter
    assert all(": " in k for k in audit["standard_sources"])
