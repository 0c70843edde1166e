"""InfluxDB with auth and a Telegraf buffer that outlasts an outage (issue 17, items 7-8).

The first test runs its own influxd (the rendered config, auth on) and checks what
`wlmon up` does on its first and every later start. The second stops the stack's InfluxDB
for 90 s and counts the exporter's points Telegraf delivered for that time afterwards.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
import pytest

from tests.integration.conftest import influx_token, url
from tests.integration.helpers import eventually
from wlmon.stack.components import COMPONENTS
from wlmon.stack.runtime import Stack, StackError, _prepare_influxdb
from wlmon.stack.services import Service
from wlmon.stack.settings import StackSettings, free_port_environment

pytestmark = pytest.mark.integration

OUTAGE_S = 90.0


@pytest.fixture
def influxd(tmp_path) -> Iterator[Service]:
    """A fresh influxd with the config `wlmon up` renders (auth on), no user yet."""
    stack = Stack(StackSettings(state_dir=tmp_path))
    stack.render()
    ports = free_port_environment()
    http, rpc = ports["WLMON_PORT_INFLUXDB"], ports["WLMON_PORT_INFLUXDB_RPC"]
    env = {
        **os.environ,
        "INFLUXDB_META_DIR": str(tmp_path / "meta"),
        "INFLUXDB_DATA_DIR": str(tmp_path / "data"),
        "INFLUXDB_DATA_WAL_DIR": str(tmp_path / "wal"),
        "INFLUXDB_HTTP_BIND_ADDRESS": f"127.0.0.1:{http}",
        "INFLUXDB_BIND_ADDRESS": f"127.0.0.1:{rpc}",
    }
    conf = stack.config_dir / "influxdb" / "influxdb.conf"
    binary = COMPONENTS["influxdb"].path("influxd")
    with (tmp_path / "influxd.log").open("wb") as log:
        proc = subprocess.Popen(
            [str(binary), "-config", str(conf)], env=env, stdout=log, stderr=log
        )
    base = f"http://127.0.0.1:{http}"
    try:
        eventually(lambda: httpx.get(f"{base}/ping", timeout=2).status_code == 204, timeout=60)
        yield Service("influxdb", [str(binary)], int(http), base, f"{base}/ping")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _query(svc: Service, q: str, auth: tuple[str, str] | None = None) -> httpx.Response:
    return httpx.post(f"{svc.url}/query", data={"q": q}, auth=auth, timeout=10)


def test_influxdb_admits_only_the_generated_admin_and_keeps_30_days(influxd: Service) -> None:
    admin = ("wlmon-admin", "s3cret'with\"quotes")
    _prepare_influxdb(influxd, user=admin[0], password=admin[1], retention="30d")
    # Every later start: the same statements, as the admin, change nothing.
    _prepare_influxdb(influxd, user=admin[0], password=admin[1], retention="30d")

    assert _query(influxd, "DROP DATABASE wlmon").status_code == 401
    assert _query(influxd, "SHOW DATABASES", ("wlmon-admin", "guess")).status_code == 401
    dbs = _query(influxd, "SHOW DATABASES", admin).json()["results"][0]["series"][0]["values"]
    assert ["wlmon"] in dbs
    policies = _query(influxd, "SHOW RETENTION POLICIES ON wlmon", admin).json()
    rows = policies["results"][0]["series"][0]
    autogen = dict(zip(rows["columns"], rows["values"][0], strict=True))
    print("retention policy:", autogen)
    assert autogen["name"] == "autogen" and autogen["default"] is True
    assert autogen["duration"] == "720h0m0s"
    assert autogen["shardGroupDuration"] == "24h0m0s"

    with pytest.raises(StackError, match="WLMON_INFLUXDB_ADMIN_PASSWORD"):
        _prepare_influxdb(influxd, user=admin[0], password="another", retention="30d")


def _exporter_points(stack: Stack, start: float, end: float) -> list[float]:
    """When Telegraf's scrapes of the exporter (its sap_up series) landed in InfluxDB."""
    user, password, _ = stack.influx_credentials()
    q = (
        'SELECT "sap_up" FROM "prometheus" WHERE "source" = \'wlmon-exporter\' '
        f"AND time >= {int(start * 1e9)} AND time <= {int(end * 1e9)}"
    )
    r = httpx.post(
        f"{url(stack, 'influxdb')}/query",
        data={"q": q, "db": "wlmon", "epoch": "ms"},
        auth=(user, password),
        timeout=30,
    )
    r.raise_for_status()
    series = r.json()["results"][0].get("series", [])
    return sorted(row[0] / 1000 for s in series for row in s["values"])


def test_a_90_s_influxdb_outage_leaves_no_hole(stack: Stack) -> None:
    interval = 2.0  # WLMON_SCRAPE_INTERVAL of the integration stack: Telegraf's too
    assert influx_token(stack)  # the stack's InfluxDB runs with auth
    lead_in = 20.0

    def scraped_for_the_lead_in() -> bool:
        points = _exporter_points(stack, time.time() - lead_in - 10, time.time())
        return bool(points) and points[0] <= time.time() - lead_in - interval

    eventually(scraped_for_the_lead_in, timeout=180, every=2)
    stopped_at = time.time()
    assert stack.stop_service("influxdb")
    time.sleep(OUTAGE_S)
    stack.up(only=["influxdb"])
    back_at = time.time()
    window = (stopped_at - lead_in, back_at + lead_in)
    time.sleep(lead_in + 2 * interval)  # the points after the outage, and the buffer's flush

    def complete() -> list[float]:
        points = _exporter_points(stack, *window)
        widest = max((b - a for a, b in itertools.pairwise(points)), default=float("inf"))
        # Failing, eventually() reports this: how wide the hole Telegraf left is.
        assert widest <= 3 * interval, f"{len(points)} points, widest gap {widest:.0f} s"
        return points

    points = eventually(complete, timeout=120, every=5)
    gaps = [b - a for a, b in itertools.pairwise(points)]
    print(
        f"outage {back_at - stopped_at:.0f} s from {datetime.fromtimestamp(stopped_at, UTC)}; "
        f"{len(points)} sap_up points in {window[1] - window[0]:.0f} s "
        f"(one per {interval:.0f} s scrape expected), widest gap {max(gaps):.1f} s"
    )
    assert points[0] <= window[0] + 3 * interval and points[-1] >= window[1] - 3 * interval
    assert len(points) >= (window[1] - window[0]) / interval * 0.9


def test_influxdb_debug_endpoints_are_not_open(influxd: Service) -> None:
    """Issue 38: /debug/pprof/ and /debug/vars answered anyone (InfluxDB 1.8.10's defaults
    pprof-enabled = true, pprof-auth-enabled = false; before: 200 for both)."""
    admin = ("wlmon-admin", "debug-test-password")
    _prepare_influxdb(influxd, user=admin[0], password=admin[1], retention="30d")
    seen = {
        path: httpx.get(f"{influxd.url}{path}", timeout=10).status_code
        for path in ("/debug/pprof/", "/debug/pprof/heap", "/debug/vars", "/debug/requests")
    }
    print("without credentials:", seen)
    assert seen == {
        "/debug/pprof/": 404,
        "/debug/pprof/heap": 404,
        "/debug/vars": 401,
        "/debug/requests": 401,
    }
    assert httpx.get(f"{influxd.url}/debug/vars", auth=("wlmon-admin", "guess")).status_code == 401
    vars_ = httpx.get(f"{influxd.url}/debug/vars", auth=admin, timeout=10)
    assert vars_.status_code == 200 and "memstats" in vars_.text
    assert httpx.get(f"{influxd.url}/debug/pprof/", auth=admin, timeout=10).status_code == 404
    assert httpx.get(f"{influxd.url}/ping", timeout=10).status_code == 204  # the health check
