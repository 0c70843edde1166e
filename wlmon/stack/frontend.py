"""Grafana's web frontend for the pinned commit, built from the package registries.

The module zip from the Go proxy holds the TypeScript sources but three things stop a plain
`yarn install && yarn build` (measured in STACK.md):
- package.json takes `xlsx` from a CDN URL that cannot be reached; the npm registry's
  0.18.5 has the same API and replaces it;
- Yarn 3.4.1's generated ESM loader (`.pnp.loader.mjs`) hands Node 20 the source of
  CommonJS modules, which makes Node build them a `require` without `require.cache`
  (webpack-cli breaks on it); upstream fixed it by returning no source for CommonJS
  (yarnpkg/berry#5677), and we apply that same one-line change to the generated file;
- Go module zips leave out every `vendor/` directory, so `public/vendor` is missing: flot
  0.8.3 and bootstrap-tagsinput 0.7.1 come from npm, bootstrap 2.3.2's JS from Maven
  Central. Grafana's own four flot plugins are on no registry and we may not copy them: the
  modules that would hold them are written empty, so the old Graph panel loses only its
  "stack percent", "fill below to" and "dashes" options and the Gauge panel draws nothing.
  Our dashboards use none of them (dashboards/build.py checks it).

Each function is a build step run by `wlmon stack install` (`python -m wlmon.stack.frontend
STEP ARGS`); each fails with one line naming what it expected and did not find.
"""

from __future__ import annotations

import hashlib
import json
import sys
import zipfile
from pathlib import Path

XLSX_REGISTRY_VERSION = "0.18.5"
FLOT_VERSION = "0.8.3"
TAGSINPUT_VERSION = "0.7.1"
BOOTSTRAP_WEBJAR = "org/webjars/bootstrap/2.3.2/bootstrap-2.3.2.jar"
# The jar's digest, so a changed or truncated download fails the build instead of shipping.
BOOTSTRAP_WEBJAR_SHA256 = "66cd77ade709794753055f4ed99317c00d09940c92c4111572ea7336c02892c3"

# The flot files Grafana imports from public/vendor (plugin_loader.ts, panel/graph/*.ts).
FLOT_FILES = ("jquery.flot", "jquery.flot.selection", "jquery.flot.time", "jquery.flot.stack")
FLOT_FILES += ("jquery.flot.crosshair",)
# Grafana's own flot plugins, on no registry: imported by the same files, written empty.
GRAFANA_FLOT_PLUGINS = ("gauge", "stackpercent", "fillbelow", "dashes")


class FrontendError(RuntimeError):
    pass


def pin_xlsx(package_json: Path) -> None:
    """Replace the unreachable CDN `xlsx` with the registry's version (idempotent)."""
    data = json.loads(package_json.read_text())
    deps = data.get("dependencies", {})
    if "xlsx" not in deps:
        raise FrontendError(f"{package_json}: no dependency 'xlsx' to pin")
    deps["xlsx"] = XLSX_REGISTRY_VERSION
    package_json.write_text(json.dumps(data, indent=2) + "\n")


def set_version(package_json: Path, version: str) -> None:
    """The frontend reports the same version as the backend's ldflags."""
    data = json.loads(package_json.read_text())
    data["version"] = version
    package_json.write_text(json.dumps(data, indent=2) + "\n")


_LOADER_SOURCE = "source: await fs.promises.readFile(filePath, `utf8`),"
_LOADER_FIXED = (
    "source: format === `commonjs` ? void 0 : await fs.promises.readFile(filePath, `utf8`),"
)


def patch_pnp_loader(loader: Path) -> bool:
    """yarnpkg/berry#5677 on the generated loader; False when already applied."""
    if not loader.is_file():
        raise FrontendError(f"{loader}: not found (did `yarn install` run?)")
    text = loader.read_text()
    if _LOADER_FIXED in text:
        return False
    if text.count(_LOADER_SOURCE) != 1:
        raise FrontendError(
            f"{loader}: expected exactly one {_LOADER_SOURCE!r} in its load hook "
            "(a Yarn other than 3.4.1?)"
        )
    loader.write_text(text.replace(_LOADER_SOURCE, _LOADER_FIXED))
    return True


def fill_vendor(public: Path, downloads: Path) -> None:
    """public/vendor from the unpacked npm tarballs and the webjar in `downloads`."""
    vendor = public / "vendor"
    flot_src = downloads / "flot" / "package"
    tags_src = downloads / "bootstrap-tagsinput" / "package" / "dist"
    (vendor / "flot").mkdir(parents=True, exist_ok=True)
    for name in FLOT_FILES:
        _copy(flot_src / f"{name}.js", vendor / "flot" / f"{name}.js")
    for plugin in GRAFANA_FLOT_PLUGINS:
        (vendor / "flot" / f"jquery.flot.{plugin}.js").write_text(
            f"// jquery.flot.{plugin}: Grafana's own flot plugin is on no package registry;\n"
            "// wlmon builds without it (see wlmon/stack/frontend.py).\n"
        )
    (vendor / "tagsinput").mkdir(exist_ok=True)
    _copy(tags_src / "bootstrap-tagsinput.js", vendor / "tagsinput" / "bootstrap-tagsinput.js")
    jar = downloads / "bootstrap.jar"
    digest = hashlib.sha256(jar.read_bytes()).hexdigest()
    if digest != BOOTSTRAP_WEBJAR_SHA256:
        raise FrontendError(f"{jar}: sha256 {digest}, expected {BOOTSTRAP_WEBJAR_SHA256}")
    (vendor / "bootstrap").mkdir(exist_ok=True)
    with zipfile.ZipFile(jar) as zf:
        member = "META-INF/resources/webjars/bootstrap/2.3.2/js/bootstrap.js"
        (vendor / "bootstrap" / "bootstrap.js").write_bytes(zf.read(member))


def _copy(src: Path, dst: Path) -> None:
    if not src.is_file():
        raise FrontendError(f"{src}: not found in the downloaded package")
    dst.write_bytes(src.read_bytes())


def check_dashboard_panels(dashboard: dict) -> list[str]:
    """Panel features this build cannot draw (they need Grafana's own flot plugins)."""
    problems = []
    for panel in _panels(dashboard):
        title = panel.get("title", "?")
        if panel.get("type") == "gauge":
            problems.append(f"panel {title!r}: type 'gauge' draws an empty box in this build")
        if panel.get("type") == "graph":
            if panel.get("percentage") or any(
                o.get("dashes") for o in panel.get("seriesOverrides", [])
            ):
                problems.append(f"panel {title!r}: graph percent/dashes need a missing plugin")
            if any("fillBelowTo" in o for o in panel.get("seriesOverrides", [])):
                problems.append(f"panel {title!r}: graph fillBelowTo needs a missing plugin")
    return problems


def _panels(dashboard: dict):
    for panel in dashboard.get("panels", []):
        yield panel
        yield from panel.get("panels", [])


def main(argv: list[str]) -> int:
    try:
        match argv:
            case ["pin-xlsx", path]:
                pin_xlsx(Path(path))
            case ["set-version", path, version]:
                set_version(Path(path), version)
            case ["patch-pnp-loader", path]:
                patched = patch_pnp_loader(Path(path))
                print("patched" if patched else "already patched")
            case ["fill-vendor", public, downloads]:
                fill_vendor(Path(public), Path(downloads))
            case _:
                print(f"usage error: {' '.join(argv)!r}", file=sys.stderr)
                return 2
    except (FrontendError, OSError, json.JSONDecodeError, KeyError, zipfile.BadZipFile) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
