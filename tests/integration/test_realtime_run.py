"""A real-time run on the live stack: the API drives the exporter through ramp-up and a
fault, the run's events reach the log store and InfluxDB, and the report is read back from
Prometheus. The model runs 10x real time here (and rule windows and for: are scaled by
0.1): 1,000 simulated seconds take 100 s."""

from __future__ import annotations

import csv
import io
import json
import time
from datetime import datetime

import httpx
import pytest

from dashboards import forensics
from dashboards import grafana as grafana_json
from tests.integration.conftest import influx_token, logsql, url
from tests.integration.helpers import (
    eventually,
    exporter_scraped_cleanly,
    unexpected_run_message,
)

pytestmark = pytest.mark.integration
AUTH = {"Authorization": "Bearer integration-test-token"}
PLAN = {
    "mode": "realtime",
    "duration_s": 1000,
    "ramp_up_s": 100,
    "resolution_s": 60,
    # 600 simulated s (60 s wall at 10x) of fault: SAPEnqueueTimeHigh (1-minute mean over its
    # 7.5 ms page level for 30 s, scaled to 6 s + 3 s) fires well within it.
    "faults": [{"name": "slow-enqueue-link", "start_s": 300, "end_s": 900}],
    "label": "enqueue fault, real time",
}
RUN_EVENTS = {"run_start", "steady_state", "fault_injected", "fault_removed", "run_end"}


def _ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso).timestamp() * 1000)


def _wait_for_end(api: str, run_id: str, timeout: float) -> dict:
    return eventually(
        lambda: (r := httpx.get(f"{api}/runs/{run_id}").json())["status"] != "running" and r,
        timeout=timeout,
        every=2,
    )


@pytest.fixture(scope="module")
def finished_run(stack) -> dict:
    api = url(stack, "api")
    eventually(lambda: exporter_scraped_cleanly(url(stack, "prometheus")), timeout=60, every=2)
    r = httpx.post(f"{api}/runs", json=PLAN, headers=AUTH, timeout=60)
    assert r.status_code == 202, r.text
    run = r.json()
    assert run["status"] == "running" and run["kind"] == "realtime"
    # One live model: a second real-time run waits for this one.
    second = httpx.post(f"{api}/runs", json=PLAN, headers=AUTH, timeout=60)
    assert second.status_code == 409 and run["id"] in second.json()["detail"]
    report = httpx.get(f"{api}/runs/{run['id']}/report", timeout=30)
    assert report.status_code == 409 and "still running" in report.json()["detail"]
    exporter = f"{url(stack, 'exporter')}/control/faults"
    eventually(lambda: httpx.get(exporter).json()["run_id"] == run["id"], timeout=10)
    return _wait_for_end(api, run["id"], timeout=240)


def test_the_run_finishes_and_gives_the_exporter_back(stack, finished_run) -> None:
    assert finished_run["status"] == "finished", finished_run
    # Empty, or a scrape lost under load (a one-step gap), and nothing else.
    rep = httpx.get(f"{url(stack, 'api')}/runs/{finished_run['id']}/report", timeout=60).json()
    found = unexpected_run_message(
        finished_run["message"], rep.get("gaps") or [], PLAN["resolution_s"]
    )
    assert found is None, found
    state = httpx.get(f"{url(stack, 'exporter')}/control/faults").json()
    assert state["run_id"] == "" and state["faults"] == [] and state["users"] == 5790


def test_the_report_read_from_prometheus_shows_the_fault_and_passes_the_sd_checks(
    stack, finished_run
) -> None:
    rep = httpx.get(f"{url(stack, 'api')}/runs/{finished_run['id']}/report", timeout=60).json()
    # 60 s samples: the first whole one after the 100 s ramp-up starts at 120 s.
    assert rep["steady_state"] == {"start_s": 120.0, "end_s": 960.0, "duration_s": 840.0}
    assert [b["rule"] for b in rep["breaches"]] == ["SAPEnqueueTimeHigh"]
    breach = rep["breaches"][0]
    assert 300 <= breach["start_s"] <= 420 and breach["peak_ms"] > 5.0
    assert "seed 000, 4.3.5.1" in breach["diagnosis"]
    # What Alertmanager sent over the run's window: the same cause, on the monitored system,
    # as its one page (one severity per indicator since issue 37: no warning twin).
    fired = {(a["alertname"], a["severity"]) for a in rep["alerts_fired"]}
    assert fired == {("SAPEnqueueTimeHigh", "critical")}, rep["alerts_fired"]
    html = httpx.get(
        f"{url(stack, 'api')}/runs/{finished_run['id']}/report",
        params={"format": "html"},
        timeout=60,
    ).text
    assert "<h2>Alerts that fired</h2>" in html and "SAPEnqueueTimeHigh" in html
    sd = rep["benchmark"]["sd"]
    # Seed 000 Table 5: 1.96 s dialog response at 5,790 users and 10 s think time; the
    # response-time law X = N / (R + Z) on what Prometheus recorded.
    assert sd["users"] == 5790 and sd["think_time_s"] == 10.0
    assert 1.8 < sd["dialog_response_s"] < 2.0
    print("response-time law residual %", sd["response_time_law"]["residual_pct"])
    assert abs(sd["response_time_law"]["residual_pct"]) < 2.0
    hosts = {row["host"] for row in rep["os_counters"]}
    assert {"walrus", "penguin2"} <= hosts
    db_cpu = next(
        row
        for row in rep["os_counters"]
        if row["host"] == "walrus" and row["counter"] == "Processor\\% Processor Time"
    )
    assert 85 < db_cpu["avg"] <= 100  # seed 000 Table 5: DB server 94 % (rates in model time)


def test_the_log_store_has_the_run_events_in_the_runs_stream(stack, finished_run) -> None:
    """The run is a stream field (run_id), and in the line for a reader that unpacks it."""
    run = finished_run["id"]
    since = _ms(finished_run["start"]) * 10**6 - 60 * 10**9

    def events():
        rows = logsql(stack, f'{{source="run_events", sid="BMK", run_id="{run}"}}', since)
        unpacked = logsql(
            stack, f'{{source="run_events"}} | unpack_json fields (run_id) | run_id:="{run}"', since
        )
        found = {row["event"] for row in rows}
        return found if found >= RUN_EVENTS and len(unpacked) == len(rows) else None

    assert eventually(events, timeout=30) == RUN_EVENTS


def test_the_dashboard_run_picker_lists_the_run_with_its_window_from_influxdb(
    stack, finished_run
) -> None:
    """The forensics dashboard's `run` variable and Runs table (whose links set the time
    range to the run): their Flux queries, asked of InfluxDB's own query API."""

    def query(flux: str) -> list[dict]:
        r = httpx.post(
            f"{url(stack, 'influxdb')}/api/v2/query",
            params={"org": "-"},
            content=flux,
            headers={
                "Authorization": f"Token {influx_token(stack)}",
                "Content-Type": "application/vnd.flux",
                "Accept": "application/csv",
            },
            timeout=30,
        )
        assert r.status_code == 200, r.text
        rows = [row for row in csv.reader(io.StringIO(r.text)) if row and any(row)]
        header = next(row for row in rows if "_value" in row or "run_id" in row)
        out = []
        for row in rows:
            if row is header or row == header:
                continue
            rec = dict(zip(header, row, strict=False))
            out.append({k: _number(v) for k, v in rec.items() if k})
        return out

    rows = eventually(
        lambda: [r for r in query(forensics.RUNS_TABLE) if r["run_id"] == finished_run["id"]],
        timeout=30,
    )
    row = rows[0]
    assert row["event"] == "run_end" and row["label"] == PLAN["label"]
    assert row["start_ms"] == _ms(finished_run["start"])
    assert row["end_ms"] == _ms(finished_run["end"])
    assert row["steady_start_ms"] == _ms(finished_run["start"]) + 10_000
    for field in ("run_id", "start_ms", "end_ms"):
        assert f"__data.fields.{field}" in grafana_json.url(forensics.OPEN_RUN)
    ids = [r["_value"] for r in query(forensics.RUN_IDS)]
    assert finished_run["id"] in ids
    assert finished_run["grafana_path"].startswith(
        f"/d/wlmon-forensics/run-forensics?var-run={finished_run['id']}&from="
    )


def test_a_cancelled_run_ends_early_and_reports_what_ran(stack, finished_run) -> None:
    api = url(stack, "api")
    plan = {"mode": "realtime", "duration_s": 3000, "resolution_s": 60, "label": "cancelled"}
    run = httpx.post(f"{api}/runs", json=plan, headers=AUTH, timeout=60).json()
    time.sleep(20)
    r = httpx.post(f"{api}/runs/{run['id']}/cancel", headers=AUTH, timeout=30)
    assert r.status_code == 202, r.text
    done = _wait_for_end(api, run["id"], timeout=60)
    assert done["status"] == "cancelled" and "cancelled through the API" in done["message"]
    assert 15_000 < _ms(done["end"]) - _ms(done["start"]) < 40_000
    rep = httpx.get(f"{api}/runs/{run['id']}/report", timeout=60).json()
    dialog = next(row for row in rep["st03"] if row["task_type"] == "dialog")
    assert dialog["steps"] > 50_000  # ~200 simulated seconds at ~484 steps/s
    state = httpx.get(f"{url(stack, 'exporter')}/control/faults").json()
    assert state["run_id"] == ""
    print(json.dumps({"cancelled_run_steps": dialog["steps"]}))


def test_the_cli_drives_a_real_time_run_through_the_api(stack, finished_run) -> None:
    """`wlmon run --no-fast`: 120 simulated seconds, 12 s at speed 10."""
    import os
    import subprocess
    import sys

    env = os.environ | {"WLMON_API_URL": url(stack, "api")}
    done = subprocess.run(
        [sys.executable, "-m", "wlmon", "run", "--no-fast", "--duration", "2m"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    run_id = done.stdout.strip()
    run = httpx.get(f"{url(stack, 'api')}/runs/{run_id}").json()
    assert run["status"] == "finished" and run["kind"] == "realtime"


def _number(text: str) -> object:
    """A CSV cell as InfluxDB typed it (the Runs table's *_ms columns are integers)."""
    try:
        return int(text)
    except ValueError:
        return text
