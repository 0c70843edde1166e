"""percli, Perses' CLI as the stack builds it, and its offline lint of resources against
exactly the plugins the stack's Perses loads: their archives in the `perses` component
(wlmon/stack/persesplugins.py packs them, CUE schemas included), unpacked as Perses
unpacks them at start. A dashboard that lints clean here is one the server provisions."""

from __future__ import annotations

import os
import subprocess
import tarfile
from pathlib import Path

from wlmon.stack.components import COMPONENTS

PERSES = COMPONENTS["perses"]


class Unavailable(Exception):
    """The perses component is not built (the reason)."""


def percli() -> Path:
    binary = PERSES.path("percli")
    if not binary.is_file():
        raise Unavailable(f"perses {PERSES.version} not built: wlmon stack install --only perses")
    return binary


def plugin_dir(dest: Path) -> Path:
    """Every plugin archive of the component, one folder each, as Perses' plugin loader
    lays them out."""
    archives = sorted((PERSES.directory / "plugins-archive").glob("*.tar.gz"))
    if not archives:
        raise Unavailable(f"no plugin archives in {PERSES.directory}")
    for archive in archives:
        target = dest / archive.name.removesuffix(".tar.gz")
        target.mkdir(parents=True)
        with tarfile.open(archive) as tar:
            tar.extractall(target, filter="data")
        # An archive holding one top folder is that plugin's folder.
        inner = list(target.iterdir())
        if len(inner) == 1 and inner[0].is_dir() and (inner[0] / "package.json").exists():
            for child in inner[0].iterdir():
                child.rename(target / child.name)
            inner[0].rmdir()
    return dest


def lint(binary: Path, resource: Path, plugins: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(binary), "lint", "-f", str(resource), "--plugin.path", str(plugins)],
        capture_output=True,
        text=True,
        timeout=300,
        # percli keeps its config in the home directory: a scratch one, not the user's.
        env={**os.environ, "HOME": str(plugins.parent)},
    )
