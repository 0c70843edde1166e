"""OS counters: the Windows Performance Monitor counters of seed 003 (or node_exporter's
counterparts where a host reports those instead), and this host through Telegraf."""

from __future__ import annotations

from alerts.settings import MonitoringConfig
from dashboards.defaults import flux, limit_line, prom, variables
from dashboards.model import INSTANCE_LEGEND, Dashboard, Format, Kind, Panel, Unit

PERCENT = {"format": Format(Unit.PERCENT), "min": 0, "max": 100}


def _per_host(disk_queue_max: float) -> tuple[tuple[str, str, dict, str], ...]:
    """The model's hosts, one line each; the disk queue's dashed line at the database host's
    bound. A host reports through windows_exporter or node_exporter: `or` keeps one series
    per host, so the two never show the same data twice."""
    return (
        (
            "CPU busy (Processor\\% Processor Time)",
            '100 * (1 - sum by (host) (rate(windows_cpu_time_total{sid=~"$sid",mode="idle"}[5m])) / '
            'count by (host) (windows_cpu_time_total{sid=~"$sid",mode="idle"}))'
            ' or 100 * (1 - avg by (host) (rate(node_cpu_seconds_total{sid=~"$sid",mode="idle"}[5m])))',
            PERCENT,
            "Share of time the host's processors were busy (windows_exporter; node_exporter's "
            "idle time on Linux hosts). Seed 003 watches it against the CPU sizing.",
        ),
        (
            "Available memory (Memory\\Available MBytes)",
            'max by (host) (windows_memory_available_bytes{sid=~"$sid"})'
            ' or max by (host) (node_memory_MemAvailable_bytes{sid=~"$sid"})',
            {"format": Format(Unit.BYTES)},
            "Memory the host can hand out without paging (node_exporter: MemAvailable).",
        ),
        (
            "Paging (Memory\\Pages/sec)",
            'sum by (host) (rate(windows_memory_swap_page_operations_total{sid=~"$sid"}[5m]))',
            {"format": Format(Unit.OPS_PER_S)},
            "Pages read from or written to disk per second: sustained paging means too little "
            "memory (seed 003).",
        ),
        (
            "Disk queue, I/Os outstanding (PhysicalDisk\\Avg. Disk Queue Length)",
            'sum by (host) (rate(windows_physical_disk_read_seconds_total{sid=~"$sid"}[5m]) + '
            'rate(windows_physical_disk_write_seconds_total{sid=~"$sid"}[5m]))'
            " or sum by (host) (max by (host, device)"
            ' (rate(node_disk_io_time_weighted_seconds_total{sid=~"$sid"}[5m])))',
            {
                "format": Format(Unit.NONE, 1),
                "thresholds": limit_line(disk_queue_max),
                "min": 0,
            },
            "I/Os outstanding on average, all disks of the host together: above about 2 per "
            "spindle the disks are the bottleneck. The dashed red line is the database host's "
            f"bound, {disk_queue_max:g} (db_disk_queue_max in alerts/thresholds.yml, what "
            "SAPDatabaseDiskQueueHigh reads over one minute; set it to about 5 x your spindles).",
        ),
    )


# This host, from Telegraf's measurements in InfluxDB.
TELEGRAF = 'from(bucket: "wlmon/autogen") |> range(start: v.timeRangeStart, stop: v.timeRangeStop) '
MEAN = "|> aggregateWindow(every: v.windowPeriod, fn: mean, createEmpty: false)"


# What each host runs, from the landscape (sap_host_info, exporters/collectors/oscounters.py):
# "database: walrus", "central_services: penguin1", "application: penguin2". max by keeps
# one where Telegraf re-exposes the exporter's series; last_over_time bridges a failed scrape
# (its staleness markers would otherwise drop the name while rate() still has a value).
ROLE = (
    'label_join(max by (host, role) (last_over_time(sap_host_info{sid=~"$sid"}[10m])),'
    ' "name", ": ", "role", "host")'
)


def named_by_role(expr: str) -> str:
    """`expr` (one series per host) with a `name` label saying what the host runs; a host
    the landscape does not describe (a real one reporting on its own) keeps its bare name."""
    return (
        f"({expr}) * on(host) group_left(name) {ROLE}\n"
        f'or on(host) label_replace({expr}, "name", "$1", "host", "(.*)")'
    )


def dashboard(config: MonitoringConfig) -> Dashboard:
    d = Dashboard(
        "wlmon-os",
        "OS counters",
        "Hosts",
        ("os",),
        "The Windows Performance Monitor counters of seed 003 per host, and this host.",
        # Host counters: an SAP instance or task type picker would filter nothing here.
        variables("sap_instance", "task_type"),
    )
    d.group("The landscape's hosts")
    for title, expr, field_config, description in _per_host(config.thresholds.db_disk_queue_max):
        d.add(
            Panel(
                Kind.TIMESERIES,
                title,
                description + " Each host is named by what it runs (sap_host_info).",
                [prom(named_by_role(expr), legend="{{name}}")],
                legend=INSTANCE_LEGEND,
                **field_config,  # type: ignore[arg-type]
            )
        )
    d.group("This host (Telegraf, InfluxDB)")
    d.add(
        Panel(
            Kind.TIMESERIES,
            "This host: CPU busy (Telegraf, InfluxDB)",
            "The machine wlmon runs on (100 % minus Telegraf's usage_idle).",
            [
                flux(
                    TELEGRAF
                    + '|> filter(fn: (r) => r._measurement == "cpu" and r._field == "usage_idle" and r.cpu == "cpu-total")'
                    " |> map(fn: (r) => ({r with _value: 100.0 - r._value})) " + MEAN,
                    legend="CPU busy",
                )
            ],
            **PERCENT,  # type: ignore[arg-type]
        )
    )
    d.add(
        Panel(
            Kind.TIMESERIES,
            "This host: available memory (Telegraf, InfluxDB)",
            "The machine wlmon runs on: memory available without paging.",
            [
                flux(
                    TELEGRAF
                    + '|> filter(fn: (r) => r._measurement == "mem" and r._field == "available") '
                    + MEAN,
                    legend="available memory",
                )
            ],
            format=Format(Unit.BYTES),
        )
    )
    return d
