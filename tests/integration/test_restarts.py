"""Runs survive restarts (issue 17): on the live stack, the exporter and then the API are
killed with SIGKILL in the middle of a real-time run's fault window.

- Exporter killed: it comes back with the run's plan from its state file, the API's driver
  notices the restart, and the run's record notes the gap with its times.
- API killed: the run's lease is no longer renewed, so the exporter drops the run's faults
  within the lease (30 s); the restarted API ends the run `failed` and says so.

The model runs 10x real time: a 600 s plan takes 60 s.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

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


def test_api_killed_mid_run_the_exporter_drops_the_fault_and_the_run_fails(stack) -> None:
    run = _start_run(stack, "api kill -9")
    exporter = f"{url(stack, 'exporter')}/control/faults"
    _kill(stack, "api")
    killed_at = time.monotonic()
    eventually(
        lambda: (s := httpx.get(exporter).json())["faults"] == [] and s["run_id"] == "",
        timeout=45,
        every=0.5,
    )
    dropped_after = time.monotonic() - killed_at
    stack.up(only=["api"])
    ended = httpx.get(f"{url(stack, 'api')}/runs/{run['id']}").json()
    print(
        f"\napi kill -9: exporter dropped the fault {dropped_after:.0f} s after the kill; "
        f"run {ended['status']}: {ended['message']}"
    )
    assert dropped_after <= 35  # the 30 s lease and the exporter's 0.5 s watch
    assert ended["status"] == "failed", ended
    assert "the API stopped while the run was in progress" in ended["message"]
    ended = eventually(
        lambda: (
            "lease expired"
            in (r := httpx.get(f"{url(stack, 'api')}/runs/{run['id']}").json())["message"]
            and r
        ),
        timeout=20,
    )
