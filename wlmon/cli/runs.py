"""`wlmon run`, `wlmon report` and `wlmon import`: runs, their reports and real data."""

from __future__ import annotations

import json
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import typer
from pydantic import ValidationError
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from api.config import get_settings
from api.imports.perfmon import PerfmonError
from api.routes.imports import store_perfmon
from api.routes.runs import execute_fast_run
from api.runs.html import render
from api.runs.report import build_report
from api.runs.spec import RunSpec
from api.store import Store
from exporters.durations import parse_duration
from wlmon.cli.common import console, err, fail

app = typer.Typer()
import_app = typer.Typer(help="Import real data as runs.", no_args_is_help=True)


def _parse_fault_window(text: str) -> dict:
    """NAME@START-END (durations; END may be empty): db-bottleneck@10m-20m."""
    name, _, window = text.partition("@")
    start, _, end = window.partition("-")
    item: dict = {"name": name, "start_s": parse_duration(start) if start else 0.0}
    if end:
        item["end_s"] = parse_duration(end)
    return item


@app.command("run")
def run_command(
    fast: bool = typer.Option(
        True, "--fast/--no-fast", help="simulate the whole run now (fast mode)"
    ),
    scenario: str = typer.Option("sd-benchmark-2003", help="scenario name"),
    duration: str = typer.Option("1h", help="length of the run"),
    ramp_up: str = typer.Option("0s", help="ramp-up excluded from the report"),
    users: int = typer.Option(None, help="users at full load (default: the scenario's)"),
    fault: list[str] = typer.Option(
        [], "--fault", help="NAME@START-END, e.g. db-bottleneck@20m-30m"
    ),
    seed: int = typer.Option(1, help="random seed"),
    engine: str = typer.Option(
        None,
        "--engine",
        help="des (every dialog step) or analytic (default); a real-time run uses the live "
        "exporter's (wlmon exporter --engine)",
    ),
    label: str = typer.Option("", help="a name for the run"),
    api_url: str = typer.Option(
        "http://127.0.0.1:8000",
        envvar="WLMON_API_URL",
        help="real-time runs: the API that drives the live exporter",
    ),
) -> None:
    """Record a run; prints its id. --fast (default) simulates it now into the API's
    database; --no-fast asks the running API to drive the live exporter through it
    (token from WLMON_API_TOKEN) and waits for its end."""

    if not fast:
        if engine is not None:
            fail("--engine: a real-time run uses the live exporter's (wlmon exporter --engine)")
        body = {
            "mode": "realtime",
            "scenario": scenario,
            "duration_s": parse_duration(duration),
            "ramp_up_s": parse_duration(ramp_up) if ramp_up not in ("0", "0s") else 0.0,
            "users": users,
            "label": label,
            "faults": [_parse_fault_window(f) for f in fault],
        }
        print(_realtime_run(api_url, body))
        return
    try:
        spec = RunSpec(
            scenario=scenario,
            duration_s=parse_duration(duration),
            ramp_up_s=parse_duration(ramp_up) if ramp_up not in ("0", "0s") else 0.0,
            users=users,
            seed=seed,
            engine=engine or "analytic",
            label=label,
            faults=[_parse_fault_window(f) for f in fault],
        )
    except (ValueError, ValidationError) as exc:
        fail(str(exc))
    store = Store(get_settings().db_path)
    with Progress(
        TextColumn("recording run"),
        BarColumn(),
        TimeElapsedColumn(),
        console=err,
        disable=not sys.stderr.isatty(),
        transient=True,
    ) as progress:
        task = progress.add_task("run", total=spec.duration_s)
        try:
            run_id = execute_fast_run(
                store, spec, progress=lambda done, total: progress.update(task, completed=done)
            )
        except ValueError as exc:
            fail(str(exc))
    print(run_id)


def _realtime_run(api_url: str, body: dict) -> str:

    token = os.environ.get("WLMON_API_TOKEN", "")
    try:
        r = httpx.post(
            f"{api_url}/runs",
            json=body,
            headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        )
    except httpx.HTTPError as exc:
        fail(f"cannot reach the API at {api_url}: {exc}")
    if r.status_code != 202:
        fail(f"the API refused the run ({r.status_code}): {r.json().get('detail', r.text)}")
    run = r.json()
    err.print(f"run {run['id']} started; it ends at {run['end']}")
    with Progress(
        TextColumn("real-time run"), BarColumn(), TimeElapsedColumn(), console=err
    ) as progress:
        start, end = (datetime.fromisoformat(run[k]) for k in ("start", "end"))
        task = progress.add_task("run", total=(end - start).total_seconds())
        while run["status"] == "running":
            time.sleep(2)
            progress.update(task, completed=(datetime.now(UTC) - start).total_seconds())
            run = httpx.get(f"{api_url}/runs/{run['id']}", timeout=30).json()
    if run["status"] == "failed":
        fail(f"run {run['id']} failed: {run['message']}")
    note = f": {run['message']}" if run["message"] else ""
    err.print(f"run {run['id']} {run['status']}{note}")
    return run["id"]


@app.command("report")
def report_command(
    run_id: str = typer.Argument(..., help="run id (wlmon run prints it)"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
    html_out: str = typer.Option(None, "--html", help="write the HTML report to this file"),
) -> None:
    """The report of a stored run: ST03, OS counters, breaches, SQL, benchmark checks."""

    store = Store(get_settings().db_path)
    row, data = store.runs.get(run_id), store.runs.data(run_id)
    if row is None or data is None:
        fail(f"no run {run_id!r} in {get_settings().db_path}")
    if html_out:
        with Progress(
            TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(), console=err
        ) as bar:
            task = bar.add_task("building report", total=3)
            doc = build_report(row, data)
            bar.update(task, advance=1, description="rendering HTML")
            page = render(doc, data)
            bar.update(task, advance=1, description=f"writing {html_out}")
            Path(html_out).write_text(page, encoding="utf-8")
            bar.update(task, advance=1, description=f"wrote {html_out}")
        return
    doc = build_report(row, data)
    if as_json:
        print(json.dumps(doc, indent=2, default=str))
        return
    _print_run_report(doc)


def _print_run_report(doc: dict) -> None:
    ss = doc["steady_state"]
    table = Table(
        title=f"Run {doc['run']['id']} — steady state {ss['start_s']:.0f}-{ss['end_s']:.0f} s"
    )
    cols = [
        "task_type",
        "steps",
        "response_ms",
        "dispatcher_wait_ms",
        "cpu_ms",
        "db_request_ms",
        "enqueue_ms",
        "roll_in_ms",
        "roll_out_ms",
    ]
    for c in cols:
        table.add_column(c, justify="right")
    for row in doc["st03"]:
        table.add_row(
            *[f"{row[c]:,.1f}" if isinstance(row[c], float) else f"{row[c]}" for c in cols]
        )
    console.print(table)
    os_table = Table(title="OS counters (average / minimum / maximum)")
    for c in ("host", "counter", "avg", "min", "max"):
        os_table.add_column(c, justify="right")
    for row in doc["os_counters"]:
        os_table.add_row(
            row["host"],
            row["counter"],
            f"{row['avg']:,.3f}",
            f"{row['min']:,.3f}",
            f"{row['max']:,.3f}",
        )
    console.print(os_table)
    for b in doc["breaches"]:
        console.print(
            f"[red]{b['rule']}[/] {b['start_s']:.0f}-{b['end_s']:.0f} s, "
            f"peak {b['peak_ms']:,.1f} ms (threshold {b['threshold_ms']:,.0f} ms): {b['diagnosis']}"
        )
    sd = doc["benchmark"].get("sd", {})
    if sd:
        residual = sd["response_time_law"]["residual_pct"]
        law = f"{residual:+.2f} %" if residual is not None else "n/a (users unknown)"
        console.print(
            f"SD: response {sd['dialog_response_s']:.3f} s "
            f"(< 2 s: {sd['dialog_response_below_2s']}), SAPS {sd['saps']:,}, "
            f"response-time law residual {law}"
        )


@import_app.command("perfmon")
def import_perfmon(
    file: str = typer.Argument(..., help="PerfMon CSV (typeperf, relog, logman)"),
    label: str = typer.Option("", help="a name for the run"),
) -> None:
    """Import a Windows Performance Monitor CSV into the API's database; prints the run id."""

    path = Path(file)
    if not path.is_file():
        fail(f"{file}: no such file")
    try:
        run = store_perfmon(Store(get_settings().db_path), path.read_bytes(), label or path.name)
    except PerfmonError as exc:
        fail(f"{file}: {exc}")
    print(run["id"])
