"""`wlmon fleet list` and `wlmon fleet add`: the SIDs of the fleet profile (docs/fleet.md)."""

from __future__ import annotations

from pathlib import Path

import typer
from pydantic import ValidationError
from rich.markup import escape
from rich.table import Table

from exporters.monitor import SapControlSpec, first_error
from landscape_model.catalog import Catalog
from wlmon.cli.common import console, fail
from wlmon.stack.fleet import (
    FleetError,
    FleetSid,
    add_sid,
    fleet_path,
    load_fleet,
    sapcontrol_problem,
)
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
    for col in ("sid", "scenario or sapstartsrv", "users", "description", "kind"):
        table.add_column(col)
    for entry in fleet.sids:
        if entry.sapcontrol is not None:
            what = ", ".join(entry.sapcontrol.discover or entry.sapcontrol.endpoints)
            users = "-"
        else:
            what = entry.scenario or ""
            users = str(entry.users) if entry.users is not None else "scenario's"
        # The fleet file is the user's: its text printed as written.
        row = (entry.sid, what, users, entry.description, entry.kind)
        table.add_row(*(escape(v) for v in row))
    console.print(table)
    console.print(
        f"{fleet.prometheus_replicas} Prometheus replicas, "
        f"{fleet.alertmanager_peers} Alertmanager peers"
    )


@app.command("add")
def fleet_add(
    sid: str = typer.Argument(..., help="the SAP system ID, e.g. QAS"),
    scenario: str = typer.Option(
        None, "--scenario", "--landscape", help="a twin: the scenario it runs"
    ),
    discover: list[str] = typer.Option(
        [],
        "--discover",
        help="a real system: an instance's sapstartsrv URL whose GetSystemInstanceList lists "
        "the rest (repeatable, tried in turn)",
    ),
    endpoint: list[str] = typer.Option(
        [], "--endpoint", help="a real system's instance read as given (repeatable)"
    ),
    host: list[str] = typer.Option(
        [], "--host", help="NAME=ADDRESS: an instance list's host name mapped (repeatable)"
    ),
    user: str = typer.Option(None, "--user", help="the monitoring OS user (docs/monitor.md)"),
    password_file: Path = typer.Option(
        None, "--password-file", help="a file holding that user's password (never the password)"
    ),
    ca_file: Path = typer.Option(None, "--ca-file", help="CA of sapstartsrv's certificate"),
    prefer_https: bool = typer.Option(
        False, "--prefer-https", help="read discovered instances on their HTTPS port (5NN14)"
    ),
    exporter_group: str = typer.Option(
        None,
        "--exporter-group",
        help="a real SID: share one exporter process with the SIDs of this group",
    ),
    description: str = typer.Option("", help="a line for the fleet list"),
    users: int = typer.Option(None, help="a twin's users (default: the scenario's)"),
) -> None:
    """Add a SID to the fleet file (WLMON_FLEET_FILE; created from the shipped one): a twin
    (--scenario) or a real system (--discover/--endpoint with --user and --password-file).

    The next `wlmon up --profile fleet` starts its exporter and every Prometheus replica
    scrapes it; `wlmon down --profile fleet` first if the fleet is running. A refusal names
    the option and leaves the file as it was."""

    settings = StackSettings()
    if settings.fleet_file is None:
        fail(
            "set WLMON_FLEET_FILE to your fleet file (it is created from the shipped "
            "provisioning/fleet/fleet.yml on the first `add`); the shipped file is the "
            "repository's example and is not edited"
        )
    real = bool(discover or endpoint)
    if scenario is not None and real:
        fail("--scenario and --discover/--endpoint: a SID is a twin or a real system, not both")
    if scenario is None and not real:
        fail("--scenario or --discover: say whether the SID is a twin or a real system")
    real_only = {
        "--user": user,
        "--password-file": password_file,
        "--ca-file": ca_file,
        "--host": host,
        "--prefer-https": prefer_https,
        "--exporter-group": exporter_group,
    }
    if scenario is not None and (given := [k for k, v in real_only.items() if v]):
        fail(f"{given[0]}: only for a real system (--discover), not a twin (--scenario)")
    hosts = {}
    for item in host:
        name, sep, address = item.partition("=")
        if not sep or not name or not address:
            fail(f"--host: {item!r} is not NAME=ADDRESS")
        hosts[name] = address
    try:
        spec = None
        if real:
            values = {
                "discover": discover,
                "endpoints": endpoint,
                "hosts": hosts,
                "username": user,
                "password_file": password_file.resolve() if password_file else None,
                "ca_file": ca_file.resolve() if ca_file else None,
                "prefer_https": prefer_https,
            }
            spec = SapControlSpec(**{k: v for k, v in values.items() if v})
        entry = FleetSid(
            sid=sid,
            scenario=scenario,
            sapcontrol=spec,
            description=description,
            users=users,
            exporter_group=exporter_group,
        )
    except ValidationError as exc:
        fail(_option(first_error(exc)))
    if spec is not None:
        problem = sapcontrol_problem(spec)
        if problem:
            fail(_option(problem))
    try:
        add_sid(settings.fleet_file, entry, Catalog().scenarios())
    except FleetError as exc:
        fail(str(exc))
    what = scenario if scenario is not None else "sapcontrol"
    console.print(escape(f"{sid} ({what}) added to {settings.fleet_file}"))


# The entry's fields as the options that set them: a refusal names what the user typed.
OPTIONS = {
    "discover": "--discover",
    "endpoints": "--endpoint",
    "hosts": "--host",
    "username": "--user",
    "password_file": "--password-file",
    "ca_file": "--ca-file",
    "prefer_https": "--prefer-https",
    "verify": "--ca-file",
    "users": "--users",
    "scenario": "--scenario",
    "exporter_group": "--exporter-group",
}


def _option(problem: str) -> str:
    field, sep, why = problem.partition(": ")
    name = field.split(".")[-1]
    if not sep:
        return problem
    return f"{OPTIONS.get(name, name)}: {why}"
