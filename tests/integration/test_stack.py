"""The native stack end to end: every server healthy and every data path carrying data.

Tests run in file order, and this file after test_alerts_e2e.py (alphabetical): its last
test stops the shared stack and checks that nothing of ours is left running.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from influxdb_client import InfluxDBClient, Point
from influxdb_client.client.write_api import SYNCHRONOUS
from typer.testing import CliRunner

from tests.integration.conftest import influx_token, logs, logsql, url
from tests.integration.helpers import eventually
from wlmon.cli import app

pytestmark = pytest.mark.integration

SERVICES = {
    "influxdb",
    "victorialogs",
    "alertmanager",
    "exporter",
    "api",
    "prometheus",
    "telegraf",
    "perses",
}


def test_every_server_is_healthy(stack) -> None:
    rows = stack.status()
    assert {r["name"] for r in rows} == SERVICES
    assert all(r["healthy"] for r in rows), rows


def test_status_json_lists_name_pid_url_healthy(stack) -> None:
    result = CliRunner().invoke(app, ["status", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert {r["name"] for r in rows} == SERVICES
    for row in rows:
        assert set(row) == {"name", "pid", "url", "healthy"}
        assert row["healthy"] is True
        # VictoriaLogs serves HTTPS only (its readiness checked against the stack's CA).
        scheme = "https" if row["name"] == "victorialogs" else "http"
        assert row["url"].startswith(f"{scheme}://127.0.0.1:"), row


def test_everything_listens_on_loopback_only(stack) -> None:
    listening = Path("/proc/net/tcp").read_text().splitlines()[1:]
    ours = {
        int(p) for p in (getattr(stack.settings.ports, n) for n in vars(stack.settings.ports)) if p
    }
    for line in listening:
        fields = line.split()
        local, state = fields[1], fields[3]
        addr, port = local.split(":")
        if state == "0A" and int(port, 16) in ours:
            assert addr == "0100007F", f"port {int(port, 16)} bound to {addr}"


def test_prometheus_scrapes_the_exporter(stack) -> None:
    prom = url(stack, "prometheus")

    def exporter_up():
        r = httpx.get(f"{prom}/api/v1/query", params={"query": 'up{job="wlmon-exporter"}'}).json()
        return r["data"]["result"] and r["data"]["result"][0]["value"][1] == "1"

    eventually(exporter_up)

    def steps_series():
        r = httpx.get(
            f"{prom}/api/v1/query",
            params={"query": 'sap_workload_steps_total{job="wlmon-exporter"}'},
        ).json()
        return len(r["data"]["result"]) == 60

    eventually(steps_series)


def test_exporter_metrics_reach_prometheus_once(stack) -> None:
    """Telegraf keeps the exporter in InfluxDB but does not re-export it to Prometheus."""
    prom = url(stack, "prometheus")
    r = httpx.get(
        f"{prom}/api/v1/query", params={"query": "count by (job) (sap_workload_steps_total)"}
    ).json()
    assert {m["metric"]["job"] for m in r["data"]["result"]} == {"wlmon-exporter"}


def test_prometheus_scrapes_every_target(stack) -> None:
    prom = url(stack, "prometheus")

    def all_up():
        targets = httpx.get(f"{prom}/api/v1/targets").json()["data"]["activeTargets"]
        health = {t["labels"]["job"]: t["health"] for t in targets}
        assert set(health) == {
            "wlmon-exporter",
            "prometheus",
            "alertmanager",
            "victorialogs",
            "telegraf",
            "wlmon-api",
            # Their own /metrics, for the stack's down alerts (alerts/monitoring.py).
            "influxdb",
            "perses",
        }
        return all(h == "up" for h in health.values()) and health

    eventually(all_up)


def test_a_line_pushed_to_the_log_store_is_queried_back(stack) -> None:
    """Loki's push protocol in, LogsQL out, with the stack's own credentials."""
    now = time.time_ns()
    line = f"wlmon integration test {now}"
    push = {"streams": [{"stream": {"sid": "BMK", "source": "test"}, "values": [[str(now), line]]}]}
    with logs(stack) as client:
        r = client.post("/insert/loki/api/v1/push", json=push)
    assert r.status_code == 204, r.text

    def found():
        return line in [row["_msg"] for row in logsql(stack, '{sid="BMK", source="test"}', now)]

    eventually(found, timeout=30)


def _influx(stack) -> InfluxDBClient:
    return InfluxDBClient(url=url(stack, "influxdb"), token=influx_token(stack), org="-")


def test_a_point_written_with_influxdb_client_is_read_back_with_flux(stack) -> None:
    stamp = datetime.now(UTC)
    with _influx(stack) as client:
        client.write_api(write_options=SYNCHRONOUS).write(
            bucket="wlmon/autogen",
            record=Point("wlmon_test").tag("sid", "BMK").field("value", 42.5).time(stamp),
        )
        flux = (
            'from(bucket: "wlmon/autogen") |> range(start: -10m) '
            '|> filter(fn: (r) => r._measurement == "wlmon_test")'
        )
        tables = client.query_api().query(flux)
        values = [rec.get_value() for t in tables for rec in t.records]
    assert 42.5 in values


def test_telegraf_host_counters_reach_influxdb(stack) -> None:
    with _influx(stack) as client:

        def measurements():
            flux = (
                'from(bucket: "wlmon/autogen") |> range(start: -10m) '
                '|> filter(fn: (r) => r._measurement == "cpu" or r._measurement == "mem" '
                'or r._measurement == "system") |> keep(columns: ["_measurement"]) '
                '|> distinct(column: "_measurement")'
            )
            names = {rec.get_value() for t in client.query_api().query(flux) for rec in t.records}
            return names >= {"cpu", "mem", "system"} and names

        eventually(measurements, timeout=60)


def test_up_is_idempotent_while_running(stack) -> None:
    before = {r["name"]: r["pid"] for r in stack.status()}
    stack.up()
    after = {r["name"]: r["pid"] for r in stack.status()}
    assert before == after


def test_down_leaves_no_process_of_ours(stack) -> None:
    pids = [r.pid for r in stack.recorded()]
    assert len(pids) == len(SERVICES)
    stopped = stack.down()
    assert set(stopped) == SERVICES
    for pid in pids:
        assert (
            not Path(f"/proc/{pid}").exists()
            or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]
        )
    assert stack.status() == []
