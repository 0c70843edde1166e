"""`wlmon run`, `wlmon report` and `wlmon import`: runs, their reports and real data, through
the same services the API's routes call."""

from __future__ import annotations

import json
import re
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import typer
from pydantic import ValidationError
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from api.config import get_settings
from api.runs.gaps import EXPORTER_DOWN
from api.runs.html import render
from api.runs.spec import RealtimeRunRequest, RunSpec
from api.schemas import Run
from api.services import imports, reports, runs
from api.services.errors import ServiceError
from api.services.import_limits import Kind, limits
from exporters.durations import parse_duration
from exporters.thresholds import Thresholds
from exporters.vocabulary import DIALOG_RESPONSE
from landscape_model.engines import ENGINE_HELP, RUN_ENGINE
from landscape_model.terms import COMPONENT_BY_KEY, REPORT_ORDER, RESPONSE_PARTS
from wlmon.cli.common import console, err, fail, human
from wlmon.cli.edge import report_options, runs_store, storing, thresholds
from wlmon.stack.settings import Ports, StackSettings

app = typer.Typer()
import_app = typer.Typer(help="Import real data as runs.", no_args_is_help=True)

# The run plan's fields and the options that set them, so an error names the option.
OPTION = {
    "scenario": "--scenario",
    "users": "--users",
    "duration_s": "--duration",
    "ramp_up_s": "--ramp-up",
    "seed": "--seed",
    "label": "--label",
    "faults": "--fault",
}
_FAULT_REF = re.compile(r"faults\[(\d+)\]\.")


def _duration(option: str, text: str, *, zero: bool = False) -> float:
    """Seconds in `text`; an error naming `option` when it is not a duration."""
    try:
        return parse_duration(text, allow_zero=zero)
    except ValueError as exc:
        fail(f"{option}: {exc}")


def _fault_window(text: str) -> dict[str, Any]:
    """NAME@START-END (durations; END may be empty): db-bottleneck@10m-20m."""
    name, _, window = text.partition("@")
    if not name:
        fail(f"--fault: {text!r} has no fault name (NAME@START-END, e.g. db-bottleneck@10m-20m)")
    start, _, end = window.partition("-")
    item: dict[str, Any] = {
        "name": name,
        "start_s": _duration("--fault", start, zero=True) if start else 0.0,
    }
    if end:
        item["end_s"] = _duration("--fault", end)
    return item


def _explain(exc: ValidationError, faults: list[str]) -> str:
    """The plan's validation errors in the options' words."""

    def words(text: str) -> str:
        text = _FAULT_REF.sub(lambda m: f"--fault {faults[int(m[1])]!r}: ", text)
        for field, option in OPTION.items():
            text = re.sub(rf"\b{field}\b", option, text)
        return text

    out = []
    for e in exc.errors():
        loc, msg = e["loc"], words(e["msg"].removeprefix("Value error, "))
        if loc and loc[0] == "faults" and len(loc) > 1:
            where = f"--fault {faults[int(loc[1])]!r}" + (f" ({loc[2]})" if len(loc) > 2 else "")
        else:
            where = OPTION.get(str(loc[0]), str(loc[0])) if loc else ""
        out.append(f"{where}: {msg}" if where else msg)
    return "; ".join(out)


@app.command("run")
def run_command(
    fast: bool = typer.Option(
        True, "--fast/--no-fast", help="simulate the whole run now (fast mode)"
    ),
    scenario: str = typer.Option("sd-benchmark-2003", help="scenario name"),
    duration: str = typer.Option("1h", help="length of the run"),
    ramp_up: str = typer.Option("0s", help="ramp-up excluded from the report"),
    users: int | None = typer.Option(None, help="users at full load (default: the scenario's)"),
    fault: list[str] = typer.Option(
        [], "--fault", help="NAME@START-END, e.g. db-bottleneck@20m-30m"
    ),
    seed: int = typer.Option(1, help="random seed"),
    engine: str = typer.Option(
        None,
        "--engine",
        help=f"{ENGINE_HELP}; a real-time run uses the live exporter's (wlmon exporter --engine)",
        show_default=False,
    ),
    label: str = typer.Option("", help="a name for the run"),
    api_url: str = typer.Option(
        None,
        envvar="WLMON_API_URL",
        help="real-time runs: the API that drives the live exporter "
        "[default: the stack's, http://127.0.0.1:$WLMON_PORT_API]",
    ),
) -> None:
    """Record a run; prints its id. --fast (default) simulates it now into the API's
    database; --no-fast asks the running API to drive the live exporter through it
    (token from WLMON_API_TOKEN) and waits for its end."""
    # Every option is parsed and the plan checked before anything is recorded or sent.
    plan: dict[str, Any] = {
        "scenario": scenario,
        "duration_s": _duration("--duration", duration),
        "ramp_up_s": _duration("--ramp-up", ramp_up, zero=True),
        "users": users,
        "label": label,
        "faults": [_fault_window(f) for f in fault],
    }
    if not fast and engine is not None:
        fail("--engine: a real-time run uses the live exporter's (wlmon exporter --engine)")
    try:
        spec = (
            RunSpec(**plan, seed=seed, engine=engine or RUN_ENGINE)
            if fast
            else RealtimeRunRequest(**plan, mode="realtime")
        )
    except ValidationError as exc:
        fail(_explain(exc, fault))
    if not fast:
        # The stack's API where `wlmon up` put it (WLMON_PORT_API), not a fixed 8000 that
        # may be another server, which would be sent the token.
        api_url = api_url or f"http://127.0.0.1:{Ports().api}"
        print(_realtime_run(api_url, spec.model_dump(mode="json")))
        return
    store = runs_store()
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
            with storing(store):
                run = runs.record_fast(
                    store, spec, progress=lambda done, total: progress.update(task, completed=done)
                )
        except ServiceError as exc:
            fail(str(exc))
    print(run.id)


def _detail(r: httpx.Response) -> str:
    """The API's message, or the start of whatever answered instead (a proxy's page)."""
    try:
        return str(r.json().get("detail", r.text))
    except ValueError:
        return r.text[:300]


def _api_token() -> str:
    """WLMON_API_TOKEN, else the token `wlmon up` generated into the state's secrets."""
    settings = StackSettings()
    token = settings.api_token.get_secret_value().strip() if settings.api_token else ""
    stored = settings.state_dir / "secrets" / "api-token"
    if not token and stored.is_file():
        token = stored.read_text().strip()
    if not token:
        fail(
            f"set WLMON_API_TOKEN: the API refuses runs without it "
            f"(`wlmon up` keeps it in {stored})"
        )
    return token


def _realtime_run(api_url: str, body: dict) -> str:
    token = _api_token()
    try:
        r = httpx.post(
            f"{api_url}/runs",
            json=body,
            headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        )
    except httpx.InvalidURL as exc:
        fail(f"--api-url: {exc}")
    except httpx.HTTPError as exc:
        fail(f"cannot reach the API at {api_url}: {exc}")
    if r.status_code != 202:
        fail(f"the API refused the run ({r.status_code}): {_detail(r)}")
    run = _run_answer(r)
    err.print(f"run {run.id} started; it ends at {run.end.isoformat()}")
    with Progress(
        TextColumn("real-time run"), BarColumn(), TimeElapsedColumn(), console=err
    ) as progress:
        start = run.start
        task = progress.add_task("run", total=(run.end - start).total_seconds())
        while run.status == "running":
            time.sleep(2)
            progress.update(task, completed=(datetime.now(UTC) - start).total_seconds())
            try:
                r = httpx.get(f"{api_url}/runs/{run.id}", timeout=30)
            except httpx.HTTPError as exc:
                fail(f"lost the API at {api_url} during run {run.id} (it goes on): {exc}")
            if r.status_code != 200:
                fail(f"the API answered {r.status_code} about run {run.id}: {_detail(r)}")
            run = _run_answer(r)
    if run.status == "failed":
        fail(f"run {run.id} failed: {run.message}")
    note = f": {run.message}" if run.message else ""
    err.print(escape(f"run {run.id} {run.status}{note}"))
    return run.id


def _run_answer(r: httpx.Response) -> Run:
    """The API's answer about a run, read as the schema it is sent by."""
    try:
        return Run.model_validate(r.json())
    except (ValueError, ValidationError) as exc:
        fail(f"the API's answer about the run is not a run: {exc}")


@app.command("runs")
def runs_command(as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """List the stored runs, newest first: id, source, label, window (UTC) and status."""
    page = runs_store().runs.list()
    rows = page.rows
    for bad in page.unreadable:  # listed without it, and said which and why
        err.print(escape(f"run {bad.id} cannot be read, left out: {bad.reason}"))
    if as_json:
        # As GET /runs answers them, less the dashboard links (a terminal opens none).
        print(
            json.dumps(
                [Run.model_validate(r).model_dump(mode="json", exclude_unset=True) for r in rows],
                indent=2,
            )
        )
        return
    if not rows:
        console.print(escape(f"No runs in {get_settings().db_path}."))
        return
    table = Table(title=escape(f"Runs in {get_settings().db_path}"))
    for col in ("id", "kind", "source", "label", "start (UTC)", "end (UTC)", "status"):
        table.add_column(col)
    for run in rows:
        # Labels, sources (an import's file name) and notes are the user's text.
        table.add_row(
            escape(run.id),
            escape(run.kind),
            escape(run.scenario),
            escape(run.label),
            f"{run.start:%Y-%m-%d %H:%M:%S}",
            f"{run.end:%Y-%m-%d %H:%M:%S}",
            escape(run.status + (f" ({run.message})" if run.message else "")),
        )
    console.print(table)


@app.command("delete")
def delete_command(
    run_ids: list[str] = typer.Argument(..., help="run ids (wlmon run prints them)"),
) -> None:
    """Delete runs and their data from the runs database (a run in progress is refused:
    cancel it first). The API's retention (WLMON_API_RUN_RETENTION_DAYS) prunes old ones."""
    store = runs_store()
    for run_id in run_ids:
        try:
            with storing(store):
                runs.delete_run(store, run_id)
        except ServiceError as exc:
            fail(f"{run_id}: {exc}")
        console.print(f"deleted {escape(run_id)}")


@app.command("report")
def report_command(
    run_id: str = typer.Argument(..., help="run id (wlmon run prints it)"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
    html_out: Path | None = typer.Option(None, "--html", help="write the HTML report to this file"),
    top: int = typer.Option(20, "--top", min=1, help="rows of the transaction profile"),
    interval: str = typer.Option("1h", "--interval", help="the time profile's interval"),
    csv_dir: Path | None = typer.Option(
        None, "--csv", help="also write every series as CSV into this directory"
    ),
) -> None:
    """The report of a stored run: ST03 with percentiles, the transaction and time
    profiles, OS counters, breaches, SQL, benchmark checks."""
    options = {"top": top, "interval_s": _duration("--interval", interval), **report_options()}
    store = runs_store()
    levels = thresholds()
    try:
        run, data = reports.load(store, run_id)
    except ServiceError as exc:
        fail(f"{exc} in {get_settings().db_path}")
    if csv_dir is not None:
        target = csv_dir / f"{run_id}-series.csv"
        try:
            csv_dir.mkdir(parents=True, exist_ok=True)
            with target.open("w", encoding="utf-8", newline="") as out:
                reports.write_series_csv(run, data, out)
        except OSError as exc:
            fail(f"--csv: cannot write {target}: {exc.strerror or exc}")
        err.print(f"wrote {target}")
    if html_out:
        with Progress(
            TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(), console=err
        ) as bar:
            task = bar.add_task("building report", total=3)
            doc = reports.report_of(store, run, data, levels, **options)
            bar.update(task, advance=1, description="rendering HTML")
            page = render(doc, data, levels)
            bar.update(task, advance=1, description=f"writing {html_out}")
            try:
                html_out.write_text(page, encoding="utf-8")
            except OSError as exc:
                fail(f"--html: cannot write {html_out}: {exc.strerror or exc}")
            bar.update(task, advance=1, description=f"wrote {html_out}")
        return
    doc = reports.report_of(store, run, data, levels, **options)
    if as_json:
        # The document GET /runs/{id}/report answers (the run's times as the API writes them).
        answer = reports.answer(doc).model_dump(mode="json", exclude_unset=True, by_alias=True)
        print(json.dumps(answer, indent=2))
        return
    _print_run_report(doc, levels)


def _ms(row: dict, comp: str) -> str:
    value = row.get(f"{comp}_ms")
    return "–" if value is None else f"{value:,.1f}"


def _part_columns(table: Table) -> None:
    """The response and the parts it adds up to, in ms per step (vocabulary's order)."""
    for comp in ("response", *RESPONSE_PARTS):
        table.add_column(f"{COMPONENT_BY_KEY[comp].label} ms", justify="right")


def _part_cells(row: dict) -> list[str]:
    return [_ms(row, comp) for comp in ("response", *RESPONSE_PARTS)]


def _print_gaps(doc: dict) -> None:
    """Where the data has holes: a report averaging over one would read a quiet system."""
    for g in doc.get("gaps") or []:
        kind = "exporter down" if g["kind"] == EXPORTER_DOWN else "no data"
        console.print(
            f"[yellow]gap[/]: {kind} {g['duration_s']:,.0f} s, {g['start']} to {g['end']}"
        )
    message = doc["run"].message
    if message:
        console.print(f"run notes: {escape(message)}")


def _print_percentiles(pct: dict) -> None:
    if not pct["by_task_type"]:
        console.print(escape(pct["missing"]))
        return
    quantiles = ("p50", "p90", "p95", "p99")
    p_table = Table(title="Response-time percentiles (s), from the histogram")
    for c in ("task type", "transaction", "steps", *quantiles, "precision"):
        p_table.add_column(
            c, justify="left" if c in ("task type", "transaction", "precision") else "right"
        )
    rows = [(r, "all") for r in pct["by_task_type"]]
    rows += [(r, r["transaction"]) for r in pct.get("by_transaction", [])]
    for row, tx in rows:
        p_table.add_row(
            escape(row["task_type"]),
            escape(tx),  # an import's transaction names
            f"{row['steps']:,}",
            *[f"{row[f'{p}_s']:.3f}" for p in quantiles],
            row["precision"],
        )
    console.print(p_table)
    if pct.get("by_transaction_missing"):
        console.print(escape(pct["by_transaction_missing"]))


def _print_profiles(doc: dict) -> None:
    tx_table = Table(title="Transaction profile (ST03N): top by total response time")
    for c in ("#", "task type", "transaction", "steps", "total s", "share %"):
        tx_table.add_column(c, justify="right")
    _part_columns(tx_table)
    for row in doc["transaction_profile"]:
        tx_table.add_row(
            str(row["rank"]),
            escape(row["task_type"]),
            escape(row["transaction"]),
            f"{row['steps']:,}",
            "–" if row["total_response_s"] is None else f"{row['total_response_s']:,.1f}",
            "–" if row["share_pct"] is None else f"{row['share_pct']:.2f}",
            *_part_cells(row),
        )
    console.print(
        tx_table
        if doc["transaction_profile"]
        else "Transaction profile: no per-transaction ST03 data in this run."
    )
    profile = doc["time_profile"]
    if len({r["start_s"] for r in profile["rows"]}) == 1:
        # One interval (an ST03N overview of its period): the ST03 table above, again.
        console.print("Time profile: one interval, the ST03 table above.")
        return
    time_table = Table(
        title=f"Time profile (ST03N): per {profile['interval_s']:,g} s of the steady state"
    )
    for c in ("from s", "to s", "task type", "steps"):
        time_table.add_column(c, justify="right")
    _part_columns(time_table)
    for row in profile["rows"]:
        time_table.add_row(
            f"{row['start_s']:,.0f}",
            f"{row['end_s']:,.0f}",
            escape(row["task_type"]),
            f"{row['steps']:,}",
            *_part_cells(row),
        )
    console.print(time_table if profile["rows"] else "Time profile: no ST03 data in this run.")


def _print_faults_and_apdex(doc: dict) -> None:
    """The faults the run injected, its window, and APDEX per task type."""
    w = doc.get("window") or {}
    if w.get("start_utc"):
        local = f"; {w['start_local']} to {w['end_local']} ({w['zone']})" if w.get("zone") else ""
        console.print(f"Window: {w['start_utc']} to {w['end_utc']} (UTC){local}")
    for f in doc.get("faults") or []:
        console.print(
            f"Fault injected: {escape(f['name'])} {f['start_s']:,.0f}-{f['end_s']:,.0f} s "
            f"({f['start']} to {f['end']})"
        )
    apdex = doc.get("apdex") or {}
    rows = [r for r in apdex.get("rows", []) if r["transaction"] is None]
    if rows:
        scores = ", ".join(f"{r['task_type']} {r['apdex']:.3f}" for r in rows)
        console.print(f"APDEX (T = {apdex['t_s']:g} s): {scores}")


# Labels of the ST03 fields beyond the vocabulary's components (report keys).
ST03_LABELS = {
    "wp_time_ms": "Time in WPs ms",
    "roll_wait_ms": "Roll wait ms",
    "roll_in_wait_ms": "Roll-in+wait ms",
    "load_ms": "Load ms",
    "generation_ms": "Generation ms",
    "frontend_net_ms": "Frontend net ms",
    "db_procedure_ms": "DB procedure ms",
    "rfc_ms": "RFC+CPIC ms",
    "db_time_per_request_ms": "DB ms per request",
    "db_requests": "DB requests",
    "memory_kb": "Memory KB",
    "extended_memory_kb": "Ext. memory KB",
    "transferred_kb": "Transferred KB",
}
TABLE_WIDTH = 80  # the ST03 table fits an 80-column terminal: task types in chunks


def _st03_fields(rows: list[dict]) -> list[tuple[str, str]]:
    """(report key, label) of every field some row has a value for, in report order: what
    the file had, nothing it had not."""
    keys = [f"{c}_ms" for c in REPORT_ORDER] + list(ST03_LABELS)
    out = []
    for key in keys:
        if any(r.get(key) is not None for r in rows):
            comp = key.removesuffix("_ms")
            label = f"{COMPONENT_BY_KEY[comp].label} ms" if comp in COMPONENT_BY_KEY else None
            out.append((key, label or ST03_LABELS[key]))
    return out


def _value(row: dict, key: str) -> str:
    value = row.get(key)
    if value is None:
        return "–"
    return f"{value:,.0f}" if key == "db_requests" else f"{value:,.1f}"


def st03_tables(doc: dict, width: int = TABLE_WIDTH) -> list[Table]:
    """The ST03 summary as field rows by task-type columns, as many task types per table
    as fit `width` columns, every field the run has (none it lacks)."""
    rows = doc["st03"]
    fields = [("steps", "Steps"), *_st03_fields(rows)]
    label_w = max(len(label) for _, label in fields)
    cells = {
        r["task_type"]: [f"{r['steps']:,}"] + [_value(r, k) for k, _ in fields[1:]] for r in rows
    }
    chunks: list[list[str]] = [[]]
    used = label_w + 4  # the label column with its border and padding
    for task, values in cells.items():
        w = max(len(task), *(len(v) for v in values)) + 3
        if chunks[-1] and used + w > width:
            chunks.append([])
            used = label_w + 4
        chunks[-1].append(task)
        used += w
    ss = doc["steady_state"]
    title = f"Run {escape(doc['run'].id)} — steady state {ss['start_s']:.0f}-{ss['end_s']:.0f} s"
    tables = []
    for k, tasks in enumerate(chunks):
        table = Table(title=title if k == 0 else None, width=None)
        table.add_column("ST03 (mean per step)", no_wrap=True)
        for task in tasks:
            table.add_column(escape(task), justify="right", no_wrap=True)
        for i, (_, label) in enumerate(fields):
            table.add_row(label, *[cells[t][i] for t in tasks])
        tables.append(table)
    return tables


def _print_warnings(doc: dict) -> None:
    """How the data was read, before any figure: what a reader must see first."""
    for warning in doc.get("warnings") or []:
        console.print(f"[yellow]warning[/]: {escape(warning)}", highlight=False)


def _print_run_report(doc: dict, levels: Thresholds) -> None:
    _print_warnings(doc)
    _print_gaps(doc)
    _print_faults_and_apdex(doc)
    # A section without data is one line, not an empty table (PerfMon imports have no
    # ST03, ST03 exports no OS counters).
    if doc["st03"]:
        for table in st03_tables(doc, min(console.width, TABLE_WIDTH)):
            console.print(table)
    else:
        console.print("ST03: no ST03 data in this run.")
    _print_percentiles(doc["percentiles"])
    _print_profiles(doc)
    os_table = Table(title="OS counters (average / minimum / maximum)")
    for c in ("host", "counter", "avg", "min", "max"):
        os_table.add_column(c, justify="right")
    for row in doc["os_counters"]:
        os_table.add_row(
            escape(row["host"]),  # a PerfMon capture's hosts and counters
            escape(row["counter"]),
            f"{row['avg']:,.3f}",
            f"{row['min']:,.3f}",
            f"{row['max']:,.3f}",
        )
    console.print(os_table if doc["os_counters"] else "OS counters: none in this run.")
    for b in doc["breaches"]:
        console.print(
            f"[red]{b['rule']}[/] {b['start_s']:.0f}-{b['end_s']:.0f} s, "
            f"peak {b['peak_ms']:,.1f} ms (threshold {b['threshold_ms']:,.0f} ms): {b['diagnosis']}"
        )
    for t in doc.get("targets") or []:
        measured = "not measured" if t["measured_s"] is None else f"{human(t['measured_s'])} s"
        verdict = {True: "[green]passed[/]", False: "[bold red]failed[/]", None: "skipped"}
        console.print(
            f"target {escape(t['transaction'])} {t['statistic']}: {measured} "
            f"(target {human(t['target_s'])} s) {verdict[t['passed']]}",
            highlight=False,
        )
    sd = doc["benchmark"].get("sd", {})
    if sd:
        residual = sd["response_time_law"]["residual_pct"]
        law = f"{residual:+.2f} %" if residual is not None else "n/a (users unknown)"
        saps = f"not measured ({sd['not_measured']})" if sd["saps"] is None else f"{sd['saps']:,}"
        bound = levels.seconds(DIALOG_RESPONSE)
        if sd["dialog_response_s"] is None:
            response = f"response not measured ({sd.get('response_not_measured', '')})"
        elif sd["think_time_s"] is None:
            response = (
                f"response {sd['dialog_response_s']:.3f} s (< {bound:g} s not judged: think "
                "time unknown; wlmon check --think-time)"
            )
        else:
            response = (
                f"response {sd['dialog_response_s']:.3f} s "
                f"(< {bound:g} s: {sd['dialog_response_below_2s']})"
            )
        console.print(
            escape(f"SD: {response}, SAPS {saps}, response-time law residual {law}"),
            highlight=False,
        )


def _import(file: Path, label: str, kind: Kind, store_file) -> None:
    """Stream `file` into `store_file`; prints the run id, or an error line naming the file.
    The API's size and row limits first (WLMON_API_*_MAX_BYTES/_ROWS): a file over them is
    refused before it is parsed, as an upload is."""
    try:
        limit = limits(get_settings(), kind)
    except ValidationError as exc:
        fail(f"the WLMON_API_ settings are wrong: {exc.errors()[0]['msg']}")
    try:
        if file.is_file():  # a pipe's rows cannot be counted without consuming them
            limit.check_size(file.stat().st_size)
            limit.check_rows(file)
        with file.open("rb") as stream:
            store = runs_store()
            with storing(store):
                run = store_file(store, stream, label or file.name)
    except OSError as exc:
        fail(f"{file}: {exc.strerror or exc}")
    except ServiceError as exc:
        fail(f"{file}: {exc}")
    # The run id alone on stdout (scripts take it), then every warning of how the file was
    # read on stderr: nothing the report would say is hidden at import.
    print(run.id)
    for warning in runs_store().runs.data(run.id).meta.warnings or []:
        err.print(f"[yellow]warning[/]: {escape(warning)}", highlight=False)


@import_app.command("perfmon")
def import_perfmon(
    file: Path = typer.Argument(..., help="PerfMon CSV or TSV (typeperf, relog, logman)"),
    label: str = typer.Option("", help="a name for the run"),
    tz: str = typer.Option(
        "",
        "--tz",
        help="the machine's time zone (IANA, e.g. Europe/Berlin) for a console capture that "
        "names none",
    ),
) -> None:
    """Import a Windows Performance Monitor CSV into the API's database; prints the run id."""
    try:
        options = imports.st03_options(tz=tz)
    except ServiceError as exc:
        fail(f"{file}: {exc}")
    _import(
        file,
        label,
        "perfmon",
        lambda store, stream, name: imports.store_perfmon(store, stream, name, options.tz),
    )


@import_app.command("st03")
def import_st03(
    file: Path = typer.Argument(
        ..., help="ST03/ST03N export (tabs, ;, CSV or unconverted list; see docs/imports.md)"
    ),
    label: str = typer.Option("", help="a name for the run"),
    start: str = typer.Option(
        "", "--from", help="start of the period the export covers (2026-11-25T10:00)"
    ),
    end: str = typer.Option("", "--to", help="end of the period (with --from)"),
    period: str = typer.Option("", help="the period's length (1h, 90min, 3600s, PT1H)"),
    task_type: str = typer.Option(
        "", help="task type of a file without a task-type column (e.g. DIALOG)"
    ),
    decimal: str = typer.Option("", help="point or comma, when no cell of the file tells"),
    tz: str = typer.Option(
        "",
        "--tz",
        help="the SAP system's time zone (IANA, e.g. Europe/Berlin): the period is stored in "
        "UTC and shown in both; without it the local time is taken as UTC",
    ),
    perfmon_file: Path | None = typer.Option(
        None,
        "--perfmon",
        help="a PerfMon capture of the same hours, joined into the run; refused when the "
        "windows do not overlap",
    ),
) -> None:
    """Import an ST03 workload export into the API's database; prints the run id. Without a
    period (in the file or given), throughput, SAPS and BAIT are 'not measured'."""
    try:
        options = imports.st03_options(start, end, period, task_type, decimal, tz)
    except ServiceError as exc:
        fail(f"{file}: {exc}")
    _import(
        file,
        label,
        "st03",
        lambda store, stream, name: _joined(
            perfmon_file,
            lambda capture: imports.store_st03(store, stream, name, options, capture),
        ),
    )


def _joined(perfmon_file: Path | None, store_file):
    """`store_file(capture)` with the --perfmon file open (None without one)."""
    if perfmon_file is None:
        return store_file(None)
    try:
        capture = perfmon_file.open("rb")
    except OSError as exc:
        fail(f"--perfmon: cannot read {perfmon_file}: {exc.strerror or exc}")
    with capture:
        return store_file(capture)


@import_app.command("stad")
def import_stad(
    file: Path = typer.Argument(
        ..., help="STAD/STATS export, one record per step (XLSX, tabs, ;, CSV, HTML, MHTML)"
    ),
    label: str = typer.Option("", help="a name for the run"),
    start: str = typer.Option(
        "", "--from", help="start of the analysed period, when the file does not say it"
    ),
    end: str = typer.Option("", "--to", help="end of the period (with --from)"),
    decimal: str = typer.Option("", help="point or comma, when no cell of the file tells"),
    tz: str = typer.Option(
        "", "--tz", help="the SAP system's time zone (IANA, e.g. Europe/Berlin)"
    ),
    target_file: Path | None = typer.Option(
        None,
        "--targets",
        help="target response per transaction (CSV/XLSX: TCODE, Target Response Time "
        "(Seconds), optionally Statistic mean/p90/p95)",
    ),
    perfmon_file: Path | None = typer.Option(
        None,
        "--perfmon",
        help="a PerfMon capture of the same hours, joined into the run (CPU, memory, disk, "
        "network beside throughput); refused when the windows do not overlap",
    ),
) -> None:
    """Import a STAD export (statistical records of single steps) into the API's database;
    prints the run id, then every warning. Percentiles are exact (every step)."""
    try:
        options = imports.st03_options(start, end, None, None, decimal, tz)
    except ServiceError as exc:
        fail(f"{file}: {exc}")
    sheet = None
    if target_file is not None:
        try:
            sheet = target_file.read_bytes()
        except OSError as exc:
            fail(f"--targets: cannot read {target_file}: {exc.strerror or exc}")
    # STAD's own limits (WLMON_API_STAD_MAX_BYTES, _MAX_ROWS), sized for a million steps.
    _import(
        file,
        label,
        "stad",
        lambda store, stream, name: _joined(
            perfmon_file,
            lambda capture: imports.store_stad(store, stream, name, options, sheet, capture),
        ),
    )
