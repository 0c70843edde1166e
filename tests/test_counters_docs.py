"""The Windows Telegraf file collects the seed 003 counters; docs/counters.md maps them."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SEED_003 = {  # FACTS.md section 5: counters reported as avg/min/max over a 4-hour run
    ("Memory", "Pages/sec"),
    ("PhysicalDisk", "Avg. Disk Queue Length"),
    ("Processor", "% Processor Time"),
    ("Memory", "Available MBytes"),
}


def test_windows_telegraf_config_collects_the_seed_003_counters() -> None:
    doc = tomllib.loads(
        (REPO / "provisioning" / "telegraf" / "windows" / "telegraf.conf").read_text()
    )
    objects = doc["inputs"]["win_perf_counters"][0]["object"]
    collected = {(o["ObjectName"], c) for o in objects for c in o["Counters"]}
    assert collected >= SEED_003
    assert doc["global_tags"]["sid"] == "${WLMON_SID}"


def test_counters_doc_maps_every_seed_003_counter_across_four_tools() -> None:
    text = (REPO / "docs" / "counters.md").read_text()
    for obj, counter in SEED_003:
        row = next(
            (
                line
                for line in text.splitlines()
                if f"{obj}\\\\{counter}" in line or f"{obj}\\{counter}" in line
            ),
            None,
        )
        assert row, f"{obj}\\{counter} missing from docs/counters.md"
        assert row.count("|") >= 7, (
            row
        )  # PerfMon, windows_exporter, Telegraf, node_exporter, unit, differs
