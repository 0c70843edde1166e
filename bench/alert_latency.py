"""Fault-to-notification latency of the real stack, against its floor.

Starts the native stack on free loopback ports, injects each fault and times the first
webhook notification of its alert at each severity. The floor is what the pipeline cannot
beat for a severity: scrape interval + the alert's for: + Alertmanager's group_wait; the
ratio measured / floor shows what the rate window's filling, the model's settling and the
evaluation phase add.

    python bench/alert_latency.py --real-speed           # production timings (15 s scrape,
                                                         # group_wait 30 s, model at 1x)
    python bench/alert_latency.py [--time-scale 0.1]     # compressed, as the tests run it
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import httpx

from alerts.recording import FAST
from alerts.workload import PAGE_FOR
from exporters.durations import parse_duration
from wlmon.stack.runtime import Stack
from wlmon.stack.settings import StackSettings, free_port_environment

FAULTS = {
    "too-few-work-processes": "SAPDispatcherWaitTimeHigh",
    "slow-enqueue-link": "SAPEnqueueTimeHigh",
    "db-bottleneck": "SAPDatabaseRequestTimeHigh",
    "roll-area-too-small": "SAPRollInTimeHigh",
}
# alerts/workload.py: one page per indicator on the 1-minute mean, for 30s (docs/alerts.md);
# no warning twin any more.
FOR_S = {"critical": parse_duration(PAGE_FOR)}
WINDOW_S = {"critical": parse_duration(FAST)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real-speed", action="store_true", help="production timings")
    parser.add_argument("--time-scale", type=float, default=0.1)
    parser.add_argument("--scrape-interval", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=300, help="per fault, seconds")
    parser.add_argument("--faults", nargs="*", default=list(FAULTS), choices=list(FAULTS))
    args = parser.parse_args()
    if args.real_speed:
        scale, scrape, group_wait, speed = 1.0, 15, 30.0, 1
    else:
        scale, scrape, group_wait, speed = args.time_scale, args.scrape_interval, 1.0, 10
    os.environ.update(free_port_environment())
    os.environ.update(
        {
            "WLMON_STATE_DIR": tempfile.mkdtemp(prefix="wlmon-bench-"),
            "WLMON_SCRAPE_INTERVAL": f"{scrape}s",
            "WLMON_EXPORTER_SPEED": str(speed),
            "WLMON_RULES_TIME_SCALE": str(scale),
            "WLMON_AM_GROUP_WAIT": f"{group_wait:g}s",
            "WLMON_AM_GROUP_INTERVAL": "5s" if scale < 1 else "5m",
        }
    )
    stack = Stack(StackSettings())
    p = stack.settings.ports
    api, exporter = f"http://127.0.0.1:{p.api}", f"http://127.0.0.1:{p.exporter}"
    auth = {"Authorization": f"Bearer {stack.exporter_token()}"}
    stack.up(only=["victorialogs", "alertmanager", "exporter", "api", "prometheus"])
    floors = {sev: scrape + FOR_S[sev] * scale + group_wait for sev in FOR_S}
    try:
        # Healthy data first: the fast window full (what the page reads), at least a minute.
        time.sleep(max(WINDOW_S["critical"] * scale, 60))
        for sev, floor in floors.items():
            print(
                f"{sev} floor = scrape {scrape} s + for {FOR_S[sev] * scale:g} s"
                f" + group_wait {group_wait:g} s = {floor:g} s"
            )
        for i, fault in enumerate(args.faults):
            alert = FAULTS[fault]
            if i:
                # The previous fault's fast window empties and its page resolves
                # (keep_firing_for 40 s, not scaled); each fault has its own alert.
                time.sleep((WINDOW_S["critical"] + FOR_S["critical"]) * scale + scrape + 45)
            seen = max(
                (n["id"] for n in httpx.get(f"{api}/alerts/notifications").json()), default=0
            )
            t0 = time.monotonic()
            httpx.put(
                f"{exporter}/control/faults", json={"faults": [fault]}, headers=auth
            ).raise_for_status()
            latency: dict[str, float] = {}
            while time.monotonic() - t0 < args.timeout and len(latency) < len(FOR_S):
                items = httpx.get(f"{api}/alerts/notifications", params={"alertname": alert}).json()
                for n in items:
                    if n["id"] > seen and n["status"] == "firing":
                        latency.setdefault(n["severity"], time.monotonic() - t0)
                time.sleep(0.5)
            httpx.put(
                f"{exporter}/control/faults", json={"faults": []}, headers=auth
            ).raise_for_status()
            for sev, floor in floors.items():
                got = latency.get(sev)
                shown = (
                    f"{got:6.1f} s  ratio {got / floor:4.2f}"
                    if got
                    else f"  none within {args.timeout:g} s"
                )
                print(f"{fault:24s} -> {alert:28s} {sev:8s} {shown}", flush=True)
    finally:
        stack.down()


if __name__ == "__main__":
    main()
