"""`wlmon stack install`, `up`, `down`, `status`: the native stack."""

from __future__ import annotations

import json
import sqlite3
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

import httpx
import psutil
import typer
from pydantic import ValidationError
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from api.runs.rows import RunRow, StoredRunError, running_in
from wlmon.cli.common import console, err, fail
from wlmon.stack import perses, pki
from wlmon.stack.components import Component
from wlmon.stack.fleet import FleetStack
from wlmon.stack.install import InstallError, install, prune, select, stale, status
from wlmon.stack.licences import Verdict, everything
from wlmon.stack.runtime import LOGS_PASSWORD_FILE, LOGS_USER, Stack, StackError
from wlmon.stack.stored import Origin, StoredSettingsError, masked

app = typer.Typer()

PROFILES = ("default", "fleet")
PROFILE_HELP = "default: one SID, every server once; fleet: many SIDs, HA (docs/fleet.md)"


def _stack(profile: str) -> Stack:
    if profile not in PROFILES:
        fail(f"--profile: {profile!r} is not one of {', '.join(PROFILES)}")
    try:
        return FleetStack() if profile == "fleet" else Stack()
    except ValidationError as exc:  # a WLMON_ setting: one line naming it, not a traceback
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        fail(f"{where + ': ' if where else ''}{first['msg'].removeprefix('Value error, ')}")
    except StoredSettingsError as exc:
        fail(str(exc))


stack_app = typer.Typer(help="Install and check the real servers wlmon runs.", no_args_is_help=True)


@stack_app.command("install")
def stack_install(
    only: list[str] = typer.Option([], "--only", help="component to install (repeatable)"),
    check: bool = typer.Option(False, "--check", help="only report what is installed"),
    as_json: bool = typer.Option(False, "--json", help="print JSON (with --check)"),
    jobs: int = typer.Option(
        2, "--jobs", min=1, max=8, help="components built at once (each compile uses every core)"
    ),
) -> None:
    """Build the pinned servers into the cache (~/.cache/wlmon or $WLMON_CACHE), once."""

    try:
        components = select(only)
    except InstallError as exc:
        fail(str(exc))
    if check:
        rows = [status(c) for c in components]
        if as_json:
            print(
                json.dumps(
                    [
                        {
                            "name": r.name,
                            "version": r.version,
                            "installed": r.installed,
                            "directory": str(r.directory),
                            "missing": list(r.missing),
                        }
                        for r in rows
                    ]
                )
            )
        else:
            table = Table(title="wlmon stack")
            for col in ("component", "version", "installed", "directory"):
                table.add_column(col)
            for r in rows:
                table.add_row(
                    r.name,
                    r.version,
                    "[green]yes[/]" if r.installed else "[red]no[/]",
                    str(r.directory),
                )
            console.print(table)
        raise typer.Exit(0 if all(r.installed for r in rows) else 1)
    _build(components, jobs)


def _build(components: list[Component], jobs: int) -> None:
    """Build what is missing, `jobs` components at once: the fetch-bound ones (Perses'
    UI) first, so their downloads overlap the Go compiles instead of adding to them. A
    failed component does not stop the others (what built stays cached); all failures are
    named at the end."""
    ordered = sorted(components, key=lambda c: not c.fetch_bound)
    failures: list[str] = []
    with (
        Progress(
            TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(), console=err
        ) as progress,
        ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="build") as pool,
    ):
        tasks = {
            c.name: progress.add_task(f"{c.name} {c.version}", total=len(c.steps) + 1)
            for c in ordered
        }
        futures = {
            pool.submit(
                install,
                comp,
                on_step=lambda title, t=tasks[comp.name], c=comp: progress.update(
                    t, advance=1, description=f"{c.name} {c.version}: {title}"
                ),
            ): comp
            for comp in ordered
        }
        for future in as_completed(futures):
            comp = futures[future]
            try:
                result = future.result()
            except InstallError as exc:
                failures.append(str(exc))
                continue
            progress.update(
                tasks[comp.name],
                completed=len(comp.steps) + 1,
                description=f"{comp.name} {comp.version}: ready in {result.directory}",
            )
    if failures:
        fail("; ".join(failures))


@stack_app.command("licences")
def stack_licences(
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
    refused_only: bool = typer.Option(False, "--refused", help="list only what is refused"),
) -> None:
    """The licence of every server, Python package and npm package the stack uses; exits 1
    when one is AGPL, SSPL, BUSL or unknown (docs/licences.md)."""
    rows = everything()
    shown = [r for r in rows if r.verdict is not Verdict.allowed] if refused_only else rows
    if as_json:
        print(json.dumps([{**r.__dict__, "verdict": r.verdict.value} for r in shown]))
    else:
        table = Table(title=f"wlmon stack licences ({len(rows)} parts)")
        # Names and versions whole, the licence folded: an 80-column terminal keeps them.
        table.add_column("kind")
        table.add_column("name", no_wrap=True)
        table.add_column("version", no_wrap=True)
        table.add_column("licence", overflow="fold")
        table.add_column("verdict")
        for r in shown:
            colour = "green" if r.verdict is Verdict.allowed else "red"
            table.add_row(
                r.kind, escape(r.name), escape(r.version), escape(r.licence or "-"),
                f"[{colour}]{r.verdict.value}[/]",
            )  # fmt: skip
        console.print(table)
    raise typer.Exit(0 if all(r.verdict is Verdict.allowed for r in rows) else 1)


@stack_app.command("prune")
def stack_prune(
    dry_run: bool = typer.Option(False, "--dry-run", help="only list what would go"),
) -> None:
    """Delete from the cache what no component uses (other versions, retired servers such
    as Grafana, their build logs). The cache is shared by every checkout of this machine:
    one on another branch rebuilds what it still needs."""

    paths = stale()
    for path in paths:
        console.print(f"{'would delete' if dry_run else 'deleted'} {path}")
    if not dry_run:
        prune(paths)
    if not paths:
        console.print("nothing to delete: the cache holds only what is used")


@stack_app.command("logs-certs")
def logs_certs(
    directory: Path = typer.Option(
        None,
        "--dir",
        help="where (default: the native stack's <state>/secrets/victorialogs-tls, which "
        "`wlmon up` makes itself); docker-compose reads ./secrets/victorialogs-tls",
    ),
    compose: bool = typer.Option(
        False,
        "--compose",
        help="the server key mode 0644 in the 0700 directory: docker-compose's containers run "
        "as other users (docs/operations.md)",
    ),
) -> None:
    """The log store's private CA and VictoriaLogs' server certificate (HTTPS): issued when
    missing, near expiry or not of the CA; kept otherwise. Delete the directory to retire
    them all."""

    stack = Stack()
    target = directory or stack.logs_pki().directory
    key_mode = pki.COMPOSE_KEY_MODE if compose else 0o600
    try:
        made, issued = pki.ensure(target, key_mode=key_mode)
    except pki.PKIError as exc:
        fail(str(exc))
    kept = [n for n in ("ca", "server") if n not in issued]
    console.print(f"The log store's certificates in {made.directory}")
    console.print(f"  issued now: {', '.join(issued) or 'none'}")
    console.print(f"  kept: {', '.join(kept) or 'none'}")
    console.print(
        f"Query VictoriaLogs by hand (user {LOGS_USER}, password in "
        f"{stack.secret_file(LOGS_PASSWORD_FILE)}): curl --cacert {made.ca} "
        f"-u {LOGS_USER} {stack.logs_url()}/select/logsql/query -d 'query=_time:5m'",
        soft_wrap=True,
    )


@app.command()
def up(
    only: list[str] = typer.Option([], "--only", help="start only this service (repeatable)"),
    install_missing: bool = typer.Option(True, help="build servers missing from the cache first"),
    profile: str = typer.Option("default", "--profile", help=PROFILE_HELP),
) -> None:
    """Start the native stack on 127.0.0.1 and wait until every service is healthy."""

    stack = _stack(profile)
    try:
        # Only the servers these services run (an empty list would mean all components).
        needed = stack.components(only or None) if install_missing else []
        if needed:
            stack_install(only=needed, check=False, as_json=False, jobs=2)
        running = stack.up(only=only or None, on_event=lambda msg: err.print(f"[dim]{msg}[/]"))
    except StackError as exc:
        fail(str(exc))
    table = Table(title="wlmon is up")
    for col in ("service", "pid", "url"):
        table.add_column(col)
    for r in running:
        table.add_row(r.name, str(r.pid), r.url)
    console.print(table)
    secrets = Table(title="secrets")
    secrets.add_column("secret")
    secrets.add_column("where")
    for what, source in stack.secret_sources().items():
        secrets.add_row(what, source)
    console.print(secrets)
    home = next((r for r in running if r.name == "perses"), None)
    if home is not None:
        console.print(
            f"Web UI: Perses, served by wlmon (sign in as {perses.PERSES_ADMIN_USER}): "
            f"{home.url}{perses.dashboard_path()}",
            soft_wrap=True,
        )
        console.print(
            f"Alerts in Alertmanager (active, inhibited, silenced): {home.url}/alerts",
            soft_wrap=True,
        )
    _print_receivers(stack)
    console.print(f"State, data and logs: {stack.state}")
    console.print(f"Runs database (API and CLI): {stack.data_dir / 'api' / 'wlmon.sqlite'}")
    _settings_banner(stack)


def _settings_banner(stack: Stack) -> None:
    """Which settings are not at their default and where each came from (a WLMON_*
    variable of this shell or the state's settings.yml), and the warning while the dead
    man's switch has no target."""
    table = Table(title=f"settings (kept: wlmon config set; {stack.state / 'settings.yml'})")
    for col in ("setting", "value", "from"):
        table.add_column(col, overflow="fold")
    for key, origin in stack.origins.items():
        if origin is not Origin.default:
            name, _, sub = key.partition(".")
            value = getattr(stack.settings, name)
            value = getattr(value, sub) if sub else value
            table.add_row(key, escape(masked(value)), origin.value)
    if table.row_count:
        console.print(table)
    if not stack.settings.watchdog_url:
        console.print(
            "[bold red]warning: no watchdog target: nothing outside this host hears when "
            "the alerting stops. Set one: wlmon config set watchdog_url URL[/]"
        )


def _print_receivers(stack: Stack) -> None:
    """Who Alertmanager tells: the banner says it, and says when nobody outside the API
    would hear of the API's own death."""
    others = stack.notification_receivers()
    told = ", ".join(["the API's webhook (stored, NOC, log line)", *others])
    console.print(f"Notifications go to: {told}", soft_wrap=True)
    if not any(not r.startswith("dead man") for r in others):
        err.print(
            "[yellow]warning:[/] only the API's webhook receives alerts: nobody is told "
            "unless they look, and the API's own death (SAPAPIDown) is told to no one; set "
            "WLMON_SMTP_SMARTHOST, WLMON_SLACK_WEBHOOK_URL, WLMON_TEAMS_WEBHOOK_URL or "
            "WLMON_PAGERDUTY_ROUTING_KEY (docs/operations.md, Receivers)",
            soft_wrap=True,
        )
    if not any(r.startswith("dead man") for r in others):
        err.print(
            "[yellow]warning:[/] no dead man's switch: set WLMON_WATCHDOG_URL to an external "
            "heartbeat check, or a dead Prometheus or Alertmanager is told to no one",
            soft_wrap=True,
        )


@app.command()
def down(
    profile: str = typer.Option("default", "--profile", help=PROFILE_HELP),
    force: bool = typer.Option(
        False, "--force", help="stop without asking, even while a real-time run is in progress"
    ),
) -> None:
    """Stop what `wlmon up` started (by recorded pid), cleanly. Asks first when a real-time
    run is in progress (the next `wlmon up` resumes it if its window has not ended; else it
    ends `interrupted`, with its data up to the stop)."""

    stack = _stack(profile)
    active = active_runs(stack.data_dir / "api" / "wlmon.sqlite", _api_url(stack))
    if active and not force:
        names = ", ".join(f"{r.id} ({r.label or 'no label'})" for r in active)
        err.print(
            f"[yellow]warning:[/] {len(active)} real-time run(s) in progress: {names}; "
            "after a stop, `wlmon up` resumes one whose window has not ended (the time "
            "down is a gap in its data); one whose window ended meanwhile ends interrupted, "
            "with its data up to the stop"
        )
        try:
            go = typer.confirm("Stop the stack anyway?", default=False)
        except typer.Abort:  # no terminal to ask on
            go = False
        if not go:
            fail("not stopped: a run is in progress (`wlmon down --force` stops anyway)")
    stopped = stack.down(on_event=lambda msg: err.print(f"[dim]{msg}[/]"))
    console.print(f"stopped: {', '.join(stopped) or 'nothing was running'}")


def _api_url(stack: Stack) -> str | None:
    """The URL of the API `wlmon up` started, while its process runs; None when it does
    not (then no thread drives any run)."""
    for r in stack.recorded():
        if r.name != "api":
            continue
        try:
            if psutil.Process(r.pid).cmdline()[:1] == [r.executable]:
                return r.url
        except psutil.Error:
            return None
    return None


def active_runs(db: Path, api_url: str | None) -> list[RunRow]:
    """Runs the stack's API is driving: stored as running (read-only: nothing created or
    migrated) and, asked, still running for the API. A run no thread drives (the API not
    running, or its driver gone) is not waited on: the next `wlmon up` resumes or ends it
    (issue 38: a phantom run kept `wlmon down` refusing until a restart)."""
    stored = _stored_running(db)
    if not stored or api_url is None:
        return []
    driven = []
    for run in stored:
        try:
            r = httpx.get(f"{api_url}/runs/{run.id}", timeout=5)
        except httpx.HTTPError:  # its process runs but does not answer: it may drive it
            driven.append(run)
            continue
        if r.status_code >= 500 or (r.status_code == 200 and r.json().get("status") == "running"):
            driven.append(run)
    return driven


def _stored_running(db: Path) -> list[RunRow]:
    if not db.is_file():
        return []
    try:
        return running_in(db)
    except (sqlite3.Error, StoredRunError) as exc:
        err.print(f"[yellow]warning:[/] cannot read the runs database {db}: {exc}")
        return []


@app.command("status")
def stack_status(
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
    profile: str = typer.Option("default", "--profile", help=PROFILE_HELP),
) -> None:
    """Each service that `wlmon up` started: pid, url and health."""

    rows = _stack(profile).status()
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    table = Table(title="wlmon status")
    for col in ("service", "pid", "url", "healthy"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            r["name"], str(r["pid"]), r["url"], "[green]yes[/]" if r["healthy"] else "[red]no[/]"
        )
    console.print(table if rows else "wlmon is not running (no services recorded)")
