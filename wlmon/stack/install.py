"""`wlmon stack install`: build each pinned server once into the cache, reuse it after."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from wlmon.stack.components import COMPONENTS, PRELUDE, Component, cache_root
from wlmon.stack.settings import REPO_DIR


class InstallError(RuntimeError):
    """A build failed; the message names the component and the step."""


@dataclass(frozen=True)
class Status:
    name: str
    version: str
    directory: Path
    installed: bool
    missing: tuple[str, ...]


def status(component: Component) -> Status:
    missing = tuple(b for b in component.binaries if not component.path(b).is_file())
    return Status(component.name, component.version, component.directory, not missing, missing)


def select(names: list[str] | None) -> list[Component]:
    if not names:
        # Optional components (a third-party client for tests) are built only when named.
        return [c for c in COMPONENTS.values() if not c.optional]
    unknown = [n for n in names if n not in COMPONENTS]
    if unknown:
        raise InstallError(
            f"unknown component(s) {', '.join(unknown)}; known: {', '.join(COMPONENTS)}"
        )
    return [COMPONENTS[n] for n in names]


def install(
    component: Component,
    on_step: Callable[[str], None] = lambda _: None,
    log_dir: Path | None = None,
) -> Status:
    """Build the component unless its binaries are already in the cache (idempotent)."""
    current = status(component)
    if current.installed:
        return current
    if shutil.which("go") is None:
        raise InstallError(f"{component.name}: step 'find Go': no `go` on PATH (install Go 1.26)")
    dest = component.directory
    staging = Path(tempfile.mkdtemp(prefix=f".{component.name}-", dir=_ensure(dest.parent)))
    work = Path(tempfile.mkdtemp(prefix=f"wlmon-build-{component.name}-"))
    log_path = (log_dir or dest.parent) / f"{component.name}-{component.version}.build.log"
    try:
        with log_path.open("w") as log:
            for step in component.steps:
                on_step(step.title)
                fill = {
                    "dest": str(staging),
                    "work": str(work),
                    "repo": str(REPO_DIR),
                    "python": sys.executable,
                }
                env = {**os.environ, "GOFLAGS": "-mod=mod", "CGO_ENABLED": "0", **step.env}
                script = PRELUDE + step.script.format(**fill)
                log.write(f"### {step.title}\n{script}\n")
                log.flush()
                result = subprocess.run(
                    ["bash", "-euo", "pipefail", "-c", script],
                    cwd=work,
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    check=False,
                )
                if result.returncode != 0:
                    raise InstallError(
                        f"{component.name} {component.version}: step '{step.title}' failed "
                        f"(exit {result.returncode}); see {log_path}"
                    )
        missing = [b for b in component.binaries if not (staging / b).is_file()]
        if missing:
            raise InstallError(
                f"{component.name}: step 'check binaries': missing {', '.join(missing)}"
            )
        # Move into place only when complete, so a half-built component is never reused.
        if dest.exists():
            shutil.rmtree(dest)
        staging.rename(dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    return status(component)


def _ensure(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def stale(root: Path | None = None) -> list[Path]:
    """What the cache holds that no component of this checkout uses: other versions of a
    component (a rebuilt UI, an older pin), retired components (Grafana's), their build
    logs and leftover staging directories of interrupted builds."""
    root = root or cache_root()
    if not root.is_dir():
        return []
    keep = {c.directory.name for c in COMPONENTS.values()}
    keep |= {f"{name}.build.log" for name in keep}
    return sorted(p for p in root.iterdir() if p.name not in keep)


def prune(paths: list[Path]) -> None:
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
