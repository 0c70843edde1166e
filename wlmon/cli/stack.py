"""`wlmon stack install`, `up`, `down`, `status`: the native stack."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from wlmon.cli.common import console, err, fail
from wlmon.stack import pki
from wlmon.stack.components import Component
from wlmon.stack.fleet import FleetStack
from wlmon.stack.install import InstallError, install, select, status
from wlmon.stack.runtime import LOGS_PASSWORD_FILE, LOGS_USER, Stack, StackError

app = typer.Typer()

PROFILES = ("default", "fleet")
PROFILE_HELP = "default: one SID, every server once; fleet: many SIDs, HA (docs/fleet.md)"


def _stack(profile: str) -> Stack:
    if profile not in PROFILES:
        fail(f"--profile: {profile!r} is not one of {', '.join(PROFILES)}")
    return FleetStack() if profile == "fleet" else Stack()


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
    """Build what is missing, `jobs` components at once: the fetch-bound ones (Grafana's
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
    if any(r.name == "grafana" for r in running):
        console.print(
            "Grafana runs API-only natively (its web frontend cannot be built here); "
            "for the web UI use docker-compose (see README)."
        )
    console.print(f"State, data and logs: {stack.state}")
    console.print(f"Runs database (API and CLI): {stack.data_dir / 'api' / 'wlmon.sqlite'}")


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
    active = active_runs(stack.data_dir / "api" / "wlmon.sqlite")
    if active and not force:
        names = ", ".join(f"{r['id']} ({r['label'] or 'no label'})" for r in active)
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


def active_runs(db: Path) -> list[dict]:
    """Runs the stack's API holds as in progress, read-only (nothing created or migrated);
    none when there is no database yet."""
    if not db.is_file():
        return []
    try:
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
            rows = conn.execute(
                "SELECT id, label FROM runs WHERE status = 'running' ORDER BY created_at"
            ).fetchall()
    except sqlite3.Error as exc:
        err.print(f"[yellow]warning:[/] cannot read the runs database {db}: {exc}")
        return []
    return [{"id": i, "label": label} for i, label in rows]


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
