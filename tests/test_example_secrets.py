""".env.example ships no usable password (issue 38: all five secrets were `change-me`, which
compose's `${VAR:?}` accepts, so a copied example started a stack anyone could log into):
the example's secrets are empty, so compose refuses to load it, and `wlmon` refuses a
placeholder secret before rendering anything."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from tests.test_compose import REPO, SECRETS, _load
from wlmon.cli import app
from wlmon.stack.settings import StackSettings

runner = CliRunner()


def _example() -> dict[str, str]:
    pairs = {}
    for line in (REPO / ".env.example").read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            pairs[key.strip()] = value.strip()
    return pairs


def test_the_example_sets_every_secret_compose_needs_and_none_usable() -> None:
    example = _example()
    assert set(SECRETS) <= set(example)
    assert all(example[name] == "" for name in SECRETS), example


def test_compose_refuses_the_example_values() -> None:
    result = _load(_example())
    assert result.returncode != 0, "compose loaded the example's secrets"
    assert any(f"set {name} in .env" in result.stderr for name in SECRETS), result.stderr


@pytest.mark.parametrize("value", ["change-me", "Change_Me", "CHANGEME", "password"])
def test_wlmon_refuses_a_placeholder_secret_before_rendering(tmp_path, value) -> None:
    with pytest.raises(ValidationError, match="WLMON_API_TOKEN is a placeholder"):
        StackSettings(state_dir=tmp_path, api_token=value)
    env = {"WLMON_STATE_DIR": str(tmp_path), "WLMON_ALERTMANAGER_PASSWORD": value}
    result = runner.invoke(app, ["up"], env=env)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "WLMON_ALERTMANAGER_PASSWORD is a placeholder" in lines[0]
    assert not (tmp_path / "config").exists()  # nothing rendered


def test_a_real_secret_is_taken(tmp_path) -> None:
    settings = StackSettings(state_dir=tmp_path, api_token="k3Jq-9vR2-xx81-Lm0p")
    assert settings.api_token is not None
