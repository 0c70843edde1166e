"""PerfMon captures that are hard to read right (issue 23): daylight-saving changes both
ways, damaged lines, holes in the capture, figures a check must compare unrounded. Files are
written here as relog/typeperf write them; expected times are computed here from UTC."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from alerts.thresholds import load_thresholds
from api.imports.perfmon import PerfmonError, parse
from api.services import checks, imports, reports
from api.store import Store

BERLIN = ZoneInfo("Europe/Berlin")
COUNTERS = ["\\\\SAPDB01\\Processor(_Total)\\% Processor Time", "\\\\SAPDB01\\Memory\\Pages/sec"]


def capture(zone: str, bias: int, stamps: list[datetime], extra: list[str] | None = None) -> bytes:
    """A relog CSV: the header with zone and bias, one row per local stamp."""
    head = ",".join(f'"{c}"' for c in [f"(PDH-CSV 4.0) ({zone})({bias})", *COUNTERS])
    rows = [
        f'"{t:%m/%d/%Y %H:%M:%S}.000","{10 + k % 7:.3f}","{k % 3:.3f}"'
        for k, t in enumerate(stamps)
    ]
    return ("\r\n".join([head, *rows, *(extra or [])]) + "\r\n").encode()


def berlin_walls(first_utc: datetime, count: int, step_s: int) -> list[datetime]:
    """The wall-clock stamps a Berlin machine writes for samples `step_s` apart in UTC."""
    return [
        (first_utc + timedelta(seconds=k * step_s)).astimezone(BERLIN).replace(tzinfo=None)
        for k in range(count)
    ]


@pytest.mark.parametrize(
    ("first_utc", "zone", "bias"),
    [
        # Spring forward: 29 March 2026, 02:00 CET -> 03:00 CEST; the capture starts in winter.
        (datetime(2026, 3, 28, 23, 30, tzinfo=UTC), "W. Europe Standard Time", -60),
        # Fall back: 25 October 2026, 03:00 CEST -> 02:00 CET; the hour 02:00-03:00 twice.
        (datetime(2026, 10, 24, 23, 30, tzinfo=UTC), "W. Europe Daylight Time", -120),
    ],
)
def test_a_daylight_saving_change_inside_a_capture_is_placed_by_the_zone(
    first_utc: datetime, zone: str, bias: int
) -> None:
    count, step = 24, 900  # six hours at 15 minutes, across the change
    walls = berlin_walls(first_utc, count, step)
    data = parse(capture(zone, bias, walls))
    assert data.start == first_utc
    assert data.end == first_utc + timedelta(seconds=(count - 1) * step)  # not an hour off
    assert list(data.times) == [k * step for k in range(count)]
    assert any("daylight-saving change" in n for n in data.notes)


def test_a_stamp_that_does_not_exist_in_the_zone_is_refused_naming_its_line() -> None:
    walls = [datetime(2026, 3, 29, 1, 45), datetime(2026, 3, 29, 2, 30)]  # 02:30 never was
    with pytest.raises(PerfmonError, match=r"line 3, column 1: .*does not exist in W. Europe"):
        parse(capture("W. Europe Standard Time", -60, walls))


def test_without_a_zone_it_knows_a_change_back_is_refused_and_forward_is_a_gap(tmp_path) -> None:
    walls = berlin_walls(datetime(2026, 10, 24, 23, 30, tzinfo=UTC), 24, 900)
    with pytest.raises(PerfmonError) as info:
        parse(capture("Mars Standard Time", -120, walls))
    back = next(k for k in range(1, 24) if walls[k] < walls[k - 1])
    assert f"line {back + 2}, column 1" in str(info.value)
    assert "split the capture with relog -b/-e" in str(info.value)
    # Forward: the hour the clock skipped is a hole in the data, reported as one.
    store = Store(tmp_path / "db.sqlite")
    walls = berlin_walls(datetime(2026, 3, 28, 23, 30, tzinfo=UTC), 24, 900)
    run = imports.store_perfmon(store, capture("Mars Standard Time", -60, walls), "t")
    gaps = reports.report(store, run.id, load_thresholds())["gaps"]
    assert [(g["kind"], g["duration_s"]) for g in gaps] == [("no_data", 3600.0 + 900.0)]


def test_a_hole_in_a_capture_is_reported_like_a_prometheus_gap(tmp_path) -> None:
    first = datetime(2026, 11, 23, 8, 0)
    walls = [first + timedelta(seconds=15 * k) for k in range(40)]
    walls += [walls[-1] + timedelta(minutes=12) + timedelta(seconds=15 * k) for k in range(40)]
    store = Store(tmp_path / "db.sqlite")
    run = imports.store_perfmon(store, capture("W. Europe Standard Time", -60, walls), "t")
    rep = reports.report(store, run.id, load_thresholds())
    (gap,) = rep["gaps"]
    assert gap["start_s"] == 39 * 15 and gap["end_s"] == 39 * 15 + 720
    assert gap["start"] == "2026-11-23T07:09:45+00:00"
    assert rep["benchmark"] == {}  # no dialog steps: BAIT has nothing to judge either way
    page = reports.page(store, run.id, load_thresholds())
    assert "2026-11-23T07:09:45+00:00" in page


def test_lines_of_nul_bytes_are_counted_and_shown_a_damaged_row_is_refused(tmp_path) -> None:
    walls = [datetime(2026, 11, 23, 8, 0) + timedelta(seconds=15 * k) for k in range(5)]
    tail = ["\0" * 200, "\0" * 50]  # a log cut short by a crash: its preallocated tail
    store = Store(tmp_path / "db.sqlite")
    run = imports.store_perfmon(store, capture("W. Europe Standard Time", -60, walls, tail), "t")
    audit = reports.report(store, run.id, load_thresholds())["import"]
    assert audit["damaged_lines"] == [7, 8]
    assert any("2 line(s) of NUL bytes" in w for w in audit["warnings"])
    assert "NUL bytes skipped" in reports.page(store, run.id, load_thresholds())
    raw = capture("W. Europe Standard Time", -60, walls).decode().splitlines()
    raw[3] = "\x7f" + raw[3][1:]  # the row's first byte damaged
    with pytest.raises(PerfmonError, match=r"line 4, column 1: a row of 3 cells starting with"):
        parse("\r\n".join(raw).encode())
    raw = capture("W. Europe Standard Time", -60, walls).decode().splitlines()
    raw[2] = raw[2][:30] + "\0\0" + raw[2][30:]
    with pytest.raises(PerfmonError, match=r"line 3, column 2: NUL bytes inside the line"):
        parse("\r\n".join(raw).encode())


def test_os_figures_are_compared_unrounded(tmp_path) -> None:
    """Avg. Disk sec/Read 0.00418 passed `max: 0.0041` once rounded to 0.004."""
    head = (
        '"(PDH-CSV 4.0) (W. Europe Standard Time)(-60)",'
        '"\\\\SAPDB01\\PhysicalDisk(_Total)\\Avg. Disk sec/Read"\r\n'
    )
    rows = "".join(f'"11/23/2026 08:00:{15 * k:02d}.000","0.00418"\r\n' for k in range(4))
    store = Store(tmp_path / "db.sqlite")
    run = imports.store_perfmon(store, (head + rows).encode(), "t")
    figure = "os.sapdb01.physicaldisk_total_avg_disk_sec_read.avg"
    sla = f"criteria:\n  - figure: {figure}\n    max: 0.0041\n"
    result = checks.check(store, run.id, load_thresholds(), sla)
    (bound,) = [c for c in result["criteria"] if c["source"] == "sla"]
    assert bound["status"] == "failed" and bound["value"] == pytest.approx(0.00418)


ENGLISH = [
    "Processor(_Total)\\% Processor Time",
    "Memory\\Available MBytes",
    "Memory\\Pages/sec",
    "PhysicalDisk(_Total)\\Avg. Disk Queue Length",
    "PhysicalDisk(_Total)\\Avg. Disk sec/Read",
    "Network Interface(vmxnet3)\\Bytes Total/sec",
]
GERMAN = [
    "Prozessor(_Total)\\Prozessorzeit (%)",
    "Arbeitsspeicher\\Verfügbare MB",
    "Arbeitsspeicher\\Seiten/s",
    "Physikalischer Datenträger(_Total)\\Mittlere Warteschlangenlänge des Datenträgers",
    "Physikalischer Datenträger(_Total)\\Mittlere Sek./Lesevorgänge",
    "Netzwerkschnittstelle(vmxnet3)\\Bytes gesamt/s",
]


def _two_captures() -> tuple[bytes, bytes]:
    """One capture, as an English Windows writes it (CSV, UTF-8) and as a German one's
    spreadsheet saves it (';', decimal comma, DD.MM.YYYY, Windows-1252)."""
    rows = [[12.5 + k, 4096.0 - k, 0.25 * k, 1.5, 0.00418 + k / 1e5, 1e6 + k] for k in range(8)]
    stamps = [datetime(2026, 11, 23, 8, 0) + timedelta(seconds=15 * k) for k in range(8)]
    zone = "(PDH-CSV 4.0) (W. Europe Standard Time)(-60)"
    en = [",".join(f'"{c}"' for c in [zone, *(f"\\\\SAPDB01\\{p}" for p in ENGLISH)])]
    de = [";".join(f'"{c}"' for c in [zone, *(f"\\\\SAPDB01\\{p}" for p in GERMAN)])]
    for t, values in zip(stamps, rows, strict=True):
        en.append(",".join([f'"{t:%m/%d/%Y %H:%M:%S}.000"', *(f'"{v!r}"' for v in values)]))
        de.append(
            ";".join(
                [f'"{t:%d.%m.%Y %H:%M:%S},000"', *(f'"{v!r}"'.replace(".", ",") for v in values)]
            )
        )
    return ("\r\n".join(en) + "\r\n").encode(), ("\r\n".join(de) + "\r\n").encode("cp1252")


def test_a_german_capture_gives_the_english_capture_s_rows_and_figures(tmp_path) -> None:
    en, de = _two_captures()
    store = Store(tmp_path / "db.sqlite")
    reps = [
        reports.report(store, imports.store_perfmon(store, raw, "t").id, load_thresholds())
        for raw in (en, de)
    ]
    rows = [{r["key"]: r for r in rep["os_counters"]} for rep in reps]
    assert set(rows[0]) == set(rows[1])
    assert {"cpu_pct", "available_mb", "pages_per_s", "disk_queue"} <= set(rows[1])
    for key, row in rows[0].items():
        for stat in ("avg", "min", "max", "samples"):
            assert rows[1][key][stat] == pytest.approx(row[stat], rel=1e-12), (key, stat)
        assert rows[1][key]["counter"] == row["counter"]  # stored under the English name
    assert rows[1]["cpu_pct"]["avg"] == pytest.approx(12.5 + 3.5)
    assert reps[1]["run"].start == reps[0]["run"].start
    data = store.runs.data(reps[1]["run"].id)
    assert data.meta.details["encoding"] == "cp1252"
    written = set(data.meta.details["localized_names"].values())
    assert "Physikalischer Datenträger(_Total)\\Mittlere Sek./Lesevorgänge" in written


def test_a_file_that_is_no_capture_is_described_not_guessed() -> None:
    with pytest.raises(PerfmonError, match=r"starts with text 'Task type'"):
        parse(b"Task type,Steps\r\nDIALOG,1\r\n")
    with pytest.raises(PerfmonError, match=r"starts with binary data"):
        parse(b"\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f\x10,\x11\r\n")
