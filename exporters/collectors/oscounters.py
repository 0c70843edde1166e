"""OS counters of the model's hosts, named as windows_exporter and node_exporter name them.

The seed 003 PerfMon counters (Memory\\Pages/sec, PhysicalDisk\\Avg. Disk Queue Length,
Processor\\% Processor Time, Memory\\Available MBytes) and their Linux equivalents, with a
`host` label, so one dashboard reads simulated and real hosts alike. Avg. Disk Queue
Length is `rate(windows_physical_disk_read_seconds_total + ..._write_seconds_total)`, as
PerfMon's "% Disk Read Time" is the read queue length x 100; on Linux it is
`rate(node_disk_io_time_weighted_seconds_total)`. Each simulated host shows one disk: the
roll-file disk on application servers, the data array (one LUN) on the database server.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    Metric,
    UnknownMetricFamily,
)

from exporters.collectors.base import SnapshotCollector
from exporters.model.engine import Snapshot


class OSCountersCollector(SnapshotCollector):
    name = "oscounters"

    def describe_families(self) -> Iterable[Metric]:
        return self._families(None)

    def families(self, snap: Snapshot) -> Iterable[Metric]:
        return self._families(snap)

    def _families(self, snap: Snapshot | None) -> Iterator[Metric]:
        w_cpu = CounterMetricFamily(
            "windows_cpu_time_total",
            "Time processors spent in each mode (Processor\\% Processor Time).",
            labels=["sid", "host", "core", "mode"],
        )
        w_avail = GaugeMetricFamily(
            "windows_memory_available_bytes", "Memory\\Available Bytes.", labels=["sid", "host"]
        )
        w_pages = CounterMetricFamily(
            "windows_memory_swap_page_operations_total",
            "Pages read from or written to disk (Memory\\Pages/sec).",
            labels=["sid", "host"],
        )
        disk_labels = ["sid", "host", "disk"]
        w_rsec = CounterMetricFamily(
            "windows_physical_disk_read_seconds_total",
            "PhysicalDisk\\% Disk Read Time as seconds; its rate is Avg. Disk Read Queue Length.",
            labels=disk_labels,
        )
        w_wsec = CounterMetricFamily(
            "windows_physical_disk_write_seconds_total",
            "PhysicalDisk\\% Disk Write Time as seconds; its rate is Avg. Disk Write Queue Length.",
            labels=disk_labels,
        )
        w_reads = CounterMetricFamily(
            "windows_physical_disk_reads_total", "PhysicalDisk\\Disk Reads/sec.", labels=disk_labels
        )
        w_writes = CounterMetricFamily(
            "windows_physical_disk_writes_total",
            "PhysicalDisk\\Disk Writes/sec.",
            labels=disk_labels,
        )
        n_cpu = CounterMetricFamily(
            "node_cpu_seconds_total",
            "Seconds the CPUs spent in each mode.",
            labels=["sid", "host", "cpu", "mode"],
        )
        n_avail = GaugeMetricFamily(
            "node_memory_MemAvailable_bytes",
            "Memory information field MemAvailable_bytes.",
            labels=["sid", "host"],
        )
        n_total = GaugeMetricFamily(
            "node_memory_MemTotal_bytes",
            "Memory information field MemTotal_bytes.",
            labels=["sid", "host"],
        )
        n_pswpin = UnknownMetricFamily(
            "node_vmstat_pswpin", "/proc/vmstat information field pswpin.", labels=["sid", "host"]
        )
        n_pswpout = UnknownMetricFamily(
            "node_vmstat_pswpout", "/proc/vmstat information field pswpout.", labels=["sid", "host"]
        )
        dev_labels = ["sid", "host", "device"]
        n_weighted = CounterMetricFamily(
            "node_disk_io_time_weighted_seconds",
            "The weighted # of seconds spent doing I/Os.",
            labels=dev_labels,
        )
        n_reads = CounterMetricFamily(
            "node_disk_reads_completed",
            "The total number of reads completed successfully.",
            labels=dev_labels,
        )
        n_writes = CounterMetricFamily(
            "node_disk_writes_completed",
            "The total number of writes completed successfully.",
            labels=dev_labels,
        )
        if snap is not None:
            t, sid = snap.totals, snap.sid
            sys_share = snap.os_system_cpu_share
            for h, host in enumerate(snap.os_hosts):
                cpus = snap.os_cpus[h]
                busy = t.os_cpu_busy_seconds[h] / cpus
                idle = max(0.0, t.sim_time - busy)
                for c in range(cpus):
                    for mode, value in (
                        ("idle", idle),
                        ("user", busy * (1 - sys_share)),
                        ("privileged", busy * sys_share),
                    ):
                        w_cpu.add_metric([sid, host, f"0,{c}", mode], value)
                        n_cpu.add_metric(
                            [sid, host, str(c), "system" if mode == "privileged" else mode], value
                        )
                w_avail.add_metric([sid, host], snap.os_available_bytes[h])
                n_avail.add_metric([sid, host], snap.os_available_bytes[h])
                n_total.add_metric([sid, host], float(snap.os_memory_bytes[h]))
                w_pages.add_metric([sid, host], float(t.os_page_ops[h]))
                n_pswpin.add_metric([sid, host], float(t.os_page_ops[h] // 2))
                n_pswpout.add_metric([sid, host], float(t.os_page_ops[h] - t.os_page_ops[h] // 2))
                reads, writes = float(t.os_disk_reads[h]), float(t.os_disk_writes[h])
                queue = float(t.os_disk_queue_seconds[h])
                read_share = reads / (reads + writes) if reads + writes else 0.5
                disk, device = ("1", "sdb") if h == len(snap.os_hosts) - 1 else ("0 C:", "sda")
                w_rsec.add_metric([sid, host, disk], queue * read_share)
                w_wsec.add_metric([sid, host, disk], queue * (1 - read_share))
                w_reads.add_metric([sid, host, disk], reads)
                w_writes.add_metric([sid, host, disk], writes)
                n_weighted.add_metric([sid, host, device], queue)
                n_reads.add_metric([sid, host, device], reads)
                n_writes.add_metric([sid, host, device], writes)
        yield from (
            w_cpu,
            w_avail,
            w_pages,
            w_rsec,
            w_wsec,
            w_reads,
            w_writes,
            n_cpu,
            n_avail,
            n_total,
            n_pswpin,
            n_pswpout,
            n_weighted,
            n_reads,
            n_writes,
        )
