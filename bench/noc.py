"""What the NOC sees and when it is told, at real speed (issue 37 item 5).

Starts the native stack on free loopback ports with production timings (model at speed 1,
15 s scrapes, the rules unscaled, Alertmanager's own group_wait/group_interval), lets it run
healthy for --warm-min (the same run's baseline), then injects each fault through the
exporter's `PUT /control/faults` (bearer token from the state dir's secrets/exporter-token)
for --fault-min minutes with --gap-min healthy minutes after it. Every 5 s it polls
Prometheus (each page indicator's worst 1-minute mean, the alert states per cause) and the
API's stored notifications; bench/noc_timeline.py turns those events into, per fault, the
seconds from injection to the page's 1-minute mean crossing its page level
(alerts/thresholds.yml), the cause's alert pending, firing, the first notification; from
removal to the last resolved notification of the cause; messages per receiver (one webhook
post = one message); and every "firing" message received after the removal. Beside them:
the floors the rules themselves set (`for:` + the cause route's group_wait; keep_firing_for)
and the healthy warm-up's messages and indicator levels, measured in this run.

    .venv/bin/python bench/noc.py [--faults db-bottleneck slow-enqueue-link]
        [--fault-min 8.5] [--gap-min 5.5] [--warm-min 5.5] [--json FILE]
    .venv/bin/python bench/noc.py --from-json FILE   # the tables again, nothing started
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import yaml
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
# bench/ holds scripts, not a package: its sibling module is imported by path.
from noc_timeline import (
    EVENTS,
    AlertRef,
    End,
    FaultSpec,
    FaultTimeline,
    Healthy,
    Injected,
    Message,
    Poll,
    Removed,
    fault_timeline,
    healthy_stretch,
)

from alerts.thresholds import load_thresholds
from exporters.durations import parse_duration
from exporters.vocabulary import INDICATOR_BY_ALERT
from wlmon.stack.runtime import Stack
from wlmon.stack.settings import StackSettings, free_port_environment

RULES = Path(__file__).resolve().parent.parent / "alerts" / "workload.rules.yml"
# The fault -> its cause (the `cause` label its alerts carry) and the page whose indicator's
# crossing is timed.
FAULTS = {
    "db-bottleneck": ("database", "SAPDatabaseRequestTimeHigh"),
    "too-few-work-processes": ("work-processes", "SAPDispatcherWaitTimeHigh"),
    "slow-enqueue-link": ("enqueue", "SAPEnqueueTimeHigh"),
    "roll-area-too-small": ("roll-area", "SAPRollInTimeHigh"),
}
POLL_S = 5.0
PAGE_WITHIN_S = 120.0  # the bound on the first notification
RESOLVED_WITHIN_S = 180.0  # ... and on the resolved one after removal


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


def _alert_states(prom: str) -> dict[str, list[str]]:
    r = httpx.get(f"{prom}/api/v1/alerts", timeout=10)
    r.raise_for_status()
    out: dict[str, set[str]] = {}
    for a in r.json()["data"]["alerts"]:
        out.setdefault(a["labels"].get("cause", a["labels"]["alertname"]), set()).add(a["state"])
    return {k: sorted(v) for k, v in out.items()}


def _epoch(ts: str) -> float:
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


class Recorder:
    """Collects the run's events: polls, and notifications grouped into webhook posts."""

    def __init__(self, prom: str, api: str) -> None:
        self.prom, self.api = prom, api
        self.events: list = []
        self.rows: dict[int, dict] = {}
        self.posted: set[tuple] = set()

    def poll(self) -> None:
        means = {alert: _query(self.prom, _mean_1m_expr(alert)) for _c, alert in FAULTS.values()}
        self.events.append(Poll(t=time.time(), means=means, states=_alert_states(self.prom)))
        r = httpx.get(f"{self.api}/alerts/notifications", params={"limit": 1000}, timeout=10)
        r.raise_for_status()
        for n in r.json():
            self.rows.setdefault(n["id"], n)

    def messages(self) -> None:
        """Rows to Message events (the watchdog's heartbeat left out): one receiver, group
        and arrival time = one post. A post is complete once stored, so each is added once."""
        posts: dict[tuple, list[dict]] = {}
        for n in self.rows.values():
            if n["alertname"] != "SAPWatchdog":
                posts.setdefault((n["receiver"], n["group_key"], n["received_at"]), []).append(n)
        for key, rows in sorted(posts.items(), key=lambda kv: kv[0][2]):
            if key in self.posted:
                continue
            self.posted.add(key)
            alerts = [
                AlertRef(
                    name=n["alertname"],
                    cause=n["labels"].get("cause"),
                    status=n["status"],
                    instance=n["sap_instance"] or n["labels"].get("host"),
                )
                for n in rows
            ]
            self.events.append(
                Message(t=_epoch(key[2]), receiver=key[0], group_key=key[1], alerts=alerts)
            )

    def run_for(self, seconds: float) -> None:
        t_end = time.time() + seconds
        while time.time() < t_end:
            self.poll()
            time.sleep(max(0.0, min(POLL_S, t_end - time.time())))
        self.messages()


def _floors(alert: str, group_wait: str) -> tuple[float, float]:
    """The rule's own floors: first notification >= for: + the cause route's group_wait;
    resolved after the expression stops holding >= keep_firing_for."""
    doc = yaml.safe_load(RULES.read_text())
    rule = next(r for g in doc["groups"] for r in g["rules"] if r.get("alert") == alert)
    return (
        parse_duration(rule.get("for", "0s"), allow_zero=True) + parse_duration(group_wait),
        parse_duration(rule.get("keep_firing_for", "0s"), allow_zero=True),
    )


def _name(fault: str) -> str:
    """Fault names wrapped at their hyphens, so the numbers keep the width."""
    return textwrap.fill(fault, 10, break_on_hyphens=True, break_long_words=False)


def _s(x: float | None) -> str:
    return "—" if x is None else f"{x:.0f}"


def _ratio(x: float | None, floor: float) -> str:
    return "—" if x is None or floor <= 0 else f"{x / floor:.1f}×"


def table(
    rows: list[tuple[FaultTimeline, float, float]], healthy: Healthy, fault_min: float
) -> tuple[Table, Table]:
    """Two tables of at most 80 columns: times, then messages."""
    times = Table(
        title=f"Seconds from injection ({fault_min:g}-min faults) / from removal",
        caption="floor = the rule's for: + group_wait (first msg), keep_firing_for (resolved)",
    )
    times.add_column("fault")
    for head in (
        "cross",
        "pend",
        "fire",
        "1st\nmsg",
        "÷\nfloor",
        "resolv\nafter\nremoval",
        "÷\nfloor",
    ):
        times.add_column(head, justify="right", no_wrap=True)
    times.add_column("peak\n÷\nhealthy", justify="right", no_wrap=True)
    for tl, first_floor, resolved_floor in rows:
        ind = FAULTS[tl.fault][1]
        base = healthy.worst_means.get(ind)
        peak = "—" if not base or tl.peak_mean_s is None else f"{tl.peak_mean_s / base:.1f}×"
        first = _s(tl.first_notification)
        if tl.first_notification is None or tl.first_notification > PAGE_WITHIN_S:
            first += "!"
        res = _s(tl.resolved)
        if tl.resolved is None or tl.resolved > RESOLVED_WITHIN_S:
            res += "!"
        times.add_row(
            _name(tl.fault),
            _s(tl.crossing),
            _s(tl.pending),
            _s(tl.firing),
            first,
            _ratio(tl.first_notification, first_floor),
            res,
            _ratio(tl.resolved, resolved_floor),
            peak,
        )
    msgs = Table(title="Messages (webhook posts) per receiver in each fault's window")
    msgs.add_column("fault")
    msgs.add_column("per receiver", overflow="fold")
    msgs.add_column("after\nremoval", justify="right", no_wrap=True)
    msgs.add_column("firing after removal / other causes", overflow="fold")
    for tl, _f, _r in rows:
        notes = "; ".join(tl.firing_after_removal) or "none"
        if tl.other_causes:
            notes += "; other: " + ", ".join(tl.other_causes)
        per = "\n".join(f"{r} {c}" for r, c in tl.messages.items()) or "none"
        msgs.add_row(_name(tl.fault), per, str(tl.after_removal), notes)
    return times, msgs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--faults", nargs="*", default=list(FAULTS), choices=list(FAULTS))
    parser.add_argument("--fault-min", type=float, default=8.5, help="fault duration, minutes")
    parser.add_argument("--gap-min", type=float, default=5.5, help="healthy gap after, minutes")
    parser.add_argument("--warm-min", type=float, default=5.5, help="healthy minutes first")
    parser.add_argument("--json", type=Path, help="write every event and the timelines here")
    parser.add_argument(
        "--from-json", type=Path, help="start nothing: print the tables of a --json file"
    )
    args = parser.parse_args()
    if args.from_json:
        replay(args.from_json, Console())
        return
    for name in ("fault_min", "gap_min", "warm_min"):
        if getattr(args, name) <= 0:
            parser.error(f"--{name.replace('_', '-')} must be above 0")
    console = Console()
    state = Path(tempfile.mkdtemp(prefix="wlmon-noc-"))
    os.environ.update(free_port_environment())
    os.environ.update({"WLMON_STATE_DIR": str(state), "WLMON_EXPORTER_SPEED": "1"})
    settings = StackSettings()
    stack = Stack(settings)
    p = stack.settings.ports
    prom, api = f"http://127.0.0.1:{p.prometheus}", f"http://127.0.0.1:{p.api}"
    exporter = f"http://127.0.0.1:{p.exporter}"
    stack.up(only=["victorialogs", "alertmanager", "exporter", "api", "prometheus"])
    token = (state / "secrets" / "exporter-token").read_text().strip()
    auth = {"Authorization": f"Bearer {token}"}
    started = datetime.now(UTC).isoformat(timespec="seconds")
    console.print(
        f"{started} speed 1, fault {args.fault_min:g} min, gap {args.gap_min:g} min, "
        f"warm-up {args.warm_min:g} min, polled every {POLL_S:g} s; ports from "
        f"free_port_environment(), state {state}"
    )
    rec = Recorder(prom, api)
    rows: list[tuple[FaultTimeline, float, float]] = []
    causes = {c for c, _a in FAULTS.values()}
    healthy = None

    def dump() -> None:
        if args.json:
            doc = {
                "started": started,
                "fault_min": args.fault_min,
                "gap_min": args.gap_min,
                "warm_min": args.warm_min,
                "poll_s": POLL_S,
                "healthy": healthy.model_dump() if healthy else None,
                "timelines": [
                    {**tl.model_dump(), "first_floor_s": f, "resolved_floor_s": r}
                    for tl, f, r in rows
                ],
                "events": EVENTS.dump_python(rec.events, mode="json"),
            }
            args.json.write_text(json.dumps(doc, indent=1))

    try:
        t0 = time.time()
        rec.run_for(args.warm_min * 60)
        healthy = healthy_stretch(rec.events, t0, time.time(), causes)
        levels = ", ".join(
            f"{INDICATOR_BY_ALERT[a].component} {1000 * v:.1f} ms"
            for a, v in healthy.worst_means.items()
            if v is not None
        )
        console.print(
            f"healthy baseline ({healthy.seconds:.0f} s, this run): {healthy.messages} messages "
            f"({healthy.sap_messages} of a fault's cause; alerts: "
            f"{', '.join(healthy.alertnames) or 'none'}); worst 1-min means {levels}"
        )
        dump()
        for fault in args.faults:
            cause, alert = FAULTS[fault]
            page_s = load_thresholds().page_seconds(INDICATOR_BY_ALERT[alert])
            rec.events.append(Injected(t=time.time(), fault=fault))
            httpx.put(
                f"{exporter}/control/faults", json={"faults": [fault]}, headers=auth, timeout=10
            ).raise_for_status()
            rec.run_for(args.fault_min * 60)
            httpx.put(
                f"{exporter}/control/faults", json={"faults": []}, headers=auth, timeout=10
            ).raise_for_status()
            rec.events.append(Removed(t=time.time(), fault=fault))
            rec.run_for(args.gap_min * 60)
            rec.events.append(End(t=time.time()))
            tl = fault_timeline(
                rec.events, FaultSpec(fault=fault, cause=cause, indicator=alert, page_s=page_s)
            )
            rows.append((tl, *_floors(alert, settings.am_cause_group_wait)))
            console.print(tl.model_dump_json(), soft_wrap=True)
            dump()
    finally:
        stack.down()
        dump()
    if rows and healthy:
        print_tables(console, rows, healthy, args.fault_min)


def print_tables(
    console: Console,
    rows: list[tuple[FaultTimeline, float, float]],
    healthy: Healthy,
    fault_min: float,
) -> None:
    for t in table(rows, healthy, fault_min):
        console.print(t)
    console.print(
        "'!' = over the issue's bound (first message 120 s, resolved 180 s) or none; "
        "peak ÷ healthy = the page indicator's worst 1-min mean in the fault over the "
        "healthy warm-up's worst"
    )


def replay(path: Path, console: Console) -> None:
    """The tables again from a --json file's events (also one a run still writes: the
    faults whose window has ended so far), computed by today's noc_timeline."""
    try:
        doc = json.loads(path.read_text())
        events = EVENTS.validate_python(doc["events"])
        healthy = Healthy.model_validate(doc["healthy"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SystemExit(f"--from-json {path}: not a bench/noc.py timeline ({exc})") from None
    group_wait = StackSettings().am_cause_group_wait
    rows = []
    for e in events:
        if not isinstance(e, Injected):
            continue
        later = [x for x in events if x.t > e.t]
        if not any(isinstance(x, End) for x in later):
            console.print(f"{e.fault}: its window has not ended in this file, left out")
            continue
        cause, alert = FAULTS[e.fault]
        page_s = load_thresholds().page_seconds(INDICATOR_BY_ALERT[alert])
        spec = FaultSpec(fault=e.fault, cause=cause, indicator=alert, page_s=page_s)
        rows.append((fault_timeline(events, spec), *_floors(alert, group_wait)))
    console.print(
        f"{doc['started']} speed 1, fault {doc['fault_min']:g} min, gap {doc['gap_min']:g} min, "
        f"warm-up {doc['warm_min']:g} min; healthy baseline: {healthy.messages} messages "
        f"({healthy.sap_messages} of a fault's cause)"
    )
    print_tables(console, rows, healthy, doc["fault_min"])


if __name__ == "__main__":
    main()
