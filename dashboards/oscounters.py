"""OS counters: the Windows Performance Monitor counters of seed 003, node_exporter, Telegraf."""

from __future__ import annotations

from dashboards.defaults import flux, prom
from dashboards.layout import Dashboard


def dashboard() -> Dashboard:
    d = Dashboard("wlmon-os", "OS counters", "Hosts", ["os"])
    d.add(
        "timeseries",
        "Processor\\% Processor Time (windows_exporter)",
        [
            prom(
                '100 * (1 - sum by (host) (rate(windows_cpu_time_total{sid=~"$sid",mode="idle"}[5m])) / '
                'count by (host) (windows_cpu_time_total{sid=~"$sid",mode="idle"}))',
                legend="{{host}}",
            )
        ],
        unit="percent",
        min_=0,
        max_=100,
    )
    d.add(
        "timeseries",
        "CPU busy (node_exporter)",
        [
            prom(
                '100 * (1 - avg by (host) (rate(node_cpu_seconds_total{sid=~"$sid",mode="idle"}[5m])))',
                legend="{{host}}",
            )
        ],
        unit="percent",
        min_=0,
        max_=100,
    )
    d.add(
        "timeseries",
        "Memory\\Available MBytes",
        [prom('windows_memory_available_bytes{sid=~"$sid"} / 1048576', legend="{{host}}")],
        unit="decmbytes",
    )
    d.add(
        "timeseries",
        "MemAvailable (node_exporter)",
        [prom('node_memory_MemAvailable_bytes{sid=~"$sid"}', legend="{{host}}")],
        unit="bytes",
    )
    d.add(
        "timeseries",
        "Memory\\Pages/sec",
        [
            prom(
                'rate(windows_memory_swap_page_operations_total{sid=~"$sid"}[5m])',
                legend="{{host}}",
            )
        ],
        unit="ops",
    )
    d.add(
        "timeseries",
        "PhysicalDisk\\Avg. Disk Queue Length",
        [
            prom(
                'sum by (host) (rate(windows_physical_disk_read_seconds_total{sid=~"$sid"}[5m]) + '
                'rate(windows_physical_disk_write_seconds_total{sid=~"$sid"}[5m]))',
                legend="{{host}}",
            )
        ],
    )
    d.add(
        "timeseries",
        "This host: CPU (Telegraf, InfluxDB)",
        [
            flux(
                'from(bucket: "wlmon/autogen") |> range(start: v.timeRangeStart, stop: v.timeRangeStop) '
                '|> filter(fn: (r) => r._measurement == "cpu" and r._field == "usage_idle" and r.cpu == "cpu-total")'
                " |> map(fn: (r) => ({r with _value: 100.0 - r._value})) "
                "|> aggregateWindow(every: v.windowPeriod, fn: mean, createEmpty: false)"
            )
        ],
        unit="percent",
        min_=0,
        max_=100,
    )
    d.add(
        "timeseries",
        "This host: available memory (Telegraf, InfluxDB)",
        [
            flux(
                'from(bucket: "wlmon/autogen") |> range(start: v.timeRangeStart, stop: v.timeRangeStop) '
                '|> filter(fn: (r) => r._measurement == "mem" and r._field == "available") '
                "|> aggregateWindow(every: v.windowPeriod, fn: mean, createEmpty: false)"
            )
        ],
        unit="bytes",
    )
    return d
