"""alerts.thresholds reads thresholds.yml into a typed Thresholds, or names what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from alerts.thresholds import THRESHOLDS_FILE, ThresholdsError, load_thresholds
from exporters.vocabulary import DIALOG_RESPONSE


def _write(tmp_path: Path, doc: object) -> Path:
    path = tmp_path / "thresholds.yml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_the_shipped_file_loads_with_every_key() -> None:
    t = load_thresholds()
    assert set(t.mapping()) == set(yaml.safe_load(THRESHOLDS_FILE.read_text()))
    assert t.seconds(DIALOG_RESPONSE) == pytest.approx(2.0)


def test_an_unknown_key_is_named(tmp_path: Path) -> None:
    doc = {**load_thresholds().mapping(), "dialog_respnse_seconds": 1.0}
    with pytest.raises(ThresholdsError, match=r"thresholds\.yml: dialog_respnse_seconds"):
        load_thresholds(_write(tmp_path, doc))


def test_a_non_positive_number_is_named(tmp_path: Path) -> None:
    doc = {**load_thresholds().mapping(), "roll_seconds": -0.02}
    with pytest.raises(ThresholdsError, match="roll_seconds: Input should be greater than 0"):
        load_thresholds(_write(tmp_path, doc))


def test_a_list_is_not_a_thresholds_file(tmp_path: Path) -> None:
    with pytest.raises(ThresholdsError, match="expected a mapping"):
        load_thresholds(_write(tmp_path, [1, 2]))
