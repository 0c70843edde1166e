"""The package map: imports run one way (exporters <- api <- wlmon), checked by import-linter,
and no import of our own packages hides inside a function, where it would dodge a cycle."""

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
