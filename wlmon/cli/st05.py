"""`wlmon st05 top`: the compressed SQL trace."""

from __future__ import annotations

import json

import typer
from rich.markup import escape
from rich.table import Table

from exporters.durations import parse_duration
from landscape_model.catalog import ConfigError
from landscape_model.engine import UnconvergedSolve
from landscape_model.engines import ENGINE_HELP, ENGINES, RUN_ENGINE
from wlmon.cli.common import console, fail, warn_unconverged_solves
from wlmon.st05top import from_prometheus, from_simulation, sql_texts

app = typer.Typer(help="ST05 SQL trace: the compressed summary.", no_args_is_help=True)


@app.command("top")
def st05_top(
    window: str = typer.Option("15m", help="time window, e.g. 15m"),
    prometheus: str = typer.Option(
        "http://127.0.0.1:9090", help="Prometheus to read the live counters from"
    ),
    simulate: bool = typer.Option(False, "--simulate", help="run the model for the window instead"),
    scenario: str = typer.Option(
        "sd-benchmark-2003", help="scenario (for --simulate and SQL texts)"
    ),
    fault: list[str] = typer.Option([], "--fault", help="fault to inject (with --simulate only)"),
    # None when not given, so that giving it without --simulate can be told from the default.
    engine: str | None = typer.Option(
        None, "--engine", help=f"with --simulate only: the model's engine. {ENGINE_HELP}"
    ),
    limit: int = typer.Option(20, help="statements to show"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """The compressed SQL trace sorted by elapsed DB time (seed 000 4.3.5.2)."""

    if not simulate:
        # What only a model run uses is an error without one, not silently dropped: the
        # user expected a simulated trace and would read Prometheus's as it.
        options = (("--fault", bool(fault)), ("--engine", engine is not None))
        given = [name for name, was_given in options if was_given]
        if given:
            verb = "applies" if len(given) == 1 else "apply"
            fail(f"{' and '.join(given)} {verb} only with --simulate")
    engine = RUN_ENGINE if engine is None else engine
    if engine not in ENGINES:
        fail(f"--engine: {engine!r} is not one of {', '.join(ENGINES)}")
    try:
        seconds = parse_duration(window)
    except ValueError as exc:
        fail(f"--window: {exc}")
    try:
        if simulate:
            unconverged: list[UnconvergedSolve] = []
            rows = from_simulation(scenario, fault, seconds, engine, unconverged)
            warn_unconverged_solves(scenario, unconverged)
        else:
            rows = from_prometheus(prometheus, window, sql_texts(scenario))
    except (ConfigError, ValueError) as exc:
        fail(str(exc))
    except RuntimeError as exc:
        fail(f"st05 top: {exc}")
    rows = rows[:limit]
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    table = Table(title=f"ST05 summary, last {escape(window)}, sorted by elapsed DB time")
    for col in ("elapsed ms", "executions", "records", "ms/exec", "table", "op", "statement"):
        table.add_column(col, justify="right" if col[0] in "emr" else "left")
    for r in rows:
        table.add_row(
            f"{r['elapsed_ms']:,.0f}",
            f"{r['executions']:,.0f}",
            f"{r['records']:,.0f}",
            f"{r['per_execution_ms']:,.2f}",
            # Prometheus's labels and the scenario's SQL, printed as written: SQL Server
            # quotes names in brackets ("[VBAP]"), which rich would read as a style.
            escape(r["table"]),
            escape(r["operation"]),
            escape(r["sql"]),
        )
    console.print(table)
