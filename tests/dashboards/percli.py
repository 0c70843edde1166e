"""percli, Perses' CLI at the server's version, and its offline lint of resources against
the plugin schemas in tests/dashboards/perses_plugins (CUE, from github.com/perses/plugins).

Built once from the Go module proxy into ~/.cache/wlmon (or $WLMON_CACHE), keyed by
version; without Go the lint is skipped with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

VERSION = "v0.54.0"
MODULE = "github.com/perses/perses"
CACHE = Path(os.environ.get("WLMON_CACHE", Path.home() / ".cache" / "wlmon"))
BINARY = CACHE / f"percli-{VERSION}" / "percli"
PLUGINS = Path(__file__).resolve().parent / "perses_plugins"


class Unavailable(Exception):
    """No Go toolchain, or the module could not be had (the reason)."""


def percli() -> Path:
    if BINARY.is_file():
        return BINARY
    go = shutil.which("go")
    if not go:
        raise Unavailable("go not found: cannot build percli to lint the Perses dashboards")
    work = BINARY.parent / "mod"
    work.mkdir(parents=True, exist_ok=True)
    if not (work / "go.mod").is_file():
        subprocess.run(
            [go, "mod", "init", "wlmon/percli"], cwd=work, check=True, capture_output=True
        )
    # The proxy serves this exact version but lists none: ask for it by name.
    got = subprocess.run(
        [go, "mod", "download", "-json", f"{MODULE}@{VERSION}"],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    if got.returncode != 0:
        raise Unavailable(f"go mod download {MODULE}@{VERSION} failed: {got.stdout[-400:]}")
    source = json.loads(got.stdout)["Dir"]
    built = subprocess.run(
        [go, "build", "-o", str(BINARY), "./cmd/percli"],
        cwd=source,
        env={**os.environ, "GOFLAGS": "-mod=mod"},
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if built.returncode != 0:
        raise Unavailable(f"go build percli failed: {built.stderr[-800:]}")
    return BINARY


def plugin_dir(dest: Path, logs_modules: tuple[str, ...]) -> Path:
    """The checked-in plugin schemas laid out as Perses loads plugins: one folder each,
    its CUE dependencies vendored under cue.mod/pkg (as `percli plugin build` does). Of
    the logs plugins only `logs_modules` (two would both define LogsTable)."""
    logs = {"victorialogs", "logstable", "loki"}
    for src in sorted(PLUGINS.iterdir()):
        if not src.is_dir() or src.name == "_vendor":
            continue
        if src.name in logs and src.name not in logs_modules:
            continue
        shutil.copytree(src, dest / src.name)
        shutil.copytree(PLUGINS / "_vendor", dest / src.name / "cue.mod" / "pkg")
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
