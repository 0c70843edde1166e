"""`wlmon fleet list` and `wlmon fleet add`: the SIDs of the fleet profile (docs/fleet.md)."""

from __future__ import annotations

import typer
from pydantic import ValidationError
from rich.markup import escape
from rich.table import Table

from exporters.model.catalog import Catalog
from wlmon.cli.common import console, fail
from wlmon.stack.fleet import FleetError, FleetSid, add_sid, fleet_path, load_fleet
from wlmon.stack.settings import StackSettings

app = typer.Typer(help="The SIDs `wlmon up --profile fleet` watches.", no_args_is_help=True)


@app.command("list")
def fleet_list() -> None:
    """Each SID of the fleet file, its scenario and exporter."""

    settings = StackSettings()
    path = fleet_path(settings)
    try:
        fleet = load_fleet(path, Catalog().scenarios())
    except FleetError as exc:
        fail(str(exc))
    table = Table(title=escape(f"fleet ({path})"))
    for col in ("sid", "scenario", "users", "description"):
        table.add_column(col)
    for entry in fleet.sids:
        users = str(entry.users) if entry.users is not None else "scenario's"
        # The fleet file is the user's: its text printed as written.
        table.add_row(*(escape(v) for v in (entry.sid, entry.scenario, users, entry.description)))
    console.print(table)
    console.print(
        f"{fleet.prometheus_replicas} Prometheus replicas, "
        f"{fleet.alertmanager_peers} Alertmanager peers"
    )


@app.command("add")
def fleet_add(
    sid: str = typer.Argument(..., help="the SAP system ID, e.g. QAS"),
    scenario: str = typer.Option(..., "--scenario", "--landscape", help="the scenario it runs"),
    description: str = typer.Option("", help="a line for the fleet list"),
    users: int = typer.Option(None, help="users it runs at (default: the scenario's)"),
) -> None:
    """Add a SID to the fleet file (WLMON_FLEET_FILE; created from the shipped one).

    The next `wlmon up --profile fleet` starts its exporter and every Prometheus replica
    scrapes it; `wlmon down --profile fleet` first if the fleet is running."""

    settings = StackSettings()
    if settings.fleet_file is None:
        fail(
            "set WLMON_FLEET_FILE to your fleet file (it is created from the shipped "
            "provisioning/fleet/fleet.yml on the first `add`); the shipped file is the "
            "repository's example and is not edited"
        )
    try:
        entry = FleetSid(sid=sid, scenario=scenario, description=description, users=users)
    except ValidationError as exc:
        first = exc.errors()[0]
        fail(f"{first['loc'][0]}: {first['msg']}")
    try:
        add_sid(settings.fleet_file, entry, Catalog().scenarios())
    except FleetError as exc:
        fail(str(exc))
    console.print(escape(f"{sid} ({scenario}) added to {settings.fleet_file}"))
