"""The frontend build's own steps (wlmon/stack/frontend.py), on files shaped like the real ones."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from wlmon.stack import frontend
from wlmon.stack.frontend import FrontendError
from wlmon.stack.settings import REPO_DIR

# The load hook of the .pnp.loader.mjs Yarn 3.4.1 generates (its tail, verbatim).
LOADER_TAIL = """\
  return {
    format,
    source: await fs.promises.readFile(filePath, `utf8`),
    shortCircuit: true
  };
}
"""


def test_xlsx_is_pinned_to_the_registry_version_and_the_rest_is_kept(tmp_path) -> None:
    pkg = tmp_path / "package.json"
    url = "https://cdn.sheetjs.com/xlsx-0.19.1/xlsx-0.19.1.tgz"
    pkg.write_text(
        json.dumps({"version": "10.0.0-preview", "dependencies": {"xlsx": url, "a": "1"}})
    )
    frontend.pin_xlsx(pkg)
    frontend.set_version(pkg, "10.1.0-pre.20230609")
    data = json.loads(pkg.read_text())
    assert data == {"version": "10.1.0-pre.20230609", "dependencies": {"xlsx": "0.18.5", "a": "1"}}


def test_a_package_json_without_xlsx_is_an_error(tmp_path) -> None:
    pkg = tmp_path / "package.json"
    pkg.write_text('{"dependencies": {}}')
    assert frontend.main(["pin-xlsx", str(pkg)]) == 1


def test_the_loader_returns_no_source_for_commonjs_once(tmp_path) -> None:
    loader = tmp_path / ".pnp.loader.mjs"
    loader.write_text("async function load$1(urlString, context, nextLoad) {\n" + LOADER_TAIL)
    assert frontend.patch_pnp_loader(loader) is True
    text = loader.read_text()
    assert "format === `commonjs` ? void 0 : await fs.promises.readFile" in text
    assert frontend.patch_pnp_loader(loader) is False  # idempotent
    assert loader.read_text() == text


def test_a_loader_of_another_shape_is_refused_not_guessed(tmp_path) -> None:
    loader = tmp_path / ".pnp.loader.mjs"
    loader.write_text("export async function load() { return nextLoad(); }\n")
    with pytest.raises(FrontendError, match="expected exactly one"):
        frontend.patch_pnp_loader(loader)
    with pytest.raises(FrontendError, match="did `yarn install` run"):
        frontend.patch_pnp_loader(tmp_path / "missing.mjs")


def _downloads(tmp_path: Path, jar_member: bytes) -> Path:
    dl = tmp_path / "dl"
    flot = dl / "flot" / "package"
    flot.mkdir(parents=True)
    for name in frontend.FLOT_FILES:
        (flot / f"{name}.js").write_text(f"/* {name} */")
    tags = dl / "bootstrap-tagsinput" / "package" / "dist"
    tags.mkdir(parents=True)
    (tags / "bootstrap-tagsinput.js").write_text("/* tags */")
    with zipfile.ZipFile(dl / "bootstrap.jar", "w") as zf:
        zf.writestr("META-INF/resources/webjars/bootstrap/2.3.2/js/bootstrap.js", jar_member)
    return dl


def test_vendor_is_filled_from_the_packages_and_the_checked_jar(tmp_path, monkeypatch) -> None:
    dl = _downloads(tmp_path, b"/* bootstrap 2.3.2 */")
    monkeypatch.setattr(
        frontend,
        "BOOTSTRAP_WEBJAR_SHA256",
        hashlib.sha256((dl / "bootstrap.jar").read_bytes()).hexdigest(),
    )
    public = tmp_path / "public"
    frontend.fill_vendor(public, dl)
    vendor = public / "vendor"
    assert (vendor / "flot" / "jquery.flot.time.js").read_text() == "/* jquery.flot.time */"
    assert (vendor / "tagsinput" / "bootstrap-tagsinput.js").read_text() == "/* tags */"
    assert (vendor / "bootstrap" / "bootstrap.js").read_bytes() == b"/* bootstrap 2.3.2 */"
    # Grafana's own plugins: modules that exist (webpack resolves them) and do nothing.
    for plugin in frontend.GRAFANA_FLOT_PLUGINS:
        text = (vendor / "flot" / f"jquery.flot.{plugin}.js").read_text()
        assert all(line.startswith("//") for line in text.splitlines())


def test_a_jar_with_another_digest_stops_the_build(tmp_path) -> None:
    dl = _downloads(tmp_path, b"tampered")
    with pytest.raises(FrontendError, match="sha256"):
        frontend.fill_vendor(tmp_path / "public", dl)


def test_a_package_missing_a_file_names_it(tmp_path) -> None:
    dl = _downloads(tmp_path, b"x")
    (dl / "flot" / "package" / "jquery.flot.stack.js").unlink()
    assert frontend.main(["fill-vendor", str(tmp_path / "public"), str(dl)]) == 1


def test_panels_this_build_cannot_draw_are_named() -> None:
    dashboard = {
        "panels": [
            {"type": "stat", "title": "ok"},
            {"type": "row", "panels": [{"type": "gauge", "title": "Hit ratio"}]},
            {"type": "graph", "title": "old", "seriesOverrides": [{"alias": "x", "dashes": True}]},
        ]
    }
    problems = frontend.check_dashboard_panels(dashboard)
    assert problems == [
        "panel 'Hit ratio': type 'gauge' draws an empty box in this build",
        "panel 'old': graph percent/dashes need a missing plugin",
    ]


@pytest.mark.parametrize(
    "path", sorted(REPO_DIR.glob("dashboards/grafana/*/*.json")), ids=lambda p: p.stem
)
def test_every_dashboard_draws_in_the_built_ui(path: Path) -> None:
    assert frontend.check_dashboard_panels(json.loads(path.read_text())) == []
