"""The stack's state and secrets directories are mode 700 (issue 38: they were 755, the
files in them 600), made so on a fresh state and on one an older version left open."""

from __future__ import annotations

from wlmon.stack.runtime import Stack
from wlmon.stack.settings import StackSettings


def test_a_fresh_state_and_its_secrets_are_private(tmp_path) -> None:
    state = tmp_path / "state"
    Stack(StackSettings(state_dir=state)).api_token()
    assert state.stat().st_mode & 0o777 == 0o700
    assert (state / "secrets").stat().st_mode & 0o777 == 0o700
    assert (state / "secrets" / "api-token").stat().st_mode & 0o777 == 0o600


def test_a_state_left_open_is_closed_on_the_next_start(tmp_path) -> None:
    state = tmp_path / "state"
    (state / "secrets").mkdir(parents=True, mode=0o755)
    state.chmod(0o755)
    (state / "secrets").chmod(0o755)
    Stack(StackSettings(state_dir=state)).api_token()
    assert state.stat().st_mode & 0o777 == 0o700
    assert (state / "secrets").stat().st_mode & 0o777 == 0o700
