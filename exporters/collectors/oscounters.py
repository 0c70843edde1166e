"""OS counters of the system's hosts, named as windows_exporter and node_exporter name them.

The seed 003 PerfMon counters (Memory\\Pages/sec, PhysicalDisk\\Avg. Disk Queue Length,
Processor\\% Processor Time, Memory\\Available MBytes) and their Linux equivalents, with a
`host` label, so one dashboard reads simulated and real hosts alike. Avg. Disk Queue
Length is `rate(windows_physical_disk_read_seconds_total + ..._write_seconds_total)`, as
PerfMon's "% Disk Read Time" is the read queue length x 100; on Linux it is
`rate(node_disk_io_time_weighted_seconds_total)`. Each host shows one disk.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    Metric,
    UnknownMetricFamily,
)

from exporters.collectors.base import SourceCollector

# CPU modes as node_exporter names them; windows_exporter calls "system" "privileged".
CPU_MODES = ("idle", "user", "system")


@dataclass(frozen=True)
class HostCounters:
    """One host's counters since its start (seconds, pages, I/Os) and memory now."""

    host: str
    cpu_seconds: Sequence[Mapping[str, float]]  # per CPU: CPU_MODES -> seconds
    memory_bytes: float
    available_bytes: float
    pages_in: float
    pages_out: float
    disk: str  # the PhysicalDisk instance, as windows_exporter labels it
    device: str  # the block device, as node_exporter labels it
    disk_reads: float
    disk_writes: float
    disk_read_seconds: float  # outstanding reads integrated over time
    disk_write_seconds: float
    disk_weighted_seconds: float  # outstanding I/Os integrated over time
    # What the host runs: database, central_services, application, "+"-joined (two-tier).
    role: str = ""


@dataclass(frozen=True)
class OSCounters:
    sid: str
    hosts: Sequence[HostCounters]


class OSCounterSource(Protocol):
    def os_counters(self) -> OSCounters: ...


class OSCountersCollector(SourceCollector[OSCounterSource, OSCounters]):
    def read(self) -> OSCounters:
        return self.source.os_counters()

    def families(self, reading: OSCounters | None) -> Iterator[Metric]:
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
        # Neither exporter knows what a host is for; the landscape does. An info metric, so
        # dashboards name "penguin1 (database)" by joining on host.
        info = GaugeMetricFamily(
            "sap_host_info",
            "1 for each host of the system, labelled with what it runs: database, "
            "central_services (message and enqueue server), application ('+' joins the parts "
            "a shared host runs).",
            labels=["sid", "host", "role"],
        )
        if reading is not None:
            sid = reading.sid
            for h in reading.hosts:
                if h.role:
                    info.add_metric([sid, h.host, h.role], 1)
                for c, modes in enumerate(h.cpu_seconds):
                    for mode in CPU_MODES:
                        windows_mode = "privileged" if mode == "system" else mode
                        w_cpu.add_metric([sid, h.host, f"0,{c}", windows_mode], modes[mode])
                        n_cpu.add_metric([sid, h.host, str(c), mode], modes[mode])
                w_avail.add_metric([sid, h.host], h.available_bytes)
                n_avail.add_metric([sid, h.host], h.available_bytes)
                n_total.add_metric([sid, h.host], h.memory_bytes)
                w_pages.add_metric([sid, h.host], h.pages_in + h.pages_out)
                n_pswpin.add_metric([sid, h.host], h.pages_in)
                n_pswpout.add_metric([sid, h.host], h.pages_out)
                disk, device = [sid, h.host, h.disk], [sid, h.host, h.device]
                w_rsec.add_metric(disk, h.disk_read_seconds)
                w_wsec.add_metric(disk, h.disk_write_seconds)
                w_reads.add_metric(disk, h.disk_reads)
                w_writes.add_metric(disk, h.disk_writes)
                n_weighted.add_metric(device, h.disk_weighted_seconds)
                n_reads.add_metric(device, h.disk_reads)
                n_writes.add_metric(device, h.disk_writes)
        yield from (
            info,
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
