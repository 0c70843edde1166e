"""The native stack's services as data (services.yml), filled from the settings."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from wlmon.stack.components import COMPONENTS
from wlmon.stack.settings import Ports, StackSettings

TABLE = files("wlmon.stack") / "services.yml"


@dataclass
class Service:
    name: str
    argv: list[str]
    port: int
    url: str
    health_url: str
    env: dict[str, str] = field(default_factory=dict)
    ready_timeout: float = 60.0
    after_start: Callable[[Service], None] | None = None
    dirs: list[str] = field(default_factory=list)
    component: str | None = None
    # Other built components whose files the service reads (none today).
    uses: list[str] = field(default_factory=list)
    # A line in the log after which a failed start is tried once more (a known race).
    retry_on: str | None = None
    # The working directory (default: the state directory).
    cwd: str | None = None
    # Basic auth (user, password) the health endpoint asks for (Alertmanager's /-/ready).
    health_auth: tuple[str, str] | None = None
    # The CA the health endpoint's HTTPS certificate is signed by (VictoriaLogs').
    health_ca: Path | None = None


class Spec(BaseModel):
    """One row of services.yml, before its templates are filled."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    component: str | None = None
    argv: list[str]
    port: str
    url: str
    health: str
    env: dict[str, str] = {}
    dirs: list[str] = []
    ready_timeout: float = 60.0
    after_start: str | None = None
    uses: list[str] = []
    retry_on: str | None = None
    cwd: str | None = None
    health_auth: tuple[str, str] | None = None
    health_ca: str | None = None
    # A StackSettings field: the service runs only while it is set (true, a path).
    when: str | None = None


def read_table(text: str | None = None) -> list[Spec]:
    """The rows of services.yml (or of `text`), each checked against the settings."""
    rows = yaml.safe_load(TABLE.read_text() if text is None else text)
    specs = []
    for i, row in enumerate(rows):
        try:
            spec = Spec.model_validate(row)
        except ValidationError as exc:
            raise ValueError(f"services.yml row {i + 1} ({row.get('name', '?')}): {exc}") from exc
        if spec.port not in Ports.model_fields:
            raise ValueError(f"{spec.name}: port {spec.port!r} is not a WLMON_PORT_* setting")
        if spec.component is not None and spec.component not in COMPONENTS:
            raise ValueError(f"{spec.name}: component {spec.component!r} is not built by wlmon")
        for used in spec.uses:
            if used not in COMPONENTS:
                raise ValueError(f"{spec.name}: uses {used!r}, which is not built by wlmon")
        if spec.when is not None and spec.when not in StackSettings.model_fields:
            raise ValueError(f"{spec.name}: when {spec.when!r} is not a WLMON_* setting")
        if spec.name in {s.name for s in specs}:
            raise ValueError(f"{spec.name}: listed twice")
        specs.append(spec)
    return specs


def fill(
    specs: list[Spec],
    values: Mapping[str, Any],
    ports: Ports,
    hooks: Mapping[str, Callable[[Service], None]],
) -> list[Service]:
    """Services with every template filled from `values` (see the head of services.yml)."""
    services = []
    for spec in specs:
        if spec.when is not None and not getattr(values["settings"], spec.when):
            continue
        own = dict(values)
        if spec.component is not None:
            own["installed"] = COMPONENTS[spec.component].directory
        own["uses"] = {name: COMPONENTS[name].directory for name in spec.uses}
        if spec.after_start is not None and spec.after_start not in hooks:
            raise ValueError(f"{spec.name}: after_start {spec.after_start!r} is not a known step")
        services.append(
            Service(
                name=spec.name,
                argv=[_format(a, own, spec.name) for a in spec.argv],
                port=getattr(ports, spec.port),
                url=_format(spec.url, own, spec.name),
                health_url=_format(spec.health, own, spec.name),
                env={k: _format(v, own, spec.name) for k, v in spec.env.items()},
                ready_timeout=spec.ready_timeout,
                after_start=hooks[spec.after_start] if spec.after_start else None,
                dirs=[_format(d, own, spec.name) for d in spec.dirs],
                component=spec.component,
                uses=list(spec.uses),
                retry_on=spec.retry_on,
                cwd=_format(spec.cwd, own, spec.name) if spec.cwd else None,
                health_auth=tuple(_format(a, own, spec.name) for a in spec.health_auth)
                if spec.health_auth
                else None,
                health_ca=Path(_format(spec.health_ca, own, spec.name)) if spec.health_ca else None,
            )
        )
    return services


def _format(template: str, values: Mapping[str, Any], service: str) -> str:
    try:
        return template.format_map(values)
    except (KeyError, AttributeError) as exc:
        raise ValueError(f"{service}: {template!r}: unknown placeholder ({exc})") from exc
