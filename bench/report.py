"""Report time for a 4-hour run at 5 s resolution (target <= 2 s).

Records a 4-hour SD benchmark run (fast mode, 5 s samples, 10 min ramp-up, one fault) into
a temporary API database, then times, in the same process: reading the run back (the
floor: SQLite plus decompression) and building the whole report from it. Prints both
and their ratio. Usage: python bench/report.py [--hours 4] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from alerts.thresholds import load_thresholds
from api.runs.recorder import record_fast_run
from api.runs.report import build_report
from api.runs.spec import RunSpec
from api.store import Store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=4.0)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    duration = args.hours * 3600
    store = Store(Path(tempfile.mkdtemp(prefix="wlmon-bench-")) / "api.sqlite")
    spec = RunSpec(
        duration_s=duration,
        ramp_up_s=600,
        resolution_s=5,
        faults=[{"name": "db-bottleneck", "start_s": duration / 2, "end_s": duration / 2 + 1800}],
    )
    t0 = time.perf_counter()
    data = record_fast_run(spec)
    run_id = store.runs.add(
        kind="simulated",
        scenario=spec.scenario,
        label="bench",
        start=spec.start,
        duration_s=duration,
        ramp_up_s=spec.ramp_up_s,
        spec=spec.model_dump(mode="json"),
        data=data,
    )
    recorded = time.perf_counter() - t0
    load, full = [], []
    for _ in range(args.repeat):
        t = time.perf_counter()
        run, stored = store.runs.get(run_id), store.runs.data(run_id)
        load.append(time.perf_counter() - t)
        t = time.perf_counter()
        run, stored = store.runs.get(run_id), store.runs.data(run_id)
        report = build_report(run, stored, thresholds=load_thresholds())
        full.append(time.perf_counter() - t)
    rows, cols = stored.values.shape
    print(
        f"run: {args.hours:g} h at 5 s = {rows} samples x {cols} series"
        f" (recorded in {recorded:.1f} s)"
    )
    print(
        f"baseline, read the run back:  {statistics.median(load):.3f} s (median of {args.repeat})"
    )
    print(f"report, read + build:         {statistics.median(full):.3f} s (target <= 2 s)")
    print(f"ratio report / baseline:      {statistics.median(full) / statistics.median(load):.1f}x")
    print(f"breaches found: {len(report['breaches'])}; top SQL rows: {len(report['top_sql'])}")


if __name__ == "__main__":
    main()
