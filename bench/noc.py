"""What the NOC sees and when it is told, at real speed (issue 37 item 5).

Starts the native stack on free loopback ports with production timings (model at speed 1,
15 s scrapes, the rules unscaled, Alertmanager's own group_wait/group_interval), lets it run
healthy, then injects each fault through the exporter's `PUT /control/faults` (bearer token
from the state dir's secrets/exporter-token) for --fault-min minutes with --gap-min healthy
minutes after it. Prometheus and the API's stored notifications are polled every 5 s and,
per fault, it prints the seconds from injection to: the indicator's 1-minute mean crossing
its page level (alerts/thresholds.yml), the cause's alert pending, firing, the first
notification; from removal to the last resolved notification; the messages per receiver
(one webhook post = one message); and any "firing" message received after the removal.

    .venv/bin/python bench/noc.py [--faults db-bottleneck slow-enqueue-link]
                                  [--fault-min 8.5] [--gap-min 5.5] [--warm-min 5]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import httpx

from alerts.thresholds import load_thresholds
from exporters.vocabulary import INDICATOR_BY_ALERT
from wlmon.stack.runtime import Stack
from wlmon.stack.settings import StackSettings, free_port_environment

# The fault -> its cause (the `cause` label its alerts carry) and the page whose indicator's
# crossing is timed.
FAULTS = {
    "db-bottleneck": ("database", "SAPDatabaseRequestTimeHigh"),
    "too-few-work-processes": ("work-processes", "SAPDispatcherWaitTimeHigh"),
    "slow-enqueue-link": ("enqueue", "SAPEnqueueTimeHigh"),
    "roll-area-too-small": ("roll-area", "SAPRollInTimeHigh"),
}
POLL_S = 5.0


@dataclass
class Timeline:
    fault: str
    crossing: float | None = None
    pending: float | None = None
    firing: float | None = None
    first_notification: float | None = None
    removed_at: float | None = None
    resolved_after_removal: float | None = None
    messages: Counter = field(default_factory=Counter)
    after_removal: list[str] = field(default_factory=list)
    other_causes: set[str] = field(default_factory=set)


def _mean_1m_expr(alert: str) -> str:
    """The page's own 1-minute mean (recording.rules.yml), worst instance, in seconds."""
    ind = INDICATOR_BY_ALERT[alert]
    return (
        f"max(sap_instance_task_type:sap_workload_{ind.component}_seconds_per_step:mean1m"
        '{task_type="dialog",source!="sapcontrol"})'
    )


def _query(prom: str, expr: str) -> float | None:
    r = httpx.get(f"{prom}/api/v1/query", params={"query": expr}, timeout=10)
    r.raise_for_status()
    result = r.json()["data"]["result"]
    return float(result[0]["value"][1]) if result else None


def _alert_states(prom: str, cause: str) -> set[str]:
    r = httpx.get(f"{prom}/api/v1/alerts", timeout=10)
    r.raise_for_status()
    return {a["state"] for a in r.json()["data"]["alerts"] if a["labels"].get("cause") == cause}


def _notifications(api: str, after_id: int) -> list[dict]:
    r = httpx.get(f"{api}/alerts/notifications", params={"limit": 1000}, timeout=10)
    r.raise_for_status()
    return [n for n in r.json() if n["id"] > after_id]


def _messages(rows: list[dict]) -> dict[tuple, list[dict]]:
    """One webhook post = the rows stored with one receiver, group and arrival time."""
    out: dict[tuple, list[dict]] = {}
    for n in rows:
        if n["alertname"] == "SAPWatchdog":
            continue
        key = (n["receiver"], n["group_key"], n["received_at"])
        out.setdefault(key, []).append(n)
    return out


def _epoch(ts: str) -> float:
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def run_fault(
    prom: str, api: str, exporter: str, auth: dict, fault: str, fault_s: float, gap_s: float
) -> Timeline:
    cause, alert = FAULTS[fault]
    page_s = load_thresholds().page_seconds(INDICATOR_BY_ALERT[alert])
    seen = max((n["id"] for n in _notifications(api, 0)), default=0)
    tl = Timeline(fault)
    t0 = time.time()
    httpx.put(
        f"{exporter}/control/faults", json={"faults": [fault]}, headers=auth, timeout=10
    ).raise_for_status()
    removed = False
    while time.time() - t0 < fault_s + gap_s:
        now = time.time() - t0
        if not removed and now >= fault_s:
            httpx.put(
                f"{exporter}/control/faults", json={"faults": []}, headers=auth, timeout=10
            ).raise_for_status()
            removed, tl.removed_at = True, time.time()
        mean = _query(prom, _mean_1m_expr(alert))
        if tl.crossing is None and mean is not None and mean > page_s and not removed:
            tl.crossing = now
        states = _alert_states(prom, cause)
        if tl.pending is None and states and not removed:
            tl.pending = now
        if tl.firing is None and "firing" in states and not removed:
            tl.firing = now
        time.sleep(POLL_S)
    rows = _notifications(api, seen)
    for (receiver, _group, at), alerts in sorted(_messages(rows).items(), key=lambda kv: kv[0][2]):
        tl.messages[receiver] += 1
        t = _epoch(at)
        status = "resolved" if all(a["status"] == "resolved" for a in alerts) else "firing"
        causes = {a["labels"].get("cause", a["alertname"]) for a in alerts}
        tl.other_causes |= causes - {cause}
        if status == "firing" and tl.first_notification is None and t < (tl.removed_at or 1e20):
            tl.first_notification = t - t0
        if tl.removed_at and t >= tl.removed_at:
            firing = [a for a in alerts if a["status"] == "firing"]
            if firing:
                names = sorted({a["alertname"] for a in firing})
                late = t - tl.removed_at
                tl.after_removal.append(
                    f"+{late:.0f} s {receiver}: {len(firing)} firing {', '.join(names)}"
                )
            else:
                tl.resolved_after_removal = t - tl.removed_at
    return tl


def _s(x: float | None) -> str:
    return "none" if x is None else f"{x:.0f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--faults", nargs="*", default=list(FAULTS), choices=list(FAULTS))
    parser.add_argument("--fault-min", type=float, default=8.5, help="fault duration, minutes")
    parser.add_argument("--gap-min", type=float, default=5.5, help="healthy gap after, minutes")
    parser.add_argument("--warm-min", type=float, default=5.0, help="healthy minutes first")
    args = parser.parse_args()
    state = Path(tempfile.mkdtemp(prefix="wlmon-noc-"))
    os.environ.update(free_port_environment())
    os.environ.update({"WLMON_STATE_DIR": str(state), "WLMON_EXPORTER_SPEED": "1"})
    stack = Stack(StackSettings())
    p = stack.settings.ports
    prom, api = f"http://127.0.0.1:{p.prometheus}", f"http://127.0.0.1:{p.api}"
    exporter = f"http://127.0.0.1:{p.exporter}"
    stack.up(only=["victorialogs", "alertmanager", "exporter", "api", "prometheus"])
    token = (state / "secrets" / "exporter-token").read_text().strip()
    auth = {"Authorization": f"Bearer {token}"}
    print(
        f"speed 1, fault {args.fault_min:g} min, gap {args.gap_min:g} min, "
        f"warm-up {args.warm_min:g} min, polled every {POLL_S:g} s",
        flush=True,
    )
    try:
        warm_seen = max((n["id"] for n in _notifications(api, 0)), default=0)
        time.sleep(args.warm_min * 60)
        healthy = _messages(_notifications(api, warm_seen))
        print(f"healthy warm-up: {len(healthy)} messages (watchdog excluded)", flush=True)
        for fault in args.faults:
            tl = run_fault(prom, api, exporter, auth, fault, args.fault_min * 60, args.gap_min * 60)
            msgs = ", ".join(f"{r} {c}" for r, c in sorted(tl.messages.items())) or "none"
            print(
                f"{fault}: crossing {_s(tl.crossing)}, pending {_s(tl.pending)}, firing "
                f"{_s(tl.firing)}, first notification {_s(tl.first_notification)}; "
                f"removal -> resolved notification {_s(tl.resolved_after_removal)}; "
                f"messages {msgs}; other causes {sorted(tl.other_causes) or 'none'}; "
                f"firing after removal: {'; '.join(tl.after_removal) or 'none'}",
                flush=True,
            )
    finally:
        stack.down()


if __name__ == "__main__":
    main()
