"""One monitor-only exporter reading 20 SIDs x 6 instances through the twin's sapstartsrv,
against today's per-SID cost (issue 31 item 6).

Three processes are measured in the same run, each scraped in turn by the same client:

- `fleet`: `wlmon exporter --monitor` with all SIDs (one process, exporters/monitor.py);
- `one-monitor`: `wlmon exporter --monitor` with the first SID only (a process per SID);
- `today`: `wlmon exporter` as a SID was watched before monitor mode: the model running
  (its own simulated SID beside) and the sapcontrol collector reading the first SID through
  WLMON_SAPCONTROL_* variables; one such process per real SID.

The twins (a sapstartsrv per instance, SIDs S01..S20, each the small three-tier landscape cut
to 5 dialog instances + ASCS) run in a process of their own, so their cost is nobody's.
Printed: scrape p50/p99, resident memory, calls per scrape and per minute per instance (at
Prometheus's 15 s interval, from the exporter's own sap_sapcontrol_calls_total), and the
ratios of the fleet process against N processes of today's kind and of one-monitor.

    python bench/sapcontrol_scale.py [--sids 20] [--scrapes 40] [--interval 1.0]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import yaml
from prometheus_client.parser import text_string_to_metric_families

REPO = Path(__file__).resolve().parent.parent
USER, PASSWORD = "wlmonmon", "bench-pw"
SCRAPE_INTERVAL_S = 15.0  # Prometheus's, for calls per minute
SIX_INSTANCES = [
    "landscape.app_servers.hosts=[app1,app2,app3,app4,app5]",
    "landscape.app_servers.instances_per_host=1",
    "landscape.app_servers.instance_numbers=[D00]",
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve_twins(count: int, out: Path) -> None:
    """The twins' sapstartsrv: write {sid: first URL} to `out`, serve until stdin closes."""
    sys.path.insert(0, str(REPO))
    from alerts.thresholds import load_thresholds
    from exporters.sapstartsrv.landscape import ModelLandscape
    from exporters.sapstartsrv.server import Credentials, SapStartSrvFleet
    from landscape_model.engine import Simulation

    thresholds = load_thresholds()
    urls, fleets = {}, []
    for k in range(1, count + 1):
        sid = f"S{k:02d}"
        sim = Simulation(
            "sd-small-three-tier",
            seed=k,
            overrides={"landscape": {"sid": sid}},
            settings=SIX_INSTANCES,
        )
        landscape = ModelLandscape(sim.snapshot, lambda sim=sim: sim.scenario, thresholds)
        fleet = SapStartSrvFleet(landscape, credentials=Credentials(USER, PASSWORD)).start()
        fleets.append(fleet)
        urls[sid] = list(fleet.urls().values())
    out.write_text(json.dumps(urls))
    sys.stdin.read()
    for fleet in fleets:
        fleet.stop()


def _monitor_file(path: Path, urls: dict[str, list[str]], pw: Path) -> Path:
    sids = [
        {
            "sid": sid,
            "sapcontrol": {
                "discover": [first[0]],
                "hosts": {"*": "127.0.0.1"},
                "username": USER,
                "password_file": str(pw),
                "timeout_s": 5,
            },
        }
        for sid, first in urls.items()
    ]
    path.write_text(yaml.safe_dump({"sids": sids}))
    return path


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _wait(port: int, proc: subprocess.Popen, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"exporter on {port} exited {proc.returncode}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"exporter on {port} not healthy in {timeout} s")


def _calls(text: str) -> tuple[float, int]:
    """Web-method calls made so far and the instances read (sap_up source=sapcontrol)."""
    calls, instances = 0.0, 0
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if s.name == "sap_sapcontrol_calls_total":
                calls += s.value
            elif s.name == "sap_up" and s.labels.get("source") == "sapcontrol":
                instances += 1
    return calls, instances


class Target:
    def __init__(self, name: str, argv: list[str], env: dict[str, str]) -> None:
        self.name = name
        self.port = _free_port()
        self.proc = subprocess.Popen(
            [*argv, "--port", str(self.port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=REPO,
        )
        self.times: list[float] = []
        self.rss: list[float] = []
        self.first: tuple[float, int] | None = None
        self.last: tuple[float, int] | None = None

    def scrape(self, client: httpx.Client) -> None:
        t0 = time.perf_counter()
        r = client.get(f"http://127.0.0.1:{self.port}/metrics")
        self.times.append(time.perf_counter() - t0)
        r.raise_for_status()
        self.last = _calls(r.text)
        if self.first is None:
            self.first = self.last
        self.rss.append(_rss_mb(self.proc.pid))

    def figures(self) -> dict:
        times = sorted(self.times)
        p99 = times[min(len(times) - 1, round(0.99 * (len(times) - 1)))]
        scrapes = len(self.times) - 1
        per_scrape = (self.last[0] - self.first[0]) / max(scrapes, 1) / max(self.last[1], 1)
        return {
            "instances": self.last[1],
            "p50_ms": statistics.median(times) * 1000,
            "p99_ms": p99 * 1000,
            "rss_mb": max(self.rss),
            "calls_per_scrape_per_instance": per_scrape,
            "calls_per_min_per_instance": per_scrape * 60 / SCRAPE_INTERVAL_S,
        }

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sids", type=int, default=20)
    parser.add_argument("--scrapes", type=int, default=40)
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between rounds")
    parser.add_argument("--serve-twins", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_twins:
        serve_twins(args.sids, args.serve_twins)
        return
    tmp = Path(tempfile.mkdtemp(prefix="wlmon-bench-"))
    urls_file = tmp / "urls.json"
    twins = subprocess.Popen(
        [sys.executable, __file__, "--sids", str(args.sids), "--serve-twins", str(urls_file)],
        stdin=subprocess.PIPE,
        cwd=REPO,
    )
    targets: list[Target] = []
    try:
        while not urls_file.exists():
            if twins.poll() is not None:
                raise SystemExit("the twins' process exited")
            time.sleep(0.5)
        urls = json.loads(urls_file.read_text())
        pw = tmp / "pw"
        pw.write_text(PASSWORD)
        pw.chmod(0o600)
        first_sid = next(iter(urls))
        # A clean environment: no WLMON_SAPCONTROL_* of the shell reaches the exporters.
        env = {k: v for k, v in os.environ.items() if not k.startswith("WLMON_")}
        wlmon = [sys.executable, "-m", "wlmon", "exporter"]
        fleet_file = _monitor_file(tmp / "fleet.yml", urls, pw)
        one_file = _monitor_file(tmp / "one.yml", {first_sid: urls[first_sid]}, pw)
        today_env = {
            **env,
            "WLMON_EXPORTER_COLLECTOR_SAPCONTROL": "true",
            "WLMON_SAPCONTROL_DISCOVER": urls[first_sid][0],
            "WLMON_SAPCONTROL_HOSTS": '{"*": "127.0.0.1"}',
            "WLMON_SAPCONTROL_USERNAME": USER,
            "WLMON_SAPCONTROL_PASSWORD_FILE": str(pw),
            "WLMON_SAPCONTROL_TIMEOUT_S": "5",
        }
        targets = [
            Target("fleet", [*wlmon, "--monitor", str(fleet_file)], env),
            Target("one-monitor", [*wlmon, "--monitor", str(one_file)], env),
            Target("today", [*wlmon, "--state-file", str(tmp / "control.json")], today_env),
        ]
        for t in targets:
            _wait(t.port, t.proc)
        with httpx.Client(timeout=60) as client:
            for _ in range(args.scrapes):
                start = time.monotonic()
                for t in targets:
                    t.scrape(client)
                time.sleep(max(args.interval - (time.monotonic() - start), 0))
        figs = {t.name: t.figures() for t in targets}
    finally:
        for t in targets:
            t.stop()
        if twins.stdin:
            twins.stdin.close()
        twins.wait(timeout=60)
    n = args.sids
    print(f"{n} SIDs x 6 instances, twin's sapstartsrv; {args.scrapes} scrapes each, in turn")
    print(
        f"{'':12} {'instances':>9} {'p50 ms':>8} {'p99 ms':>8} {'RSS MB':>8} "
        f"{'calls/scrape/inst':>18} {'calls/min/inst@15s':>19}"
    )
    for name, f in figs.items():
        print(
            f"{name:12} {f['instances']:>9} {f['p50_ms']:>8.1f} {f['p99_ms']:>8.1f} "
            f"{f['rss_mb']:>8.0f} {f['calls_per_scrape_per_instance']:>18.2f} "
            f"{f['calls_per_min_per_instance']:>19.2f}"
        )
    fleet, one, today = figs["fleet"], figs["one-monitor"], figs["today"]
    print(
        f"memory: one process for {n} SIDs {fleet['rss_mb']:.0f} MB; today's {n} processes "
        f"{n * today['rss_mb']:.0f} MB (ratio {fleet['rss_mb'] / (n * today['rss_mb']):.3f}); "
        f"{n} monitor processes {n * one['rss_mb']:.0f} MB "
        f"(ratio {fleet['rss_mb'] / (n * one['rss_mb']):.3f})"
    )
    print(
        f"scrape p99: {n} SIDs in one process {fleet['p99_ms']:.1f} ms vs one SID today "
        f"{today['p99_ms']:.1f} ms (ratio {fleet['p99_ms'] / today['p99_ms']:.2f}) and "
        f"one SID monitor-only {one['p99_ms']:.1f} ms"
    )
    print(
        f"calls per minute per instance: {fleet['calls_per_min_per_instance']:.1f} (fleet) vs "
        f"{today['calls_per_min_per_instance']:.1f} (today), ratio "
        f"{fleet['calls_per_min_per_instance'] / today['calls_per_min_per_instance']:.2f}"
    )


if __name__ == "__main__":
    main()
