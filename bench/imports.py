"""Import time and peak memory of real-size files (targets: <= 10 s, <= 500 MB peak; a
STAD export of a million steps <= 30 s, <= 1 GB peak).

Writes a 24-hour PerfMon capture of 500 counters (two hosts) at 15 s, in UTF-16 as
`typeperf -o` writes it and in UTF-8 as typeperf's console output redirected from cmd,
and a 9 MB ST03 export per transaction; then, each in a fresh process, imports each file
as `wlmon import` does (parse, validate, store in a temporary API database) and reads the
same file with the csv module alone (the floor). Prints seconds and peak RSS of both and
their ratios. The STAD file (one record per dialog step, in the layout SAP GUI's text
download writes: `Analysed time:` above a heading split over two lines, tab-separated rows)
is measured against the PerfMon typeperf file of the same run as the baseline. Usage, from
the repository: python -m bench.imports [--hours 24] [--counters 500] [--interval 15]
[--st03-mb 9] [--stad-steps 1000000] [--keep]
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from api.services import imports
from api.store import Store
from tests.fixtures.perfmon import generate

TARGET_S, TARGET_MB = 10.0, 500.0
STAD_S, STAD_MB = 30.0, 1024.0


def _rss_mb() -> float:
    """Resident memory now (Linux), MB."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KB on Linux


def child(what: str, path: Path, encoding: str) -> None:
    """One measurement in this (fresh) process; prints it as JSON."""
    before = _rss_mb()
    t, cpu = time.perf_counter(), time.process_time()
    if what == "csv":
        with open(path, encoding=encoding, newline="") as f:
            rows = sum(1 for _ in csv.reader(f, delimiter="\t" if path.suffix == ".tsv" else ","))
        detail = f"{rows} rows"
    else:
        store = Store(path.parent / f"bench-{what}.sqlite")
        with open(path, "rb") as f:
            store_file = {
                "perfmon": imports.store_perfmon,
                "st03": imports.store_st03,
                "stad": imports.store_stad,
            }[what]
            run = store_file(store, f, "bench")
        detail = f"run {run.id}"
    seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
    print(
        json.dumps(
            {"s": seconds, "cpu": cpu, "peak_mb": _peak_mb(), "base_mb": before, "detail": detail}
        )
    )


def _measure(what: str, path: Path, encoding: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "bench.imports", "--child", what, str(path), encoding],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _st03(path: Path, megabytes: float) -> int:
    """A per-transaction ST03 export of about `megabytes`; the number of rows."""
    header = (
        "Task type,Transaction,# Steps,Avg. response time (ms),Avg. CPU time (ms),"
        "Avg. DB time (ms),Avg. wait time (ms),Avg. roll-in time (ms),"
        "Avg. roll-out time (ms),Avg. enqueue time (ms),Avg. load+gen time (ms)\n"
    )
    tasks = ["DIALOG", "UPDATE", "BACKGROUND", "RFC", "HTTP"]
    n = 0
    with open(path, "w", newline="") as f:
        f.write(header)
        while f.tell() < megabytes * 2**20:
            f.write(
                f'{tasks[n % 5]},Z_TX_{n:06d},"{1000 + n % 9000:,}",{200 + n % 1800},'
                f"{30 + n % 90},{60 + n % 400},{n % 30},1,1,{n % 3},{n % 9}\n"
            )
            n += 1
    return n


STAD_TOP = (
    "Started\tServer\tStep\tTyp\tTransaction or\tUser\tResponse\tTime in\tWait\tCPU time\t"
    "DB req.\tMemory used\tTransfered\tProcessing\tLoad time\tGenerating\tRoll (i+w)\t"
    "Enqueue\tGUI time"
)
STAD_LOW = (
    "jobname\t\ttime (ms)\tWPs (ms)\ttime (ms)\t(ms)\ttime (ms)\t(kB)\tkBytes\ttime (ms)\t"
    "(ms)\ttime (ms)\ttime (ms)\ttime (ms)\t(ms)"
)


def _stad(path: Path, steps: int) -> None:
    """A STAD text download of `steps` dialog steps over 8 hours on four servers, 300
    transactions, in order of their start (as STAD lists them)."""
    rng = random.Random(32)
    tasks = ["DIA"] * 6 + ["BTC", "UPD", "RFC"]
    txs = [f"Z_TX_{k:03d}" for k in range(300)]
    servers = [f"sapapp{k}_PRD_00" for k in range(1, 5)]
    low_pad = "\t" * (STAD_TOP.count("\t") - STAD_LOW.count("\t"))
    with open(path, "w", newline="") as f:
        f.write("Analysed time: 25.11.2026 / 08:00:00 - 25.11.2026 / 16:00:00\r\n\r\n")
        f.write(f"\t{STAD_TOP}\r\n\t{low_pad}{STAD_LOW}\r\n")
        span = 8 * 3600
        for k in range(steps):
            t = 8 * 3600 + k * span // steps
            wp = rng.randint(500, 30000) / 10
            wait = rng.randint(0, 4000) / 10
            cpu, db = round(wp * 0.4, 1), round(wp * 0.3, 1)
            f.write(
                f"\t{t // 3600:02d}:{t // 60 % 60:02d}:{t % 60:02d}\t{servers[k % 4]}\t{k + 1}\t"
                f"{rng.choice(tasks)}\t{rng.choice(txs)}\tUSER{k % 500:03d}\t{wp + wait:,.1f}\t"
                f"{wp:,.1f}\t{wait:,.1f}\t{cpu:,.1f}\t{db:,.1f}\t{rng.randint(1000, 90000):,}.0\t"
                f"12.5\t{wp - cpu:,.1f}\t1.0\t0.0\t2.0\t0.5\t0.0\r\n"
            )


def _line(name: str, m: dict) -> str:
    return (
        f"  {name:<22} {m['s']:6.2f} s (CPU {m['cpu']:5.2f} s)   peak RSS {m['peak_mb']:7.1f} MB "
        f"(interpreter and libraries {m['base_mb']:.0f} MB)   {m['detail']}"
    )


def _ratios(wlmon: dict, floor: dict) -> str:
    work = (wlmon["peak_mb"] - wlmon["base_mb"]) / max(floor["peak_mb"] - floor["base_mb"], 1.0)
    return (
        f"  ratio wlmon / csv: time {wlmon['s'] / floor['s']:.2f}, peak RSS "
        f"{wlmon['peak_mb'] / floor['peak_mb']:.2f} (above the interpreter: {work:.1f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=24.0)
    parser.add_argument("--counters", type=int, default=500)
    parser.add_argument("--interval", type=float, default=15.0)
    parser.add_argument("--st03-mb", type=float, default=9.0)
    parser.add_argument("--stad-steps", type=int, default=1_000_000)
    parser.add_argument("--keep", action="store_true", help="keep the generated files")
    parser.add_argument("--child", nargs=3, metavar=("WHAT", "PATH", "ENCODING"))
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]), args.child[2])
        return
    samples = int(args.hours * 3600 / args.interval)
    tmp = Path(tempfile.mkdtemp(prefix="wlmon-bench-imports-"))
    ok = True
    baseline: dict = {}
    for form, encoding, read_as in (
        ("typeperf", "utf-16", "utf-16"),
        ("console", "utf-8", "utf-8"),
    ):
        path = tmp / f"{form}-{encoding}.csv"
        t = time.perf_counter()
        with open(path, "wb") as f:
            generate.write(
                f,
                form,
                encoding,
                samples=samples,
                interval_s=args.interval,
                cores=16,
                per_host=args.counters // 2,
                blanks=0.0005,
            )
        size = path.stat().st_size / 2**20
        print(
            f"PerfMon {form} ({encoding}): {args.hours:g} h at {args.interval:g} s = {samples} "
            f"samples x {args.counters} counters, {size:.1f} MB "
            f"(written in {time.perf_counter() - t:.1f} s)"
        )
        floor = _measure("csv", path, read_as)
        wlmon = _measure("perfmon", path, read_as)
        print(_line("csv module alone", floor))
        print(_line("wlmon import perfmon", wlmon))
        met = wlmon["s"] <= TARGET_S and wlmon["peak_mb"] <= TARGET_MB
        print(
            _ratios(wlmon, floor)
            + f"; targets <= {TARGET_S:g} s, <= {TARGET_MB:g} MB peak: "
            + ("met" if met else "MISSED")
        )
        ok &= met
        baseline.setdefault("perfmon", wlmon)
    path = tmp / "st03-per-transaction.csv"
    rows = _st03(path, args.st03_mb)
    print(f"ST03 per transaction: {rows} rows, {path.stat().st_size / 2**20:.1f} MB")
    floor = _measure("csv", path, "utf-8")
    wlmon = _measure("st03", path, "utf-8")
    print(_line("csv module alone", floor))
    print(_line("wlmon import st03", wlmon))
    met = wlmon["s"] <= TARGET_S and wlmon["peak_mb"] <= TARGET_MB
    print(
        _ratios(wlmon, floor)
        + f" (issue 17: 89 s before); targets <= {TARGET_S:g} s, <= {TARGET_MB:g} MB peak: "
        + ("met" if met else "MISSED")
    )
    ok &= met
    path = tmp / "stad-steps.txt"
    t = time.perf_counter()
    _stad(path, args.stad_steps)
    print(
        f"STAD: {args.stad_steps:,} steps, {path.stat().st_size / 2**20:.1f} MB "
        f"(written in {time.perf_counter() - t:.1f} s)"
    )
    wlmon = _measure("stad", path, "utf-8")
    print(_line("wlmon import stad", wlmon))
    base = baseline["perfmon"]
    met = wlmon["s"] <= STAD_S and wlmon["peak_mb"] <= STAD_MB
    print(
        f"  ratio to the PerfMon typeperf baseline of this run: time {wlmon['s'] / base['s']:.2f}, "
        f"peak RSS {wlmon['peak_mb'] / base['peak_mb']:.2f}; targets <= {STAD_S:g} s, "
        f"<= {STAD_MB:g} MB peak: " + ("met" if met else "MISSED")
    )
    ok &= met
    if args.keep:
        print(f"files in {tmp}")
    else:
        shutil.rmtree(tmp)  # about 120 MB of generated files
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
