"""The package map: imports run one way (exporters <- api <- wlmon), checked by import-linter,
no import of our own packages hides inside a function, where it would dodge a cycle, and no
exporters module reads a file of the alerts package by path (import-linter cannot see that)."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OURS = ("exporters", "api", "wlmon", "alerts", "dashboards")


def _local_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import of our packages made inside a function body."""
    found = []
    for func in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(func):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            found += [(node.lineno, n) for n in names if n.split(".")[0] in OURS]
    return found


def test_no_import_of_our_packages_inside_a_function() -> None:
    offenders = [
        f"{path.relative_to(REPO)}:{line} imports {module}"
        for package in OURS
        if (REPO / package).is_dir()
        for path in sorted((REPO / package).rglob("*.py"))
        for line, module in _local_imports(path)
    ]
    assert offenders == []


def test_the_checker_finds_a_local_import(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text("def f():\n    from api.store import Store\n    return Store\n")
    assert _local_imports(sample) == [(2, "api.store")]


def test_import_linter_contracts_are_kept() -> None:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert exe, "lint-imports (import-linter) is not installed in this environment"
    done = subprocess.run(
        [exe, "--no-cache"], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings (they may name files freely)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _paths_into_alerts(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every string in code that points into alerts/: the directory name as a
    path part, or one of its files (thresholds.yml, runbooks.md, *.rules.yml)."""
    tree = ast.parse(path.read_text(), str(path))
    skip = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
            continue
        text = node.value
        if id(node) in skip:
            continue
        if (
            text.strip("/") == "alerts"
            or "alerts/" in text
            or "thresholds.yml" in text
            or text.endswith((".rules.yml", "runbooks.md"))
        ):
            found.append((node.lineno, text))
    return sorted(found)


def test_no_exporters_module_reads_a_file_of_the_alerts_package() -> None:
    """alerts/ reads its own files (alerts.thresholds); exporters get the values passed in."""
    offenders = [
        f"{path.relative_to(REPO)}:{line} names {text!r}"
        for path in sorted((REPO / "exporters").rglob("*.py"))
        for line, text in _paths_into_alerts(path)
    ]
    assert offenders == []


def test_the_checker_finds_a_path_into_alerts(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text(
        '"""Reads alerts/thresholds.yml (a docstring may say so)."""\n'
        "from pathlib import Path\n"
        'F = Path(__file__).parents[1] / "alerts" / "thresholds.yml"\n'
        'G = "../alerts/x.rules.yml"\n'
    )
    assert _paths_into_alerts(sample) == [
        (3, "alerts"),
        (3, "thresholds.yml"),
        (4, "../alerts/x.rules.yml"),
    ]
