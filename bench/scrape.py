"""Scrape time of the exporter's /metrics against prometheus_client's own serialization.

Starts, on free 127.0.0.1 ports, a real exporter (`python -m wlmon exporter`, default
landscape) and a baseline server: prometheus_client's `start_http_server` over a registry
holding the same metric families, collected once from the model beforehand (constant, so it
only serializes). Both are scraped N times in turn by the same client, in the same run, and
p50/p99 are printed with their ratio. Target (issue 17): exporter p99 <= 50 ms and <= 1.5x
the baseline's p99.

    python bench/scrape.py [--scrapes 300] [--warmup 20] [--format text|openmetrics]

`--format openmetrics` sends the Accept header Prometheus 3 sends (it prefers OpenMetrics);
the default, a plain client's (text format). Both accept gzip, as Prometheus does.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.registry import Collector

REPO = Path(__file__).resolve().parent.parent
TARGET_P99_MS = 50.0
TARGET_RATIO = 1.5
ACCEPT = {
    "text": "*/*",
    "openmetrics": "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,"
    "application/openmetrics-text;version=0.0.1;q=0.5,"
    "text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,"
    "text/plain;version=0.0.4;q=0.3,*/*;q=0.2",
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class _Frozen(Collector):
    """The families collected once: serving them costs only their serialization."""

    def __init__(self, families: list) -> None:
        self.families = families

    def collect(self):
        return iter(self.families)


def serve_baseline(port: int) -> None:
    from exporters.config import ExporterConfig, ExporterSettings
    from exporters.registry import exporter_collector
    from landscape_model.engine import Simulation

    sim = Simulation("sd-benchmark-2003", seed=1)
    for _ in range(30):  # counters past zero, as a running exporter's are
        sim.step()
    families = list(exporter_collector(sim.snapshot, ExporterConfig(ExporterSettings())).collect())
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Frozen(families))
    start_http_server(port, addr="127.0.0.1", registry=registry)
    print("ready", flush=True)
    while True:
        time.sleep(3600)


def _start(argv: list[str], url: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            raise SystemExit(f"{argv} exited with {proc.returncode}")
        time.sleep(0.2)
    proc.kill()
    raise SystemExit(f"{url} not up within 60 s")


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scrapes", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--format", choices=sorted(ACCEPT), default="text")
    parser.add_argument("--serve-baseline", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_baseline:
        serve_baseline(args.serve_baseline)
        return
    ours_port, base_port = _free_port(), _free_port()
    ours_url = f"http://127.0.0.1:{ours_port}/metrics"
    base_url = f"http://127.0.0.1:{base_port}/metrics"
    procs = [
        _start(
            [sys.executable, "-m", "wlmon", "exporter", "--port", str(ours_port)],
            ours_url,
        ),
        _start([sys.executable, __file__, "--serve-baseline", str(base_port)], base_url),
    ]
    try:
        timings: dict[str, list[float]] = {"exporter": [], "baseline": []}
        sizes: dict[str, tuple[int, int]] = {}
        headers = {"Accept": ACCEPT[args.format], "Accept-Encoding": "gzip"}
        with httpx.Client(timeout=30, headers=headers) as client:
            for i in range(args.warmup + args.scrapes):
                # Alternate, so load from the other agents on the machine hits both alike.
                for name, url in (("exporter", ours_url), ("baseline", base_url)):
                    t0 = time.perf_counter()
                    r = client.get(url)
                    elapsed = time.perf_counter() - t0
                    r.raise_for_status()
                    if i >= args.warmup:
                        timings[name].append(elapsed * 1000)
                    sample_lines = [x for x in r.text.splitlines() if x and x[0] != "#"]
                    if args.format == "openmetrics":
                        assert r.text.endswith("# EOF\n"), f"{name} did not answer OpenMetrics"
                    sizes[name] = (len(sample_lines), len(r.content))
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(10)
    p50 = {k: _percentile(v, 0.50) for k, v in timings.items()}
    p99 = {k: _percentile(v, 0.99) for k, v in timings.items()}
    for name in ("exporter", "baseline"):
        series, size = sizes[name]
        print(
            f"{name:9s} {series:5d} series {size / 1024:6.0f} KiB  "
            f"p50 {p50[name]:6.1f} ms  p99 {p99[name]:6.1f} ms  "
            f"({args.scrapes} scrapes, {args.format})"
        )
    ratio = p99["exporter"] / p99["baseline"]
    print(
        f"ratio exporter/baseline: p50 {p50['exporter'] / p50['baseline']:.2f}x  "
        f"p99 {ratio:.2f}x  (target p99 <= 50 ms and <= 1.5x)"
    )
    absolute = p99["exporter"] <= TARGET_P99_MS
    relative = ratio <= TARGET_RATIO
    print(
        f"exporter p99 {p99['exporter']:.1f} ms <= {TARGET_P99_MS:g} ms: "
        f"{'PASS' if absolute else 'MISSED'}; p99 {ratio:.2f}x <= {TARGET_RATIO:g}x the "
        f"baseline: {'PASS' if relative else 'MISSED'}"
    )
    sys.exit(0 if absolute and relative else 1)


if __name__ == "__main__":
    main()
