"""The package map: imports run one way (exporters <- api <- wlmon), checked by import-linter,
no import of our own packages hides inside a function, where it would dodge a cycle, no
exporters or api module reads a file of the alerts package by path (import-linter cannot see
that), and configuration is read only at the edge: below it nothing reads the environment or
thresholds.yml, everything gets its settings passed down."""

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
    # A bare "alerts" is a path part only when joined (`x / "alerts"`, `Path("alerts")`);
    # elsewhere it is the API's /alerts resource or a tag.
    joined = {
        id(side)
        for node in ast.walk(tree)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)
        for side in (node.left, node.right)
    } | {
        id(arg)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", None)) in ("Path", "joinpath")
        for arg in node.args
    }
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
            continue
        text = node.value
        if id(node) in skip:
            continue
        if (
            (text.strip("/") == "alerts" and id(node) in joined)
            or "alerts/" in text
            or "thresholds.yml" in text
            or text.endswith((".rules.yml", "runbooks.md"))
        ):
            found.append((node.lineno, text))
    return sorted(found)


def test_no_exporters_or_api_module_reads_a_file_of_the_alerts_package() -> None:
    """alerts/ reads its own files (alerts.thresholds, alerts.runbooks); the model, the
    exporters and the API get the values (or a reader) passed in."""
    offenders = [
        f"{path.relative_to(REPO)}:{line} names {text!r}"
        for package in ("landscape_model", "exporters", "api")
        for path in sorted((REPO / package).rglob("*.py"))
        for line, text in _paths_into_alerts(path)
    ]
    assert offenders == []


# The edges: the only modules that read the environment, settings or the alerts' files,
# each with what it may read and why it is an edge. Settings classes (pydantic-settings)
# live in the config modules; the API's app factory, the exporter's load_config, the CLI's
# commands and the builders' `main` instantiate them and hand the result down.
EDGES = {
    "api/config.py": {"Settings"},
    "api/main.py": {"get_settings", "load_thresholds"},
    "exporters/config.py": {"ExporterSettings", "SapStartSrvSettings", "SAPControlSettings"},
    # The settings classes' own source of compose secret files (WLMON_SECRETS_DIR): called
    # only from their settings_customise_sources, i.e. while the edge reads its settings.
    "exporters/secretfiles.py": {"environ"},
    # The rule and dashboard builders' edge: `python -m alerts.build` / `dashboards.build`
    # read thresholds.yml and WLMON_RUNBOOK_BASE_URL (load_monitoring_config) in main().
    "alerts/settings.py": {"load_thresholds", "RunbookSettings"},
    "alerts/build.py": {"load_monitoring_config"},
    "dashboards/build.py": {"load_monitoring_config"},
    "dashboards/docs.py": {"load_monitoring_config"},
    # The CLI's commands are its edge: each reads what it needs and passes it down.
    "wlmon/cli/edge.py": {"load_thresholds", "get_settings"},
    "wlmon/cli/check.py": {"get_settings"},
    "wlmon/cli/compare.py": {"get_settings"},
    "wlmon/cli/runs.py": {"get_settings", "StackSettings"},
    "wlmon/cli/fleet.py": {"StackSettings"},
    "wlmon/cli/simulate.py": {"load_thresholds"},
    # serve.py: `wlmon exporter/api` read their settings and the thresholds; the deprecated
    # secret names are looked for in the environment (deprecated_names_in_use(os.environ));
    # `render-config` fills a template from the environment (compose's entrypoint).
    "wlmon/cli/serve.py": {"load_thresholds", "load_config", "get_settings", "environ"},
    # `wlmon config`: WLMON_STATE_DIR read by hand, so a broken settings file can be fixed.
    "wlmon/cli/config.py": {"environ", "StackSettings"},
    # The stack's settings are read where the stack is built (Stack(), runtime.py) and by
    # the commands; stored.py reports which variables are set (`wlmon config show`'s origin).
    "wlmon/stack/stored.py": {"environ"},
    # WLMON_CACHE names where built servers live; tests and benches find promtool by it too.
    "wlmon/stack/components.py": {"environ"},
    # Child processes inherit the environment (PATH, proxies): passed on, nothing read.
    "wlmon/stack/install.py": {"environ"},
    "wlmon/stack/runtime.py": {"environ", "StackSettings"},
}
# Every package is scanned: the builders and the CLI too, not only the services.
PACKAGES = ("landscape_model", "exporters", "api", "wlmon", "alerts", "dashboards")
# What reads configuration: the environment, and the calls that read it or alerts' files.
# (alerts.thresholds had a cached getter `thresholds()`: gone; the name is left out because
# the dashboards' renderers have functions of that name that read nothing.)
READERS = {
    "environ",
    "getenv",
    "environb",
    "load_thresholds",
    "load_monitoring_config",
    "threshold_seconds",
    "read_runbooks",
    "load_config",
    "get_settings",
    "Settings",
    "ExporterSettings",
    "SapStartSrvSettings",
    "SAPControlSettings",
    "RunbookSettings",
    "StackSettings",
}


def _config_reads(path: Path) -> list[tuple[int, str]]:
    """(line, name) of every read of configuration in a module: `os.environ`/`os.getenv`
    (attribute or imported name) and calls of a settings class or a loader in READERS."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id == "os" and node.attr in ("environ", "getenv", "environb"):
                found.append((node.lineno, node.attr))
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            found += [(node.lineno, a.name) for a in node.names if a.name in READERS]
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name in READERS - {"environ", "getenv", "environb"}:
                found.append((node.lineno, name))
    return sorted(set(found))


def test_configuration_is_read_only_at_the_edge() -> None:
    """Issue 25 (configuration flows downward): services, collectors and sources take typed
    settings as parameters; only the config modules and the app factory read them."""
    offenders = [
        f"{rel}:{line} reads {name}"
        for package in PACKAGES
        for path in sorted((REPO / package).rglob("*.py"))
        if (rel := str(path.relative_to(REPO)))
        for line, name in _config_reads(path)
        if name not in EDGES.get(rel, set())
    ]
    assert offenders == []


def test_every_edge_still_reads_what_it_is_allowed() -> None:
    """An allowance nothing uses any more is removed, so the list cannot grow stale."""
    unused = {
        rel: sorted(names - {name for _, name in _config_reads(REPO / rel)})
        for rel, names in EDGES.items()
    }
    assert {rel: names for rel, names in unused.items() if names} == {}


def test_the_checker_finds_a_deep_configuration_read(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text(
        "import os\n"
        "from os import getenv\n"
        "from alerts.thresholds import load_thresholds\n"
        "A = os.environ.get('X')\n"
        "def f(environ):\n"
        "    return environ.get('HTTP_HOST'), load_thresholds(), ExporterSettings()\n"
    )
    assert _config_reads(sample) == [
        (2, "getenv"),
        (4, "environ"),
        (6, "ExporterSettings"),
        (6, "load_thresholds"),
    ]


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
