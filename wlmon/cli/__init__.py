"""The `wlmon` command line: one module per command group, joined here.

A command's module is imported only when that command runs (or help lists it): the
modules behind `check`, `runs` and `serve` pull in FastAPI and the API's services, about
0.8 s that `wlmon whatif` and `wlmon simulate` do not need (issue 24 item 6).
"""

from __future__ import annotations

import importlib

import typer
import typer.main
from typer.core import TyperGroup

# Command -> (module under wlmon.cli, its Typer, whether the command is a group of its own).
_COMMANDS: dict[str, tuple[str, str, bool]] = {
    "faults": ("simulate", "app", False),
    "simulate": ("simulate", "app", False),
    "whatif": ("whatif", "app", False),
    "exporter": ("serve", "app", False),
    "api": ("serve", "app", False),
    "render-config": ("serve", "app", False),
    "run": ("runs", "app", False),
    "runs": ("runs", "app", False),
    "delete": ("runs", "app", False),
    "report": ("runs", "app", False),
    "import": ("runs", "import_app", True),
    "check": ("check", "app", False),
    "compare": ("compare", "app", False),
    "st05": ("st05", "app", True),
    "up": ("stack", "app", False),
    "down": ("stack", "app", False),
    "status": ("stack", "app", False),
    "stack": ("stack", "stack_app", True),
    "fleet": ("fleet", "app", True),
    "config": ("config", "config_app", True),
}


class _LazyGroup(TyperGroup):
    """Builds a command from its module on first use."""

    def list_commands(self, ctx) -> list[str]:
        return list(_COMMANDS)

    def get_command(self, ctx, cmd_name: str):
        if cmd_name not in _COMMANDS:
            return None
        if cmd_name not in self.commands:
            module, attr, own_group = _COMMANDS[cmd_name]
            sub = getattr(importlib.import_module(f"wlmon.cli.{module}"), attr)
            group = typer.main.get_group(sub)
            if own_group:
                group.name = cmd_name
                self.commands[cmd_name] = group
            else:
                self.commands[cmd_name] = group.commands[cmd_name]
        return self.commands[cmd_name]


app = typer.Typer(
    cls=_LazyGroup,
    help="wlmon: workload monitoring for SAP-style ERP landscapes.",
    no_args_is_help=True,
)


@app.callback()
def _main() -> None:
    """wlmon: workload monitoring for SAP-style ERP landscapes."""
