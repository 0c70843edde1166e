"""The golden-file comparer itself: exact on structure, tolerant on values only."""

from __future__ import annotations

import pytest

from tests.collectors.exposition import differences

GOLDEN = """\
# HELP sap_buffer_hits_total Accesses served from the buffer (ST02 'Hitratio').
# TYPE sap_buffer_hits_total counter
sap_buffer_hits_total{buffer="program",sid="BMK"} 6.7882293382707015
sap_buffer_hits_total{buffer="cua",sid="BMK"} 0.0
# HELP windows_physical_disk_reads_total PhysicalDisk\\\\Disk Reads/sec.
# TYPE windows_physical_disk_reads_total counter
windows_physical_disk_reads_total{disk="0 C:",host="penguin2"} 1.5e+06
# HELP sap_up 1 if the monitored system's statistics could be read.
# TYPE sap_up gauge
sap_up{sid="BMK"} NaN
sap_up{sid="PG1"} +Inf
"""


def test_identical_expositions_match() -> None:
    assert differences(GOLDEN, GOLDEN) == []


def test_a_difference_in_the_last_digits_matches() -> None:
    other = GOLDEN.replace("6.7882293382707015", "6.788229338270701")
    assert other != GOLDEN
    assert differences(other, GOLDEN) == []


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param('buffer="cua"', 'buffer="CUA"', id="label value"),
        pytest.param('buffer="cua",sid', 'buffer="cua",instance="x",sid', id="label added"),
        pytest.param("(ST02 'Hitratio')", "(ST02 'Hit ratio')", id="HELP"),
        pytest.param("sap_up gauge", "sap_up counter", id="TYPE"),
        pytest.param(
            "sap_buffer_hits_total{buffer", "sap_buffer_hit_total{buffer", id="sample name"
        ),
        pytest.param("6.7882293382707015", "6.7883", id="value beyond tolerance"),
        pytest.param("} 0.0", "} 1e-9", id="zero beyond the absolute tolerance"),
        pytest.param("NaN", "0.0", id="NaN"),
        pytest.param("+Inf", "-Inf", id="infinity"),
    ],
)
def test_a_change_is_found(old: str, new: str) -> None:
    assert old in GOLDEN
    assert differences(GOLDEN.replace(old, new, 1), GOLDEN) != []


def test_a_reordered_family_is_found() -> None:
    lines = GOLDEN.splitlines(keepends=True)
    reordered = "".join(lines[4:7] + lines[:4] + lines[7:])
    assert sorted(reordered.splitlines()) == sorted(GOLDEN.splitlines())
    assert differences(reordered, GOLDEN) != []


def test_a_missing_sample_is_found() -> None:
    assert differences(GOLDEN.replace('sap_up{sid="PG1"} +Inf\n', ""), GOLDEN) != []
