from __future__ import annotations

import pytest

from exporters.durations import parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90", 90),
        ("90s", 90),
        ("15m", 900),
        ("1h", 3600),
        ("1h30m", 5400),
        ("0.5h", 1800),
        ("500ms", 0.5),
        ("1m30s", 90),
    ],
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "h", "1x", "0", "-5m", "1h 2"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration(text)


@pytest.mark.parametrize("text", ["0", "0s", "0m", "0.0h", "0ms"])
def test_zero_only_where_allowed(text: str) -> None:
    """An offset may be zero (a fault from the run's start); a length may not."""
    assert parse_duration(text, allow_zero=True) == 0
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration(text)


@pytest.mark.parametrize("text", ["", "-0s", "0x", "s"])
def test_allow_zero_still_refuses_what_is_not_a_duration(text: str) -> None:
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration(text, allow_zero=True)
