"""The paths that do not go through Prometheus: ST05 trace lines and run events to the log
store (VictoriaLogs, read back in LogsQL) and InfluxDB, the exporter kept in InfluxDB by
Telegraf, and a 60-second outage of InfluxDB and VictoriaLogs that loses nothing (real
servers stopped and restarted)."""

from __future__ import annotations

import time

import httpx
import pytest
from influxdb_client import InfluxDBClient

from exporters.sinks.loki import rfc3339_ns
from tests.integration.conftest import exporter_auth, influx_token, logsql, url
from tests.integration.helpers import eventually

pytestmark = pytest.mark.integration


def _log_lines(stack, query: str, since_ns: int) -> list[tuple[int, str, dict]]:
    """(timestamp ns, line, stream fields) of every row of a LogsQL query since `since_ns`."""
    rows = logsql(stack, query, since_ns)
    out = []
    for row in rows:
        ts = rfc3339_ns(row["_time"])
        if ts >= since_ns:
            fields = {k: v for k, v in row.items() if not k.startswith("_")}
            out.append((ts, row["_msg"], fields))
    return sorted(out)


def _flux(stack, query: str) -> list[dict]:
    with InfluxDBClient(
        url=url(stack, "influxdb"), token=influx_token(stack), org="-", timeout=30_000
    ) as client:
        return [rec.values for table in client.query_api().query(query) for rec in table.records]


def _set_faults(stack, faults: list[str]) -> None:
    httpx.put(
        f"{url(stack, 'exporter')}/control/faults",
        json={"faults": faults},
        headers=exporter_auth(stack),
        timeout=10,
    ).raise_for_status()


def test_st05_summaries_arrive_in_the_log_store_per_instance(stack) -> None:
    since = time.time_ns() - 600 * 10**9

    def lines():
        found = _log_lines(
            stack, '{source="st05", sid="BMK"} | unpack_logfmt | table:="VBAP"', since
        )
        return found if len({labels["sap_instance"] for _, _, labels in found}) >= 10 else None

    found = eventually(lines, timeout=60, every=2)
    _, line, labels = found[0]
    assert labels["sap_instance"].startswith("penguin")
    assert "statement=" in line and 'sql="SELECT' in line and "elapsed_ms=" in line


def test_run_events_reach_influxdb_and_the_log_store_with_the_same_labels(stack) -> None:
    since = time.time_ns()
    _set_faults(stack, ["slow-enqueue-link"])
    _set_faults(stack, [])
    flux = (
        'from(bucket: "wlmon/autogen") |> range(start: -10m) '
        '|> filter(fn: (r) => r._measurement == "wlmon_run_events" and r._field == "message")'
    )

    def in_influx():
        rows = [r for r in _flux(stack, flux) if r["_time"].timestamp() * 1e9 >= since - 10**9]
        return {r["event"] for r in rows} >= {"fault_injected", "fault_removed"} and rows

    rows = eventually(in_influx, timeout=60, every=2)
    in_logs = eventually(
        lambda: _log_lines(stack, '{source="run_events", event=~"fault_.*"}', since),
        timeout=60,
        every=2,
    )
    influx_labels = {k: rows[0][k] for k in ("sid", "source", "scenario")}
    assert {k: in_logs[0][2][k] for k in influx_labels} == influx_labels


def test_telegraf_keeps_the_exporter_in_influxdb(stack) -> None:
    flux = (
        'from(bucket: "wlmon/autogen") |> range(start: -10m) '
        '|> filter(fn: (r) => r._measurement == "prometheus") '
        '|> filter(fn: (r) => r._field == "sap_workload_steps_total") '
        "|> limit(n: 1)"
    )
    rows = eventually(lambda: _flux(stack, flux), timeout=90, every=3)
    assert rows[0]["sap_instance"].startswith("penguin")


def test_a_60_second_outage_of_influxdb_and_victorialogs_loses_nothing(stack) -> None:
    """Both servers stopped for 60 s while events and trace lines are produced; after the
    restart every event and every trace interval of the outage is there."""
    assert stack.stop_service("influxdb") and stack.stop_service("victorialogs")
    down_at = time.time_ns()
    try:
        _set_faults(stack, ["db-bottleneck"])
        time.sleep(20)
        _set_faults(stack, [])
        time.sleep(40)
    finally:
        stack.up(only=["influxdb", "victorialogs"])
    up_at = time.time_ns()
    flux = (
        'from(bucket: "wlmon/autogen") |> range(start: -15m) '
        '|> filter(fn: (r) => r._measurement == "wlmon_run_events" and r._field == "message")'
    )

    def events_back():
        rows = [r for r in _flux(stack, flux) if down_at <= r["_time"].timestamp() * 1e9 <= up_at]
        return {r["event"] for r in rows} >= {"fault_injected", "fault_removed"} and rows

    eventually(events_back, timeout=120, every=3)

    def logs_back():
        events = _log_lines(stack, '{source="run_events", event=~"fault_.*"}', down_at)
        traces = _log_lines(stack, '{source="st05", sap_instance="penguin2_D00"}', down_at)
        during = [ts for ts, _, _ in traces if ts <= up_at]
        # One summary per instance every 5 s: the outage holds about 12 intervals.
        intervals = {round((ts - down_at) / 5e9) for ts in during}
        return len([e for e in events if e[0] <= up_at]) >= 2 and len(intervals) >= 10

    eventually(logs_back, timeout=120, every=3)
