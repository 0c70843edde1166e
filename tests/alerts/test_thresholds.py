"""alerts.thresholds reads thresholds.yml into a typed Thresholds, or names what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from alerts.thresholds import THRESHOLDS_FILE, ThresholdsError, load_thresholds
from exporters.vocabulary import DIALOG_RESPONSE, INDICATORS


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


def test_a_page_level_at_or_under_its_warning_level_is_named(tmp_path: Path) -> None:
    """The page level is where the alert fires, the warning level what ST03 colours: a page
    under the paper's threshold would page on what the dashboards call healthy."""
    doc = {**load_thresholds().mapping(), "enqueue_page_seconds": 0.004}
    with pytest.raises(ThresholdsError, match="enqueue_page_seconds must be above enqueue_seconds"):
        load_thresholds(_write(tmp_path, doc))


def test_a_throughput_ratio_of_one_or_more_is_named(tmp_path: Path) -> None:
    doc = {**load_thresholds().mapping(), "throughput_min_ratio": 1.2}
    with pytest.raises(ThresholdsError, match="throughput_min_ratio must be below 1"):
        load_thresholds(_write(tmp_path, doc))


def test_every_indicator_has_a_page_level_above_its_warning_level() -> None:
    t = load_thresholds()
    for indicator in INDICATORS:
        page = t.page_seconds(indicator)
        assert page is not None and page > t.seconds(indicator), indicator.alert
    assert t.page_seconds(DIALOG_RESPONSE) is None
