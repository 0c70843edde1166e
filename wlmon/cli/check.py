"""`wlmon check`: verdicts a CI pipeline gates on. Exit 0 when every criterion passes, 1
when one fails, 2 for bad input (an unknown run, an SLA file that is wrong)."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from api.config import get_settings
from api.runs.junit import junit_error, to_junit
from api.services import checks
from api.services.errors import Invalid, ServiceError
from wlmon.cli.common import console, fail, human
from wlmon.cli.edge import runs_store, thresholds

app = typer.Typer()
STATUS_STYLE = {"passed": "green", "failed": "bold red", "skipped": "yellow"}


@app.command("check")
def check_command(
    run_id: str = typer.Argument(..., help="run id (wlmon run prints it)"),
    sla: Path | None = typer.Option(None, "--sla", help="SLA file (YAML): bounds, tolerances"),
    baseline: str | None = typer.Option(None, "--baseline", help="run to compare with"),
    junit: Path | None = typer.Option(None, "--junit", help="write JUnit XML to this file"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
    think_time: float | None = typer.Option(
        None,
        "--think-time",
        min=0.0,
        max=3600.0,
        help="think time in s of a run that does not record it (an import): the SD check "
        "is judged only at a known think time",
    ),
) -> None:
    """Check a stored run: SD, whitepaper indicators, BAIT, an SLA file's bounds and the
    repeatability against a baseline. Exit 0 all pass, 1 one fails, 2 bad input."""
    text = ""
    if sla is not None:
        try:
            text = sla.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            message = f"--sla: cannot read {sla}: {getattr(exc, 'strerror', None) or exc}"
            # Every exit 2 leaves its JUnit file: CI shows the error, not a missing report.
            _write_junit(junit, junit_error(run_id, message))
            fail(message)
    store = runs_store()
    try:
        result = checks.check(store, run_id, thresholds(), text, baseline, think_time)
    except Invalid as exc:
        _write_junit(junit, junit_error(run_id, f"--sla {sla}: {exc}"))
        fail(f"--sla {sla}: {exc}")
    except ServiceError as exc:
        _write_junit(junit, junit_error(run_id, str(exc)))
        fail(f"{exc} in {get_settings().db_path}")
    _write_junit(junit, to_junit(result))
    if as_json:
        print(json.dumps(result, indent=2))
    else:
        _print(result)
    raise typer.Exit(0 if result["passed"] else 1)


def _write_junit(path: Path | None, text: str) -> None:
    """Written whenever there is a path, a bad input included: CI shows the error there."""
    if path is None:
        return
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(f"--junit: cannot write {path}: {exc.strerror or exc}")


def _print(result: dict) -> None:
    base = f" against {result['baseline']}" if result["baseline"] else ""
    table = Table(title=escape(f"Check of run {result['run']}{base}"))
    for col in ("criterion", "value", "bound", "status"):
        table.add_column(col, justify="left" if col == "criterion" else "right")
    for c in result["criteria"]:
        value = "–" if c["value"] is None else f"{human(c['value'])} {c['unit']}"
        style = STATUS_STYLE[c["status"]]
        table.add_row(
            escape(c["name"]),
            value,
            f"{c['op']} {human(c['bound'])} {c['unit']}",
            f"[{style}]{c['status']}[/]",
        )
    console.print(table)
    n = result["counts"]
    verdict = "[green]PASSED[/]" if result["passed"] else "[bold red]FAILED[/]"
    why = escape(f" ({result['message']})") if result.get("message") else ""
    console.print(
        f"{verdict}{why}: {n['passed']} passed, {n['failed']} failed, {n['skipped']} skipped"
    )
