"""One fault, one message per receiver, through the real Alertmanager and the shipped
route (provisioning/alertmanager/alertmanager.yml rendered as `wlmon up` renders it).

Alerts are posted as Prometheus posts them: a roll area too small on four instances fires
roll-in and roll-out pages (critical) and the roll file and extended memory warnings, all
with cause="roll-area", a few seconds apart. The on-call receiver gets one message naming
the eight pages, the NOC one naming the eight warnings; a resend changes nothing; the
fault's removal sends one resolved message each and no "firing" after it. A yellow
dispatcher on a paged instance is muted (inhibition), an alert without a cause keeps its
own message (grouped by alert name).
"""

from __future__ import annotations

import datetime as dt
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.integration.fleet_helpers import TOKEN, webhook
from tests.integration.helpers import eventually
from wlmon.stack.components import COMPONENTS
from wlmon.stack.render import ALERTMANAGER_USER, render_alertmanager

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
PASSWORD = "grouping-test-password"
INSTANCES = [f"penguin{k}_D00" for k in range(2, 6)]
# The cause route's group_wait (15 s) and group_interval (30 s), the shipped defaults, plus
# Alertmanager's 1 s timers and the webhook's round trip.
GROUP_WAIT_S, GROUP_INTERVAL_S, MARGIN_S = 15, 30, 5


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def alertmanager(tmp_path):
    binary = COMPONENTS["alertmanager"].path("alertmanager")
    if not Path(binary).is_file():
        pytest.skip(f"{binary} missing: run `wlmon stack install --only alertmanager`")
    with webhook() as hook:
        out = render_alertmanager(
            REPO / "provisioning" / "alertmanager",
            {
                "WLMON_API_URL": f"http://127.0.0.1:{hook.port}",
                "WLMON_API_TOKEN": TOKEN,
                "WLMON_ALERTMANAGER_PASSWORD": PASSWORD,
            },
            tmp_path / "config",
        )
        port = _free_port()
        proc = subprocess.Popen(
            [
                str(binary),
                f"--config.file={out}",
                f"--web.config.file={out.parent / 'web.yml'}",
                f"--storage.path={tmp_path / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--cluster.listen-address=",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            auth = (ALERTMANAGER_USER, PASSWORD)
            eventually(lambda: httpx.get(f"{base}/-/ready", auth=auth).status_code == 200, 30, 0.5)
            yield base, auth, hook
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def _alert(name: str, inst: str, severity: str, *, resolved: bool = False, **labels) -> dict:
    """As Prometheus posts it: startsAt the evaluation it fired in, which for a resend is
    already past (Alertmanager keeps the first); an alert older than group_wait when first
    seen would be flushed at once."""
    now = dt.datetime.now(dt.UTC)
    ends = now if resolved else now + dt.timedelta(minutes=4)
    return {
        "labels": {"alertname": name, "sid": "BMK", "sap_instance": inst, "severity": severity}
        | labels,
        "annotations": {"summary": name},
        "startsAt": now.isoformat(),
        "endsAt": ends.isoformat(),
    }


def _post(base: str, auth, alerts: list[dict]) -> None:
    r = httpx.post(f"{base}/api/v2/alerts", json=alerts, auth=auth, timeout=10)
    assert r.status_code == 200, r.text


def _roll_area(resolved: bool = False) -> tuple[list[dict], list[dict]]:
    cause = {"cause": "roll-area", "task_type": "dialog"}
    pages = [
        _alert(name, inst, "critical", resolved=resolved, **cause)
        for name in ("SAPRollInTimeHigh", "SAPRollOutTimeHigh")
        for inst in INSTANCES
    ]
    evidence = [
        _alert(name, inst, "warning", resolved=resolved, cause="roll-area")
        for name in ("SAPRollFileInUse", "SAPExtendedMemoryFull")
        for inst in INSTANCES
    ]
    return pages, evidence


def _messages(hook, receiver: str, status: str | None = None) -> list[dict]:
    with hook.lock:
        bodies = [n.body for n in hook.notifications]
    return [
        b for b in bodies if b["receiver"] == receiver and (status is None or b["status"] == status)
    ]


def test_one_roll_area_fault_is_one_message_per_receiver(alertmanager) -> None:
    base, auth, hook = alertmanager
    pages, evidence = _roll_area()
    yellow = _alert("SAPProcessDegraded", INSTANCES[0], "warning", process="disp+work")
    # Roll-in first, the rest 5 s later: within group_wait, as one evaluation's stragglers.
    _post(base, auth, pages[:4])
    time.sleep(5)
    _post(base, auth, [*pages[4:], *evidence, yellow])
    _post(base, auth, [_alert("SAPBufferSwaps", INSTANCES[1], "warning", buffer="nametab")])

    eventually(lambda: _messages(hook, "oncall-critical") and _messages(hook, "noc-warning"), 40)
    # Prometheus resends every minute; nothing changed, so nothing is sent.
    _post(base, auth, [*pages, *evidence])
    time.sleep(GROUP_INTERVAL_S + MARGIN_S)

    (page,) = _messages(hook, "oncall-critical")
    assert page["status"] == "firing" and page["groupLabels"] == {
        "cause": "roll-area",
        "sid": "BMK",
    }
    assert sorted(
        (a["labels"]["alertname"], a["labels"]["sap_instance"]) for a in page["alerts"]
    ) == (sorted((a["labels"]["alertname"], a["labels"]["sap_instance"]) for a in pages))
    noc = _messages(hook, "noc-warning")
    by_group = {tuple(sorted(m["groupLabels"].items())): m for m in noc}
    assert len(noc) == len(by_group) == 2, noc  # the roll area, and the buffer on its own
    roll = by_group[(("cause", "roll-area"), ("sid", "BMK"))]
    assert len(roll["alerts"]) == len(evidence)
    assert by_group[(("alertname", "SAPBufferSwaps"), ("sid", "BMK"))]["alerts"]
    # The yellow dispatcher of a paged instance is muted by the page naming its cause.
    assert not any(
        a["labels"]["alertname"] == "SAPProcessDegraded" for m in noc for a in m["alerts"]
    )

    # The fault removed: one resolved message per receiver, no firing after it.
    removed_at = len(hook.notifications)
    resolved_pages, resolved_evidence = _roll_area(resolved=True)
    # The dispatcher drains with the fault: its yellow clears in the same evaluation.
    yellow_gone = _alert("SAPProcessDegraded", INSTANCES[0], "warning", resolved=True)
    yellow_gone["labels"]["process"] = "disp+work"
    _post(base, auth, [*resolved_pages, *resolved_evidence, yellow_gone])
    eventually(
        lambda: (
            _messages(hook, "oncall-critical", "resolved")
            and [
                m
                for m in _messages(hook, "noc-warning", "resolved")
                if m["groupLabels"].get("cause")
            ]
        ),
        GROUP_INTERVAL_S + MARGIN_S,
    )
    time.sleep(GROUP_INTERVAL_S + MARGIN_S)
    with hook.lock:
        after = [n.body for n in hook.notifications[removed_at:]]
    assert sorted((m["receiver"], m["status"]) for m in after if m["groupLabels"].get("cause")) == [
        ("noc-warning", "resolved"),
        ("oncall-critical", "resolved"),
    ], after
    assert not [m for m in after if m["status"] == "firing"], after
