"""I/O wait and network in the report (issue 23 item 4), only where the data has them: a
PerfMon capture with disks and NICs, written here as relog writes it, against mean, p95 and
maximum computed here with `statistics`; a capture without them has no such section."""

from __future__ import annotations

import statistics
from datetime import datetime, timedelta

import pytest

from alerts.thresholds import load_thresholds
from api.runs.html import render
from api.runs.record import FaultWindow
from api.runs.report import build_report, figures
from api.schemas import Report
from api.services import imports, reports
from api.store import Store

ZONE = "(PDH-CSV 4.0) (W. Europe Standard Time)(-60)"
N = 40
# path -> (section, value at sample k); None where the sample is blank (" ").
DISKS = {
    "\\\\SAPDB01\\PhysicalDisk(0 C:)\\Avg. Disk sec/Read": ("io_wait", lambda k: 0.004 + k / 1e4),
    "\\\\SAPDB01\\PhysicalDisk(1 D:)\\Avg. Disk sec/Write": (
        "io_wait",
        lambda k: None if k == 7 else 0.011 + (k % 9) / 1e3,
    ),
    "\\\\SAPDB01\\LogicalDisk(D:)\\% Idle Time": ("io_wait", lambda k: 90.0 - (k % 13)),
    "\\\\SAPDB01\\PhysicalDisk(_Total)\\Avg. Disk Queue Length": ("io_wait", lambda k: k / 8),
    "\\\\SAPDB01\\Processor(_Total)\\% Privileged Time": ("io_wait", lambda k: 5 + k % 4),
    "\\\\SAPDB01\\Processor(_Total)\\% Interrupt Time": ("io_wait", lambda k: 0.5 + k % 3 / 10),
    "\\\\SAPDB01\\Network Interface(vmxnet3)\\Bytes Total/sec": (
        "network",
        lambda k: 1.25e6 + 3e4 * (k % 11),
    ),
    "\\\\SAPAPP01\\Network Interface(vmxnet3 _2)\\Output Queue Length": (
        "network",
        lambda k: float(k % 5 == 0),
    ),
}
PLAIN = {  # neither section: CPU, memory and a per-CPU privileged time
    "\\\\SAPDB01\\Processor(_Total)\\% Processor Time": (None, lambda k: 40.0 + k % 7),
    "\\\\SAPDB01\\Memory\\Available MBytes": (None, lambda k: 8192.0 - k),
    "\\\\SAPDB01\\Processor(0)\\% Privileged Time": (None, lambda k: 9.0),
}


def capture(counters: dict) -> bytes:
    head = ",".join(f'"{c}"' for c in [ZONE, *counters])
    rows = [head]
    for k in range(N):
        t = datetime(2026, 11, 23, 8, 0) + timedelta(seconds=15 * k)
        cells = [f(k) for _, f in counters.values()]
        rows.append(
            ",".join(
                [
                    f'"{t:%m/%d/%Y %H:%M:%S}.000"',
                    *('" "' if v is None else f'"{v!r}"' for v in cells),
                ]
            )
        )
    return ("\r\n".join(rows) + "\r\n").encode()


def _p95(values: list[float]) -> float:
    """Linear between the two nearest order statistics (the 'inclusive' method)."""
    return statistics.quantiles(values, n=20, method="inclusive")[18]


@pytest.fixture(scope="module")
def with_disks(tmp_path_factory) -> tuple[Store, dict]:
    store = Store(tmp_path_factory.mktemp("ionet") / "db.sqlite")
    run = imports.store_perfmon(store, capture({**DISKS, **PLAIN}), "disks")
    return store, reports.report(store, run.id, load_thresholds())


def test_io_wait_and_network_rows_equal_an_independent_calculation(with_disks) -> None:
    _, rep = with_disks
    Report.model_validate(rep)  # the API's schema accepts the new sections
    got = {(r["host"], r["counter"]): r for section in ("io_wait", "network") for r in rep[section]}
    expect = {}
    for path, (section, f) in DISKS.items():
        host, counter = path[2:].split("\\", 1)
        values = [v for v in (f(k) for k in range(N)) if v is not None]
        if counter.endswith("Avg. Disk Queue Length"):  # the report's standard row
            counter = "PhysicalDisk\\Avg. Disk Queue Length"
        expect[(host.lower(), counter)] = (section, values)
    assert set(got) == set(expect)
    for key, (section, values) in expect.items():
        row = got[key]
        assert row in rep[section]
        assert row["samples"] == len(values)  # the blank sample is absent, not 0
        # Unrounded: equal to a few ulps, not to display digits.
        assert row["mean"] == pytest.approx(statistics.fmean(values), rel=1e-12)
        assert row["p95"] == pytest.approx(_p95(values), rel=1e-12)
        assert row["max"] == max(values)
    read = got[("sapdb01", "PhysicalDisk(0 C:)\\Avg. Disk sec/Read")]
    assert read["unit"] == "s" and read["p95"] != round(read["p95"], 3)
    # A check can bound the p95.
    assert figures(rep)[f"os.sapdb01.{read['key']}.p95"][0] == read["p95"]


def test_a_capture_without_disks_or_nics_has_no_such_section(tmp_path) -> None:
    store = Store(tmp_path / "db.sqlite")
    # The standard disk queue alone (all a model run has) is charted with the OS counters:
    # it makes no I/O section.
    queue = {"\\\\SAPDB01\\PhysicalDisk(_Total)\\Avg. Disk Queue Length": (None, lambda k: 1.0)}
    run = imports.store_perfmon(store, capture({**PLAIN, **queue}), "plain")
    rep = reports.report(store, run.id, load_thresholds())
    assert "io_wait" not in rep and "network" not in rep
    assert "disk_queue" in {r["key"] for r in rep["os_counters"]}
    page = reports.page(store, run.id, load_thresholds())
    assert 'id="io_wait"' not in page and 'id="network"' not in page
    assert "#io_wait" not in page  # nor in the table of contents


def test_the_page_shows_tables_in_ms_and_charts_with_the_fault_shaded(with_disks) -> None:
    store, rep = with_disks
    run, data = reports.load(store, rep["run"].id)
    data.meta.fault_windows.append(FaultWindow("disk-latency", 150.0, 300.0))
    rep = build_report(run, data, thresholds=load_thresholds())
    page = render(rep, data, load_thresholds())
    for section in ("io_wait", "network"):
        assert f'id="{section}"' in page and f'href="#{section}"' in page
    read = next(r for r in rep["io_wait"] if r["counter"].endswith("sec/Read"))
    # 5.950 ms, where the seconds at three decimals would show 0.006.
    assert f"{1000 * read['mean']:,.3f}" in page
    nic = next(r for r in rep["network"] if r["counter"].endswith("Bytes Total/sec"))
    assert f"{nic['mean'] / 1e6:,.3f}" in page  # MB/s of 10^6 bytes
    for slug in ("chart-io-wait-avg-disk-sec-read", "chart-network-bytes-total-sec"):
        start = page.index(f'<figure id="{slug}"')
        figure = page[start : page.index("</figure>", start)]
        assert f'id="{slug}-fault-0"' in figure and "disk-latency" in figure
