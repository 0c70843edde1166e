"""`wlmon config set/unset/show`: the stack's settings kept in its state (wlmon/stack/stored.py),
so every `wlmon up` renders the same whichever shell runs it."""

from __future__ import annotations

import os
from pathlib import Path

import typer
from pydantic import ValidationError
from rich.markup import escape
from rich.table import Table

from wlmon.cli.common import console, fail
from wlmon.stack import stored
from wlmon.stack.settings import Ports, StackSettings

config_app = typer.Typer(
    help="The stack's settings kept in its state directory (settings.yml, secrets/).",
    no_args_is_help=True,
)


def _state_dir() -> Path:
    """The state the settings are kept in: WLMON_STATE_DIR or the default (not read through
    StackSettings, so a broken settings file can still be fixed here)."""
    given = os.environ.get("WLMON_STATE_DIR")
    return Path(given).expanduser() if given else stored.default_state_dir()


def _key(key: str) -> tuple[str, str | None]:
    """watchdog_url, WLMON_WATCHDOG_URL, watchdog-url -> ("watchdog_url", None);
    ports.api, WLMON_PORT_API -> ("ports", "api")."""
    name = key.strip().lower().replace("-", "_")
    name = name.removeprefix("wlmon_")
    if name.startswith("ports.") or name.startswith("port_"):
        sub = name.split(".", 1)[1] if "." in name else name.removeprefix("port_")
        if sub not in Ports.model_fields:
            fail(f"{key}: no such port (one of {', '.join(Ports.model_fields)})")
        return "ports", sub
    if name in stored.NOT_KEPT:
        fail(f"{key}: where the state is, not a setting kept in it (set WLMON_STATE_DIR)")
    if name not in StackSettings.model_fields or name == "ports":
        fail(f"{key}: no such setting (wlmon config show lists them)")
    return name, None


def _validation_line(key: str, exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or key
    return f"{where}: {first['msg'].removeprefix('Value error, ')}"


@config_app.command("set")
def config_set(
    key: str = typer.Argument(..., help="a setting: watchdog_url, smtp_password, ports.api, ..."),
    value: str = typer.Argument(..., help="its value (a secret goes to a 0600 file)"),
) -> None:
    """Keep one setting in the state: every later `wlmon up` renders it."""
    state = _state_dir()
    name, sub = _key(key)
    try:
        if sub is not None:
            checked = Ports(**{sub: value}).model_dump(mode="json")[sub]
        else:
            settings = StackSettings(state_dir=state, **{name: value})
            checked = settings.model_dump(mode="json")[name]
            secret = getattr(settings, name)
    except ValidationError as exc:
        fail(_validation_line(key, exc))
    except stored.StoredSettingsError as exc:
        fail(str(exc))
    field = StackSettings.model_fields[name]
    if sub is None and stored.is_secret(field):
        path = stored.write_secret(state, name, secret.get_secret_value())
        console.print(f"{name}: kept in {path} (mode 600)")
    else:
        doc = stored.read_file(state)
        if sub is not None:
            doc.setdefault("ports", {})[sub] = checked
        else:
            doc[name] = checked
        path = stored.write_file(state, doc)
        console.print(f"{name if sub is None else f'ports.{sub}'}: kept in {path}")
    variable = stored.env_name(name) if sub is None else f"WLMON_PORT_{sub.upper()}"
    if stored.in_environment(variable):
        console.print(f"[yellow]{variable} is set in this shell and overrides it here[/]")


@config_app.command("unset")
def config_unset(key: str = typer.Argument(..., help="a setting kept with `config set`")) -> None:
    """Forget a kept setting: `wlmon up` uses the default again (a secret: generated anew)."""
    state = _state_dir()
    name, sub = _key(key)
    doc = stored.read_file(state)
    if sub is None and stored.is_secret(StackSettings.model_fields[name]):
        path = state / stored.SECRETS_DIR / stored.secret_filename(name)
        if not path.is_file():
            fail(f"{key}: not kept in {state}")
        path.unlink()
    elif sub is not None:
        if sub not in doc.get("ports", {}):
            fail(f"{key}: not kept in {stored.settings_path(state)}")
        del doc["ports"][sub]
        if not doc["ports"]:
            del doc["ports"]
        stored.write_file(state, doc)
    else:
        if name not in doc:
            fail(f"{key}: not kept in {stored.settings_path(state)}")
        del doc[name]
        stored.write_file(state, doc)
    console.print(f"{key}: no longer kept")


@config_app.command("show")
def config_show(
    changed: bool = typer.Option(False, "--changed", help="only settings not at their default"),
) -> None:
    """Every setting `wlmon up` renders, its value (secrets masked) and where it comes from."""
    state = _state_dir()
    try:
        settings = StackSettings(state_dir=state)
    except ValidationError as exc:
        fail(_validation_line("settings", exc))
    except stored.StoredSettingsError as exc:
        fail(str(exc))
    table = Table(title=f"wlmon settings (kept in {stored.settings_path(state)})")
    for col in ("setting", "value", "from"):
        table.add_column(col, overflow="fold")
    for key, origin in stored.origins(settings, state).items():
        if changed and origin is stored.Origin.default:
            continue
        name, _, sub = key.partition(".")
        value = getattr(getattr(settings, name), sub) if sub else getattr(settings, name)
        table.add_row(key, escape(stored.masked(value)), origin.value)
    console.print(table)
