"""No duplicate lines in the log store after a stall (issue 26: 60 notifications became 227
lines in Loki; VictoriaLogs, unlike Loki, keeps every copy of a line pushed twice).

VictoriaLogs is frozen with SIGSTOP (bounded: 10 s, longer than the forwarder's 3 s push
timeout) while notifications arrive at the API's webhook, then thawed; every notification is
then stored exactly once. Lines are counted with a LogsQL query for this test's own marker."""

from __future__ import annotations

import os
import signal
import time
import uuid

import httpx
import pytest

from tests.integration.conftest import logsql, url
from tests.integration.helpers import eventually

pytestmark = pytest.mark.integration
AUTH = {"Authorization": "Bearer integration-test-token"}
N = 30


def _payload(marker: str, k: int) -> dict:
    return {
        "version": "4",
        "groupKey": f"stall-{marker}",
        "truncatedAlerts": 0,
        "status": "firing",
        "receiver": "noc-warning",
        "groupLabels": {},
        "commonLabels": {},
        "commonAnnotations": {},
        "externalURL": "http://127.0.0.1:9093",
        "alerts": [
            {
                "status": "firing",
                "labels": {"alertname": "SAPLogStoreStallProbe", "severity": "info", "sid": "BMK"},
                "annotations": {"summary": f"{marker} {k}"},
                "startsAt": "2026-11-25T12:00:00Z",
                "endsAt": "0001-01-01T00:00:00Z",
                "generatorURL": "http://127.0.0.1:9090/graph",
                "fingerprint": f"{marker}-{k}",
            }
        ],
    }


def _lines(stack, marker: str) -> list[str]:
    return [row["_msg"] for row in logsql(stack, f'{{source="alertmanager"}} "{marker}"')]


def test_a_frozen_log_store_gets_every_notification_once(stack) -> None:
    marker = uuid.uuid4().hex
    api = url(stack, "api")
    (store,) = [r for r in stack.recorded() if r.name == "victorialogs"]
    for k in range(N // 3):  # before: forwarded at once
        assert httpx.post(
            f"{api}/alerts/webhook", json=_payload(marker, k), headers=AUTH
        ).is_success
    os.kill(store.pid, signal.SIGSTOP)
    try:
        frozen_at = time.monotonic()
        for k in range(N // 3, N):  # during: pushes time out, maybe half-delivered
            r = httpx.post(
                f"{api}/alerts/webhook", json=_payload(marker, k), headers=AUTH, timeout=10
            )
            assert r.is_success, r.text
            time.sleep(0.3)
        time.sleep(max(0.0, 10 - (time.monotonic() - frozen_at)))
    finally:
        os.kill(store.pid, signal.SIGCONT)
    lines = eventually(lambda: len(got := _lines(stack, marker)) >= N and got, timeout=120, every=2)
    time.sleep(5)  # a late retry would add its copy by now
    lines = _lines(stack, marker)
    summaries = sorted(line for line in lines)
    print(f"\nVictoriaLogs frozen 10 s: {N} notifications, {len(lines)} lines")
    assert len(lines) == N, f"{len(lines)} lines for {N} notifications"
    assert len(set(summaries)) == N
