"""What every command group shares: the consoles, the error exit and the runs database."""

from __future__ import annotations

import sqlite3
import textwrap
from typing import TYPE_CHECKING, NoReturn

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from alerts.thresholds import ThresholdsError, load_thresholds
from api.config import get_settings
from api.store import Store
from exporters.thresholds import Thresholds

if TYPE_CHECKING:  # the annotation only: every command imports this module
    from exporters.model.engine import UnconvergedSolve

console = Console()
err = Console(stderr=True)
INDENT = "  "  # continuation lines of a warning


def fail(message: str) -> NoReturn:
    """Print an error naming what was wrong and exit 2 (bad input), never a traceback."""
    # Escaped: a message quotes what it was given ("a[/x]" would be a closing tag to rich,
    # a traceback instead of the error; "[x]" a style, silently dropped).
    err.print(f"[bold red]error:[/] {escape(message)}")
    raise typer.Exit(2)


def warn_unconverged(what: str, iterations: int, residual: float) -> None:
    """A few lines on stderr where the analytic solver's fixed point was not reached: its
    figures are printed all the same, but they are not the steady state they look like.

    Wrapped at word boundaries to the terminal's width (80 when not a terminal): the first
    line is `warning: not converged: <point>`, the details follow indented, so
    `grep '^warning: not converged'` finds every such point and `grep -A3` the whole."""
    width = max(err.width, 40)
    head = textwrap.wrap(
        f"warning: not converged: {what}",
        width,
        subsequent_indent=INDENT,
        break_on_hyphens=False,
    )
    body = textwrap.wrap(
        f"the solver's fixed point did not converge in {iterations:,} sweeps (residual "
        f"{residual:.3g}, the largest change one more sweep makes): its figures are not a "
        "steady state",
        width,
        initial_indent=INDENT,
        subsequent_indent=INDENT,
        break_on_hyphens=False,
    )
    # A Text, not markup: the point names the user's text ("a[/b]" would be a closing tag).
    text = Text("\n".join(head + body))
    text.stylize("bold yellow", 0, len("warning:"))
    err.print(text, soft_wrap=True)  # wrapped here already, with the indent rich lacks


def warn_unconverged_solves(scenario: str, solves: list[UnconvergedSolve]) -> None:
    """`warn_unconverged` for each solve of a run on the analytic engine (ModelRun.unconverged)
    that did not reach its fixed point, named by the scenario, its faults and its users."""
    for solve in solves:
        faults = ", ".join(solve.faults) or "no faults"
        what = f"{scenario} ({faults}), users={solve.users}"
        warn_unconverged(what, solve.iterations, solve.residual)


def thresholds() -> Thresholds:
    """alerts/thresholds.yml, read here at the edge for the services that judge runs by it,
    or exit 2 naming the file and the key that is wrong."""
    try:
        return load_thresholds()
    except ThresholdsError as exc:
        fail(str(exc))


def report_options() -> dict[str, float]:
    """The reports' settings beside the thresholds (WLMON_API_APDEX_T_S when set), read here
    at the edge as the API reads them in its routes."""
    t = get_settings().apdex_t_s
    return {} if t is None else {"apdex_t_s": t}


def runs_store() -> Store:
    """The runs database the API uses (WLMON_API_DB_PATH), or exit 2 naming what is wrong."""
    try:
        return Store(get_settings().db_path)
    except ValidationError as exc:
        fail(f"the WLMON_API_ settings are wrong: {exc.errors()[0]['msg']}")
    except (OSError, sqlite3.Error) as exc:
        fail(f"cannot open the API's database {get_settings().db_path}: {exc}")
