"""An external run: a window of the running system registered through the API, its series
read from the real Prometheus, reported like a recorded run."""

from __future__ import annotations

import csv
import io
import time
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from tests.integration.conftest import url
from tests.integration.helpers import eventually

pytestmark = pytest.mark.integration
AUTH = {"Authorization": "Bearer integration-test-token"}


def test_external_window_is_read_from_prometheus_and_reported(stack) -> None:
    prom = url(stack, "prometheus")
    eventually(
        lambda: httpx.get(
            f"{prom}/api/v1/query", params={"query": "sap_workload_steps_total"}
        ).json()["data"]["result"],
        timeout=60,
    )
    time.sleep(30)  # some history to look back on
    end = datetime.now(UTC) - timedelta(seconds=2)
    body = {
        "mode": "external",
        "sid": "BMK",
        "start": (end - timedelta(seconds=60)).isoformat(),
        "end": end.isoformat(),
        "resolution_s": 10,
        "label": "live window",
    }
    r = httpx.post(f"{url(stack, 'api')}/runs", json=body, headers=AUTH, timeout=60)
    assert r.status_code == 201, r.text
    run = r.json()
    assert run["kind"] == "external" and run["label"] == "live window"
    rep = httpx.get(f"{url(stack, 'api')}/runs/{run['id']}/report", timeout=60).json()
    dialog = next(row for row in rep["st03"] if row["task_type"] == "dialog")
    assert dialog["steps"] > 1000
    # Seed 000 Table 5's healthy response, as the live model serves it (faults are off).
    assert 1.5 < dialog["response_ms"] / 1000 < 2.6
    # Percentiles from the bucket increases agree with Prometheus's own histogram_quantile
    # over the window within the bucket's width (both interpolate inside the same buckets).
    pct = next(r for r in rep["percentiles"]["by_task_type"] if r["task_type"] == "dialog")
    low, high = pct["buckets"]["p95"]
    print("p95", pct["p95_s"], "histogram_quantile", pct["prometheus_steady_state_s"])
    assert abs(pct["p95_s"] - pct["prometheus_steady_state_s"]["p95"]) <= (high or low) - low
    # The exporter's histogram per transaction, read back per task type and transaction.
    va01 = next(
        r
        for r in rep["percentiles"]["by_transaction"]
        if (r["task_type"], r["transaction"]) == ("dialog", "VA01")
    )
    assert 0 < va01["steps"] < dialog["steps"] and va01["p50_s"] <= va01["p95_s"]
    hosts = {row["host"] for row in rep["os_counters"]}
    assert {"walrus", "penguin2"} <= hosts
    assert rep["benchmark"]["sd"]["response_time_law"]["law_steps_per_s"] is None  # users not given
    html = httpx.get(
        f"{url(stack, 'api')}/runs/{run['id']}/report", params={"format": "html"}, timeout=60
    )
    assert html.status_code == 200 and "<svg" in html.text


def test_external_resolution_follows_the_scrape_interval(stack) -> None:
    """Issue 26: the default resolution_s 15 on a 15 s scrape answered 502 "no sap_workload_*
    data" (increase() over a step of one scrape interval sees one sample). Here Prometheus
    scrapes every 2 s: a step of 5 s is refused naming 6 s (two scrapes' steps read empty
    when a scrape is late: 1 of 10 in CI); 8 s gives a sample in every step; left out, the
    step is three scrapes (6 s)."""
    api = url(stack, "api")
    # An earlier test may have restarted the exporter: wait until Prometheus holds the
    # window's 40 s of every BMK series (2 s scrapes), or its first steps are empty.
    query = 'min(count_over_time(sap_workload_steps_total{sid="BMK"}[44s]))'
    eventually(
        lambda: (
            float(
                httpx.get(
                    f"{url(stack, 'prometheus')}/api/v1/query", params={"query": query}
                ).json()["data"]["result"][0]["value"][1]
            )
            >= 20
        ),
        timeout=90,
    )
    end = datetime.now(UTC) - timedelta(seconds=2)
    body = {"mode": "external", "start": (end - timedelta(seconds=40)).isoformat()}
    body["end"] = end.isoformat()
    r = httpx.post(f"{api}/runs", json=body | {"resolution_s": 5}, headers=AUTH, timeout=60)
    assert r.status_code == 422, r.text
    assert "three scrape intervals of BMK's targets (2 s each)" in r.json()["detail"]
    assert "use resolution_s 6 or more (left out, it is 6)" in r.json()["detail"]
    per_s = []
    for resolution, steps in ((8, 5), (None, 6)):
        asked = {} if resolution is None else {"resolution_s": resolution}
        r = httpx.post(f"{api}/runs", json=body | asked, headers=AUTH, timeout=60)
        assert r.status_code == 201, r.text
        text = httpx.get(f"{api}/runs/{r.json()['id']}/series.csv", timeout=60).text
        dialog = [float(row["st03.dialog.steps"]) for row in csv.DictReader(io.StringIO(text))]
        print(f"resolution_s {resolution}: dialog steps per step {dialog}")
        assert len(dialog) == steps and all(v > 0 for v in dialog), dialog
        # Steps per second of each step after the first (the first holds less than a step:
        # its increase() has no sample from before the window's start).
        per_s.append(sum(dialog[1:]) / (len(dialog) - 1) / (resolution or 6))
    # The same window's throughput at either step (the model is steady without faults).
    assert abs(per_s[0] / per_s[1] - 1) < 0.05, per_s


def test_a_window_in_the_future_is_refused(stack) -> None:
    now = datetime.now(UTC)
    body = {
        "mode": "external",
        "start": now.isoformat(),
        "end": (now + timedelta(hours=1)).isoformat(),
    }
    r = httpx.post(f"{url(stack, 'api')}/runs", json=body, headers=AUTH, timeout=30)
    assert r.status_code == 422 and "future" in r.json()["detail"]
