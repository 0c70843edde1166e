"""OS counters: the Windows Performance Monitor counters of seed 003, node_exporter, Telegraf."""

from __future__ import annotations

from dashboards.defaults import flux, prom
from dashboards.layout import Dashboard

PERCENT = {"unit": "percent", "min_": 0, "max_": 100}
# The model's hosts, one series each: seed 003's counters (windows_exporter names) and
# their node_exporter counterparts.
PER_HOST = (
    (
        "Processor\\% Processor Time (windows_exporter)",
        '100 * (1 - sum by (host) (rate(windows_cpu_time_total{sid=~"$sid",mode="idle"}[5m])) / '
        'count by (host) (windows_cpu_time_total{sid=~"$sid",mode="idle"}))',
        PERCENT,
    ),
    (
        "CPU busy (node_exporter)",
        '100 * (1 - avg by (host) (rate(node_cpu_seconds_total{sid=~"$sid",mode="idle"}[5m])))',
        PERCENT,
    ),
    (
        "Memory\\Available MBytes",
        'windows_memory_available_bytes{sid=~"$sid"} / 1048576',
        {"unit": "decmbytes"},
    ),
    (
        "MemAvailable (node_exporter)",
        'node_memory_MemAvailable_bytes{sid=~"$sid"}',
        {"unit": "bytes"},
    ),
    (
        "Memory\\Pages/sec",
        'rate(windows_memory_swap_page_operations_total{sid=~"$sid"}[5m])',
        {"unit": "ops"},
    ),
    (
        "PhysicalDisk\\Avg. Disk Queue Length",
        'sum by (host) (rate(windows_physical_disk_read_seconds_total{sid=~"$sid"}[5m]) + '
        'rate(windows_physical_disk_write_seconds_total{sid=~"$sid"}[5m]))',
        {},
    ),
)
# This host, from Telegraf's measurements in InfluxDB.
TELEGRAF = 'from(bucket: "wlmon/autogen") |> range(start: v.timeRangeStart, stop: v.timeRangeStop) '
MEAN = "|> aggregateWindow(every: v.windowPeriod, fn: mean, createEmpty: false)"


def dashboard() -> Dashboard:
    d = Dashboard("wlmon-os", "OS counters", "Hosts", ["os"])
    for title, expr, field_config in PER_HOST:
        d.add("timeseries", title, [prom(expr, legend="{{host}}")], **field_config)
    d.add(
        "timeseries",
        "This host: CPU (Telegraf, InfluxDB)",
        [
            flux(
                TELEGRAF
                + '|> filter(fn: (r) => r._measurement == "cpu" and r._field == "usage_idle" and r.cpu == "cpu-total")'
                " |> map(fn: (r) => ({r with _value: 100.0 - r._value})) " + MEAN
            )
        ],
        **PERCENT,
    )
    d.add(
        "timeseries",
        "This host: available memory (Telegraf, InfluxDB)",
        [
            flux(
                TELEGRAF
                + '|> filter(fn: (r) => r._measurement == "mem" and r._field == "available") '
                + MEAN
            )
        ],
        unit="bytes",
    )
    return d
