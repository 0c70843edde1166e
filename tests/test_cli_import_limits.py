"""`wlmon import` applies the API's size and row limits before parsing, naming the limit
and its setting; a file within them is imported as before."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from api.config import get_settings
from api.store import Store
from wlmon.cli import app

runner = CliRunner()
FIXTURES = Path(__file__).resolve().parent / "fixtures"
PERFMON = FIXTURES / "perfmon" / "relog-utf8.csv"
ST03 = FIXTURES / "st03" / "per-task-type.csv"


@pytest.fixture
def invoke(tmp_path):
    db = tmp_path / "db.sqlite"

    def run(args: list[str], **limits: int):
        env = {"WLMON_API_DB_PATH": str(db)}
        env |= {f"WLMON_API_{k.upper()}": str(v) for k, v in limits.items()}
        get_settings.cache_clear()
        try:
            return runner.invoke(app, args, env=env)
        finally:
            get_settings.cache_clear()

    run.db = db
    return run


def _runs(db: Path) -> int:
    return len(Store(db).runs.list(100, 0).rows) if db.exists() else 0


def test_a_file_over_the_byte_limit_is_refused_up_front(invoke) -> None:
    size = PERFMON.stat().st_size
    r = invoke(["import", "perfmon", str(PERFMON)], perfmon_max_bytes=size - 1)
    assert r.exit_code == 2, r.output
    said = " ".join(r.output.split())
    assert f"{size:,} bytes: over the PerfMon import limit of {size - 1:,} bytes" in said
    assert "WLMON_API_PERFMON_MAX_BYTES" in said and "Traceback" not in r.output
    assert _runs(invoke.db) == 0


def test_a_file_over_the_row_limit_is_refused_up_front(invoke) -> None:
    rows = len(ST03.read_text(encoding="utf-8").splitlines()) - 1
    r = invoke(["import", "st03", str(ST03)], st03_max_rows=2)
    assert r.exit_code == 2, r.output
    said = " ".join(r.output.split())
    assert "over the ST03 import limit of 2 rows (setting WLMON_API_ST03_MAX_ROWS)" in said
    assert rows > 2 and _runs(invoke.db) == 0


def test_within_the_limits_the_import_is_stored(invoke) -> None:
    size = PERFMON.stat().st_size
    r = invoke(["import", "perfmon", str(PERFMON)], perfmon_max_bytes=size)
    assert r.exit_code == 0, r.output
    assert _runs(invoke.db) == 1
