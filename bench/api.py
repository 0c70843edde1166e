"""Throughput of the API's busy routes at a fixed arrival rate (issue 17).

Starts the API as a real uvicorn process on a free loopback port (fresh database in a
temporary directory), records a fast run of one simulated hour and a few notifications,
then drives each route in turn open-loop: request k is due at k / rate seconds, whether or
not earlier ones have answered, and its latency counts from when it was due (so a stalled
server is not hidden by a client that waits for it). A cap on connections in flight bounds
the client, which speaks HTTP/1.1 over asyncio streams itself (httpx costs more CPU per
request than the server's route on a 2-core machine). GET /healthz, driven the same way in
the same run, is the baseline the other routes' p99 is set against.

    python bench/api.py                 # 200 requests/s, 60 s per route
    python bench/api.py --seconds 20    # shorter
    python bench/api.py --logs          # notifications forwarded to the real VictoriaLogs

    python bench/api.py --only beside   # just the webhook beside two imports
    python bench/api.py --api-root DIR  # another checkout's API (a before/after comparison)

Target: every route holds 200/s with p99 < 100 ms and no errors (a 2-core machine). Then
/healthz alone while two maximal ST03 imports run: p99 < 50 ms. Then "the webhook beside two
imports" (issue 26): the webhook at the full rate with /healthz polled beside it at
HEALTH_RATE/s on connections of its own, as a load balancer or `wlmon up` would, while the
two imports run: webhook p99 < 100 ms, /healthz p99 < 50 ms. For that scenario the API's own
view is printed beside the client's: the p99 of its request histogram and of its event
loop's lag over the drive (from its /metrics). Time the client saw and the app did not was
spent before the app was called (the request queued in the socket while the loop or the
GIL was busy elsewhere). The API process's CPU over each drive is printed in cores (issue
26: the webhook forwarding to Loki took a whole core at 200/s).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np
import psutil
from prometheus_client.parser import text_string_to_metric_families

# Run as a script, this file's folder comes first on the path and `api` would be this file:
# the repository it belongs to comes first instead, so `api` is the package beside it.
sys.path = [str(Path(__file__).resolve().parents[1])] + [
    p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent
]

from api.config import ST03_MAX_BYTES, ST03_MAX_ROWS  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ST03_FIXTURE = ROOT / "tests" / "fixtures" / "st03" / "per-transaction-de.csv"
TARGET_LOOP_P99_S = 0.050
TOKEN = "bench"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
TARGET_P99_S = 0.100
# A health checker's pace (Kubernetes probes every 10 s, a load balancer every 1-5 s, `wlmon
# up` every 0.2 s): fast enough for a p99 over a short drive, slow enough to add no load.
HEALTH_RATE = 10.0
NOTIFICATION = {
    "version": "4",
    "groupKey": '{}/{severity="warning"}:{sap_instance="bench_D00", sid="BMK"}',
    "truncatedAlerts": 0,
    "status": "firing",
    "receiver": "noc-warning",
    "groupLabels": {"sid": "BMK"},
    "commonLabels": {"alertname": "SAPEnqueueTimeHigh", "severity": "warning"},
    "commonAnnotations": {},
    "externalURL": "http://127.0.0.1:9093",
    "alerts": [
        {
            "status": "firing",
            "labels": {
                "alertname": "SAPEnqueueTimeHigh",
                "severity": "warning",
                "sid": "BMK",
                "sap_instance": "bench_D00",
            },
            "annotations": {"summary": "Lock requests to the enqueue server are slow."},
            "startsAt": "2026-11-23T07:00:00Z",
            "endsAt": "0001-01-01T00:00:00Z",
            "generatorURL": "http://127.0.0.1:9090/graph",
            "fingerprint": "bench",
        }
    ],
}


@dataclass
class Result:
    route: str
    offered: int
    seconds: float
    latencies: list[float]
    errors: int
    first_error: str
    cpu: float = float("nan")  # the API process's CPU over the drive, in cores
    limit: float = TARGET_P99_S  # the p99 it must stay under
    app_p99: float = float("nan")  # the API's own histogram's p99 (bucket bound), if read
    loop_lag_p99: float = float("nan")  # the API's event-loop lag p99 (bucket bound), if read

    @property
    def achieved(self) -> float:
        return len(self.latencies) / self.seconds

    def p(self, q: float) -> float:
        return float(np.percentile(self.latencies, q)) if self.latencies else float("nan")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_api(
    db_path: Path, loki_url: str = "", root: Path = ROOT, loki_env: dict[str, str] | None = None
) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = os.environ | {"WLMON_API_DB_PATH": str(db_path), "WLMON_API_TOKEN": TOKEN}
    # The API's code from `root` (another checkout, for a before/after), never this one's.
    env["PYTHONPATH"] = str(root)
    for name in ("URL", "CA_FILE", "USERNAME", "PASSWORD", "CERT_FILE", "KEY_FILE"):
        env.pop(f"WLMON_API_LOGS_{name}", None)
    if loki_url:
        # Every notification is forwarded to the real log store, as on the stack (HTTPS with
        # its CA, basic auth: loki_env).
        env["WLMON_API_LOGS_URL"] = loki_url
        env |= loki_env or {}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "api.main:create_app",
            "--factory",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        cwd=root,
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    print(f"API process {proc.pid} on {url}", flush=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit(f"the API did not start on {url}")


def start_loki(state: Path):
    """The stack's own log store (VictoriaLogs) on a free loopback port, in `state`."""
    from wlmon.stack.runtime import Stack
    from wlmon.stack.settings import StackSettings, free_port_environment

    os.environ.update(free_port_environment() | {"WLMON_STATE_DIR": str(state / "stack")})
    stack = Stack(StackSettings())
    stack.up(only=["victorialogs"])
    return stack


def loki_url(stack) -> str:
    return stack.logs_url()


def loki_env(stack) -> dict[str, str]:
    """The API's access to the stack's log store (its CA, basic auth), as `wlmon up` sets."""
    access = stack.logs_access()
    return {
        "WLMON_API_LOGS_CA_FILE": str(access.ca_file),
        "WLMON_API_LOGS_USERNAME": access.username,
        "WLMON_API_LOGS_PASSWORD": access.password,
    }


class Connection:
    """One keep-alive HTTP/1.1 connection speaking just enough of the protocol for the
    API's answers (Content-Length bodies): a client far cheaper per request than httpx, so
    the rates measured are the server's, not the client's."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def send(self, request: bytes) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        try:
            self.writer.write(request)
            head = await self.reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            return int(head[9:12]), await self.reader.readexactly(length)
        except (OSError, asyncio.IncompleteReadError, ValueError):
            self.writer.close()
            self.reader = self.writer = None
            raise


def http_request(method: str, path: str, body: bytes = b"", headers: dict | None = None) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    if body or method == "POST":
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def drive(
    url: str, name: str, request: bytes, rate: float, seconds: float, cap: int
) -> Result:
    """Requests due at k / rate for `seconds` over at most `cap` connections; latency
    from when each was due."""
    host, port = url.removeprefix("http://").split(":")
    pool: asyncio.Queue[Connection] = asyncio.Queue()
    for _ in range(cap):
        pool.put_nowait(Connection(host, int(port)))
    n = int(rate * seconds)
    latencies: list[float] = []
    errors = 0
    first_error = ""
    start = time.perf_counter() + 0.05

    async def one(k: int) -> None:
        nonlocal errors, first_error
        due = start + k / rate
        await asyncio.sleep(max(0.0, due - time.perf_counter()))
        conn = await pool.get()
        try:
            code, body = await asyncio.wait_for(conn.send(request), 10.0)
            ok, why = code < 400, f"{code} {body[:120]!r}"
        except (OSError, asyncio.IncompleteReadError, ValueError, TimeoutError) as exc:
            conn.writer = conn.reader = None
            ok, why = False, f"{type(exc).__name__} {exc}"
        finally:
            pool.put_nowait(conn)
        if ok:
            latencies.append(time.perf_counter() - due)
        else:
            errors += 1
            first_error = first_error or why

    await asyncio.gather(*(one(k) for k in range(n)))
    elapsed = max(time.perf_counter() - start, seconds)
    while not pool.empty():
        conn = pool.get_nowait()
        if conn.writer is not None:
            conn.writer.close()
    return Result(name, int(rate), elapsed, latencies, errors, first_error)


def largest_st03_export() -> bytes:
    """The fixture's rows repeated up to the row limit (or the size limit, if first)."""
    head, *rows = ST03_FIXTURE.read_text(encoding="utf-8").splitlines(keepends=True)
    out, size = [head], len(head.encode())
    for k in range(ST03_MAX_ROWS):
        size += len(rows[k % len(rows)].encode())
        if size > ST03_MAX_BYTES:
            break
        out.append(rows[k % len(rows)])
    return "".join(out).encode()


async def during_imports(url: str, drives) -> tuple[list[Result], int]:
    """The `drives` (coroutines) run together while two maximal ST03 imports run back to
    back (both workers busy); their results and how many imports ended meanwhile."""
    raw = largest_st03_export()
    stop = asyncio.Event()
    imported = 0

    async def importer(client: httpx.AsyncClient) -> None:
        nonlocal imported
        while not stop.is_set():
            r = await client.post("/imports/st03", content=raw, headers=AUTH, timeout=600)
            r.raise_for_status()
            imported += 1

    async with httpx.AsyncClient(base_url=url) as client:
        tasks = [asyncio.create_task(importer(client)) for _ in range(2)]
        await asyncio.sleep(1.0)  # the uploads are in, the workers parsing
        results = await asyncio.gather(*drives)
        stop.set()
        await asyncio.gather(*tasks)
    return list(results), imported


def sched(pid: int) -> tuple[float, float]:
    """(seconds on a CPU, seconds runnable but waiting for one) of the API's main thread, the
    one running the event loop (Linux schedstat; NaN elsewhere)."""
    try:
        run_ns, wait_ns, _ = Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()
    except (OSError, ValueError):
        return float("nan"), float("nan")
    return int(run_ns) / 1e9, int(wait_ns) / 1e9


async def client_lag(out: list[float], tick_s: float = 0.02) -> None:
    """Until cancelled: how late this client's own loop wakes (a late client adds to every
    latency it measures; on a loaded machine it can be the client, not the API)."""
    loop = asyncio.get_running_loop()
    while True:
        t0 = loop.time()
        await asyncio.sleep(tick_s)
        out.append(max(0.0, loop.time() - t0 - tick_s))


def listen_queue(port: int) -> int | None:
    """Connections waiting in the API's accept queue now: a LISTEN socket's rx_queue in
    /proc/net/tcp (Linux; None elsewhere)."""
    try:
        lines = Path("/proc/net/tcp").read_text().splitlines()[1:]
    except OSError:
        return None
    for line in lines:
        f = line.split()
        if f[3] == "0A" and int(f[1].split(":")[1], 16) == port:  # 0A: LISTEN
            return int(f[4].split(":")[1], 16)
    return None


def listen_overflows() -> int:
    """TcpExt ListenOverflows + ListenDrops: connections an accept queue turned away."""
    try:
        rows = [r.split() for r in Path("/proc/net/netstat").read_text().splitlines()]
    except OSError:
        return 0
    for names, values in zip(rows[::2], rows[1::2], strict=False):
        if names[0] == "TcpExt:":
            got = dict(zip(names[1:], map(int, values[1:]), strict=False))
            return got.get("ListenOverflows", 0) + got.get("ListenDrops", 0)
    return 0


def workers_sched(pid: int) -> tuple[float, float, str]:
    """The API's worker processes together: (seconds on a CPU, seconds waiting for one,
    their scheduling as `policy/nice`)."""
    run = wait = 0.0
    seen: set[str] = set()
    for child in psutil.Process(pid).children(recursive=True):
        for task in Path(f"/proc/{child.pid}/task").glob("*"):
            try:
                r, w, _ = (task / "schedstat").read_text().split()
            except (OSError, ValueError):
                continue
            run, wait = run + int(r) / 1e9, wait + int(w) / 1e9
        try:
            policy = {0: "other", 3: "batch", 5: "idle"}.get(os.sched_getscheduler(child.pid), "?")
            seen.add(f"{policy}/{child.nice()}")
        except (OSError, psutil.Error):
            pass
    return run, wait, ",".join(sorted(seen)) or "-"


async def machine_sampler(port: int, out: dict, tick_s: float = 0.05) -> None:
    """Until cancelled: the deepest accept queue seen and the machine's runnable threads
    (procs_running of /proc/stat: beyond the core count, someone waits for a CPU)."""
    while True:
        depth = listen_queue(port)
        if depth is not None:
            out["accept_max"] = max(out.get("accept_max", 0), depth)
        try:
            stat = Path("/proc/stat").read_text()
            running = int(stat.split("procs_running ")[1].split()[0])
            out.setdefault("running", []).append(running)
        except (OSError, IndexError, ValueError):
            pass
        await asyncio.sleep(tick_s)


@dataclass
class AppView:
    """The API's own p99s over a drive, read off its /metrics histograms (the upper bound
    of the bucket the 99th percentile falls in): what its telemetry saw."""

    request_p99: dict[str, float]
    loop_lag_p99: float


def histograms(url: str) -> dict[tuple[str, str], list[tuple[float, float]]]:
    """(metric, route) -> cumulative (le, count) of the API's request and loop-lag
    histograms."""
    out: dict[tuple[str, str], list[tuple[float, float]]] = {}
    text = httpx.get(f"{url}/metrics/", timeout=30).text
    for family in text_string_to_metric_families(text):
        if family.name not in (
            "wlmon_api_request_duration_seconds",
            "wlmon_api_event_loop_lag_seconds",
        ):
            continue
        for sample in family.samples:
            if sample.name.endswith("_bucket"):
                key = (family.name, sample.labels.get("route", ""))
                out.setdefault(key, []).append((float(sample.labels["le"]), sample.value))
    return out


def counters(url: str) -> tuple[float, float]:
    """The API's pushes to the log store so far, and its webhook calls that found the database busy
    (NaN: an API that does not count them)."""
    text = httpx.get(f"{url}/metrics/", timeout=30).text
    found = {}
    for family in text_string_to_metric_families(text):
        found[family.name] = sum(x.value for x in family.samples if x.name.endswith("_total"))
    names = ("wlmon_api_loki_pushes", "wlmon_api_webhook_database_busy")
    return tuple(found.get(name, float("nan")) for name in names)  # type: ignore[return-value]


def p99_between(before: list[tuple[float, float]], after: list[tuple[float, float]]) -> float:
    """The 99th percentile's bucket bound of the observations made between two readings."""
    counts = dict(before)
    delta = [(le, n - counts.get(le, 0.0)) for le, n in sorted(after)]
    total = delta[-1][1] if delta else 0.0
    if total <= 0:
        return float("nan")
    return next(le for le, n in delta if n >= 0.99 * total)


def app_view(before: dict, after: dict) -> AppView:
    req = "wlmon_api_request_duration_seconds"
    routes = {
        route: p99_between(before.get((m, route), []), buckets)
        for (m, route), buckets in after.items()
        if m == req
    }
    lag = ("wlmon_api_event_loop_lag_seconds", "")
    return AppView(routes, p99_between(before.get(lag, []), after.get(lag, [])))


def cpu_seconds(pid: int) -> float:
    t = psutil.Process(pid).cpu_times()
    return t.user + t.system


async def measured(pid: int, run) -> Result:
    """`run` (a drive) with the API process's CPU over it, in cores."""
    cpu0, t0 = cpu_seconds(pid), time.perf_counter()
    result = await run
    result.cpu = (cpu_seconds(pid) - cpu0) / (time.perf_counter() - t0)
    return result


async def bench(
    url: str, pid: int, rate: float, seconds: float, cap: int, only: str | None = None
) -> list[Result]:
    run_id = "none"
    if only in (None, "routes"):
        async with httpx.AsyncClient(base_url=url, timeout=10.0) as client:
            print("recording a fast run of one simulated hour ...", flush=True)
            r = await client.post("/runs", json={"duration_s": 3600}, headers=AUTH, timeout=900)
            r.raise_for_status()
            run_id = r.json()["id"]
            for _ in range(5):
                (
                    await client.post("/alerts/webhook", json=NOTIFICATION, headers=AUTH)
                ).raise_for_status()
            # The first report request computes it; the bench measures what follows.
            (await client.get(f"/runs/{run_id}/report", timeout=300)).raise_for_status()
    routes = {
        "GET /healthz (baseline)": http_request("GET", "/healthz"),
        "GET /runs": http_request("GET", "/runs"),
        "GET /runs/{id}": http_request("GET", f"/runs/{run_id}"),
        "GET /runs/{id}/report": http_request("GET", f"/runs/{run_id}/report"),
        "POST /alerts/webhook": http_request(
            "POST", "/alerts/webhook", json.dumps(NOTIFICATION).encode(), AUTH
        ),
    }
    results: list[Result] = []
    if only in (None, "routes"):
        for name, request in routes.items():
            print(f"driving {name} at {rate:g}/s for {seconds:g} s ...", flush=True)
            results.append(await measured(pid, drive(url, name, request, rate, seconds, cap)))
        # Issue 17 section 1: the loop stays free while the largest imports run.
        label = "GET /healthz + 2 imports"
        print(f"driving {label} at {rate:g}/s for {seconds:g} s ...", flush=True)
        cpu0, t0 = cpu_seconds(pid), time.perf_counter()
        (result,), imported = await during_imports(
            url, [drive(url, label, routes["GET /healthz (baseline)"], rate, seconds, cap)]
        )
        result.cpu = (cpu_seconds(pid) - cpu0) / (time.perf_counter() - t0)
        result.route = f"{label} ({imported} done)"
        result.limit = TARGET_LOOP_P99_S
        results.append(result)
    if only in (None, "beside"):
        results += await beside_imports(url, pid, routes, rate, seconds, cap)
    return results


async def beside_imports(
    url: str, pid: int, routes: dict[str, bytes], rate: float, seconds: float, cap: int
) -> list[Result]:
    """Issue 26: the webhook at `rate` and /healthz at HEALTH_RATE at once, first alone (the
    baseline of this run, on this machine's load as it is now) and then beside two imports;
    each result carries the app's own p99 for its route."""
    out: list[Result] = []
    for imports in (0, 2):
        beside = "beside 2 imports" if imports else "alone (baseline)"
        print(
            f"driving the webhook at {rate:g}/s and /healthz at {HEALTH_RATE:g}/s {beside}"
            f" for {seconds:g} s ...",
            flush=True,
        )
        before = await asyncio.to_thread(histograms, url)
        pushes0, busy0 = await asyncio.to_thread(counters, url)
        cpu0, t0 = cpu_seconds(pid), time.perf_counter()
        lags: list[float] = []
        watcher = asyncio.create_task(client_lag(lags))
        machine: dict = {}
        sampler = asyncio.create_task(machine_sampler(int(url.rsplit(":", 1)[1]), machine))
        overflows0 = listen_overflows()
        w_run0, w_wait0, _ = workers_sched(pid)
        run0, wait0 = sched(pid)
        drives = [
            drive(url, "webhook", routes["POST /alerts/webhook"], rate, seconds, cap),
            drive(url, "healthz", routes["GET /healthz (baseline)"], HEALTH_RATE, seconds, 4),
        ]
        if imports:
            (hook, health), imported = await during_imports(url, drives)
        else:
            (hook, health), imported = await asyncio.gather(*drives), 0
        watcher.cancel()
        sampler.cancel()
        run1, wait1 = sched(pid)
        w_run1, w_wait1, w_sched = workers_sched(pid)
        running = machine.get("running", [0])
        r50, r99 = np.percentile(running, 50), np.percentile(running, 99)
        print(
            f"  accept queue: deepest {machine.get('accept_max', 'n/a')} waiting, turned away"
            f" {listen_overflows() - overflows0} (machine-wide); runnable threads on the"
            f" machine ({os.cpu_count()} cores) p50 {r50:.0f} p99 {r99:.0f}; the workers"
            f" ({w_sched}):"
            f" on a CPU {w_run1 - w_run0:.1f} s, waiting for one {w_wait1 - w_wait0:.1f} s",
            flush=True,
        )
        wall = time.perf_counter() - t0
        cpu = (cpu_seconds(pid) - cpu0) / wall
        # Where the loop thread's time went: running, waiting for a CPU (the machine's
        # other work), or neither (blocked: a system call, the GIL, or idle in epoll).
        pushes1, busy1 = await asyncio.to_thread(counters, url)
        pushes = (pushes1 - pushes0) / wall
        client_p99 = float(np.percentile(lags, 99)) if lags else float("nan")
        print(
            f"  the API's loop thread over {wall:.1f} s: on a CPU {run1 - run0:.1f} s,"
            f" runnable but waiting for a CPU {wait1 - wait0:.1f} s, the rest blocked or"
            f" idle; pushes to the log store {pushes:.1f}/s; webhook calls that found the database"
            f" busy {busy1 - busy0:g}; this client's own loop lag p99 {client_p99 * 1e3:.1f} ms",
            flush=True,
        )
        view = app_view(before, await asyncio.to_thread(histograms, url))
        hook.route = f"webhook {beside}" + (f" ({imported} done)" if imports else "")
        health.route = "  /healthz beside it"
        hook.cpu = health.cpu = cpu
        hook.app_p99 = view.request_p99.get("/alerts/webhook", float("nan"))
        health.app_p99 = view.request_p99.get("/healthz", float("nan"))
        hook.loop_lag_p99 = health.loop_lag_p99 = view.loop_lag_p99
        hook.limit, health.limit = TARGET_P99_S, TARGET_LOOP_P99_S
        if not imports:  # the baseline: reported, its bound not a target
            hook.limit = health.limit = float("inf")
        out += [hook, health]
    return out


def report(results: list[Result], rate: float) -> bool:
    base = next((r for r in results if r.route == "GET /healthz (baseline)"), None)
    alone = next((r for r in results if r.route == "webhook alone (baseline)"), None)
    print()
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(
        f"{'route':<42} {'offered/s':>9} {'achieved/s':>10} {'p50 ms':>8} {'p99 ms':>8}"
        f" {'errors':>6} {'p99/baseline':>12} {'API cores':>9}  target"
    )
    all_met = True
    for r in results:
        met = r.achieved >= 0.98 * r.offered and r.p(99) < r.limit and r.errors == 0
        all_met &= met
        ratio = r.p(99) / base.p(99) if base else float("nan")
        if r.route.startswith("webhook") and alone:  # against the webhook alone
            ratio = r.p(99) / alone.p(99)
        print(
            f"{r.route:<42} {r.offered:>9} {r.achieved:>10.1f} {r.p(50) * 1e3:>8.1f}"
            f" {r.p(99) * 1e3:>8.1f} {r.errors:>6} {ratio:>12.2f}"
            f" {r.cpu:>9.2f}  "
            + (
                f"p99 < {r.limit * 1e3:.0f} ms {'met' if met else 'MISSED'}"
                if r.limit < 1e9
                else "-"
            )
        )
        if r.app_p99 == r.app_p99:  # read off the API's /metrics
            print(
                f"    the API's own p99: request <= {r.app_p99 * 1e3:g} ms, event-loop lag"
                f" <= {r.loop_lag_p99 * 1e3:g} ms; the rest of the client's p99 was spent"
                " before the app saw the request"
            )
        if r.first_error:
            print(f"    first error: {r.first_error}")
    print(
        f"\ntarget: the offered rate held, p99 under each line's bound, 0 errors: "
        f"{'met by every line' if all_met else 'MISSED'}"
    )
    return all_met


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rate", type=float, default=200.0, help="requests per second offered")
    ap.add_argument("--seconds", type=float, default=60.0, help="per route")
    ap.add_argument("--cap", type=int, default=32, help="connections at most")
    ap.add_argument(
        "--logs",
        action="store_true",
        help="forward notifications to the real VictoriaLogs (wlmon stack install), as the "
        "stack does",
    )
    ap.add_argument(
        "--only",
        choices=("routes", "beside"),
        help="routes: each route, then /healthz during imports; beside: the webhook beside two"
        " imports",
    )
    ap.add_argument(
        "--api-root",
        type=Path,
        default=ROOT,
        help="serve the API from this checkout (e.g. an older commit's `git archive`), to"
        " compare before and after on the same machine in the same minutes",
    )
    args = ap.parse_args()
    if not (0 < args.rate <= 2000 and 0 < args.seconds <= 600 and 0 < args.cap <= 1000):
        ap.error("--rate in (0, 2000], --seconds in (0, 600], --cap in (0, 1000]")
    with tempfile.TemporaryDirectory(prefix="wlmon-bench-api-") as tmp:
        loki = start_loki(Path(tmp)) if args.logs else None
        try:
            proc, url = start_api(
                Path(tmp) / "api.sqlite",
                loki_url(loki) if loki else "",
                args.api_root.resolve(),
                loki_env(loki) if loki else None,
            )
            try:
                results = asyncio.run(
                    bench(url, proc.pid, args.rate, args.seconds, args.cap, args.only)
                )
            finally:
                proc.terminate()
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
        finally:
            if loki is not None:
                loki.down()
    sys.exit(0 if report(results, args.rate) else 1)


if __name__ == "__main__":
    main()
