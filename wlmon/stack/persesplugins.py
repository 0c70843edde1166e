"""Perses plugin archives assembled from the npm registry (a build step of `perses`).

Perses loads a plugin from a folder holding its module-federation build (`mf-manifest.json`,
`__mf/`), its `package.json` (whose `perses` section lists the plugin kinds) and the CUE
schemas with which the server validates every datasource, query and panel of that kind.
Upstream's `make generate` downloads those archives from GitHub releases, which cannot be
reached here. The npm packages `@perses-dev/*-plugin` hold the same build but not the
schemas, so the schemas of each package's release tag (perses/plugins, Apache-2.0) are kept
in provisioning/perses/plugin-schemas/<plugin>/, with the `github.com/perses/perses/cue`
packages they import at the version their cue.mod names (v0.52.0) under
cue.mod-pkg/. An archive is written per package, its cue.mod laid out the way Perses' own
`percli plugin build` vendors dependencies (cue.mod/pkg, no `deps` in module.cue), so the
server resolves every import offline.

`python -m wlmon.stack.persesplugins archives NODE_MODULES SCHEMAS OUT` fails with one line
naming what it expected and did not find.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import sys
import tarfile
from pathlib import Path

# npm package -> folder of provisioning/perses/plugin-schemas (the perses/plugins folder).
PLUGINS = {
    "@perses-dev/prometheus-plugin": "prometheus",
    "@perses-dev/loki-plugin": "loki",
    "@perses-dev/stat-chart-plugin": "statchart",
    "@perses-dev/timeseries-chart-plugin": "timeserieschart",
    "@perses-dev/table-plugin": "table",
    "@perses-dev/bar-chart-plugin": "barchart",
    "@perses-dev/gauge-chart-plugin": "gaugechart",
    "@perses-dev/markdown-plugin": "markdown",
}
# Plugins on no registry in built form, kept as source in webui/vendor/ and bundled into the
# UI there (VictoriaLogs: perses/plugins victorialogs/v0.1.0, the release built against the
# @perses-dev 0.5x packages). The server needs only their schemas and a manifest naming them.
SOURCE_PLUGINS = {"victorialogs-plugin": "victorialogs"}
# What of an npm package the server reads (lib/ is for bundlers: left out).
PACKAGE_FILES = ("package.json", "mf-manifest.json", "__mf", "LICENSE", "README.md")
CUE_PKG = "cue.mod-pkg"


class PluginError(Exception):
    """A package or schema folder is not what the build expects."""


def module_cue_without_deps(text: str) -> str:
    """module.cue with its `deps: {...}` block removed: the dependencies are vendored."""
    start = text.find("deps:")
    if start < 0:
        return text
    depth, end = 0, -1
    for pos in range(text.index("{", start), len(text)):
        depth += {"{": 1, "}": -1}.get(text[pos], 0)
        if depth == 0:
            end = pos
            break
    if end < 0:
        raise PluginError("module.cue: unbalanced braces in deps")
    return text[:start] + text[end + 1 :].lstrip("\n")


def archive_name(package_dir: Path) -> str:
    """<Name>-<version>, as the upstream release archives are named (mf-manifest.json)."""
    manifest = json.loads((package_dir / "mf-manifest.json").read_text())
    name, version = manifest["name"], manifest["metaData"]["buildInfo"]["buildVersion"]
    if not re.fullmatch(r"[A-Za-z0-9]+", name) or not re.fullmatch(r"[0-9A-Za-z.+-]+", version):
        raise PluginError(f"{package_dir}: unexpected plugin name/version {name!r} {version!r}")
    return f"{name}-{version}"


def assemble(
    package_dir: Path, schemas_dir: Path, cue_pkg: Path, out: Path, source: bool = False
) -> Path:
    """The plugin folder: the npm package's served files, schemas/ and a vendored cue.mod."""
    package = json.loads((package_dir / "package.json").read_text())
    if "perses" not in package:
        raise PluginError(f"{package_dir}/package.json: no `perses` section (not a plugin)")
    if not (schemas_dir / "schemas").is_dir():
        raise PluginError(f"{schemas_dir}: no schemas/ folder")
    version = package["version"]
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for name in PACKAGE_FILES:
        src = package_dir / name
        if src.is_dir():
            shutil.copytree(src, out / name)
        elif src.is_file():
            shutil.copy(src, out / name)
    if not (out / "mf-manifest.json").is_file():
        if not source:
            raise PluginError(f"{package_dir}: no mf-manifest.json (not a built plugin)")
        name = package["perses"]["moduleName"]
        manifest = {
            "id": name,
            "name": name,
            "metaData": {"buildInfo": {"buildVersion": version, "buildName": package["name"]}},
        }
        (out / "mf-manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    shutil.copytree(schemas_dir / "schemas", out / "schemas")
    module = schemas_dir / "cue.mod" / "module.cue"
    (out / "cue.mod").mkdir()
    if module.is_file():
        (out / "cue.mod" / "module.cue").write_text(module_cue_without_deps(module.read_text()))
        shutil.copytree(cue_pkg, out / "cue.mod" / "pkg")
    package["perses"]["schemasPath"] = "schemas"
    (out / "package.json").write_text(json.dumps(package, indent=2) + "\n")
    tag = (
        (schemas_dir / "VERSION").read_text().strip() if (schemas_dir / "VERSION").is_file() else ""
    )
    if tag and tag != version:
        raise PluginError(f"{package_dir}: npm {version}, but the schemas are of {tag}")
    return out


def write_archive(folder: Path, dest: Path) -> Path:
    """folder's content at the root of <dest>/<name>.tar.gz (what Perses extracts)."""
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / f"{archive_name(folder)}.tar.gz"
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for item in sorted(folder.rglob("*")):
            if item.is_file():
                tar.add(item, arcname=str(item.relative_to(folder)), recursive=False)
    path.write_bytes(buf.getvalue())
    return path


def archives(node_modules: Path, schemas: Path, out: Path, work: Path) -> list[Path]:
    written = []
    vendor = node_modules.parent / "vendor"
    for name, folder in SOURCE_PLUGINS.items():
        plugin = assemble(
            vendor / name, schemas / folder, schemas / CUE_PKG, work / folder, source=True
        )
        written.append(write_archive(plugin, out))
    for package, folder in PLUGINS.items():
        package_dir = node_modules / package
        if not package_dir.is_dir():
            raise PluginError(f"{package_dir}: not installed (npm ci in webui/)")
        plugin = assemble(package_dir, schemas / folder, schemas / CUE_PKG, work / folder)
        written.append(write_archive(plugin, out))
    return written


def main(argv: list[str]) -> int:
    try:
        match argv:
            case ["archives", node_modules, schemas, out]:
                for path in archives(
                    Path(node_modules), Path(schemas), Path(out), Path(out) / ".assemble"
                ):
                    print(path.name)
                shutil.rmtree(Path(out) / ".assemble")
            case _:
                print(f"usage error: {' '.join(argv)!r}", file=sys.stderr)
                return 2
    except (PluginError, OSError, json.JSONDecodeError, KeyError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
