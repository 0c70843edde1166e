"""The stack's settings kept in its state directory (issue 38 item 4).

`wlmon up` renders what StackSettings holds. Read only from the environment, a setting such
as the watchdog's URL lived in the shell of whoever ran `up`: a later `up` from another shell
rendered it empty, silently. Kept here, it is set once (`wlmon config set KEY VALUE`) and
every `up` renders the same; a WLMON_* variable still overrides it for that run.

  <state>/settings.yml        every non-secret setting set with `wlmon config set`
  <state>/secrets/<name>      every secret (a SecretStr field), one 0600 file each, named
                              as the field with dashes: api-token, smtp-password, ...
                              (the names `wlmon up` generates missing secrets under)

Generic over the fields of StackSettings: a field added later (a receiver's URL, its
secret) is kept the same way without code here. Ports are `ports.NAME` (WLMON_PORT_NAME).
"""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource

SETTINGS_FILE = "settings.yml"
SECRETS_DIR = "secrets"
# Where the state itself is: not a setting kept in the state.
NOT_KEPT = frozenset({"state_dir", "repo_dir"})


class StoredSettingsError(ValueError):
    """The settings file cannot be read; the message names the file, line and column."""


class Origin(StrEnum):
    environment = "environment"
    state = "state"
    given = "given"
    default = "default"


def is_secret(field: FieldInfo) -> bool:
    annotation = field.annotation
    return annotation is SecretStr or SecretStr in getattr(annotation, "__args__", ())


def secret_filename(name: str) -> str:
    return name.replace("_", "-")


def settings_path(state_dir: Path) -> Path:
    return state_dir / SETTINGS_FILE


def default_state_dir() -> Path:
    return Path.home() / ".local" / "state" / "wlmon"


def read_file(state_dir: Path) -> dict[str, Any]:
    """settings.yml as a mapping ({} when there is none); bad YAML names line and column."""
    path = settings_path(state_dir)
    if not path.is_file():
        return {}
    try:
        doc = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1} column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise StoredSettingsError(f"{path}{where}: not YAML ({problem})") from exc
    if not isinstance(doc, dict):
        raise StoredSettingsError(f"{path}: a mapping of setting: value expected")
    return doc


def write_file(state_dir: Path, doc: dict[str, Any]) -> Path:
    """settings.yml replaced atomically (0600: a URL may carry a token the user put there)."""
    path = settings_path(state_dir)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(
            "# wlmon's settings, kept for every `wlmon up` (wlmon config set/show/unset;\n"
            "# docs/operations.md). A WLMON_* variable overrides a value here for one run.\n"
            "# Secrets are not here: each is a 0600 file in secrets/.\n"
        )
        yaml.safe_dump(doc, fh, sort_keys=True)
    tmp.replace(path)
    return path


def read_secret(state_dir: Path, name: str) -> str | None:
    path = state_dir / SECRETS_DIR / secret_filename(name)
    return path.read_text().strip() if path.is_file() else None


def write_secret(state_dir: Path, name: str, value: str) -> Path:
    secrets_dir = state_dir / SECRETS_DIR
    secrets_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(secrets_dir, 0o700)
    path = secrets_dir / secret_filename(name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(value)
    os.chmod(path, 0o600)
    return path


def env_name(name: str, nested: tuple[str, str] | None = None) -> str:
    """WLMON_WATCHDOG_URL for watchdog_url; WLMON_PORT_API for ports.api."""
    if nested is not None:
        return f"{nested[1]}{nested[0].upper()}"
    return f"WLMON_{name.upper()}"


def in_environment(variable: str) -> bool:
    # pydantic-settings matches variables without regard to case (case_sensitive=False).
    wanted = variable.upper()
    return any(k.upper() == wanted for k in os.environ)


def nested_prefix(field: FieldInfo) -> str | None:
    """The env prefix of a nested settings model (Ports: WLMON_PORT_), else None."""
    cls = field.default_factory if callable(field.default_factory) else None
    if isinstance(cls, type) and issubclass(cls, BaseSettings):
        return cls.model_config.get("env_prefix", "")
    return None


class StateSource(PydanticBaseSettingsSource):
    """Values kept in the state directory, below the environment and above the defaults.

    The state directory is the one the settings name (given, WLMON_STATE_DIR or the
    default): read from the sources before this one."""

    def __init__(self, settings_cls: type[BaseSettings], *earlier: PydanticBaseSettingsSource):
        super().__init__(settings_cls)
        self._earlier = earlier

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # __call__ reads everything at once

    def __call__(self) -> dict[str, Any]:
        state_dir: Any = None
        for source in self._earlier:
            state_dir = source().get("state_dir", state_dir) if state_dir is None else state_dir
        state = Path(state_dir) if state_dir is not None else default_state_dir()
        return kept_values(self.settings_cls, state)


def kept_values(settings_cls: type[BaseSettings], state: Path) -> dict[str, Any]:
    """What the state holds for settings_cls, without what the environment overrides
    (a nested model such as Ports reads its own variables, so those keys are dropped)."""
    doc = read_file(state)
    fields = settings_cls.model_fields
    unknown = sorted(set(doc) - set(fields) - NOT_KEPT)
    if unknown:
        raise StoredSettingsError(
            f"{settings_path(state)}: unknown setting(s) {', '.join(unknown)} "
            "(wlmon config show lists them)"
        )
    out: dict[str, Any] = {}
    for name, field in fields.items():
        if name in NOT_KEPT:
            continue
        prefix = nested_prefix(field)
        if prefix is not None and isinstance(doc.get(name), dict):
            kept = {k: v for k, v in doc[name].items() if not in_environment(f"{prefix}{k}")}
            if kept:
                out[name] = kept
        elif is_secret(field):
            value = read_secret(state, name)
            if value is not None:
                out[name] = value
        elif name in doc:
            out[name] = doc[name]
    return out


def origins(settings: BaseModel, state: Path, given: frozenset[str] = frozenset()) -> dict:
    """Each setting (ports as ports.NAME) -> where its value came from."""
    doc = read_file(state)
    out: dict[str, Origin] = {}
    for name, field in type(settings).model_fields.items():
        if name in NOT_KEPT:
            continue
        prefix = nested_prefix(field)
        if prefix is not None:
            sub = doc.get(name) if isinstance(doc.get(name), dict) else {}
            for key in type(getattr(settings, name)).model_fields:
                if in_environment(f"{prefix}{key}"):
                    out[f"{name}.{key}"] = Origin.environment
                elif key in sub:
                    out[f"{name}.{key}"] = Origin.state
                else:
                    out[f"{name}.{key}"] = Origin.default
            continue
        if name in given:
            out[name] = Origin.given
        elif in_environment(env_name(name)):
            out[name] = Origin.environment
        elif (is_secret(field) and read_secret(state, name) is not None) or (
            not is_secret(field) and name in doc
        ):
            out[name] = Origin.state
        else:
            out[name] = Origin.default
    return out


def masked(value: object) -> str:
    if isinstance(value, SecretStr):
        return "********" if value.get_secret_value() else "(empty)"
    if value is None:
        return "(not set)"
    return str(value)
