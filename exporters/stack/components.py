"""Pinned server components and how each is built (recipes measured in STACK.md)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path


def cache_root() -> Path:
    """Where built servers live, outside the repo: $WLMON_CACHE or ~/.cache/wlmon."""
    return Path(os.environ.get("WLMON_CACHE", Path.home() / ".cache" / "wlmon")).expanduser()


@dataclass(frozen=True)
class Step:
    """One build step: a command run in a working directory (both may use {placeholders})."""

    title: str
    argv: tuple[str, ...]
    cwd: str = "{work}"
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Component:
    name: str
    version: str
    module: str  # Go module path at the pinned version
    binaries: tuple[str, ...]
    steps: tuple[Step, ...]

    @property
    def directory(self) -> Path:
        return cache_root() / f"{self.name}-{self.version}"


_PROM_LDFLAGS = "-X github.com/prometheus/common/version.Version=3.16.0"

COMPONENTS: dict[str, Component] = {
    "prometheus": Component(
        name="prometheus",
        version="3.16.0",
        module="github.com/prometheus/prometheus@v0.316.0",
        binaries=("prometheus", "promtool"),
        steps=(
            Step(
                "go install prometheus and promtool",
                (
                    "go",
                    "install",
                    # remove_all_sd: a discovery dependency is refused by the module proxy.
                    "-tags",
                    "netgo,remove_all_sd,enable_dns_sd",
                    "-ldflags",
                    _PROM_LDFLAGS,
                    "github.com/prometheus/prometheus/cmd/prometheus@v0.316.0",
                    "github.com/prometheus/prometheus/cmd/promtool@v0.316.0",
                ),
                env={"GOBIN": "{dest}"},
            ),
        ),
    ),
}
