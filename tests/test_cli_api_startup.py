"""`wlmon api` at start-up: a WLMON_API_* value the settings refuse is one error line naming
the variable, exit 2, before uvicorn (whose app factory raised it as a traceback)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from api.config import get_settings
from wlmon.cli import app
from wlmon.cli import serve as serve_cli
from wlmon.stack import pki

runner = CliRunner()


@pytest.fixture(autouse=True)
def never_serve(monkeypatch):
    """A refusal comes before uvicorn: an API that got as far as serving failed the test."""

    class Server:
        def __init__(self, *args, **kwargs) -> None:
            raise AssertionError("reached uvicorn")

    monkeypatch.setattr(serve_cli.uvicorn, "Server", Server)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_a_missing_log_store_ca_file_is_one_error_line(tmp_path) -> None:
    env = {
        "COLUMNS": "1000",
        "WLMON_API_DB_PATH": str(tmp_path / "db.sqlite"),
        "WLMON_API_LOGS_CA_FILE": str(tmp_path / "missing.pem"),
    }
    result = runner.invoke(app, ["api", "--port", "0"], env=env)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.output
    assert "WLMON_API_LOGS_CA_FILE" in lines[0]


def test_a_key_of_another_certificate_is_one_error_line(tmp_path) -> None:
    made, _ = pki.ensure(tmp_path / "tls")
    other, _ = pki.ensure(tmp_path / "other")
    env = {
        "COLUMNS": "1000",
        "WLMON_API_DB_PATH": str(tmp_path / "db.sqlite"),
        "WLMON_API_LOGS_CA_FILE": str(made.ca),
        "WLMON_API_LOGS_CERT_FILE": str(made.cert("server")),
        "WLMON_API_LOGS_KEY_FILE": str(other.key("server")),
    }
    result = runner.invoke(app, ["api", "--port", "0"], env=env)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "do not load" in lines[0], result.output
