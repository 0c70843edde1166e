"""Grafana (native, API-only) with wlmon's provisioning: datasources, the eight dashboards in
their folders, and every panel's queries answered with data through Grafana's own
/api/ds/query while the model runs."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from tests.integration.conftest import exporter_auth, grafana, url
from tests.integration.helpers import eventually

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
COMMITTED = {
    d["uid"]: d for d in (json.loads(p.read_text()) for p in (REPO / "dashboards").rglob("*.json"))
}
FOLDERS = {
    "wlmon-noc": "noc",
    "wlmon-fleet": "noc",
    "wlmon-st03": "sap",
    "wlmon-st05": "sap",
    "wlmon-dbbuffer": "database",
    "wlmon-os": "hosts",
    "wlmon-forensics": "forensics",
    "wlmon-instances": "sap",
}
VARIABLES = {
    "$sid": "BMK",
    "$sap_instance": ".*",
    "$task_type": "dialog",
    "$__rate_interval": "1m",
    "$__range": "15m",
    "$__interval": "30s",
}


@pytest.fixture(scope="module")
def with_logs(stack):
    """Make sure every log stream a panel reads has lines: a fault toggled (run events) and
    a notification posted to the API's webhook (forwarded to the log store)."""
    exporter = url(stack, "exporter")
    auth = exporter_auth(stack)
    httpx.put(
        f"{exporter}/control/faults", json={"faults": ["slow-enqueue-link"]}, headers=auth
    ).raise_for_status()
    httpx.put(f"{exporter}/control/faults", json={"faults": []}, headers=auth).raise_for_status()
    payload = {
        "version": "4",
        "groupKey": "{}:{}",
        "status": "firing",
        "receiver": "noc-warning",
        "alerts": [
            {
                "status": "firing",
                "startsAt": "2026-11-23T07:00:00Z",
                "labels": {
                    "alertname": "SAPEnqueueTimeHigh",
                    "severity": "warning",
                    "sid": "BMK",
                    "sap_instance": "penguin2_D00",
                },
                "annotations": {"summary": "Lock requests to the enqueue server are slow."},
            }
        ],
    }
    r = httpx.post(
        f"{url(stack, 'api')}/alerts/webhook",
        json=payload,
        headers={"Authorization": "Bearer integration-test-token"},
    )
    r.raise_for_status()
    # A run registered (its start and end events feed the forensics dashboard's run picker).
    eventually(lambda: _register_external_run(stack), timeout=90, every=5)
    return stack


def _register_external_run(stack) -> bool:
    end = datetime.now(UTC) - timedelta(seconds=2)
    body = {
        "mode": "external",
        "start": (end - timedelta(seconds=20)).isoformat(),
        "end": end.isoformat(),
        "resolution_s": 10,
        "label": "grafana panels",
    }
    r = httpx.post(
        f"{url(stack, 'api')}/runs",
        json=body,
        headers={"Authorization": "Bearer integration-test-token"},
        timeout=60,
    )
    return r.status_code == 201


def _resolve(text: str) -> str:
    for name in sorted(VARIABLES, key=len, reverse=True):
        text = text.replace(name, VARIABLES[name])
    return text


def _query(target: dict) -> dict:
    q = {k: v for k, v in target.items() if k not in ("expr", "query")}
    if "expr" in target:
        q["expr"] = _resolve(target["expr"])
    if "query" in target:
        q["query"] = _resolve(target["query"])
    return {**q, "intervalMs": 15000, "maxDataPoints": 300}


def _frames_with_rows(result: dict) -> int:
    count = 0
    for frame in result.get("frames", []):
        values = frame.get("data", {}).get("values", [])
        if values and len(values[0]) > 0:
            count += 1
    return count


def test_grafana_logs_no_provisioning_error(stack) -> None:
    log = (stack.log_dir / "grafana.log").read_text(errors="replace")
    errors = [
        line
        for line in log.splitlines()
        if "level=error" in line and "provisioning" in line.lower()
    ]
    assert errors == []


def test_search_lists_the_eight_dashboards_in_their_folders(stack) -> None:
    with grafana(stack) as client:

        def listed():
            hits = client.get("/api/search", params={"type": "dash-db"}).json()
            return {h["uid"]: h.get("folderTitle") for h in hits if h["uid"].startswith("wlmon-")}

        found = eventually(lambda: len(listed()) == len(FOLDERS) and listed(), timeout=60)
    assert found == FOLDERS


@pytest.mark.parametrize("uid", sorted(COMMITTED))
def test_dashboard_is_served_as_committed(stack, uid: str) -> None:
    with grafana(stack) as client:
        served = client.get(f"/api/dashboards/uid/{uid}").json()
    dash = served["dashboard"]
    committed = COMMITTED[uid]
    assert dash["title"] == committed["title"]
    assert served["meta"]["provisioned"] is True
    assert [p["title"] for p in dash["panels"]] == [p["title"] for p in committed["panels"]]
    assert [p["targets"] for p in dash["panels"]] == [p["targets"] for p in committed["panels"]]


# The instances dashboard reads the sapcontrol source, which this stack does not run:
# tests/integration/test_sapcontrol_e2e.py checks its panels on a stack that does.
NEEDS_SAPCONTROL = {"wlmon-instances"}


@pytest.mark.parametrize(
    ("uid", "title"),
    [
        (d["uid"], p["title"])
        for d in COMMITTED.values()
        if d["uid"] not in NEEDS_SAPCONTROL
        for p in d["panels"]
    ],
)
def test_every_panel_returns_data_through_grafana(with_logs, uid: str, title: str) -> None:
    panel = next(p for p in COMMITTED[uid]["panels"] if p["title"] == title)
    body = {"from": "now-15m", "to": "now", "queries": [_query(t) for t in panel["targets"]]}
    with grafana(with_logs) as client:

        def answered():
            r = client.post("/api/ds/query", json=body)
            assert r.status_code == 200, f"{uid} / {title}: {r.status_code} {r.text[:300]}"
            results = r.json()["results"]
            for ref, result in results.items():
                assert "error" not in result, f"{uid} / {title} / {ref}: {result['error']}"
            return all(_frames_with_rows(results[t["refId"]]) for t in panel["targets"])

        assert eventually(answered, timeout=60, every=3), f"{uid} / {title}: no data"
