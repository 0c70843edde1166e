"""Runs survive restarts (issue 17): on the live stack, the exporter and then the API are
killed with SIGKILL in the middle of a real-time run's fault window.

- Exporter killed: it comes back with the run's plan from its state file, the API's driver
  notices the restart, and the run's record notes the gap with its times.
- API stopped (SIGTERM, as `wlmon down`) then killed (SIGKILL): a planned stop leaves the
  run to the next API, which resumes it; after the kill the lease is no longer renewed, so
  the exporter drops the run's faults within it (30 s); an API restarted after the run's
  window ended ends it `interrupted`, naming the crash, and its report holds the window up
  to the kill, read back from Prometheus.

The model runs 10x real time: a 600 s plan takes 60 s.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import signal
import time
from datetime import UTC, datetime

import httpx
import pytest

from tests.integration.conftest import url
from tests.integration.helpers import eventually

pytestmark = pytest.mark.integration
AUTH = {"Authorization": "Bearer integration-test-token"}
FAULT = "slow-enqueue-link"


def _plan(label: str) -> dict:
    return {
        "mode": "realtime",
        "duration_s": 600,
        "ramp_up_s": 0,
        "resolution_s": 60,
        "faults": [{"name": FAULT, "start_s": 50, "end_s": 550}],
        "label": label,
    }


def _kill(stack, name: str) -> int:
    (running,) = [r for r in stack.recorded() if r.name == name]
    os.kill(running.pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(running.pid, 0)  # our child (stack.up started it): reap it
    return running.pid


def _start_run(stack, label: str) -> dict:
    r = httpx.post(f"{url(stack, 'api')}/runs", json=_plan(label), headers=AUTH, timeout=60)
    assert r.status_code == 202, r.text
    run = r.json()
    exporter = f"{url(stack, 'exporter')}/control/faults"
    eventually(
        lambda: (s := httpx.get(exporter).json())["faults"] == [FAULT] and s["run_id"] == run["id"],
        timeout=30,
        every=0.5,
    )
    return run


def _wait_for_end(stack, run_id: str, timeout: float) -> dict:
    api = url(stack, "api")
    return eventually(
        lambda: (r := httpx.get(f"{api}/runs/{run_id}").json())["status"] != "running" and r,
        timeout=timeout,
        every=2,
    )


def test_exporter_killed_mid_run_comes_back_with_the_plan_and_the_gap_is_noted(stack) -> None:
    run = _start_run(stack, "exporter kill -9")
    exporter = f"{url(stack, 'exporter')}/control/faults"
    _kill(stack, "exporter")
    killed_at = time.time()
    stack.up(only=["exporter"])
    state = httpx.get(exporter).json()
    # From its state file, before the driver's next check.
    assert (state["faults"], state["run_id"]) == ([FAULT], run["id"]), state
    assert state["started"] > killed_at
    ended = _wait_for_end(stack, run["id"], timeout=150)
    print(f"\nexporter kill -9: run {ended['status']}: {ended['message']}")
    assert ended["status"] == "finished", ended
    assert "the exporter did not hold the plan from" in ended["message"]
    assert "restarted at" in ended["message"]
    state = httpx.get(exporter).json()
    assert (state["faults"], state["run_id"]) == ([], "")


def test_api_stopped_resumes_the_run_then_killed_the_run_is_kept_up_to_the_kill(stack) -> None:
    run = _start_run(stack, "api stop, then kill -9")
    api, exporter = url(stack, "api"), f"{url(stack, 'exporter')}/control/faults"
    start = datetime.fromisoformat(run["start"])
    planned_end = datetime.fromisoformat(run["end"])
    t0 = time.monotonic()
    assert stack.stop_service("api")  # SIGTERM: a planned stop
    stopped_in = time.monotonic() - t0
    stack.up(only=["api"])
    resumed = httpx.get(f"{api}/runs/{run['id']}").json()
    assert resumed["status"] == "running", resumed
    assert "(a planned stop)" in resumed["message"] and "resumed at" in resumed["message"]
    state = httpx.get(exporter).json()
    assert (state["faults"], state["run_id"]) == ([FAULT], run["id"]), state
    time.sleep(max(0.0, 20 - (datetime.now(UTC) - start).total_seconds()))
    _kill(stack, "api")
    killed_at = datetime.now(UTC)
    eventually(
        lambda: (s := httpx.get(exporter).json())["faults"] == [] and s["run_id"] == "",
        timeout=45,
        every=0.5,
    )
    dropped_after = (datetime.now(UTC) - killed_at).total_seconds()
    time.sleep(max(0.0, (planned_end - datetime.now(UTC)).total_seconds() + 1))
    stack.up(only=["api"])
    ended = _wait_for_end(stack, run["id"], timeout=60)
    print(
        f"\napi SIGTERM took {stopped_in:.1f} s; kill -9 at "
        f"{(killed_at - start).total_seconds():.0f} s into the run; the exporter dropped the "
        f"fault {dropped_after:.0f} s after; run {ended['status']}: {ended['message']}"
    )
    assert stopped_in < 10  # the planned stop does not wait out the 15 s grace
    assert dropped_after <= 35  # the 30 s lease and the exporter's 0.5 s watch
    assert ended["status"] == "interrupted", ended
    assert "(a crash or kill)" in ended["message"], ended
    assert ended["message"].startswith(resumed["message"])  # the planned stop is kept
    assert "the exporter no longer held it (lease expired)" in ended["message"]
    # The window up to the driver's last check before the kill (every min(6 s step, lease/3)).
    end = datetime.fromisoformat(ended["end"])
    assert 0 <= (killed_at - end).total_seconds() <= 8, (killed_at, end)
    r = httpx.get(f"{api}/runs/{run['id']}/report")
    assert r.status_code == 200, r.text
    rows = list(csv.DictReader(io.StringIO(httpx.get(f"{api}/runs/{run['id']}/series.csv").text)))
    # Samples every 6 s of wall time (60 s of the model's, at speed 10) from the start up to
    # the end: what the monitoring saw before the kill.
    model_s = (end - start).total_seconds() * 10
    times = [float(row["t_s"]) for row in rows]
    assert len(times) >= 2 and times[-1] <= model_s + 1e-6, (times, model_s)
    assert times[-1] >= model_s - 60 - 1e-6, (times, model_s)
