"""Everything SAP through sapstartsrv: the real stack with the exporter's model collectors off.

The exporter runs the model (10x real time) and serves it as 32 sapstartsrv endpoints
(SAPControl SOAP, protected methods behind basic auth); its only SAP collector is sapcontrol,
which discovers the system from one instance and reads them all. Prometheus evaluates the
usual rules plus alerts/sapcontrol.rules.yml. Each whitepaper fault fires its own alert from
those series alone, and the NOC and instances dashboards' queries answer from them.

This stack is its own (module scope), started only when this file runs:
`pytest tests/integration -k sapcontrol`.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import httpx
import pytest

from alerts.monitoring import LAST_NOTIFICATION, NOTIFICATION_EVERY
from alerts.thresholds import load_thresholds
from exporters.sapcontrol.client import Endpoint, SAPControlClient
from exporters.sapstartsrv.server import free_port_block
from tests.integration.conftest import exporter_auth, url
from tests.integration.helpers import eventually
from wlmon.stack.runtime import Stack
from wlmon.stack.settings import StackSettings, free_port_environment

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]

INSTANCES = 32  # 30 dialog instances, the ASCS and the Java instance of the SD benchmark landscape
CAUSES = {
    "SAPDispatcherWaitTimeHigh",
    "SAPDatabaseRequestTimeHigh",
    "SAPEnqueueTimeHigh",
    "SAPRollInTimeHigh",
    "SAPRollOutTimeHigh",
}
FAULTS = [
    ("too-few-work-processes", {"SAPDispatcherWaitTimeHigh"}),
    ("slow-enqueue-link", {"SAPEnqueueTimeHigh"}),
    ("db-bottleneck", {"SAPDatabaseRequestTimeHigh"}),
    ("roll-area-too-small", {"SAPRollInTimeHigh", "SAPRollOutTimeHigh"}),
]
# CCMS and SAPControl have no SAP buffer statistics as counters: the NOC's buffer panel
# needs the model's sapbuffer collector (or a real buffer source), docs/sapcontrol.md.
NOT_FROM_SAPCONTROL = {
    ("wlmon-noc", "Worst SAP buffer hit ratio"),
    # Empty until Alertmanager has sent something; pytest runs the panels before the
    # faults (CI run 43 failed here), so test_the_noc_says_when_the_last_notification_went_out
    # asks it after a notification instead.
    ("wlmon-noc", "Last notification"),
}
VARIABLES_OK = {"wlmon-noc", "wlmon-instances"}
# The committed dashboards (Grafana JSON, the format users' own Grafana imports); their
# PromQL is asked of Prometheus itself, the variables set as the dashboard would.
COMMITTED = {
    d["uid"]: d
    for d in (json.loads(p.read_text()) for p in (REPO / "dashboards" / "grafana").rglob("*.json"))
}
VARIABLES = {
    "$sid": "BMK",
    "$sap_instance": ".*",
    "$task_type": "dialog",
    "$__rate_interval": "1m",
    "$__range": "15m",
    "$__interval": "30s",
}


def _resolve(text: str) -> str:
    for name in sorted(VARIABLES, key=len, reverse=True):
        text = text.replace(name, VARIABLES[name])
    return text


@pytest.fixture(scope="module")
def sapcontrol_stack(tmp_path_factory, mailbox) -> Iterator[Stack]:
    base = free_port_block(INSTANCES)
    env = free_port_environment() | {
        # The servers run `python -m wlmon` from the state dir: import this checkout's code
        # (a worktree's, not only the editable install's).
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        "WLMON_STATE_DIR": str(tmp_path_factory.mktemp("wlmon-sapcontrol-state")),
        "WLMON_SCRAPE_INTERVAL": "2s",
        "WLMON_TELEGRAF_INTERVAL": "2s",
        "WLMON_EXPORTER_SPEED": "10",
        "WLMON_ST05_TRACE_INTERVAL_S": "5",
        "WLMON_RULES_TIME_SCALE": "0.1",
        "WLMON_AM_GROUP_WAIT": "1s",
        "WLMON_AM_GROUP_INTERVAL": "5s",
        "WLMON_SMTP_SMARTHOST": f"127.0.0.1:{mailbox.port}",
        "WLMON_SMTP_REQUIRE_TLS": "false",
        "WLMON_API_TOKEN": "integration-test-token",
        # Control writes (the faults below) need the exporter's bearer token.
        "WLMON_EXPORTER_TOKEN": "integration-exporter-token",
        # The model's collectors off; SAP data only through sapcontrol.
        **{
            f"WLMON_EXPORTER_COLLECTOR_{name}": "false"
            for name in ("ST03", "ST05", "DBBUFFER", "SAPBUFFER", "OSCOUNTERS")
        },
        "WLMON_EXPORTER_COLLECTOR_SAPCONTROL": "true",
        "WLMON_SAPSTARTSRV_ENABLED": "true",
        "WLMON_SAPSTARTSRV_BASE_PORT": str(base),
        "WLMON_PORT_SAPSTARTSRV": str(base),
        "WLMON_SAPSTARTSRV_USERNAME": "bmkadm",
        "WLMON_SAPSTARTSRV_PASSWORD": "integration-sapstartsrv",
        "WLMON_SAPSTARTSRV_CCMS_INTERVAL_S": "30",
        "WLMON_SAPCONTROL_USERNAME": "bmkadm",
        "WLMON_SAPCONTROL_PASSWORD": "integration-sapstartsrv",
        "WLMON_SAPCONTROL_HOSTS": '{"*": "127.0.0.1"}',
        "WLMON_SAPCONTROL_TIMEOUT_S": "1.6",
        # Prometheus and Telegraf both scrape the exporter every 2 s: share one reading.
        "WLMON_SAPCONTROL_CACHE_S": "1.0",
        # SM21 read every 5 s (a minute by default): the short dumps' entries show in time.
        "WLMON_SAPCONTROL_SYSLOG_INTERVAL_S": "5",
        "WLMON_SAPCONTROL_LOCK_TABLE_INTERVAL_S": "2",
        # Kernel and components every 5 s (15 min by default): the drift fault shows in time.
        "WLMON_SAPCONTROL_VERSION_INTERVAL_S": "5",
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    stack = Stack(StackSettings())
    try:
        stack.up()
        yield stack
    finally:
        stack.down()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _query_prom(stack: Stack, expr: str) -> list[dict]:
    r = httpx.get(f"{url(stack, 'prometheus')}/api/v1/query", params={"query": expr}, timeout=10)
    r.raise_for_status()
    return r.json()["data"]["result"]


def _firing(stack: Stack, states: tuple[str, ...] = ("firing",)) -> set[str]:
    """Cause alerts firing (or in `states`) in Prometheus from the sapcontrol series."""
    r = httpx.get(f"{url(stack, 'prometheus')}/api/v1/alerts", timeout=10)
    r.raise_for_status()
    return {
        a["labels"]["alertname"]
        for a in r.json()["data"]["alerts"]
        if a["state"] in states and a["labels"].get("source") == "sapcontrol"
    } & CAUSES


# A fault's critical twin fires before its warning, so the fault ends while the warning's
# 5-minute mean is still high: that warning may fire after the fault. It is this fault's,
# so each case waits until nothing is even pending, before and after.
ACTIVE = ("pending", "firing")


def _set_faults(stack: Stack, faults: list[str]) -> None:
    r = httpx.put(
        f"{url(stack, 'exporter')}/control/faults",
        json={"faults": faults},
        headers=exporter_auth(stack),
        timeout=10,
    )
    assert r.status_code == 200, r.text


def test_every_instance_is_read_and_no_model_series_exists(sapcontrol_stack) -> None:
    stack = sapcontrol_stack

    def all_read():
        # Each instance answered within its deadline in the last minute (a busy test
        # machine may make one miss a scrape now and then: that is what sap_up 0 says).
        # Telegraf re-exposes sap_up under job="telegraf": count the exporter's own.
        up = _query_prom(
            stack, 'max_over_time(sap_up{job="wlmon-exporter",source="sapcontrol"}[1m]) == 1'
        )
        return len(up) == INSTANCES and up

    eventually(all_read, timeout=180, every=2)
    assert _query_prom(stack, "sap_workload_steps_total") == []

    def per_step():
        found = _query_prom(
            stack,
            'sap_instance_task_type:sap_workload_db_request_seconds_per_step:mean5m{source="sapcontrol"}',
        )
        return len(found) == INSTANCES - 2 and found  # the dialog ones: not the ASCS or Java

    eventually(per_step, timeout=180, every=2)
    # Seed 000 Table 5: 319 ms; the live landscape runs at the benchmark's knee, 386-399 ms
    # over all instances. One instance's 5-minute estimate (30 s scaled) holds only one or two
    # of its CCMS intervals and scatters (440 ms seen on a loaded machine; one instance outside
    # 150-600 ms in CI run 40, its value not printed then), so the check asks for two minutes
    # until the landscape holds the ranges, and names the instances outside when it never
    # does. The landscape's mean is held to the paper's range and each instance only to what
    # a healthy system shows: above 150 ms, under the page level.
    page_ms = 1000 * load_thresholds().db_request_page_seconds

    def healthy():
        found = per_step()
        assert found, "not every dialog instance has a per-step DB request time"
        ms = {s["metric"]["sap_instance"]: 1000 * float(s["value"][1]) for s in found}
        mean = sum(ms.values()) / len(ms)
        assert 250 < mean < 450, (mean, ms)
        outside = {k: round(v) for k, v in ms.items() if not 150 < v < page_ms}
        assert not outside, (page_ms, outside)
        return ms

    ms = eventually(healthy, timeout=120, every=5)
    print(f"DB request per step: mean {sum(ms.values()) / len(ms):.0f} ms over {len(ms)}")


def test_healthy_system_raises_no_cause_alert(sapcontrol_stack) -> None:
    stack = sapcontrol_stack
    eventually(
        lambda: _query_prom(
            stack, "sap_instance_task_type:sap_workload_enqueue_seconds_per_step:mean5m"
        ),
        timeout=120,
    )
    time.sleep(40)  # the scaled windows (30 s) and for: (30 s)
    assert not _firing(stack)


@pytest.mark.parametrize(("fault", "expected"), FAULTS, ids=[f for f, _ in FAULTS])
def test_fault_fires_its_own_alert_from_sapcontrol(sapcontrol_stack, fault, expected) -> None:
    stack = sapcontrol_stack
    eventually(lambda: not _firing(stack, ACTIVE), timeout=240, every=2)
    _set_faults(stack, [fault])
    seen: set[str] = set()
    try:

        def fired():
            now = _firing(stack)
            seen.update(now)
            return expected <= now

        eventually(fired, timeout=180, every=2)
    finally:
        _set_faults(stack, [])

    def resolved():
        seen.update(_firing(stack))
        return not _firing(stack, ACTIVE)

    eventually(resolved, timeout=240, every=2)
    assert seen == expected, f"{fault}: fired {sorted(seen)}"
    alerts = httpx.get(
        f"{url(stack, 'alertmanager')}/api/v2/alerts", auth=stack.alertmanager_auth(), timeout=10
    ).json()
    assert all(a["labels"].get("source") in ("sapcontrol", None) for a in alerts)


@pytest.mark.parametrize(
    ("uid", "title"),
    [
        (d["uid"], p["title"])
        for d in COMMITTED.values()
        if d["uid"] in VARIABLES_OK
        for p in d["panels"]
        # A row holds no query: its panels follow it in the list.
        if p.get("type") != "row" and (d["uid"], p["title"]) not in NOT_FROM_SAPCONTROL
    ],
)
def test_dashboard_panel_answers_from_sapcontrol(sapcontrol_stack, uid, title) -> None:
    panel = next(p for p in COMMITTED[uid]["panels"] if p["title"] == title)
    exprs = [_resolve(t["expr"]) for t in panel["targets"] if "expr" in t]
    assert exprs, f"{uid} / {title}: no PromQL target"
    prom = url(sapcontrol_stack, "prometheus")

    def answered():
        end = time.time()
        for expr in exprs:
            r = httpx.get(
                f"{prom}/api/v1/query_range",
                params={"query": expr, "start": end - 900, "end": end, "step": 30},
                timeout=30,
            )
            assert r.status_code == 200, f"{uid} / {title}: {r.status_code} {r.text[:300]}"
            if not r.json()["data"]["result"]:
                return False
        return True

    assert eventually(answered, timeout=120, every=3), f"{uid} / {title}: no data"


def _notifications(stack: Stack) -> list[dict]:
    r = httpx.get(f"{url(stack, 'api')}/alerts/notifications", params={"limit": 1000}, timeout=10)
    r.raise_for_status()
    return r.json()


def test_a_killed_dispatcher_reaches_the_webhook_and_resolves(sapcontrol_stack) -> None:
    """`sapcontrol -function SendSignal <pid of disp+work> 9` on one instance: sapstartsrv
    still answers, the dispatcher is gray, SAPProcessNotRunning reaches the API's webhook
    (through Alertmanager) for that instance and process, and resolves after `Start`.
    Measured: 17 s (for: scaled to 6 s, 2 s scrapes) on the module's stack (46 s to start)."""
    stack = sapcontrol_stack
    name = "penguin2_D00"  # instance 0 of the system list: the first port of the block
    # Instance k of the system list answers on the block's base port + k (set for the module).
    endpoint = Endpoint(f"http://127.0.0.1:{os.environ['WLMON_SAPSTARTSRV_BASE_PORT']}/")
    auth = ("bmkadm", "integration-sapstartsrv")
    eventually(
        lambda: _query_prom(stack, f'sap_process_status{{sap_instance="{name}"}}'), timeout=180
    )
    first = max((n["id"] for n in _notifications(stack)), default=0)

    def about_the_dispatcher(status: str) -> list[dict]:
        return [
            n
            for n in _notifications(stack)
            if n["id"] > first
            and n["alertname"] == "SAPProcessNotRunning"
            and n["status"] == status
            and n["sap_instance"] == name
            and n["labels"].get("process") == "disp+work"
        ]

    with SAPControlClient(endpoint, auth=auth, timeout_s=10) as client:
        pid = next(p["pid"] for p in client.process_list() if p["name"] == "disp+work")
        client.call("SendSignal", pid=pid, signal="9")
        try:
            fired = eventually(lambda: about_the_dispatcher("firing"), timeout=120, every=2)[0]
            assert fired["severity"] == "critical"
            up = _query_prom(stack, f'sap_up{{job="wlmon-exporter",sap_instance="{name}"}}')
            assert [s["value"][1] for s in up] == ["1"]  # sapstartsrv answers all along
        finally:
            client.call("Start", runlevel="")
    eventually(lambda: about_the_dispatcher("resolved"), timeout=120, every=2)
    stopped = [n for n in _notifications(stack) if n["alertname"] == "SAPInstanceStopped"]
    assert not stopped, "one process down is not a stopped instance"


# Faults only SAPControl shows (issue 31 item 5): each pages its NOC alert from the twin's
# sapstartsrv through the exporter, Prometheus and Alertmanager to the API's webhook.
NOC_FAULTS = [
    ("short-dump-storm", "SAPShortDumpStorm"),
    ("update-errors", "SAPUpdateErrors"),
    ("update-hang", "SAPUpdateHang"),
    ("long-running-dialog-step", "SAPLongRunningDialogStep"),
]
NOC_ALERTS = {
    "SAPShortDumpStorm",
    "SAPUpdateErrors",
    "SAPUpdateHang",
    "SAPBackgroundJobsAborted",
    "SAPSpoolErrors",
    "SAPSyslogErrors",
    "SAPLongRunningDialogStep",
}


def _active_noc(stack: Stack) -> set[str]:
    r = httpx.get(f"{url(stack, 'prometheus')}/api/v1/alerts", timeout=10)
    r.raise_for_status()
    return {
        a["labels"]["alertname"]
        for a in r.json()["data"]["alerts"]
        if a["labels"]["alertname"] in NOC_ALERTS
    }


@pytest.mark.parametrize(("fault", "alertname"), NOC_FAULTS, ids=[f for f, _ in NOC_FAULTS])
def test_noc_fault_reaches_the_webhook_and_resolves(sapcontrol_stack, fault, alertname) -> None:
    """The fault in the twin; its critical NOC alert (and no other NOC alert) reaches the
    API's notifications through Alertmanager for the dialog instances, none for the ASCS,
    and resolves when the fault goes."""
    stack = sapcontrol_stack
    eventually(lambda: _query_prom(stack, "sap_ccms_alerts"), timeout=180)
    # Healthy: no NOC alert even pending (the last case's have resolved).
    eventually(lambda: not _active_noc(stack), timeout=180, every=2)
    first = max((n["id"] for n in _notifications(stack)), default=0)

    def sent(status: str) -> list[dict]:
        return [
            n
            for n in _notifications(stack)
            if n["id"] > first and n["alertname"] == alertname and n["status"] == status
        ]

    started = time.monotonic()
    _set_faults(stack, [fault])
    try:
        fired = eventually(lambda: sent("firing"), timeout=180, every=2)
        took = time.monotonic() - started
        assert {n["severity"] for n in fired} == {"critical"}
        instances = {n["sap_instance"] for n in fired}
        assert instances and all("_D" in i for i in instances), instances
        assert _active_noc(stack) == {alertname}, "one fault, one NOC alert"
        if fault == "short-dump-storm":  # each dump also in SM21 (ABAPReadSyslog): AB0, red
            logged = eventually(
                lambda: _query_prom(
                    stack,
                    'sum(increase(sap_syslog_entries_total{job="wlmon-exporter",'
                    'severity="red",message_id="AB0"}[30s])) > 0',
                ),
                timeout=60,
            )
            print(f"AB0 entries in 30 s: {float(logged[0]['value'][1]):.0f}")
        print(f"{fault}: {alertname} notified {took:.0f} s after the fault, for {instances}")
    finally:
        _set_faults(stack, [])
    eventually(lambda: {n["sap_instance"] for n in sent("resolved")} >= instances, timeout=180)


# AS Java (issue 31 items 2 and 5): the twin's Java instance fills its thread pool.
JAVA_INSTANCE = "penguin13_J10"


def test_java_thread_pool_exhausted_reaches_the_webhook_and_resolves(sapcontrol_stack) -> None:
    """java-thread-pool-exhausted in the twin: SAPJavaThreadPoolExhausted (for: 2m) reaches
    the API's webhook for the Java instance alone, and resolves when the fault goes."""
    stack = sapcontrol_stack
    busy = 'sap_java_threads{job="wlmon-exporter",pool="application",state="busy"}'
    eventually(lambda: _query_prom(stack, busy), timeout=180)
    first = max((n["id"] for n in _notifications(stack)), default=0)

    def sent(status: str) -> list[dict]:
        return [
            n
            for n in _notifications(stack)
            if n["id"] > first
            and n["alertname"] == "SAPJavaThreadPoolExhausted"
            and n["status"] == status
        ]

    assert not sent("firing")
    started = time.monotonic()
    _set_faults(stack, ["java-thread-pool-exhausted"])
    try:
        fired = eventually(lambda: sent("firing"), timeout=300, every=2)
        took = time.monotonic() - started
        assert {n["sap_instance"] for n in fired} == {JAVA_INSTANCE}
        assert {n["severity"] for n in fired} == {"critical"}
        print(f"java-thread-pool-exhausted: notified {took:.0f} s after the fault")
    finally:
        _set_faults(stack, [])
    eventually(lambda: sent("resolved"), timeout=180, every=2)


def test_kernel_patch_drift_warns_for_the_instance_left_behind(sapcontrol_stack) -> None:
    """kernel-patch-drift in the twin: GetVersionInfo of penguin5_D01 answers the previous
    patch; SAPKernelPatchMismatch (a warning, for: 15m, 90 s at this stack's time scale)
    reaches the webhook for that instance alone, and resolves when the fault goes."""
    stack = sapcontrol_stack
    first = max((n["id"] for n in _notifications(stack)), default=0)

    def sent(status: str) -> list[dict]:
        return [
            n
            for n in _notifications(stack)
            if n["id"] > first
            and n["alertname"] == "SAPKernelPatchMismatch"
            and n["status"] == status
        ]

    lagging = "penguin5_D01"
    started = time.monotonic()
    _set_faults(stack, ["kernel-patch-drift"])
    try:
        rows = eventually(
            lambda: _query_prom(
                stack,
                'sap_kernel_patch{job="wlmon-exporter",executable="disp+work"} '
                "< on (sid) group_left max by (sid) "
                '(sap_kernel_patch{job="wlmon-exporter",executable="disp+work"})',
            ),
            timeout=60,
        )
        assert {r["metric"]["sap_instance"] for r in rows} == {lagging}
        fired = eventually(lambda: sent("firing"), timeout=300, every=2)
        took = time.monotonic() - started
        assert {n["sap_instance"] for n in fired} == {lagging}
        assert {n["severity"] for n in fired} == {"warning"}
        print(f"kernel-patch-drift: notified {took:.0f} s after the fault")
    finally:
        _set_faults(stack, [])
    eventually(lambda: sent("resolved"), timeout=180, every=2)


def test_the_noc_says_when_the_last_notification_went_out(sapcontrol_stack) -> None:
    """The NOC's "Last notification" (alerts/monitoring.py's rule over Alertmanager's
    per-receiver counter) agrees with the API's webhook, which stored each notification as
    it arrived: the same receiver, its time within one rule window (15 s) plus a scrape."""
    stack = sapcontrol_stack

    def agree():
        stored = _notifications(stack)
        assert stored, "no notification stored by the webhook yet"
        last = max(stored, key=lambda n: n["received_at"])
        received = datetime.fromisoformat(last["received_at"].replace("Z", "+00:00"))
        rows = _query_prom(
            stack,
            f'{LAST_NOTIFICATION}{{integration="webhook",receiver_name="{last["receiver"]}"}}',
        )
        assert rows, f"no last notification recorded for {last['receiver']}"
        late = float(rows[0]["value"][1]) - received.timestamp()
        # Sent before the webhook stored it, seen at a later scrape, within the window.
        return -2 <= late <= float(NOTIFICATION_EVERY.removesuffix("s")) + 2 + 1 and (
            last["receiver"],
            late,
        )

    receiver, late = eventually(agree, timeout=90, every=3)
    print(f"last notification to {receiver}: recorded {late:+.1f} s after the webhook stored it")
    panel = next(p for p in COMMITTED["wlmon-noc"]["panels"] if p["title"] == "Last notification")
    for target in panel["targets"]:
        assert _query_prom(stack, _resolve(target["expr"])), f"panel query empty: {target}"


def test_a_held_lock_ages_in_prometheus_across_readings(sapcontrol_stack) -> None:
    """lock-held in the twin: the same SM12 entry in every EnqGetLockTable answer, so the
    ASCS's oldest lock age grows in Prometheus from reading to reading (wall-clock seconds;
    SAPLockHeldLong's hour is left to promtool), and falls back when the lock goes."""
    stack = sapcontrol_stack
    query = 'max(sap_enqueue_oldest_lock_age_seconds{job="wlmon-exporter"})'

    def age() -> float:
        result = _query_prom(stack, query)
        return float(result[0]["value"][1]) if result else -1.0

    eventually(lambda: age() >= 0, timeout=180)
    _set_faults(stack, ["lock-held"])
    try:
        first = eventually(lambda: (a := age()) > 20 and a, timeout=120, every=2)
        time.sleep(10)
        later = age()
        assert later >= first + 6, (first, later)  # grows with the wall clock
        print(f"held lock: {first:.0f} s, then {later:.0f} s")
    finally:
        _set_faults(stack, [])
    eventually(lambda: 0 <= age() < 10, timeout=120, every=2)


def test_an_ascs_failover_is_followed_in_seconds_and_pages_only_replication(
    sapcontrol_stack,
) -> None:
    """ascs-failover in the twin: the old node's sapstartsrv refuses for the 20 s move, the
    exporter asks for the instance list at once and reads the ASCS on penguin9 in seconds;
    SAPEnqueueReplicationLost reaches the webhook and resolves after the 90 s of lost
    replication, and nothing is notified for penguin1_ASCS01, the node it left.
    Runs last in the module: the ASCS stays named on penguin9 until the next discovery."""
    stack = sapcontrol_stack
    old, new = "penguin1_ASCS01", "penguin9_ASCS01"
    up = 'sap_up{source="sapcontrol",sap_instance="%s"} == 1'
    eventually(lambda: _query_prom(stack, up % old), timeout=180, every=2)
    first = max((n["id"] for n in _notifications(stack)), default=0)

    def sent(alertname: str, status: str) -> list[dict]:
        return [
            n
            for n in _notifications(stack)
            if n["id"] > first and n["alertname"] == alertname and n["status"] == status
        ]

    started = time.monotonic()
    _set_faults(stack, ["ascs-failover"])
    try:
        eventually(lambda: _query_prom(stack, up % new), timeout=120, every=1)
        moved = time.monotonic() - started
        print(f"ascs-failover: sap_up of {new} 1 in Prometheus {moved:.0f} s after the fault")
        assert moved < 60
        counted = eventually(
            lambda: _query_prom(
                stack, 'sap_sapcontrol_failovers_total{instance_name="ASCS01"} > 0'
            ),
            timeout=60,
        )
        assert {r["metric"]["sid"] for r in counted} == {"BMK"}
        fired = eventually(lambda: sent("SAPEnqueueReplicationLost", "firing"), timeout=180)
        print(f"SAPEnqueueReplicationLost notified {time.monotonic() - started:.0f} s after")
        assert {n["sap_instance"] for n in fired} == {new}
        eventually(lambda: sent("SAPEnqueueReplicationLost", "resolved"), timeout=240, every=3)
        print(f"SAPEnqueueReplicationLost resolved {time.monotonic() - started:.0f} s after")
    finally:
        _set_faults(stack, [])
    pages = [n for n in _notifications(stack) if n["id"] > first]
    on_old = [(n["alertname"], n["status"]) for n in pages if n.get("sap_instance") == old]
    on_new = sorted({n["alertname"] for n in pages if n.get("sap_instance") == new})
    print(f"notified for {new}: {on_new}")
    assert not on_old, on_old
