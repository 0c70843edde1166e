"""The stack watches itself (alerts/monitoring.py), on the live stack:

- every server of the stack answers its scrape (InfluxDB's and Perses' /metrics too);
- the watchdog's heartbeats reach the heartbeat receiver, again and again, and never people;
- the API stopped: SAPAPIDown is mailed to on-call although the webhook is the API itself,
  and the failing webhook raises SAPAlertmanagerNotificationsFailing;
- Prometheus killed (SIGKILL) while an alert is pending: the restarted Prometheus restores
  its `for` state, so it fires without waiting a whole `for` again, and people are told.

Rules are compressed by 0.1 (conftest): for: 2m is 12 s, for: 5m 30 s.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import ssl
import time
from datetime import UTC, datetime, timedelta

import httpx
import psutil
import pytest

from alerts.monitoring import SERVERS
from tests.integration.conftest import exporter_auth, logs, logsql, url
from tests.integration.helpers import eventually
from wlmon.stack import pki
from wlmon.stack.runtime import Stack

pytestmark = pytest.mark.integration


def _query(stack: Stack, promql: str) -> list[dict]:
    r = httpx.get(f"{url(stack, 'prometheus')}/api/v1/query", params={"query": promql}, timeout=10)
    r.raise_for_status()
    return r.json()["data"]["result"]


def _alerts(stack: Stack, name: str, state: str | None = None) -> list[dict]:
    r = httpx.get(f"{url(stack, 'prometheus')}/api/v1/alerts", timeout=10)
    r.raise_for_status()
    return [
        a
        for a in r.json()["data"]["alerts"]
        if a["labels"]["alertname"] == name and (state is None or a["state"] == state)
    ]


def test_every_server_of_the_stack_answers_its_scrape(stack: Stack) -> None:
    jobs = {s.job for s in SERVERS}

    def all_up() -> dict[str, str]:
        up = {r["metric"]["job"]: r["value"][1] for r in _query(stack, "up")}
        assert {j: up.get(j) for j in jobs} == dict.fromkeys(jobs, "1"), up
        return up

    eventually(all_up, timeout=60, every=2)


# Write endpoints of every kind of server the stack runs, and of what could be listening by
# mistake (Loki's and VictoriaLogs' pushes, InfluxDB 1.x and 2.x line protocol, Prometheus'
# remote write, Alertmanager's alerts, the API's webhook and imports, the exporter's control).
FORGED_WRITES = (
    ("/loki/api/v1/push", b'{"streams":[{"stream":{"source":"forged"},"values":[["1","x"]]}]}'),
    (
        "/insert/loki/api/v1/push",
        b'{"streams":[{"stream":{"source":"forged"},"values":[["1","x"]]}]}',
    ),
    ("/insert/jsonline", b'{"_msg":"forged","_time":"2026-01-01T00:00:00Z"}'),
    ("/write?db=telegraf", b"forged,host=x value=1"),
    ("/api/v2/write?bucket=telegraf", b"forged,host=x value=1"),
    ("/api/v1/write", b"\x00"),
    ("/api/v2/alerts", b'[{"labels":{"alertname":"Forged"}}]'),
    ("/alerts/webhook", b'{"version":"4","status":"firing","alerts":[]}'),
    ("/imports/perfmon", b'"(PDH-CSV 4.0)","x"'),
    ("/control/faults", b'{"faults":[]}'),
)
# A server's page that answers any path: what it says first.
LANDING_PAGES = {"telegraf": "Telegraf Output Plugin: Prometheus Client"}
# The client preface of HTTP/2 over plain TCP (RFC 9113 3.4) and an empty SETTINGS frame:
# what a plaintext gRPC client (Loki's Pusher) sends first.
H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


def _listening(stack: Stack) -> dict[int, str]:
    """Port -> server, for every listening socket of every process the stack started."""
    ports = {}
    for r in stack.recorded():
        with contextlib.suppress(psutil.NoSuchProcess):
            proc = psutil.Process(r.pid)
            for p in [proc, *proc.children(recursive=True)]:
                for c in p.net_connections(kind="inet"):
                    if c.status == psutil.CONN_LISTEN:
                        ports[c.laddr.port] = r.name
    return ports


def _speaks_http2_in_plain(port: int) -> bool:
    """A server that answers the HTTP/2 preface with a frame (a SETTINGS frame: 9 bytes whose
    fourth is type 4) takes plaintext gRPC; an HTTP/1 or TLS server answers otherwise."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(H2_PREFACE)
        sock.settimeout(3)
        try:
            head = sock.recv(9)
        except (TimeoutError, ConnectionResetError):
            return False
    return len(head) == 9 and head[3] == 0x4


def test_no_port_of_the_stack_takes_a_write_without_credentials(stack: Stack) -> None:
    """Issue 38 item 3: a push without credentials to every port the stack listens on, in
    plain HTTP, in HTTPS and as plaintext HTTP/2 (gRPC's transport: how Loki's gRPC port took
    a forged line), is refused: no 2xx anywhere, no port speaking plaintext HTTP/2."""
    ports = _listening(stack)
    assert {"api", "prometheus", "alertmanager", "victorialogs", "exporter"} <= set(
        ports.values()
    ), ports
    taken, h2 = [], []
    headers = {"Content-Type": "application/json"}
    for port, server in sorted(ports.items()):
        for scheme in ("http", "https"):
            with httpx.Client(verify=False, timeout=5) as client:  # a probe: any certificate
                for path, body in FORGED_WRITES:
                    try:
                        r = client.post(
                            f"{scheme}://127.0.0.1:{port}{path}", content=body, headers=headers
                        )
                    except httpx.HTTPError:
                        continue  # refused at the transport (TLS to plain, or the reverse)
                    # Telegraf's prometheus_client output answers every other path and
                    # method with its landing page (a read: the body ignored, nothing kept).
                    landing = r.text.startswith(LANDING_PAGES.get(server, "\x00"))
                    if r.is_success and not landing:
                        taken.append(f"{server}:{port} {scheme} {path} -> {r.status_code}")
        if _speaks_http2_in_plain(port):
            h2.append(f"{server}:{port}")
    print(f"\nprobed {len(ports)} ports: {sorted(ports.items())}")
    assert taken == [], taken
    assert h2 == [], h2


def test_prometheus_cannot_be_stopped_over_http(stack: Stack) -> None:
    """Issue 26: the lifecycle endpoints needed no password on loopback; now they are off."""
    r = httpx.post(f"{url(stack, 'prometheus')}/-/quit", timeout=10)
    assert r.status_code == 403, r.text
    assert httpx.get(f"{url(stack, 'prometheus')}/-/ready", timeout=10).status_code == 200


def test_alertmanager_asks_for_its_password_and_every_client_has_it(stack: Stack) -> None:
    """Issue 26: Alertmanager's silences needed no auth on loopback. Now a silence without
    the password is refused (401) and makes nothing, one with it works; Prometheus (alerts
    and scrape) log in."""
    am = url(stack, "alertmanager")
    user, password = stack.alertmanager_auth()
    now = datetime.now(UTC)
    probe = f"SAPAuthProbe{time.time_ns()}"
    silence = {
        "matchers": [{"name": "alertname", "value": probe, "isRegex": False}],
        "startsAt": now.isoformat(),
        "endsAt": (now + timedelta(minutes=5)).isoformat(),
        "createdBy": "tests/integration",
        "comment": "basic auth probe",
    }
    for auth in (None, (user, "wrong")):
        r = httpx.post(f"{am}/api/v2/silences", json=silence, auth=auth, timeout=10)
        assert r.status_code == 401, r.text
    assert httpx.get(f"{am}/-/ready", timeout=10).status_code == 401
    r = httpx.post(f"{am}/api/v2/silences", json=silence, auth=(user, password), timeout=10)
    assert r.status_code == 200, r.text
    made = httpx.get(
        f"{am}/api/v2/silences",
        params={"filter": f'alertname="{probe}"'},
        auth=(user, password),
        timeout=10,
    ).json()
    assert [s["id"] for s in made] == [r.json()["silenceID"]]
    r = httpx.delete(f"{am}/api/v2/silence/{made[0]['id']}", auth=(user, password), timeout=10)
    assert r.status_code == 200, r.text
    # Prometheus sends to it (its notifier lists it as active) and scrapes it.
    prom = url(stack, "prometheus")
    active = httpx.get(f"{prom}/api/v1/alertmanagers", timeout=10).json()["data"]
    assert [a["url"] for a in active["activeAlertmanagers"]] == [f"{am}/api/v2/alerts"]
    eventually(lambda: _query(stack, 'up{job="alertmanager"}')[0]["value"][1] == "1", 30)
    errors = _query(stack, "sum(prometheus_notifications_errors_total)")
    assert errors[0]["value"][1] == "0", errors


def test_the_watchdog_beats_to_its_receiver_and_never_to_people(stack, heartbeats) -> None:
    t0 = time.time()
    # for: 1m scaled to 6 s, then a beat every WLMON_WATCHDOG_INTERVAL (5 s).
    beats = eventually(lambda: len(heartbeats.since(t0)) >= 2 and heartbeats.since(t0), 60, 1)
    assert all(names == ["SAPWatchdog"] for _, names in beats), beats
    gap = beats[1][0] - beats[0][0]
    print(f"\nwatchdog: heartbeats {gap:.1f} s apart")
    assert 2 <= gap <= 15
    r = httpx.get(f"{url(stack, 'api')}/alerts/notifications", params={"alertname": "SAPWatchdog"})
    assert r.json() == []


def test_the_api_down_is_mailed_and_its_failing_webhook_alerts(stack, mailbox) -> None:
    """The API killed (SIGKILL): its own death is mailed while it is dead, straight from
    Alertmanager, with what the reader needs (since when, diagnosis, runbook link)."""
    t0 = time.time()
    _kill(stack, "api")
    try:

        def mailed(alert: str) -> list[dict]:
            return [
                m
                for m in mailbox.since(t0)
                if alert in m["text"] and "oncall@wlmon.test" in m["to"]
            ]

        down = eventually(lambda: mailed("SAPAPIDown"), timeout=120, every=2)
        print(f"\nAPI killed: SAPAPIDown mailed after {down[0]['received'] - t0:.0f} s")
        with pytest.raises(httpx.TransportError):  # told while it is dead
            httpx.get(f"{url(stack, 'api')}/healthz", timeout=5)
        text = down[0]["text"].split("<pre>")[0]
        print(text)
        assert down[0]["subject"].startswith("[FIRING:1] SAPAPIDown")
        assert re.search(r"Since: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", text)
        assert f"Runbook: {url(stack, 'api')}/runbooks#sapapidown" in text
        assert "Diagnosis: " in text and "Dashboard: none" in text
        failing = eventually(
            lambda: mailed("SAPAlertmanagerNotificationsFailing"), timeout=120, every=2
        )
        print(
            f"SAPAlertmanagerNotificationsFailing mailed after {failing[0]['received'] - t0:.0f} s"
        )
        assert "webhook" in failing[0]["text"]
    finally:
        stack.up(only=["api"])


def _kill(stack: Stack, name: str) -> None:
    (running,) = [r for r in stack.recorded() if r.name == name]
    os.kill(running.pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(running.pid, 0)  # our child (stack.up started it): reap it


def _set_faults(stack: Stack, faults: list[str]) -> None:
    r = httpx.put(
        f"{url(stack, 'exporter')}/control/faults",
        json={"faults": faults},
        headers=exporter_auth(stack),
        timeout=10,
    )
    assert r.status_code == 200, r.text


def _ts(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def test_a_pending_alert_keeps_its_for_state_across_a_prometheus_kill(stack: Stack) -> None:
    # An alert with a for: long enough to kill Prometheus in between: SAPTelegrafDown (for 2m,
    # scaled by 0.1). The SAP threshold alerts confirm in 30 s (3 s scaled), too short, and
    # have no 5-minute warning twin any more (issue 37).
    name, for_s = "SAPTelegrafDown", 12.0
    assert stack.stop_service("telegraf")
    try:

        def pending_for(at_least: float) -> dict | None:
            for a in _alerts(stack, name, "pending"):
                if time.time() - _ts(a["activeAt"]) >= at_least:
                    return a
            return None

        # Killed two thirds into its for:, so a restart that forgets would need 12 s more.
        before = eventually(lambda: pending_for(for_s * 2 / 3), timeout=120, every=0.5)
        active_at = _ts(before["activeAt"])
        _kill(stack, "prometheus")
        killed = time.time()
        time.sleep(3)
        stack.up(only=["prometheus"])
        restarted = time.time()

        # Prometheus restores for: state after its second evaluation (the first may lack
        # fresh data): until then the alert shows a new activeAt, so read it once firing.
        firing = eventually(lambda: _alerts(stack, name, "firing"), timeout=60, every=0.5)
        fired_after = time.time() - restarted
        moved = _ts(firing[0]["activeAt"]) - active_at
        print(
            f"\nkill mid-pending: pending {killed - active_at:.1f} s of {for_s:g} s when killed, "
            f"down {restarted - killed:.1f} s; activeAt moved by {moved:.1f} s; "
            f"firing {fired_after:.1f} s after the restart (a fresh for: needs {for_s:g} s)"
        )
        # Restored: the time pending before the kill counts (activeAt moved by the outage
        # and the restore's two evaluations only), so it fires well before a fresh for:.
        assert moved <= (restarted - killed) + 10
        # A fresh for: could fire no sooner than for_s after its first evaluation.
        assert fired_after < for_s
        # And handed to Alertmanager.
        at_am = eventually(
            lambda: [
                a
                for a in httpx.get(
                    f"{url(stack, 'alertmanager')}/api/v2/alerts", auth=stack.alertmanager_auth()
                ).json()
                if a["labels"]["alertname"] == name
            ],
            timeout=30,
            every=1,
        )
        assert at_am[0]["status"]["state"] in {"active", "suppressed"}
    finally:
        stack.up(only=["telegraf"])


def _push(client: httpx.Client, base: str, marker: str) -> httpx.Response:
    line = [str(time.time_ns()), marker]
    body = {"streams": [{"stream": {"source": "tls-probe", "sid": "BMK"}, "values": [line]}]}
    return client.post(f"{base}/insert/loki/api/v1/push", json=body, timeout=10)


def test_the_log_store_refuses_every_write_without_its_password(stack, tmp_path) -> None:
    """Issue 38 item 3 for the log store: VictoriaLogs has one listener (no gRPC port, unlike
    Loki's, which took a forged plaintext push). A push without credentials, with a wrong
    password, or in plain HTTP is refused and stores nothing; a client trusting another CA
    does not send its password at all; with the stack's CA and password it is taken. Every
    port the stack listens on that is the log store's is that one port. Prometheus scrapes it
    with the same password (SAPLogStoreDown's source)."""
    base = stack.logs_url()
    port = stack.settings.ports.victorialogs
    marker = f"tls-probe-{time.time_ns()}"
    only_ca = ssl.create_default_context(cafile=str(stack.logs_pki().ca))
    refusals = {}
    with httpx.Client(verify=only_ca) as client:  # trusts the store, no password
        refusals["no password"] = _push(client, base, f"{marker}-none").status_code
    with httpx.Client(verify=only_ca, auth=("wlmon-logs", "wrong")) as client:
        refusals["wrong password"] = _push(client, base, f"{marker}-wrong").status_code
    with httpx.Client(verify=only_ca, auth=("admin", stack.logs_access().password)) as client:
        refusals["wrong user"] = _push(client, base, f"{marker}-user").status_code
    # Plain HTTP with the right password: Go's TLS server answers 400 and closes, which a
    # client still sending its body may see as a reset instead; either way nothing is taken.
    plain_body = {
        "streams": [
            {
                "stream": {"source": "tls-probe"},
                "values": [[str(time.time_ns()), f"{marker}-plain"]],
            }
        ]
    }
    try:
        refusals["plain HTTP"] = httpx.post(
            f"http://127.0.0.1:{port}/insert/loki/api/v1/push",
            auth=stack.logs_access().auth,
            json=plain_body,
            timeout=10,
        ).status_code
    except (httpx.ReadError, httpx.RemoteProtocolError, httpx.WriteError):
        refusals["plain HTTP"] = 400
    bare = httpx.get(f"http://127.0.0.1:{port}/health", timeout=10)
    assert bare.status_code == 400 and "HTTP request to an HTTPS server" in bare.text
    foreign, _ = pki.ensure(tmp_path / "foreign-ca")
    stranger = ssl.create_default_context(cafile=str(foreign.ca))
    with (
        httpx.Client(verify=stranger, auth=stack.logs_access().auth) as client,
        pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"),
    ):
        _push(client, base, f"{marker}-foreign")
    print(f"\nVictoriaLogs' refusals: {refusals}")
    assert refusals == {
        "no password": 401,
        "wrong password": 401,
        "wrong user": 401,
        "plain HTTP": 400,  # Go: "Client sent an HTTP request to an HTTPS server."
    }, refusals
    # Its only listening socket is the one HTTPS port, on loopback.
    pid = next(r.pid for r in stack.recorded() if r.name == "victorialogs")
    listening = {
        (c.laddr.ip, c.laddr.port)
        for c in psutil.Process(pid).net_connections(kind="inet")
        if c.status == psutil.CONN_LISTEN
    }
    assert listening == {("127.0.0.1", port)}, listening
    # The right password: taken, and only that line is there.
    with logs(stack) as client:
        assert _push(client, base, f"{marker}-good").status_code == 204
    assert eventually(
        lambda: [r["_msg"] for r in logsql(stack, f'{{source="tls-probe"}} "{marker}"')] or None,
        timeout=30,
    ) == [f"{marker}-good"]
    # Prometheus's scrape of VictoriaLogs goes through with the password file.
    eventually(lambda: _query(stack, 'up{job="victorialogs"}')[0]["value"][1] == "1", 30)
    assert _query(stack, 'vl_data_size_bytes{job="victorialogs"}')
