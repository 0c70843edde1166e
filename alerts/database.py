"""database.rules.yml: DB2 buffer-pool hit ratios and I/O cleaners (seed 000 4.2.3, Table 3)."""

from __future__ import annotations

from alerts.rules import SID, RuleFile, alert, number, record, value
from alerts.settings import MonitoringConfig
from alerts.workload import KEEP_FIRING, PAGE_FOR
from exporters.vocabulary import CAUSE_DATABASE

WHY = """
DB2 buffer pools (seed 000 section 4.2.3 and Table 3), from the snapshot counters the
dbbuffer collector exports. Hit ratio = 1 - physical / logical reads, data and index
apart, where at least 10 logical reads/s ran. The paper gives no DB2 floor: the usual DB2
OLTP floors (thresholds.yml) sit below the healthy benchmark model (MIX4K data 94 %,
MIX4KIX index 97 %).

The database host behind slow DB requests (seed 000 4.3.5.1 rule 2 and 4.2.3), as
warnings labelled cause="database", so they travel in one message with each other, to
the NOC, while SAPDatabaseRequestTimeHigh pages: its CPU (5-minute busy share, node
exporter names), its disk queue (outstanding I/Os, node_disk_io_time_weighted_seconds)
and the buffer pools' physical reads per dialog step (load-independent). The host is the
one sap_host_info names with the role database. Disk queue and physical reads read 1-minute
rates with the pages' for: and keep_firing_for, so they arrive with the DB page and
resolve with it; the CPU's 5 minutes, because a busy database host is no fault by itself.
Telegraf re-exposes the exporter's host counters under its own job: `max by` keeps one.
Both read the host's own clock, not the wall's: the CPU's busy share is idle seconds over
all its seconds, the disk queue's weighted I/O seconds per second of the CPUs' summed modes
(one second per second of the host's time), so the model reads the same at any speed.
"""
DB_HOST = 'sap_host_info{role=~"(.*[+])?database([+].*)?"}'
CPU_BUSY = "sid_host:sap_db_host_cpu_busy:ratio5m"
DISK_QUEUE = "sid_host:sap_db_host_disk_queue:rate1m"
READS_PER_STEP = "sid:sap_db_physical_reads_per_dialog_step:rate1m"
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
        labels={"page_type": page_type, "cause": CAUSE_DATABASE},
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
        labels={"cause": CAUSE_DATABASE},
        summary="DB2 agents write dirty pages themselves because the I/O cleaners fall behind.",
        description=f"{SID}: {value('%.0f')} data pages/s are written "
        "synchronously (pool_data_writes > pool_async_data_writes, and likewise for index pages).",
        diagnosis="When both pool_data_writes > pool_async_data_writes and pool_index_writes > "
        "pool_async_index_writes, increase NUM_IOCLEANERS (seed 000, Table 3); too many cleaners "
        "cost CPU.",
    )


def _host_recording(config: MonitoringConfig) -> list[dict]:
    guard = number(config.thresholds.min_steps_per_second)
    on_db = f"and on(sid, host) {DB_HOST}"
    reads = " + ".join(
        f"sum by (sid) (max by (sid, bufferpool) "
        f"(rate(sap_db_bufferpool_{p}_physical_reads_total[1m])))"
        for p in PAGE_TYPES
    )
    # The host's own clock: each CPU's seconds over all modes advance one second per second
    # of the host's time (wall time on a real host, simulated time on the model's, however
    # fast it runs). Rates of the host's counters are read per second of that clock, never
    # per wall second, so a model at 10x speed does not show ten times the disk queue.
    cpu_all = "max by (sid, host, cpu, mode) (rate(node_cpu_seconds_total[{w}]))"
    clock = "avg by (sid, host) (sum by (sid, host, cpu) (" + cpu_all + "))"
    return [
        record(
            CPU_BUSY,
            "1 - sum by (sid, host) (max by (sid, host, cpu) "
            '(rate(node_cpu_seconds_total{mode="idle"}[5m])))\n'
            "  / sum by (sid, host) (" + cpu_all.format(w="5m") + f")\n{on_db}\n",
        ),
        record(
            DISK_QUEUE,
            "sum by (sid, host) (max by (sid, host, device) "
            "(rate(node_disk_io_time_weighted_seconds_total[1m])))\n"
            "  / on(sid, host) " + clock.format(w="1m") + f"\n{on_db}\n",
        ),
        record(
            READS_PER_STEP,
            f"({reads})\n  / (sum by (sid) (rate(sap_workload_steps_total"
            f'{{task_type="dialog"}}[1m])) >= {guard})\n',
        ),
    ]


def _host_alerts(config: MonitoringConfig) -> list[dict]:
    cause = {"cause": CAUSE_DATABASE}
    host = "{{ $labels.host }} ({{ $labels.sid }})"
    cpu, queue = config.thresholds.db_host_cpu_busy_max, config.thresholds.db_disk_queue_max
    reads = config.thresholds.db_physical_reads_per_step_max
    return [
        alert(
            "SAPDatabaseHostCPUBusy",
            f"{CPU_BUSY} >= {number(cpu)}",
            for_="5m",
            keep_firing_for=KEEP_FIRING,
            held_value=CPU_BUSY,
            severity="warning",
            labels=cause,
            summary="The database host has no CPU left.",
            description=f"The database host {host} is {{{{ $value | humanizePercentage }}}} busy "
            f"over 5 minutes (warns from {number(100 * cpu)} %).",
            diagnosis="Every DB request queues for a processor: expensive statements (ST05, "
            "the SQL cache), too many work processes in total (seed 000, 4.3.2), or other "
            "work on the host. Physical reads cost CPU too (the I/O path).",
        ),
        alert(
            "SAPDatabaseDiskQueueHigh",
            f"{DISK_QUEUE} > {number(queue)}",
            for_=PAGE_FOR,
            keep_firing_for=KEEP_FIRING,
            held_value=DISK_QUEUE,
            severity="warning",
            labels=cause,
            summary="I/Os queue on the database host's disks.",
            description=f"The disks of the database host {host} have {value('%.0f')} I/Os "
            f"outstanding on average over the last minute (warns above {number(queue)}).",
            diagnosis="The disks cannot serve the reads and writes asked of them: more physical "
            "reads than usual (a buffer pool too small, a new expensive statement), or a slow "
            "or failing disk. More than 2 outstanding I/Os per spindle is a bottleneck; spread "
            "the tablespaces over more disks or enlarge the buffer pools (seed 000, 4.2.3).",
        ),
        alert(
            "SAPDatabasePhysicalReadsHigh",
            f"{READS_PER_STEP} > {number(reads)}",
            for_=PAGE_FOR,
            keep_firing_for=KEEP_FIRING,
            held_value=READS_PER_STEP,
            severity="warning",
            labels=cause,
            summary="The buffer pools read more pages from disk per dialog step than usual.",
            description=f"{SID} reads {value('%.1f')} pages from disk per dialog step over the "
            f"last minute (warns above {number(reads)}).",
            diagnosis="The buffer pools miss pages they used to hold: a pool shrank or a table "
            "grew past it (seed 000, 4.2.3 and Table 4), or a statement scans (ST05). Each "
            "miss is a disk read a DB request waits for; compare the pools' hit ratios.",
        ),
    ]


def rule_file(config: MonitoringConfig) -> RuleFile:
    alerts = [_hit_ratio_alert(p, config.thresholds.db2_hit_ratio_min(p)) for p in PAGE_TYPES]
    return RuleFile(
        "database.rules.yml",
        WHY,
        [
            {"name": "sap-database-recording", "rules": [*_recording(), *_host_recording(config)]},
            {
                "name": "sap-database",
                "rules": [*alerts, _cleaners_alert(), *_host_alerts(config)],
            },
        ],
    )
