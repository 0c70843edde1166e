"""Every server, Python package and npm package the stack builds, fetches or starts is under
a licence wlmon may use, and docs/licences.md says which (issue 36: no AGPL, SSPL or BUSL)."""

from __future__ import annotations

import importlib.metadata as metadata
import json
import re
from pathlib import Path

import pytest
import yaml

from wlmon.stack import licences
from wlmon.stack.components import COMPONENTS
from wlmon.stack.licences import Verdict, judge

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "licences.md"


@pytest.mark.parametrize(
    ("declared", "verdict"),
    [
        ("MIT", Verdict.allowed),
        ("Apache-2.0 OR BSD-3-Clause", Verdict.allowed),
        ("BSD-2-Clause AND Apache-2.0 WITH LLVM-exception", Verdict.allowed),
        ("LGPL-3.0-only", Verdict.allowed),
        ("OSI Approved :: Mozilla Public License 2.0 (MPL 2.0)", Verdict.allowed),
        ("AGPL-3.0-only", Verdict.forbidden),
        ("GNU Affero General Public License v3", Verdict.forbidden),
        ("MIT AND AGPL-3.0-or-later", Verdict.forbidden),
        ("SSPL-1.0", Verdict.forbidden),
        ("BUSL-1.1", Verdict.forbidden),
        ("Elastic-2.0", Verdict.forbidden),
        ("MIT AND GPL-3.0-only", Verdict.unknown),  # every part of AND must be allowed
        ("GPL-3.0-only", Verdict.unknown),
        ("Proprietary", Verdict.unknown),
        ("", Verdict.unknown),
    ],
)
def test_judge(declared, verdict):
    assert judge(declared) is verdict


def _dist(**fields: str | list[str]) -> metadata.Distribution:
    """An installed-package stand-in whose METADATA holds exactly these fields, written as
    core metadata writes them (a multi-line value continued by indented lines)."""
    lines = []
    for key, value in fields.items():
        for item in value if isinstance(value, list) else [value]:
            lines.append(f"{key.replace('_', '-')}: " + item.replace("\n", "\n        "))
    text = "\n".join(lines) + "\n"

    class Dist(metadata.Distribution):
        def read_text(self, filename):
            return text if filename == "METADATA" else None

        def locate_file(self, path):  # pragma: no cover - not read
            return Path(path)

    return Dist()


def test_python_metadata_is_read_in_order():
    expression = _dist(Name="a", Version="1", License_Expression="MIT", License="GPL")
    assert licences.python_licence(expression) == ("MIT", "License-Expression")
    long_text = _dist(
        Name="b",
        Version="1",
        License="Copyright (c) 2015 someone\nPermission is hereby granted ...",
        Classifier=["License :: OSI Approved", "License :: OSI Approved :: BSD License"],
    )
    assert licences.python_licence(long_text) == ("BSD License", "Classifier")
    affero = _dist(
        Name="c",
        Version="1",
        Classifier="License :: OSI Approved :: GNU Affero General Public License v3",
    )
    rows = licences.python_packages([affero])
    assert rows[0].verdict is Verdict.forbidden
    assert licences.python_packages([_dist(Name="d", Version="1")])[0].verdict is Verdict.unknown


def test_every_server_component_is_allowed():
    rows = licences.servers()
    assert {r.name for r in rows} == set(COMPONENTS)
    refused = [
        f"{r.name} {r.version}: {r.licence or 'undeclared'}"
        for r in rows
        if r.verdict is not Verdict.allowed
    ]
    assert not refused, refused


def test_every_installed_python_package_is_allowed():
    rows = licences.python_packages()
    assert len(rows) > 30  # the whole environment was read, not an empty one
    refused = [
        f"{r.name} {r.version}: {r.licence!r} ({r.source})"
        for r in rows
        if r.verdict is not Verdict.allowed
    ]
    assert not refused, refused


def test_npm_lock_files_are_read(tmp_path):
    lock = tmp_path / "package-lock.json"
    lock.write_text(
        json.dumps(
            {
                "lockfileVersion": 3,
                "packages": {
                    "": {"name": "root"},
                    "node_modules/react": {"version": "18.3.1", "license": "MIT"},
                    "node_modules/@x/y": {"version": "1.0.0", "license": "AGPL-3.0"},
                    "node_modules/z": {"version": "2.0.0"},
                    # Read by hand (REVIEWED) only where nothing is declared:
                    "node_modules/@perses-dev/table-plugin": {"version": "0.8.1"},
                    "node_modules/typed-function": {"version": "2.1.0", "license": "SSPL-1.0"},
                },
            }
        )
    )
    rows = {r.name: r.verdict for r in licences.npm_lockfile(lock)}
    assert rows == {
        "react": Verdict.allowed,
        "@x/y": Verdict.forbidden,
        "z": Verdict.unknown,
        "@perses-dev/table-plugin": Verdict.allowed,
        "typed-function": Verdict.forbidden,
    }


def test_every_npm_package_a_component_is_built_with_is_allowed():
    rows = licences.npm_packages()
    assert any(c.npm_lockfiles for c in COMPONENTS.values()) == bool(rows)
    refused = [
        f"{r.name} {r.version}: {r.licence!r}" for r in rows if r.verdict is not Verdict.allowed
    ]
    assert not refused, refused


def _doc_table() -> dict[str, tuple[str, str]]:
    """docs/licences.md's server table: name -> (version, licence)."""
    rows: dict[str, tuple[str, str]] = {}
    section = DOC.read_text(encoding="utf-8").split("## Servers", 1)[1].split("\n## ", 1)[0]
    for line in section.splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if (
            len(cells) >= 3
            and cells[0]
            and not set(cells[0]) <= {"-", ":"}
            and cells[0] != "component"
        ):
            rows[cells[0]] = (cells[1], cells[2])
    return rows


def test_docs_name_every_component_with_its_licence_and_version():
    documented = _doc_table()
    expected = {c.name: (c.released, c.licence) for c in COMPONENTS.values()}
    assert documented == expected


def test_every_compose_image_is_documented_and_allowed():
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text(encoding="utf-8"))
    images = {s["image"] for s in compose["services"].values() if "image" in s}
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Images", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and re.match(r"^[a-z0-9.\-/]+:[\w.\-]+$", cells[0]):
            rows[cells[0]] = cells[1]
    assert images <= set(rows), sorted(images - set(rows))
    refused = {image: rows[image] for image in images if judge(rows[image]) is not Verdict.allowed}
    assert not refused, refused


def test_docs_name_every_pinned_python_library_with_its_version():
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pins = project["dependencies"] + [
        d for ds in project["optional-dependencies"].values() for d in ds
    ]
    expected = {}
    for pin in pins:
        name, _, version = re.sub(r"\[.*?\]", "", pin).partition("==")
        expected[name.strip().lower()] = version.strip()
    section = (
        DOC.read_text(encoding="utf-8").split("## Python libraries", 1)[1].split("\n## ", 1)[0]
    )
    documented = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0] not in ("package", "") and not set(cells[0]) <= {"-"}:
            documented[cells[0].lower()] = cells[1]
    assert documented == expected
