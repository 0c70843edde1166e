"""The fleet's Alertmanager cluster, real peers gossiping on 127.0.0.1, alerts posted as
both Prometheus replicas post them (to every peer), notifications counted at a real webhook.

Grouping by [alertname, sid]: a storm over 20 SIDs x 30 instances is 20 notifications.
Inhibition: a SID whose exporter is down has its instance-level alerts muted, no other.
A peer killed (-9) while an alert is pending: the other peer sends it, exactly once,
within group_wait + peer position x peer_timeout + SEND_MARGIN_S.
"""

from __future__ import annotations

import datetime as dt
import math
import time

import httpx
import pytest

from tests.integration.fleet_helpers import fleet_environment, kill9, ports, webhook
from tests.integration.helpers import eventually

pytestmark = pytest.mark.integration

# Every timer a whole number of SCRAPE_S: the peers flush on a 2 s grid, and the peer
# timeout is half-way between two of its points (wlmon/stack/peertiming.py rejects one on it).
SCRAPE_S = 2
GROUP_WAIT_S = 2
GROUP_INTERVAL_S = 10
PEER_TIMEOUT_S = 3
# Gossip, the webhook round trip and Alertmanager's own 1 s-granular timers.
SEND_MARGIN_S = 5
PEERS = ["alertmanager-1", "alertmanager-2"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with (
        webhook() as hook,
        fleet_environment(
            tmp_path_factory.mktemp("fleet-am"),
            hook,
            WLMON_SCRAPE_INTERVAL=f"{SCRAPE_S}s",
            WLMON_AM_GROUP_WAIT=f"{GROUP_WAIT_S}s",
            WLMON_AM_GROUP_INTERVAL=f"{GROUP_INTERVAL_S}s",
            WLMON_AM_CAUSE_GROUP_WAIT=f"{GROUP_WAIT_S}s",
            WLMON_AM_CAUSE_GROUP_INTERVAL=f"{GROUP_INTERVAL_S}s",
            WLMON_FLEET_AM_PEER_TIMEOUT=f"{PEER_TIMEOUT_S}s",
        ) as stack,
    ):
        stack.up(only=PEERS)
        urls = [f"http://127.0.0.1:{ports(stack).alertmanager(j)}" for j in range(2)]
        # Both peers see each other before anything is sent.
        eventually(
            lambda: all(
                len(_get(stack, f"{u}/api/v2/status").json()["cluster"]["peers"]) == 2 for u in urls
            ),
            timeout=60,
        )
        yield stack, hook, urls


def _get(stack, address: str, **params) -> httpx.Response:
    """A read of a peer's API, logged in (every peer asks for basic auth)."""
    r = httpx.get(address, params=params, auth=stack.alertmanager_auth(), timeout=10)
    r.raise_for_status()
    return r


def _alert(name: str, sid: str, instance: str | None = None, severity: str = "warning") -> dict:
    now = dt.datetime.now(dt.UTC)
    labels = {"alertname": name, "sid": sid, "severity": severity}
    if instance:
        labels["sap_instance"] = instance
    return {
        "labels": labels,
        "annotations": {"summary": f"{name} on {sid}"},
        "startsAt": now.isoformat(),
        "endsAt": (now + dt.timedelta(minutes=10)).isoformat(),
    }


def _post(stack, urls: list[str], alerts: list[dict]) -> None:
    for u in urls:  # as every Prometheus replica does, logged in
        r = httpx.post(
            f"{u}/api/v2/alerts", json=alerts, auth=stack.alertmanager_auth(), timeout=10
        )
        r.raise_for_status()


def test_a_storm_over_20_sids_is_one_notification_per_sid_and_alert(cluster) -> None:
    stack, hook, urls = cluster
    t0 = time.time()
    sids = [f"S{i:02d}" for i in range(20)]
    storm = [_alert("SAPDispatcherWaitTimeHigh", s, f"app{k}_D00") for s in sids for k in range(30)]
    _post(stack, urls, storm)
    eventually(lambda: len(hook.matching(t0, alertname="SAPDispatcherWaitTimeHigh")) >= 20, 30)
    # One more group interval: a duplicate from the second peer would arrive by then.
    time.sleep(GROUP_INTERVAL_S + SEND_MARGIN_S)
    got = hook.matching(t0, alertname="SAPDispatcherWaitTimeHigh")
    assert sorted(n.group["sid"] for n in got) == sids  # 20, each SID once
    for n in got:
        assert n.group == {"alertname": "SAPDispatcherWaitTimeHigh", "sid": n.group["sid"]}
        assert len(n.alerts) == 30  # every instance named in the one message
    assert hook.refused == 0


def test_an_exporter_down_mutes_only_its_own_sids_instance_alerts(cluster) -> None:
    stack, hook, urls = cluster
    t0 = time.time()
    _post(
        stack,
        urls,
        [
            _alert("SAPExporterDown", "XDN", severity="critical"),
            _alert("SAPRollInTimeHigh", "XDN", "app1_D00"),
            _alert("SAPRollInTimeHigh", "XUP", "app1_D00"),
        ],
    )
    eventually(lambda: hook.matching(t0, alertname="SAPRollInTimeHigh", sid="XUP"), 30)
    eventually(lambda: hook.matching(t0, alertname="SAPExporterDown", sid="XDN"), 30)
    time.sleep(GROUP_WAIT_S + SEND_MARGIN_S)
    assert hook.matching(t0, alertname="SAPRollInTimeHigh", sid="XDN") == []
    shown = _get(stack, f"{urls[1]}/api/v2/alerts", filter='sid="XDN"').json()
    state = {a["labels"]["alertname"]: a["status"] for a in shown}
    assert state["SAPRollInTimeHigh"]["state"] == "suppressed"
    assert state["SAPRollInTimeHigh"]["inhibitedBy"]
    assert state["SAPExporterDown"]["state"] == "active"


def _silence(matcher_value: str) -> dict:
    now = dt.datetime.now(dt.UTC)
    return {
        "matchers": [{"name": "alertname", "value": matcher_value, "isRegex": False}],
        "startsAt": now.isoformat(),
        "endsAt": (now + dt.timedelta(minutes=5)).isoformat(),
        "createdBy": "tests/integration",
        "comment": "basic auth probe",
    }


def test_a_silence_needs_the_password_and_an_authenticated_one_reaches_every_peer(
    cluster,
) -> None:
    """Issue 26: anyone on the machine could silence every page. Now every endpoint of
    every peer asks for basic auth, its /-/ready and /metrics too."""
    stack, _, urls = cluster
    user, password = stack.alertmanager_auth()
    probe = f"SAPAuthProbe{time.time_ns()}"
    for auth in (None, (user, password + "x"), ("admin", password)):
        r = httpx.post(f"{urls[0]}/api/v2/silences", json=_silence(probe), auth=auth, timeout=10)
        assert r.status_code == 401, (auth and auth[0], r.status_code, r.text)
        assert r.headers["WWW-Authenticate"].startswith("Basic")
    for path in ("/-/ready", "/metrics", "/api/v2/silences", "/api/v2/alerts"):
        assert httpx.get(f"{urls[1]}{path}", timeout=10).status_code == 401, path
    r = httpx.post(
        f"{urls[0]}/api/v2/silences", json=_silence(probe), auth=(user, password), timeout=10
    )
    assert r.status_code == 200, r.text
    sid = r.json()["silenceID"]
    try:
        # The refused ones made nothing: this one alone, gossiped to the other peer.
        def on_peer_2():
            mine = [
                s
                for s in _get(stack, f"{urls[1]}/api/v2/silences").json()
                if s["matchers"][0]["value"] == probe
            ]
            return mine if mine and mine[0]["status"]["state"] == "active" else None

        assert [s["id"] for s in eventually(on_peer_2, timeout=30)] == [sid]
    finally:
        httpx.delete(
            f"{urls[0]}/api/v2/silence/{sid}", auth=(user, password), timeout=10
        ).raise_for_status()


def _first_sender(stack, urls: list[str]) -> int:
    """The peer at position 0 (memberlist names sorted), the one that sends first."""
    names = []
    for u in urls:
        names.append(_get(stack, f"{u}/api/v2/status").json()["cluster"]["name"])
    return names.index(sorted(names)[0])


def test_a_peer_killed_while_an_alert_is_pending_the_other_sends_it_once(cluster) -> None:
    stack, hook, urls = cluster
    first = _first_sender(stack, urls)
    t0 = time.time()
    _post(stack, urls, [_alert("SAPEnqueueTimeHigh", "KIL", "app1_D00", "critical")])
    kill9(stack, PEERS[first])  # before its group wait ends: it never sent
    killed_at = time.time()
    bound = GROUP_WAIT_S + PEER_TIMEOUT_S + SEND_MARGIN_S
    got = eventually(lambda: hook.matching(t0, sid="KIL"), timeout=bound + 30, every=0.2)
    delay = got[0].received - t0
    assert delay <= bound, f"sent after {delay:.1f} s, bound {bound} s"
    # The dead peer restarts and gets the alert again (as Prometheus resends it every
    # evaluation); the gossiped notification log keeps it from sending a second time.
    stack.up(only=PEERS)
    _post(stack, urls, [_alert("SAPEnqueueTimeHigh", "KIL", "app1_D00", "critical")])
    time.sleep(GROUP_INTERVAL_S + SEND_MARGIN_S)
    firing = [n for n in hook.matching(t0, sid="KIL") if n.body["status"] == "firing"]
    assert len(firing) == 1, [(n.received - killed_at, n.body["status"]) for n in firing]


def test_peers_whose_groups_run_out_of_phase_send_a_notification_once(cluster) -> None:
    """The peers' groups of one alert need not start together: a peer that closed a group
    opens it anew on a later evaluation while the other keeps its own open. Both then
    flush every group interval, out of phase by whole evaluations. The waiting peer reads
    the notification log peer_timeout after its flush: if the first peer flushes at that
    very instant, neither sees the other's entry and both send (test_fleet_thanos's flaky
    duplicate; this test before the fix, peer timeout 3 s on a 1 s grid: peer 2 sent 3.0 s
    after its flush, peer 1 flushed 30 ms later and sent the same again). Here the first
    peer's group starts on each grid point around one peer timeout after the waiting
    peer's, as an evaluation would start it: the notification must still come once."""
    stack, hook, urls = cluster
    # Past the peers' gossip settling (10 s after a start), which holds every send back.
    eventually(
        lambda: all(
            _get(stack, f"{u}/api/v2/status").json()["cluster"]["status"] == "ready" for u in urls
        ),
        timeout=60,
    )
    first = _first_sender(stack, urls)
    # The grid: evaluations every SCRAPE_S, groups flushed whole group waits and intervals
    # after one. Its points on either side of the peer timeout.
    grid = math.gcd(SCRAPE_S, GROUP_WAIT_S, GROUP_INTERVAL_S, 60)  # 60: the watchdog's 1m
    offsets = sorted(
        {math.floor(PEER_TIMEOUT_S / grid) * grid, math.ceil(PEER_TIMEOUT_S / grid) * grid}
    )
    sids = {d: f"PH{d}{time.time_ns() % 1000:03d}" for d in offsets}
    t0 = time.time()
    for sid in sids.values():
        _post(stack, [urls[1 - first]], [_alert("SAPRollInTimeHigh", sid, "app1_D00")])
    start = time.monotonic()
    for d, sid in sids.items():
        time.sleep(max(0.0, start + d - time.monotonic()))
        _post(stack, [urls[first]], [_alert("SAPRollInTimeHigh", sid, "app1_D00")])
    for sid in sids.values():
        eventually(lambda sid=sid: hook.matching(t0, sid=sid), timeout=30, every=0.2)
    time.sleep(GROUP_INTERVAL_S + SEND_MARGIN_S)  # time for the late one
    sent = {
        sid: [
            (round(n.received - t0, 2), n.body["externalURL"]) for n in hook.matching(t0, sid=sid)
        ]
        for sid in sids.values()
    }
    assert all(len(s) == 1 for s in sent.values()), sent
