"""CCMS node values ("317 msec", "943 /min", "-") and node paths in GetAlertTree."""

from __future__ import annotations

import pytest

from exporters.sapcontrol import ccms, schema
from tests.sapcontrol.conftest import recorded


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("15 msec", 0.015),
        ("2 sec", 2.0),
        ("943 /min", 943 / 60),
        ("1,260 /min", 21.0),
        ("4 %", 0.04),
        ("22 perc", 0.22),
        ("97", 97.0),
        ("11 entr", 11.0),
        ("-", None),
        ("", None),
        (None, None),
        ("Running", None),
        ("12 furlongs", None),
    ],
)
def test_values_in_base_units(text, value) -> None:
    got = ccms.parse_value(text)
    assert got == (pytest.approx(value) if value is not None else None)


def test_repeated_names_are_told_apart_by_their_path() -> None:
    tree = schema.decode_response("GetAlertTree", recorded("GetAlertTree.xml"))
    nodes = ccms.paths(tree)
    dialog = ccms.find(nodes, ("Dialog", "ResponseTime"))
    update = ccms.find(nodes, ("Update", "PerformanceU1", "ResponseTime"))
    assert dialog["description"] == "250 msec"
    assert update["description"] == "943 msec"
    path = next(p for p, n in nodes if n is update)
    assert path == (
        "EPP",
        "sapapp1_EPP_00",
        "R3Services",
        "Update",
        "PerformanceU1",
        "ResponseTime",
    )


def test_a_broken_parent_chain_ends_instead_of_looping() -> None:
    tree = [
        {"name": "a", "parent": 1},
        {"name": "b", "parent": 0},
        {"name": "c", "parent": 99},
    ]
    assert [p for p, _ in ccms.paths(tree)] == [("b", "a"), ("a", "b"), ("c",)]
