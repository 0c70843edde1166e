"""Secrets as files (WLMON_SECRETS_DIR, docker-compose's /run/secrets): read by the API's and
the exporter's settings, the environment still winning; a wrong directory is named."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from api.config import Settings
from exporters.config import ExporterSettings
from exporters.secretfiles import DEPRECATED_NAMES, deprecated_names_in_use


def test_settings_read_their_secrets_from_files_and_the_environment_wins(
    tmp_path, monkeypatch
) -> None:
    (tmp_path / "wlmon_api_token").write_text("token-from-file")
    # One file for the exporter's token, read by the API (which sends it) and the exporter.
    (tmp_path / "wlmon_exporter_token").write_text("exporter-from-file")
    for name in ("WLMON_API_TOKEN", "WLMON_EXPORTER_TOKEN", *DEPRECATED_NAMES):
        monkeypatch.delenv(name, raising=False)
    assert Settings().token is None  # no directory named: the environment alone
    monkeypatch.setenv("WLMON_SECRETS_DIR", str(tmp_path))
    settings = Settings()
    assert settings.token.get_secret_value() == "token-from-file"
    assert settings.exporter_token.get_secret_value() == "exporter-from-file"
    assert ExporterSettings().control_token.get_secret_value() == "exporter-from-file"
    monkeypatch.setenv("WLMON_API_TOKEN", "from-env")
    assert Settings().token.get_secret_value() == "from-env"
    assert deprecated_names_in_use({"WLMON_SECRETS_DIR": str(tmp_path)}) == []


@pytest.mark.parametrize("old", sorted(DEPRECATED_NAMES))
def test_an_old_name_of_the_exporter_token_is_read_with_a_warning(
    tmp_path, monkeypatch, old
) -> None:
    for name in ("WLMON_EXPORTER_TOKEN", "WLMON_SECRETS_DIR", *DEPRECATED_NAMES):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(old, "old-name")
    read = (
        ExporterSettings().control_token
        if old.startswith("WLMON_EXPORTER_")
        else Settings().exporter_token
    )
    assert read.get_secret_value() == "old-name"
    (line,) = deprecated_names_in_use({old: "old-name"})
    assert line.startswith(f"{old} is deprecated") and "set WLMON_EXPORTER_TOKEN" in line
    # As a compose secret file too.
    monkeypatch.delenv(old)
    (tmp_path / old.lower()).write_text("old-file")
    (line,) = deprecated_names_in_use({"WLMON_SECRETS_DIR": str(tmp_path)})
    assert line.startswith(old)


def test_a_secrets_dir_that_is_not_there_is_named(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("WLMON_SECRETS_DIR", str(tmp_path / "nope"))
    with pytest.raises((ValueError, ValidationError), match=r"WLMON_SECRETS_DIR=.*nope"):
        Settings()


def test_influxdbs_password_as_a_file_makes_the_user_password_token(tmp_path, monkeypatch) -> None:
    """docker-compose mounts InfluxDB's admin password alone (a file cannot hold the
    "user:password" token): the API joins it with WLMON_API_INFLUX_USERNAME."""
    (tmp_path / "wlmon_api_influx_password").write_text("pw-from-file")
    for name in ("WLMON_API_INFLUX_TOKEN", "WLMON_API_INFLUX_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("WLMON_SECRETS_DIR", str(tmp_path))
    monkeypatch.setenv("WLMON_API_INFLUX_USERNAME", "wlmon-admin")
    assert Settings().influx_credentials == "wlmon-admin:pw-from-file"
    monkeypatch.delenv("WLMON_API_INFLUX_USERNAME")
    with pytest.raises(ValidationError, match="WLMON_API_INFLUX_USERNAME is not"):
        Settings()
    monkeypatch.setenv("WLMON_API_INFLUX_USERNAME", "wlmon-admin")
    monkeypatch.setenv("WLMON_API_INFLUX_TOKEN", "a:b")
    with pytest.raises(ValidationError, match="both set"):
        Settings()


def test_the_database_is_in_the_state_dir_the_stack_reads(tmp_path, monkeypatch) -> None:
    """WLMON_STATE_DIR reaches the API as a setting (not read by hand below it)."""
    monkeypatch.delenv("WLMON_API_DB_PATH", raising=False)
    monkeypatch.setenv("WLMON_STATE_DIR", str(tmp_path / "state"))
    assert Settings().db_path == tmp_path / "state" / "data" / "api" / "wlmon.sqlite"
    assert Settings(state_dir=tmp_path / "given").db_path.parent.parent.parent == tmp_path / "given"
    monkeypatch.setenv("WLMON_API_DB_PATH", str(tmp_path / "own.sqlite"))
    assert Settings().db_path == tmp_path / "own.sqlite"
