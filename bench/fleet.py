"""The fleet at scale: N simulated SIDs through two Prometheus replicas and Thanos query.

SIMULATED SIDS, CHEAPLY: one real exporter (`wlmon exporter`, the SD benchmark, 30
instances) runs; a multiplexer in this process listens on every fleet exporter port and
answers each scrape with that exporter's latest /metrics (refreshed every second) with its
`sid` replaced by the port's SID. So every SID has the benchmark's series and instances,
its values are one system's (a real fleet's would differ; the series count does not).

On free 127.0.0.1 ports it starts, with `wlmon up --profile fleet`'s own configs: the two
Prometheus replicas (rules evaluated), their sidecars, the store gateway and Thanos query.
After a warm-up it prints, in one run:
  - series per SID and per SAP instance (the cardinality budget, tests/test_fleet.py),
  - ingestion samples/s of one replica,
  - Prometheus bytes per head series (resident memory) and WAL bytes per sample,
  - p50/p99 of the fleet overview's queries (dashboards/fleet.py) through Thanos query
    and against one Prometheus directly, and their ratio (same run, alternated).
Targets (issue 22): 20 SIDs x 30 instances, fleet overview p99 <= 1 s through Thanos and
<= 2x the direct p99.

    python bench/fleet.py [--sids 20] [--warmup 90] [--rounds 30] [--scrape 15s]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from alerts.settings import load_monitoring_config  # noqa: E402
from dashboards.fleet import queries  # noqa: E402
from wlmon.stack.fleet import FleetPorts, FleetStack  # noqa: E402
from wlmon.stack.settings import StackSettings  # noqa: E402

TARGET_P99_S = 1.0
TARGET_RATIO = 2.0
SID_LABEL = re.compile(r'sid="[^"]*"')


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _free_base(span: int) -> int:
    for base in range(24000, 60000, 500):
        socks = []
        try:
            for port in range(base, base + span):
                s = socket.socket()
                s.bind(("127.0.0.1", port))
                socks.append(s)
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise SystemExit("no free port range")


class Multiplexer:
    """Serves the real exporter's latest /metrics under every SID's port, relabelled."""

    def __init__(self, source: str, sids: list[str], ports: list[int]) -> None:
        self.source, self.text = source, ""
        self.servers = []
        for sid, port in zip(sids, ports, strict=True):
            self.servers.append(self._serve(sid, port))
        threading.Thread(target=self._refresh, daemon=True).start()

    def _refresh(self) -> None:
        while True:
            # A failed refresh keeps the last text: a scrape then sees the same values.
            with contextlib.suppress(httpx.HTTPError):
                self.text = httpx.get(self.source, timeout=10).text
            time.sleep(1)

    def _serve(self, sid: str, port: int) -> ThreadingHTTPServer:
        mux = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = SID_LABEL.sub(f'sid="{sid}"', mux.text).encode()
                code = 200 if body else 503
                self.send_response(code)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server


def _value(url: str, expr: str) -> float:
    r = httpx.get(f"{url}/api/v1/query", params={"query": expr}, timeout=60).json()
    result = r["data"]["result"]
    return float(result[0]["value"][1]) if result else float("nan")


def _time_queries(url: str, exprs: list[str], extra: dict) -> float:
    """Wall seconds to run the overview's queries as a dashboard UI does (in parallel)."""
    t0 = time.perf_counter()
    with httpx.Client(timeout=60) as client:
        threads = []
        errors = []

        def run(expr: str) -> None:
            r = client.get(f"{url}/api/v1/query", params={"query": expr, **extra})
            if r.status_code != 200:
                errors.append(r.text)

        for e in exprs:
            th = threading.Thread(target=run, args=(e,))
            th.start()
            threads.append(th)
        for th in threads:
            th.join()
    if errors:
        raise SystemExit(f"query failed: {errors[0]}")
    return time.perf_counter() - t0


def _pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sids", type=int, default=20)
    ap.add_argument("--warmup", type=float, default=90.0, help="seconds of scraping first")
    ap.add_argument("--rounds", type=int, default=30, help="overview loads per path")
    ap.add_argument("--scrape", default="15s")
    args = ap.parse_args(argv)

    sids = [f"S{i:02d}" for i in range(args.sids)]
    state = Path(tempfile.mkdtemp(prefix="wlmon-bench-fleet-"))
    fleet_file = state / "fleet.yml"
    fleet_file.write_text(
        "prometheus_replicas: 2\nalertmanager_peers: 1\nsids:\n"
        + "".join(f"  - {{sid: {s}, scenario: sd-benchmark-2003}}\n" for s in sids)
    )
    base = _free_base(100 + args.sids)
    os.environ.update(
        {
            "WLMON_STATE_DIR": str(state),
            "WLMON_FLEET_FILE": str(fleet_file),
            "WLMON_FLEET_PORT_BASE": str(base),
            "WLMON_SCRAPE_INTERVAL": args.scrape,
            "WLMON_API_TOKEN": "bench",
            "WLMON_EXPORTER_TOKEN": "bench",
            "WLMON_PERSES_ADMIN_PASSWORD": "bench",
        }
    )
    ports = FleetPorts(base)
    source_port = _free_port()
    exporter = subprocess.Popen(
        [sys.executable, "-m", "wlmon", "exporter", "--port", str(source_port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "WLMON_EXPORTER_TOKEN": "bench"},
    )
    stack = FleetStack(StackSettings())
    try:
        source = f"http://127.0.0.1:{source_port}/metrics"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(source, timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        Multiplexer(source, sids, [ports.exporter(k) for k in range(len(sids))])
        stack.up(only=["prometheus-A", "sidecar-A", "prometheus-B", "sidecar-B", "store", "query"])
        prom = f"http://127.0.0.1:{ports.prometheus(0)}"
        thanos = f"http://127.0.0.1:{ports.query_http}"
        print(
            f"{args.sids} simulated SIDs (one exporter's series, relabelled);"
            f" warm-up {args.warmup:.0f} s"
        )
        time.sleep(args.warmup)

        per_sid = _value(prom, f'count({{sid="{sids[0]}"}})')
        instances = _value(
            prom, f'count(count by (sap_instance) ({{sid="{sids[0]}",sap_instance!=""}}))'
        )
        per_instance = _value(prom, f'count({{sid="{sids[0]}",sap_instance!=""}})') / max(
            instances, 1
        )
        head = _value(prom, "prometheus_tsdb_head_series")
        rate = _value(prom, "rate(prometheus_tsdb_head_samples_appended_total[1m])")
        rss = _value(prom, 'process_resident_memory_bytes{job="prometheus"}')
        wal = sum(
            f.stat().st_size
            for f in (stack.data_dir / "prometheus-A" / "wal").rglob("*")
            if f.is_file()
        )
        appended = _value(prom, "prometheus_tsdb_head_samples_appended_total")

        exprs = list(queries(load_monitoring_config()).values())
        direct, through = [], []
        for _ in range(args.rounds):  # alternated: both see the same machine load
            direct.append(_time_queries(prom, exprs, {}))
            through.append(_time_queries(thanos, exprs, {"dedup": "true"}))
        d99, t99 = _pct(direct, 99), _pct(through, 99)
        rows = [
            ("SIDs x instances", f"{args.sids} x {instances:.0f}"),
            ("Thanos query engine", stack.settings.fleet_query_engine),
            ("series per SID", f"{per_sid:.0f}"),
            ("series per SAP instance (labelled)", f"{per_instance:.1f}"),
            ("head series (one replica)", f"{head:.0f}"),
            ("ingestion samples/s (one replica)", f"{rate:.0f}"),
            ("resident bytes per head series", f"{rss / head:.0f}"),
            ("WAL bytes per sample appended", f"{wal / max(appended, 1):.2f}"),
            (
                f"overview ({len(exprs)} queries) direct p50 / p99 s",
                f"{_pct(direct, 50):.3f} / {d99:.3f}",
            ),
            ("overview through Thanos p50 / p99 s", f"{_pct(through, 50):.3f} / {t99:.3f}"),
            ("p50 ratio Thanos / direct", f"{_pct(through, 50) / _pct(direct, 50):.2f}"),
            ("p99 ratio Thanos / direct", f"{t99 / d99:.2f}"),
        ]
        width = max(len(r[0]) for r in rows)
        for name, value in rows:
            print(f"{name:<{width}}  {value}")
        ok = t99 <= TARGET_P99_S and t99 / d99 <= TARGET_RATIO
        print(
            f"target: p99 <= {TARGET_P99_S} s through Thanos and <= {TARGET_RATIO}x direct: "
            + ("met" if ok else "NOT met")
        )
        return 0 if ok else 1
    finally:
        stack.down()
        exporter.terminate()
        exporter.wait(15)


if __name__ == "__main__":
    raise SystemExit(main())
