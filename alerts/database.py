"""database.rules.yml: DB2 buffer-pool hit ratios and I/O cleaners (seed 000 4.2.3, Table 3)."""

from __future__ import annotations

from collections.abc import Mapping

from alerts.rules import SID, RuleFile, alert, number, record, value

WHY = """
DB2 buffer pools (seed 000 section 4.2.3 and Table 3), from the snapshot counters the
dbbuffer collector exports. Hit ratio = 1 - physical / logical reads, data and index
apart, where at least 10 logical reads/s ran. The paper gives no DB2 floor: the usual DB2
OLTP floors (thresholds.yml) sit below the healthy benchmark model (MIX4K data 94 %,
MIX4KIX index 97 %).
"""
# Texts per page type: what the pool misses and what the benchmark did about it (Table 4).
PAGE_TYPES = {
    "data": (
        "tables",
        "give its hottest tables a pool of their own, as the benchmark did with its seven "
        "pools (Table 4).",
    ),
    "index": ("indexes", "move the indexes to a pool of their own (the benchmark's MIX4KIX)."),
}


def hit_ratio(page_type: str) -> str:
    return f"sid_bufferpool:sap_db_bufferpool_{page_type}_hit_ratio:ratio5m"


def sync_writes(page_type: str) -> str:
    """Pages written synchronously by agents because the I/O cleaners fell behind."""
    return f"sid:sap_db_bufferpool_sync_{page_type}_writes:rate5m"


def _recording() -> list[dict]:
    by = "sum by (sid, bufferpool)"
    ratios = [
        record(
            hit_ratio(p),
            f"1 - {by} (rate(sap_db_bufferpool_{p}_physical_reads_total[5m]))\n"
            f"  / ({by} (rate(sap_db_bufferpool_{p}_logical_reads_total[5m])) >= 10)\n",
        )
        for p in PAGE_TYPES
    ]
    writes = [
        record(
            sync_writes(p),
            f"sum by (sid) (rate(sap_db_bufferpool_{p}_writes_total[5m]))\n"
            f"  - sum by (sid) (rate(sap_db_bufferpool_async_{p}_writes_total[5m]))\n",
        )
        for p in PAGE_TYPES
    ]
    return ratios + writes


def _hit_ratio_alert(page_type: str, floor: float) -> dict:
    what, remedy = PAGE_TYPES[page_type]
    pct = number(100 * floor)
    return alert(
        "SAPDB2BufferPoolHitRatioLow",
        f"100 * {hit_ratio(page_type)} < {pct}",
        for_="10m",
        severity="warning",
        labels={"page_type": page_type},
        summary=f"A DB2 buffer pool misses too many {page_type} pages.",
        description=f"Buffer pool {{{{ $labels.bufferpool }}}} of {SID} finds "
        f"{value('%.1f')} % of {page_type} pages in memory (below {pct} %).",
        diagnosis=f"Too little memory for the pool's {what} forces physical reads (seed 000, "
        f"4.2.3). Enlarge the pool or {remedy}",
    )


def _cleaners_alert() -> dict:
    # More than 1 % of the writes synchronous, for data and index pages alike: Table 3's
    # condition, with room for the odd page an agent writes itself.
    behind = [
        f"({sync_writes(p)} > 0.01 * sum by (sid) (rate(sap_db_bufferpool_{p}_writes_total[5m])))"
        for p in PAGE_TYPES
    ]
    return alert(
        "SAPDB2IOCleanersBehind",
        "\nand on(sid)\n".join(behind) + "\n",
        for_="10m",
        severity="warning",
        summary="DB2 agents write dirty pages themselves because the I/O cleaners fall behind.",
        description=f"{SID}: {value('%.0f')} data pages/s are written "
        "synchronously (pool_data_writes > pool_async_data_writes, and likewise for index pages).",
        diagnosis="When both pool_data_writes > pool_async_data_writes and pool_index_writes > "
        "pool_async_index_writes, increase NUM_IOCLEANERS (seed 000, Table 3); too many cleaners "
        "cost CPU.",
    )


def rule_file(limits: Mapping[str, float]) -> RuleFile:
    alerts = [_hit_ratio_alert(p, limits[f"db2_{p}_hit_ratio_min"]) for p in PAGE_TYPES]
    return RuleFile(
        "database.rules.yml",
        WHY,
        [
            {"name": "sap-database-recording", "rules": _recording()},
            {"name": "sap-database", "rules": [*alerts, _cleaners_alert()]},
        ],
    )
