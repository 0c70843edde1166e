"""The `wlmon` command line: one module per command group, joined here."""

from __future__ import annotations

import typer

from wlmon.cli import check, compare, fleet, runs, serve, simulate, st05, stack, whatif

app = typer.Typer(
    help="wlmon: workload monitoring for SAP-style ERP landscapes.", no_args_is_help=True
)
app.add_typer(simulate.app)
app.add_typer(whatif.app)
app.add_typer(serve.app)
app.add_typer(runs.app)
app.add_typer(runs.import_app, name="import")
app.add_typer(check.app)
app.add_typer(compare.app)
app.add_typer(st05.app, name="st05")
app.add_typer(stack.app)
app.add_typer(stack.stack_app, name="stack")
app.add_typer(fleet.app, name="fleet")
