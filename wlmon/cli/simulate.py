"""`wlmon faults` and `wlmon simulate`: the model in fast mode."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

import typer
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from alerts.thresholds import ThresholdsError, load_thresholds
from exporters.durations import parse_duration
from exporters.thresholds import Thresholds
from exporters.vocabulary import INDICATORS
from landscape_model.catalog import Catalog, ConfigError
from landscape_model.config import Scenario
from landscape_model.engines import ENGINE_HELP, ENGINES, RUN_ENGINE, make_simulation
from landscape_model.summary import SUMMARY_FIELDS, report
from landscape_model.whatif import check_solvable
from wlmon.cli.common import console, err, fail, warn_unconverged_solves

app = typer.Typer()


@app.command()
def faults(as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """List the faults that can be injected into a scenario."""
    try:
        items = Catalog().faults()
    except ConfigError as exc:
        fail(str(exc))
    if as_json:
        print(json.dumps([{"name": f.name, "description": f.description} for f in items], indent=2))
        return
    table = Table(title="Faults")
    for col in ("name", "indicator", "description", "source"):
        table.add_column(col)
    for f in items:
        # The faults' YAML (a data directory's own): its text printed as written.
        table.add_row(*(escape(str(v)) for v in (f.name, f.indicator, f.description, f.source)))
    console.print(table)


LANDSCAPE_HELP = "a landscape YAML file (as data/landscapes/*.yml) to run the scenario on"
DATA_DIR_HELP = "a data directory with scenarios/, landscapes/ and faults/ of your own"
SET_HELP = (
    "set any field of the scenario document, e.g. users=3000, "
    "landscape.database.disks.kind=ssd, landscape.database.bufferpools.MIX4K.pages=84000 "
    "(repeatable)"
)


def open_catalog(data_dir: Path | None) -> Catalog:
    if data_dir is None:
        return Catalog()
    if not (data_dir / "scenarios").is_dir():
        fail(f"--data-dir {data_dir}: no scenarios/ directory in it")
    return Catalog(data_dir)


# A run answers in about a minute: the DES runs an SD-benchmark hour (5,790 users) in
# 2.4-2.7 s CPU and its cost grows with users x seconds; the analytic engine an hour in
# about 6 s, and each of its solves with the users of an instance (whatif.check_solvable).
MAX_RUN_S = 86_400
MAX_DES_USER_SECONDS = 500_000_000


def _check_size(engine: str, scenario: Scenario, seconds: float) -> None:
    """A ConfigError naming the limit where the run would not answer in about a minute."""
    if engine == "analytic":
        check_solvable(scenario)
    elif scenario.users * seconds > MAX_DES_USER_SECONDS:
        raise ConfigError(
            f"users={scenario.users:,} for {seconds:,.0f} s: the discrete-event engine runs "
            f"at most {MAX_DES_USER_SECONDS:,} user-seconds (about a minute), "
            "shorten --duration or use --engine analytic"
        )


@app.command()
def simulate(
    scenario: str = typer.Option("sd-benchmark-2003", help="scenario name"),
    duration: str = typer.Option("1h", help="simulated time, e.g. 15m, 1h"),
    fault: list[str] = typer.Option([], "--fault", help="fault to inject (repeatable)"),
    seed: int = typer.Option(1, help="random seed; the same seed gives the same numbers"),
    landscape: Path = typer.Option(None, "--landscape", help=LANDSCAPE_HELP),
    data_dir: Path = typer.Option(None, "--data-dir", help=DATA_DIR_HELP),
    setting: list[str] = typer.Option([], "--set", help=SET_HELP),
    engine: str = typer.Option(RUN_ENGINE, "--engine", help=ENGINE_HELP, show_default=False),
    as_json: bool = typer.Option(False, "--json", help="print one JSON document"),
) -> None:
    """Simulate a run in fast mode and print the ST03 summary and the calibration."""
    if engine not in ENGINES:
        fail(f"--engine: {engine!r} is not one of {', '.join(ENGINES)}")
    try:
        # Read here at the edge, before the run: a wrong file is one line, not a lost run.
        limits = load_thresholds()
    except ThresholdsError as exc:
        fail(str(exc))
    try:
        seconds = parse_duration(duration)
    except ValueError as exc:
        fail(f"--duration: {exc}")
    # The engines step a second at a time (0.5s ran 0 s, 1.5s 2 s).
    if not seconds.is_integer():
        fail(f"--duration {duration}: whole seconds (the engines step 1 s at a time)")
    if seconds > MAX_RUN_S:
        fail(f"--duration {duration}: at most {MAX_RUN_S // 3600} h (about a minute's run)")
    try:
        catalog = open_catalog(data_dir)
        # Sized before the engine is built: the analytic one solves as it starts.
        _check_size(
            engine,
            catalog.scenario(scenario, fault, landscape=landscape, settings=setting),
            seconds,
        )
        sim = make_simulation(
            engine,
            scenario,
            faults=fault,
            seed=seed,
            catalog=catalog,
            landscape=landscape,
            settings=setting,
        )
    except (ConfigError, ValueError) as exc:
        fail(str(exc))
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
        task = progress.add_task(escape(scenario), total=seconds)
        sim.run(
            seconds, progress=lambda done, total: progress.update(task, completed=done * sim.dt)
        )
    # Which engine made the figures: they differ by a few % (docs/model.md), and the
    # default is the discrete-event one (engines.RUN_ENGINE).
    doc = {"engine": engine, **report(sim.snapshot(), sim.scenario)}
    # The analytic engine's solves that did not reach their fixed point (none on the DES).
    doc["unconverged"] = [asdict(solve) for solve in sim.unconverged]
    warn_unconverged_solves(scenario, sim.unconverged)
    if as_json:
        print(json.dumps(doc, indent=2))
        return
    _print_report(doc, limits)


def _summary_table(title: str, summary: list[dict]) -> Table:
    """ST03's layout, a task type per row with every time component, where the terminal is
    wide enough (about 130 columns); else turned a quarter (a component per row, a task
    type per column), so that no column collapses into an ellipsis at 80 columns."""

    def cell(value) -> str:
        if isinstance(value, float):
            return f"{value:,.1f}"
        return f"{value:,}" if isinstance(value, int) else str(value)

    def label(c: str) -> str:
        return c.removesuffix("_ms") + (" (ms)" if c.endswith("_ms") else "")

    # Every time component of the summary rows, in the vocabulary's report order.
    cols = ["task_type", "steps", *SUMMARY_FIELDS]
    table = Table(title=title)
    for c in cols:
        table.add_column(label(c), justify="right")
    for row in summary:
        table.add_row(*[cell(row[c]) for c in cols])
    wide = console.measure(table, options=console.options.update_width(10_000))
    if wide.maximum <= console.width:
        return table
    narrow = Table(title=title)
    narrow.add_column("")
    for row in summary:
        narrow.add_column(str(row["task_type"]), justify="right")
    for c in cols[1:]:
        narrow.add_row(label(c), *[cell(row[c]) for row in summary])
    return narrow


def _print_report(doc: dict, limits: Thresholds) -> None:
    # Names, notes and the landscape's hosts and instances come from the user's files and
    # options: printed escaped, as written ("[/b]" is a closing tag to rich, "[b]" a style).
    faults_text = ", ".join(doc["faults"]) or "none"
    title = escape(
        f"ST03 workload summary — {doc['scenario']} "
        f"({doc['duration_s']:.0f} s, {doc['engine']} engine, faults: {faults_text})"
    )
    console.print(_summary_table(title, doc["summary"]))
    dialog = next(r for r in doc["summary"] if r["task_type"] == "dialog")
    ind = Table(title="Whitepaper thresholds (dialog, seed 000 §4.3.5.1)")
    for c in ("indicator", "value (ms)", "threshold (ms)", "state"):
        ind.add_column(c, justify="right")
    for i in INDICATORS:
        value, limit = dialog[f"{i.component}_ms"], 1000 * limits.seconds(i)
        state = "[red]breach[/]" if value > limit else "[green]ok[/]"
        ind.add_row(i.label, f"{value:,.1f}", f"{limit:,.0f}", state)
    console.print(ind)
    if doc["calibration"]:
        _print_calibration(doc["calibration"])
    else:  # a landscape other than seed 000's has no Table 5 to compare (no empty table)
        console.print("Calibration: this scenario has no seed 000 Table 5 figures to compare.")
    law = doc["response_time_law"]
    console.print(
        f"Response-time law X = N/(R+Z): measured {law['measured_steps_per_s']:.2f} steps/s, "
        f"law {law['law_steps_per_s']:.2f} steps/s, residual {law['residual_pct']:+.3f} %"
    )
    for text in doc["bent"]:
        console.print(f"[yellow]bent:[/] {escape(text)}")
    _print_instances(doc["instances"])
    _print_cpu_stations(doc["cpu_stations"])


def _print_calibration(rows: list[dict]) -> None:
    """Paper against model per figure, and what fitted or derives it. Where that does not fit
    the terminal (the explanations are sentences), the table keeps the figures and each
    explanation follows it on a line of its own, so no figure is cut to an ellipsis."""
    sources = sorted({row["source"] for row in rows})
    title = escape("Calibration against " + (sources[0] if len(sources) == 1 else "the papers"))

    def table(explained: bool) -> Table:
        cal = Table(title=title)
        cols = ["figure", "paper", "model", "residual %"]
        cols += ["fitted by / derived"] * explained + ["source"] * (len(sources) > 1)
        for c in cols:
            cal.add_column(c, justify="right", no_wrap=c != "fitted by / derived")
        for row in rows:
            res = row["residual_pct"]
            colour = "green" if abs(res) <= 5 else "red"
            cells = [
                escape(row["figure"]),
                _figure(row["paper"]),
                _figure(row["model"]),
                f"[{colour}]{res:+.2f}[/]",
            ]
            cells += [escape(row.get("fitted_by", "predicted"))] * explained
            cells += [escape(row["source"])] * (len(sources) > 1)
            cal.add_row(*cells)
        return cal

    wide = table(explained=True)
    room = console.measure(wide, options=console.options.update_width(10_000))
    if room.maximum <= console.width:
        console.print(wide)
        return
    console.print(table(explained=False))
    for row in rows:
        console.print(escape(f"  {row['figure']}: {row.get('fitted_by', 'predicted')}"))


def _figure(value: float) -> str:
    """Counts and rates without decimals, ratios and seconds with three."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:,.3f}"


def _print_instances(rows: list[dict]) -> None:
    """Per instance, where instances differ: in work processes (a two-tier central
    instance) or by more than 5 % in response, above the sampling noise of a short run;
    --json has them all."""
    resp = [r["response_ms"] for r in rows if r["dialog_steps_per_s"] > 0]
    wps = {r["dialog_work_processes"] for r in rows}
    if len(resp) < 2 or (len(wps) == 1 and max(resp) <= 1.05 * min(resp)):
        return
    hosts = len({r["host"] for r in rows}) > 1
    table = Table(title="Dialog steps per instance (ms per step)")
    table.add_column("instance", no_wrap=True)
    if hosts:
        table.add_column("host", no_wrap=True)
    for h in ("WPs", "steps/s", "response", "wait", "DB"):
        table.add_column(h, justify="right")
    for r in rows:
        table.add_row(
            escape(r["instance"]),
            *([escape(r["host"])] if hosts else []),
            str(r["dialog_work_processes"]),
            f"{r['dialog_steps_per_s']:,.1f}",
            f"{r['response_ms']:,.0f}",
            f"{r['dispatcher_wait_ms']:,.0f}",
            f"{r['db_request_ms']:,.0f}",
        )
    console.print(table)


def _print_cpu_stations(rows: list[dict]) -> None:
    """Per CPU station, where tenants are pinned to cores (else a station is a host's
    cores, which the host's CPU already says); --json has them all."""
    if not any(r["cores"] is not None for r in rows):
        return
    table = Table(title="CPU per station (tenants pinned to cores)")
    table.add_column("station", no_wrap=True)
    table.add_column("cores", justify="right")
    table.add_column("tenants")
    table.add_column("CPU", justify="right", no_wrap=True)
    for r in rows:
        cores = r["cores"]
        table.add_row(
            escape(r["station"]),
            "all" if cores is None else ",".join(map(str, cores)),
            escape(", ".join(t.removeprefix("instance:") for t in r["tenants"]) or "-"),
            f"{100 * r['cpu_util']:.0f} %",
        )
    console.print(table)
