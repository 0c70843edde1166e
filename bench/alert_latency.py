"""Fault-to-notification latency of the real stack, against its floor.

Starts the native stack on free loopback ports (model at 10x real time, rule windows and
for: scaled by --time-scale), injects each fault and times the first webhook notification
of its alert. The floor is what the pipeline cannot beat: scrape interval + the alert's
(scaled) for: + Alertmanager's group_wait; the ratio measured / floor shows what the rate
window, the model's settling and evaluation phase add. Usage:
    python bench/alert_latency.py [--time-scale 0.1]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import httpx

from wlmon.stack.runtime import Stack
from wlmon.stack.settings import StackSettings, free_port_environment

FAULTS = {
    "too-few-work-processes": "SAPDispatcherWaitTimeHigh",
    "slow-enqueue-link": "SAPEnqueueTimeHigh",
    "db-bottleneck": "SAPDatabaseRequestTimeHigh",
    "roll-area-too-small": "SAPRollInTimeHigh",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-scale", type=float, default=0.1)
    parser.add_argument("--scrape-interval", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()
    group_wait = 1.0
    for_s = 300 * args.time_scale
    os.environ.update(free_port_environment())
    os.environ.update(
        {
            "WLMON_STATE_DIR": tempfile.mkdtemp(prefix="wlmon-bench-"),
            "WLMON_SCRAPE_INTERVAL": f"{args.scrape_interval}s",
            "WLMON_EXPORTER_SPEED": "10",
            "WLMON_RULES_TIME_SCALE": str(args.time_scale),
            "WLMON_AM_GROUP_WAIT": f"{group_wait:g}s",
            "WLMON_AM_GROUP_INTERVAL": "5s",
        }
    )
    stack = Stack(StackSettings())
    p = stack.settings.ports
    api, exporter = f"http://127.0.0.1:{p.api}", f"http://127.0.0.1:{p.exporter}"
    auth = {"Authorization": f"Bearer {stack.exporter_token()}"}
    stack.up(only=["loki", "alertmanager", "exporter", "api", "prometheus"])
    floor = args.scrape_interval + for_s + group_wait
    try:
        time.sleep(for_s + 300 * args.time_scale)  # let the windows fill with healthy data
        print(
            f"floor = scrape {args.scrape_interval} s + for {for_s:g} s"
            f" + group_wait {group_wait:g} s = {floor:g} s"
        )
        for fault, alert in FAULTS.items():
            seen = max(
                (n["id"] for n in httpx.get(f"{api}/alerts/notifications").json()), default=0
            )
            t0 = time.monotonic()
            httpx.put(
                f"{exporter}/control/faults", json={"faults": [fault]}, headers=auth
            ).raise_for_status()
            latency = None
            while time.monotonic() - t0 < args.timeout:
                items = httpx.get(f"{api}/alerts/notifications", params={"alertname": alert}).json()
                if any(n["id"] > seen and n["status"] == "firing" for n in items):
                    latency = time.monotonic() - t0
                    break
                time.sleep(0.5)
            httpx.put(
                f"{exporter}/control/faults", json={"faults": []}, headers=auth
            ).raise_for_status()
            shown = (
                f"{latency:6.1f} s  ratio {latency / floor:4.2f}"
                if latency
                else "  none within timeout"
            )
            print(f"{fault:24s} -> {alert:28s} {shown}")
            time.sleep(300 * args.time_scale + for_s)  # let it resolve before the next fault
    finally:
        stack.down()


if __name__ == "__main__":
    main()
