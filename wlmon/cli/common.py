"""What every command group shares: the consoles and the error exit."""

from __future__ import annotations

from typing import NoReturn

import typer
from rich.console import Console

console = Console()
err = Console(stderr=True)


def fail(message: str) -> NoReturn:
    """Print an error naming what was wrong and exit 2 (bad input), never a traceback."""
    err.print(f"[bold red]error:[/] {message}")
    raise typer.Exit(2)
