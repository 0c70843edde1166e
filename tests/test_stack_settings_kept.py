"""Settings kept in the stack's state (issue 38 item 4): set once with `wlmon config set`,
rendered the same by an `up` from a shell without the variables; the environment overrides;
secrets as 0600 files, masked in `config show`; generic over StackSettings' fields."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from pydantic import SecretStr
from typer.testing import CliRunner

from wlmon.cli import app
from wlmon.stack import reload, render, stored
from wlmon.stack.runtime import Stack
from wlmon.stack.settings import StackSettings

WATCHDOG = "https://hc.example/ping/kept"


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    for name in list(os.environ):
        if name.upper().startswith("WLMON_"):
            monkeypatch.delenv(name)
    state = tmp_path / "state"
    return {"WLMON_STATE_DIR": str(state), "COLUMNS": "300"}, state


def _config(env: dict, *args: str):
    return CliRunner().invoke(app, ["config", *args], env=env)


def _rendered_watchdog(settings: StackSettings, out) -> list[str]:
    values = render.alertmanager_values(settings, out, "token", "am-password")
    path = render.render_alertmanager(
        settings.repo_dir / "provisioning" / "alertmanager", values, out / "alertmanager"
    )
    doc = yaml.safe_load(path.read_text())
    (watchdog,) = [r for r in doc["receivers"] if r["name"] == "watchdog"]
    # The URL (a secret: it carries the check's token) is written to the file the
    # config names, never into the config itself.
    return [Path(w["url_file"]).read_text() for w in watchdog.get("webhook_configs", [])]


def test_a_kept_watchdog_is_rendered_by_an_up_from_a_shell_without_it(clean_env, tmp_path) -> None:
    env, state = clean_env
    assert _rendered_watchdog(StackSettings(state_dir=state), tmp_path / "a") == []
    result = _config(env, "set", "watchdog_url", WATCHDOG)
    assert result.exit_code == 0, result.output
    result = _config(env, "set", "WLMON_WATCHDOG_INTERVAL", "30s")
    assert result.exit_code == 0, result.output
    # A new shell: no WLMON_ variable at all, only the state.
    settings = StackSettings(state_dir=state)
    assert settings.watchdog_url is not None
    assert (settings.watchdog_url.get_secret_value(), settings.watchdog_interval) == (
        WATCHDOG,
        "30s",
    )
    assert _rendered_watchdog(settings, tmp_path / "b") == [WATCHDOG]
    origins = stored.origins(settings, state)
    assert origins["watchdog_url"] is stored.Origin.state
    assert origins["sid"] is stored.Origin.default


def test_the_environment_overrides_what_is_kept_and_says_so(
    clean_env, tmp_path, monkeypatch
) -> None:
    env, state = clean_env
    assert _config(env, "set", "watchdog_url", WATCHDOG).exit_code == 0
    assert _config(env, "set", "ports.api", "18123").exit_code == 0
    monkeypatch.setenv("WLMON_WATCHDOG_URL", "https://other.example/beat")
    monkeypatch.setenv("WLMON_PORT_API", "18124")
    settings = StackSettings(state_dir=state)
    assert settings.watchdog_url is not None
    assert settings.watchdog_url.get_secret_value() == "https://other.example/beat"
    assert settings.ports.api == 18124
    origins = stored.origins(settings, state)
    assert origins["watchdog_url"] is stored.Origin.environment
    assert origins["ports.api"] is stored.Origin.environment
    monkeypatch.delenv("WLMON_PORT_API")
    assert StackSettings(state_dir=state).ports.api == 18123
    shown = _config(env | {"WLMON_WATCHDOG_URL": "https://other.example/beat"}, "show")
    row = next(line for line in shown.output.splitlines() if "watchdog_url" in line)
    # A secret (the URL carries the check's token): masked, its origin still said.
    assert "other.example" not in row and "********" in row and "environment" in row


def test_a_secret_goes_to_a_private_file_and_is_shown_masked(clean_env) -> None:
    env, state = clean_env
    result = _config(env, "set", "smtp_password", "s3cret-value-42")
    assert result.exit_code == 0, result.output
    path = state / "secrets" / "smtp-password"
    assert path.read_text() == "s3cret-value-42"
    assert path.stat().st_mode & 0o777 == 0o600
    assert (state / "secrets").stat().st_mode & 0o777 == 0o700
    assert not stored.settings_path(state).exists() or "s3cret" not in (
        stored.settings_path(state).read_text()
    )
    assert StackSettings(state_dir=state).smtp_password.get_secret_value() == "s3cret-value-42"
    shown = _config(env, "show")
    assert shown.exit_code == 0 and "s3cret" not in shown.output
    row = next(line for line in shown.output.splitlines() if "smtp_password" in line)
    assert "********" in row and "state" in row
    # The stack's own secrets are the same files: a kept API token is the one `up` uses.
    assert _config(env, "set", "api_token", "kept-api-token-1").exit_code == 0
    stack = Stack(StackSettings(state_dir=state))
    assert stack.api_token() == "kept-api-token-1"
    sources = stack.secret_sources()
    assert "kept in" in next(v for k, v in sources.items() if k.startswith("API token"))


def test_bad_input_is_one_line_naming_the_setting_and_keeps_what_was_there(clean_env) -> None:
    env, state = clean_env
    assert _config(env, "set", "watchdog_interval", "30s").exit_code == 0
    before = stored.settings_path(state).read_text()
    for args, needle in (
        (("set", "telegraf_outage_s", "5"), "telegraf_outage_s"),
        (("set", "no_such_thing", "1"), "no_such_thing: no such setting"),
        (("set", "ports.nope", "1"), "ports.nope: no such port"),
        (("set", "smtp_password", "change-me"), "placeholder"),
        (("set", "state_dir", "/tmp"), "WLMON_STATE_DIR"),
        (("unset", "sid"), "not kept"),
    ):
        result = _config(env, *args)
        assert result.exit_code != 0, args
        assert needle in result.output and "Traceback" not in result.output, result.output
        assert len(result.output.strip().splitlines()) == 1, result.output
    assert stored.settings_path(state).read_text() == before
    stored.settings_path(state).write_text("watchdog_url: [\n")
    result = _config(env, "show")
    assert result.exit_code != 0 and "settings.yml line 2 column 1" in result.output
    up = CliRunner().invoke(app, ["up", "--no-install-missing"], env=env)
    assert up.exit_code != 0 and "settings.yml line 2" in up.output, up.output
    stored.settings_path(state).write_text("watchdog_ur: x\n")
    with pytest.raises(stored.StoredSettingsError, match=r"unknown setting.*watchdog_ur"):
        StackSettings(state_dir=state)


class _WithReceivers(StackSettings):
    """What another branch adds (receivers as fields): kept without code in stored.py."""

    chat_webhook_url: SecretStr | None = None
    pager_routing_key: SecretStr | None = None
    chat_channel: str = "#noc"


def test_fields_added_later_are_kept_the_same_way(clean_env) -> None:
    _, state = clean_env
    stored.write_secret(state, "chat_webhook_url", "https://chat.example/hook/xyz")
    stored.write_file(state, {"chat_channel": "#sap-oncall"})
    settings = _WithReceivers(state_dir=state)
    assert settings.chat_webhook_url.get_secret_value() == "https://chat.example/hook/xyz"
    assert settings.chat_channel == "#sap-oncall"
    assert settings.pager_routing_key is None
    origins = stored.origins(settings, state)
    assert origins["chat_webhook_url"] is stored.Origin.state
    assert origins["pager_routing_key"] is stored.Origin.default


def test_up_says_where_settings_came_from_and_warns_without_a_watchdog(
    clean_env, monkeypatch
) -> None:
    env, _ = clean_env
    monkeypatch.setattr(Stack, "up", lambda self, only=None, on_event=None: [])
    result = CliRunner().invoke(app, ["up", "--no-install-missing"], env=env | {"WLMON_SID": "QAS"})
    assert result.exit_code == 0, result.output
    assert "warning: no watchdog target" in result.output
    row = next(line for line in result.output.splitlines() if " sid " in line)
    assert "QAS" in row and "environment" in row
    assert _config(env, "set", "watchdog_url", WATCHDOG).exit_code == 0
    result = CliRunner().invoke(app, ["up", "--no-install-missing"], env=env)
    assert "no watchdog target" not in result.output
    row = next(line for line in result.output.splitlines() if "watchdog_url" in line)
    assert WATCHDOG not in row and "********" in row and "state" in row


def test_the_running_configuration_is_compared_value_by_value() -> None:
    rendered = {"global": {"scrape_interval": "60s"}, "scrape_configs": [{"job_name": "a"}]}
    # Prometheus writes its defaults back and 60s as 1m: the same configuration.
    loaded = {
        "global": {"scrape_interval": "1m", "scrape_timeout": "10s"},
        "scrape_configs": [{"job_name": "a", "honor_labels": False}],
    }
    assert reload._first_difference(loaded, rendered, subset=True) is None
    loaded["scrape_configs"][0]["job_name"] = "b"
    assert reload._first_difference(loaded, rendered, subset=True) == "/scrape_configs[0]/job_name"
    assert reload._first_difference({"a": 1, "b": 2}, {"a": 1}) == "/b"
    # An empty value the server leaves out when it writes its config back is no difference;
    # a value it lacks is.
    assert reload._first_difference({"a": 1}, {"a": 1, "user": ""}, subset=True) is None
    assert reload._first_difference({"a": 1}, {"a": 1, "user": "x"}, subset=True) == "/user"


def test_rendering_again_unchanged_changes_no_fingerprint_and_a_kept_setting_does(
    clean_env,
) -> None:
    """A second `up` with nothing changed reloads and restarts nothing; a setting kept
    since changes exactly the services that render it."""
    _, state = clean_env

    def fingerprints() -> dict[str, str]:
        stack = Stack(StackSettings(state_dir=state))
        stack.render()
        return {svc.name: stack._fingerprint(svc) for svc in stack.services()}

    first = fingerprints()
    assert fingerprints() == first
    stored.write_file(state, {"watchdog_interval": "30s"})
    changed = fingerprints()
    assert [n for n in first if first[n] != changed[n]] == ["alertmanager"]
