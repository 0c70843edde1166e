"""What every command group shares: the consoles, the error exit and the solver's warnings
(light: `wlmon whatif` and `simulate` import it; what reads the API's settings and the runs
database is in `wlmon.cli.edge`)."""

from __future__ import annotations

import math
import textwrap
from typing import TYPE_CHECKING, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.text import Text

if TYPE_CHECKING:  # the annotation only: every command imports this module
    from landscape_model.engine import UnconvergedSolve

console = Console()
err = Console(stderr=True)
INDENT = "  "  # continuation lines of a warning


def fail(message: str) -> NoReturn:
    """Print an error naming what was wrong and exit 2 (bad input), never a traceback."""
    # Escaped: a message quotes what it was given ("a[/x]" would be a closing tag to rich,
    # a traceback instead of the error; "[x]" a style, silently dropped).
    # One line however long (soft_wrap): a script reading stderr gets the whole message.
    err.print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True)
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


def human(value: float | None) -> str:
    """A figure for people: thousands separated, no exponent (29,050, not 2.905e+04), about
    four significant digits below 1,000 and no trailing zeros; a dash for none."""
    if value is None:
        return "–"
    size = abs(value)
    if size >= 1000 or value == int(value):
        return f"{value:,.0f}"
    decimals = 3 if size >= 1 else min(12, 3 - math.floor(math.log10(size)))
    text = f"{value:,.{decimals}f}".rstrip("0")
    return text.rstrip(".")
