"""`wlmon compare A B`: two stored runs figure by figure, as GET /runs/compare answers."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from api.config import get_settings
from api.runs.html import render_compare
from api.services import reports
from api.services.errors import ServiceError
from wlmon.cli.common import console, err, fail, human
from wlmon.cli.edge import report_options, runs_store, thresholds

app = typer.Typer()
VERDICT_STYLE = {"same": "", "better": "green", "worse": "bold red"}


@app.command("compare")
def compare_command(
    base: str = typer.Argument(..., help="the base run's id"),
    new: str = typer.Argument(..., help="the new run's id"),
    tolerance: list[str] = typer.Option(
        [], "--tolerance", help="FIGURE=PERCENT, e.g. dialog_p95_s=10 (default 5, seed 001)"
    ),
    html_out: Path | None = typer.Option(None, "--html", help="write the side-by-side page"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """Compare two runs: each figure both have side by side, the delta and the verdict
    within the tolerance (5 % unless given: seed 001's repeatability)."""
    store = runs_store()
    try:
        tolerances = reports.parse_tolerances(tolerance)
        a, b, doc = reports.compare_reports(
            store, base, new, thresholds(), tolerances, **report_options()
        )
    except ServiceError as exc:
        fail(f"{exc} in {get_settings().db_path}")
    if html_out is not None:
        try:
            html_out.write_text(render_compare(a, b, doc), encoding="utf-8")
        except OSError as exc:
            fail(f"--html: cannot write {html_out}: {exc.strerror or exc}")
        err.print(f"wrote {html_out}")
        return
    if as_json:
        print(json.dumps(doc, indent=2))
        return
    table = Table(title=escape(f"{base} (base) → {new} (new)"))  # run ids as typed
    for name in ("Figure", "Base", "New", "Delta %", "Tolerance %", "Verdict"):
        table.add_column(name, justify="left" if name in ("Figure", "Verdict") else "right")
    for f in doc["figures"]:
        table.add_row(
            escape(f["figure"]),
            human(f["base"]),
            human(f["new"]),
            f"{f['delta_pct']:+,.2f}" if f["delta_pct"] is not None else "from 0",
            f"{f['tolerance_pct']:g}",
            f"[{VERDICT_STYLE[f['verdict']]}]{f['verdict']}[/]"
            if f["verdict"] != "same"
            else "same",
        )
    console.print(table)
    for key, run in (("only_in_base", base), ("only_in_new", new)):
        if doc.get(key):
            shown = ", ".join(f"{f['figure']} {human(f['value'])}" for f in doc[key])
            console.print(escape(f"only in {run}: {shown}"), highlight=False)
    verdict = "repeatable" if doc["repeatable"] else "not repeatable"
    console.print(f"{verdict}: {escape(doc['criterion'])}")
