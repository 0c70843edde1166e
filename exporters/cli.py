"""The `wlmon` command line."""

from __future__ import annotations

import json
import sys

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from exporters.durations import parse_duration
from exporters.model.catalog import Catalog, ConfigError
from exporters.model.engine import Simulation
from exporters.model.summary import THRESHOLDS_MS, indicator_values, report

app = typer.Typer(
    help="wlmon: workload monitoring for SAP-style ERP landscapes.", no_args_is_help=True
)
console = Console()
err = Console(stderr=True)


def _fail(message: str) -> None:
    err.print(f"[bold red]error:[/] {message}")
    raise typer.Exit(2)


@app.command()
def faults(as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """List the faults that can be injected into a scenario."""
    try:
        items = Catalog().faults()
    except ConfigError as exc:
        _fail(str(exc))
    if as_json:
        print(json.dumps([{"name": f.name, "description": f.description} for f in items], indent=2))
        return
    table = Table(title="Faults")
    for col in ("name", "indicator", "description", "source"):
        table.add_column(col)
    for f in items:
        table.add_row(f.name, f.indicator, f.description, f.source)
    console.print(table)


@app.command()
def simulate(
    scenario: str = typer.Option("sd-benchmark-2003", help="scenario name"),
    duration: str = typer.Option("1h", help="simulated time, e.g. 15m, 1h"),
    fault: list[str] = typer.Option([], "--fault", help="fault to inject (repeatable)"),
    seed: int = typer.Option(1, help="random seed; the same seed gives the same numbers"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON document"),
) -> None:
    """Simulate a run in fast mode and print the ST03 summary and the calibration."""
    try:
        seconds = parse_duration(duration)
    except ValueError as exc:
        _fail(f"--duration: {exc}")
    try:
        sim = Simulation(scenario, faults=fault, seed=seed)
    except ConfigError as exc:
        _fail(str(exc))
    progress = Progress(
        TextColumn("simulating {task.description}"),
        BarColumn(),
        TextColumn("{task.completed:.0f}/{task.total:.0f} s"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err,
        disable=not sys.stderr.isatty(),
        transient=True,
    )
    with progress:
        task = progress.add_task(scenario, total=seconds)
        sim.run(
            seconds, progress=lambda done, total: progress.update(task, completed=done * sim.dt)
        )
    doc = report(sim.snapshot(), sim.scenario)
    if as_json:
        print(json.dumps(doc, indent=2))
        return
    _print_report(doc)


def _print_report(doc: dict) -> None:
    faults_text = ", ".join(doc["faults"]) or "none"
    title = (
        f"ST03 workload summary — {doc['scenario']} "
        f"({doc['duration_s']:.0f} s, faults: {faults_text})"
    )
    table = Table(title=title)
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
        "load_gen_ms",
        "gui_ms",
    ]
    for c in cols:
        table.add_column(
            c.removesuffix("_ms") + (" (ms)" if c.endswith("_ms") else ""), justify="right"
        )
    for row in doc["summary"]:
        table.add_row(
            *[
                f"{row[c]:,.1f}"
                if isinstance(row[c], float)
                else f"{row[c]:,}"
                if isinstance(row[c], int)
                else str(row[c])
                for c in cols
            ]
        )
    console.print(table)
    values = indicator_values(doc["summary"])
    ind = Table(title="Whitepaper thresholds (dialog, seed 000 §4.3.5.1)")
    for c in ("indicator", "value (ms)", "threshold (ms)", "state"):
        ind.add_column(c, justify="right")
    for name, value in values.items():
        limit = THRESHOLDS_MS[name]
        state = "[red]breach[/]" if value > limit else "[green]ok[/]"
        ind.add_row(name, f"{value:,.1f}", f"{limit:,.0f}", state)
    console.print(ind)
    cal = Table(title="Calibration against seed 000 Table 5")
    for c in ("figure", "paper", "model", "residual %", "source"):
        cal.add_column(c, justify="right")
    for row in doc["calibration"]:
        res = row["residual_pct"]
        colour = "green" if abs(res) <= 5 else "red"
        cal.add_row(
            row["figure"],
            f"{row['paper']:,.3f}",
            f"{row['model']:,.3f}",
            f"[{colour}]{res:+.2f}[/]",
            row["source"],
        )
    console.print(cal)
    law = doc["response_time_law"]
    console.print(
        f"Response-time law X = N/(R+Z): measured {law['measured_steps_per_s']:.2f} steps/s, "
        f"law {law['law_steps_per_s']:.2f} steps/s, residual {law['residual_pct']:+.3f} %"
    )
    for text in doc["bent"]:
        console.print(f"[yellow]bent:[/] {text}")


@app.command()
def exporter(
    scenario: str = typer.Option("sd-benchmark-2003", help="scenario name"),
    fault: list[str] = typer.Option([], "--fault", help="fault to inject at start (repeatable)"),
    host: str = typer.Option("127.0.0.1", help="address to bind"),
    port: int = typer.Option(9300, help="port for /metrics"),
    seed: int = typer.Option(1, help="random seed"),
    speed: float = typer.Option(1.0, help="simulated seconds per wall-clock second"),
    think_time: float = typer.Option(None, help="override the scenario's think time (s)"),
    loki_url: str = typer.Option(None, help="push ST05 summaries and run events to this Loki"),
    influx_url: str = typer.Option(None, help="write run events to this InfluxDB"),
    trace_interval: float = typer.Option(60.0, help="seconds between ST05 summaries sent to Loki"),
) -> None:
    """Serve /metrics from the real-time model (faults switchable via /control/faults)."""
    from exporters.server import serve

    overrides = {"think_time_s": think_time} if think_time is not None else None
    try:
        sim = Simulation(scenario, faults=fault, seed=seed, overrides=overrides)
    except ConfigError as exc:
        _fail(str(exc))
    try:
        serve(
            sim,
            host=host,
            port=port,
            speed=speed,
            console=err,
            loki_url=loki_url,
            influx_url=influx_url,
            trace_interval_s=trace_interval,
        )
    except OSError as exc:
        _fail(f"exporter: cannot listen on {host}:{port}: {exc.strerror or exc}")


@app.command()
def api(
    host: str = typer.Option("127.0.0.1", help="address to bind"),
    port: int = typer.Option(8000, help="port"),
) -> None:
    """Serve the wlmon API (FastAPI) with uvicorn."""
    import uvicorn

    uvicorn.run("api.main:create_app", factory=True, host=host, port=port, log_level="warning")


@app.command("render-config")
def render_config(
    server: str = typer.Argument(..., help="alertmanager"),
    out: str = typer.Option(..., "--out", help="directory to write the config into"),
    template_dir: str = typer.Option(None, help="template folder (default: provisioning/<server>)"),
) -> None:
    """Fill a config template from WLMON_* environment variables (docker-compose uses it)."""
    import os
    from pathlib import Path

    from exporters.stack.render import render_alertmanager
    from exporters.stack.settings import REPO_DIR
    from exporters.stack.template import TemplateError

    if server != "alertmanager":
        _fail(f"render-config: no template for {server!r} (known: alertmanager)")
    src = Path(template_dir) if template_dir else REPO_DIR / "provisioning" / server
    try:
        path = render_alertmanager(src, dict(os.environ), Path(out))
    except TemplateError as exc:
        _fail(str(exc))
    console.print(f"wrote {path}")


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
    from pydantic import ValidationError

    from api.config import get_settings
    from api.routes.runs import execute_fast_run
    from api.runs.spec import RunSpec
    from api.store import Store

    if not fast:
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
            label=label,
            faults=[_parse_fault_window(f) for f in fault],
        )
    except (ValueError, ValidationError) as exc:
        _fail(str(exc))
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
            _fail(str(exc))
    print(run_id)


def _realtime_run(api_url: str, body: dict) -> str:
    import os
    import time

    import httpx

    token = os.environ.get("WLMON_API_TOKEN", "")
    try:
        r = httpx.post(
            f"{api_url}/runs",
            json=body,
            headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        )
    except httpx.HTTPError as exc:
        _fail(f"cannot reach the API at {api_url}: {exc}")
    if r.status_code != 202:
        _fail(f"the API refused the run ({r.status_code}): {r.json().get('detail', r.text)}")
    run = r.json()
    err.print(f"run {run['id']} started; it ends at {run['end']}")
    with Progress(
        TextColumn("real-time run"), BarColumn(), TimeElapsedColumn(), console=err
    ) as progress:
        from datetime import UTC, datetime

        start, end = (datetime.fromisoformat(run[k]) for k in ("start", "end"))
        task = progress.add_task("run", total=(end - start).total_seconds())
        while run["status"] == "running":
            time.sleep(2)
            progress.update(task, completed=(datetime.now(UTC) - start).total_seconds())
            run = httpx.get(f"{api_url}/runs/{run['id']}", timeout=30).json()
    if run["status"] == "failed":
        _fail(f"run {run['id']} failed: {run['message']}")
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
    from api.config import get_settings
    from api.runs.report import build_report
    from api.store import Store

    store = Store(get_settings().db_path)
    row, data = store.runs.get(run_id), store.runs.data(run_id)
    if row is None or data is None:
        _fail(f"no run {run_id!r} in {get_settings().db_path}")
    if html_out:
        from pathlib import Path

        from api.runs.html import render

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


import_app = typer.Typer(help="Import real data as runs.", no_args_is_help=True)
app.add_typer(import_app, name="import")


@import_app.command("perfmon")
def import_perfmon(
    file: str = typer.Argument(..., help="PerfMon CSV (typeperf, relog, logman)"),
    label: str = typer.Option("", help="a name for the run"),
) -> None:
    """Import a Windows Performance Monitor CSV into the API's database; prints the run id."""
    from pathlib import Path

    from api.config import get_settings
    from api.imports.perfmon import PerfmonError
    from api.routes.imports import store_perfmon
    from api.store import Store

    path = Path(file)
    if not path.is_file():
        _fail(f"{file}: no such file")
    try:
        run = store_perfmon(Store(get_settings().db_path), path.read_bytes(), label or path.name)
    except PerfmonError as exc:
        _fail(f"{file}: {exc}")
    print(run["id"])


st05_app = typer.Typer(help="ST05 SQL trace: the compressed summary.", no_args_is_help=True)
app.add_typer(st05_app, name="st05")


@st05_app.command("top")
def st05_top(
    window: str = typer.Option("15m", help="time window, e.g. 15m"),
    prometheus: str = typer.Option(
        "http://127.0.0.1:9090", help="Prometheus to read the live counters from"
    ),
    simulate: bool = typer.Option(False, "--simulate", help="run the model for the window instead"),
    scenario: str = typer.Option(
        "sd-benchmark-2003", help="scenario (for --simulate and SQL texts)"
    ),
    fault: list[str] = typer.Option([], "--fault", help="fault to inject (with --simulate)"),
    limit: int = typer.Option(20, help="statements to show"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """The compressed SQL trace sorted by elapsed DB time (seed 000 4.3.5.2)."""
    from exporters.st05top import from_prometheus, from_simulation, sql_texts

    try:
        seconds = parse_duration(window)
    except ValueError as exc:
        _fail(f"--window: {exc}")
    try:
        if simulate:
            rows = from_simulation(scenario, fault, seconds)
        else:
            rows = from_prometheus(prometheus, window, sql_texts(scenario))
    except ConfigError as exc:
        _fail(str(exc))
    except RuntimeError as exc:
        _fail(f"st05 top: {exc}")
    rows = rows[:limit]
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    table = Table(title=f"ST05 summary, last {window}, sorted by elapsed DB time")
    for col in ("elapsed ms", "executions", "records", "ms/exec", "table", "op", "statement"):
        table.add_column(col, justify="right" if col[0] in "emr" else "left")
    for r in rows:
        table.add_row(
            f"{r['elapsed_ms']:,.0f}",
            f"{r['executions']:,.0f}",
            f"{r['records']:,.0f}",
            f"{r['per_execution_ms']:,.2f}",
            r["table"],
            r["operation"],
            r["sql"],
        )
    console.print(table)


stack_app = typer.Typer(help="Install and check the real servers wlmon runs.", no_args_is_help=True)
app.add_typer(stack_app, name="stack")


@stack_app.command("install")
def stack_install(
    only: list[str] = typer.Option([], "--only", help="component to install (repeatable)"),
    check: bool = typer.Option(False, "--check", help="only report what is installed"),
    as_json: bool = typer.Option(False, "--json", help="print JSON (with --check)"),
) -> None:
    """Build the pinned servers into the cache (~/.cache/wlmon or $WLMON_CACHE), once."""
    from exporters.stack.install import InstallError, install, select, status

    try:
        components = select(only)
    except InstallError as exc:
        _fail(str(exc))
    if check:
        rows = [status(c) for c in components]
        if as_json:
            print(
                json.dumps(
                    [
                        {
                            "name": r.name,
                            "version": r.version,
                            "installed": r.installed,
                            "directory": str(r.directory),
                            "missing": list(r.missing),
                        }
                        for r in rows
                    ]
                )
            )
        else:
            table = Table(title="wlmon stack")
            for col in ("component", "version", "installed", "directory"):
                table.add_column(col)
            for r in rows:
                table.add_row(
                    r.name,
                    r.version,
                    "[green]yes[/]" if r.installed else "[red]no[/]",
                    str(r.directory),
                )
            console.print(table)
        raise typer.Exit(0 if all(r.installed for r in rows) else 1)
    with Progress(
        TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(), console=err
    ) as progress:
        for comp in components:
            task = progress.add_task(f"{comp.name} {comp.version}", total=len(comp.steps) + 1)
            try:
                result = install(
                    comp,
                    on_step=lambda title, t=task, c=comp: progress.update(
                        t, advance=1, description=f"{c.name} {c.version}: {title}"
                    ),
                )
            except InstallError as exc:
                _fail(str(exc))
            progress.update(
                task,
                completed=len(comp.steps) + 1,
                description=f"{comp.name} {comp.version}: ready in {result.directory}",
            )


@app.command()
def up(
    only: list[str] = typer.Option([], "--only", help="start only this service (repeatable)"),
    install_missing: bool = typer.Option(True, help="build servers missing from the cache first"),
) -> None:
    """Start the native stack on 127.0.0.1 and wait until every service is healthy."""
    from exporters.stack.runtime import Stack, StackError

    if install_missing:
        stack_install(only=[], check=False, as_json=False)
    stack = Stack()
    try:
        running = stack.up(only=only or None, on_event=lambda msg: err.print(f"[dim]{msg}[/]"))
    except StackError as exc:
        _fail(str(exc))
    table = Table(title="wlmon is up")
    for col in ("service", "pid", "url"):
        table.add_column(col)
    for r in running:
        table.add_row(r.name, str(r.pid), r.url)
    console.print(table)
    if any(r.name == "grafana" for r in running):
        _, source = stack.grafana_password()
        console.print(f"Grafana admin user: admin; password: {source}.")
        console.print(
            "Grafana runs API-only natively (its web frontend cannot be built here); "
            "for the web UI use docker-compose (see README)."
        )
    console.print(f"State, data and logs: {stack.state}")


@app.command()
def down() -> None:
    """Stop what `wlmon up` started (by recorded pid), cleanly."""
    from exporters.stack.runtime import Stack

    stopped = Stack().down(on_event=lambda msg: err.print(f"[dim]{msg}[/]"))
    console.print(f"stopped: {', '.join(stopped) or 'nothing was running'}")


@app.command()
def status(as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """Each service that `wlmon up` started: pid, url and health."""
    from exporters.stack.runtime import Stack

    rows = Stack().status()
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    table = Table(title="wlmon status")
    for col in ("service", "pid", "url", "healthy"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            r["name"], str(r["pid"]), r["url"], "[green]yes[/]" if r["healthy"] else "[red]no[/]"
        )
    console.print(table if rows else "wlmon is not running (no services recorded)")


def main() -> None:  # pragma: no cover - console entry
    app()
