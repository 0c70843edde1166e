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
        ("0,5 sec", 0.5),  # a decimal comma: read as 5 before issue 25
        ("12,75 msec", 0.01275),
        ("0,500 sec", 0.5),
        ("1.234,5 msec", 1.2345),
        ("1,234.5 msec", 1.2345),
        ("12,345,678 /min", 12345678 / 60),
        ("35 %", 0.35),
        ("2 KB", 2048.0),
        ("1,5 MB", 1.5 * 1024**2),
        ("4 %", 0.04),
        ("22 perc", 0.22),
        ("97", 97.0),
        ("11 entr", 11.0),
        ("-", None),
        ("", None),
        (None, None),
        ("Running", None),
        ("12 furlongs", None),
        # 1260 or 1.26, 1260 or 1.26: no notation given or told, no value (read as
        # thousands before).
        ("1,260 /min", None),
        ("1.260 /min", None),
        ("1,2,3 sec", None),
    ],
)
def test_values_in_base_units(text, value) -> None:
    got = ccms.parse_value(text)
    assert got == (pytest.approx(value) if value is not None else None)


@pytest.mark.parametrize(
    ("text", "notation", "value"),
    [
        ("1,260 /min", "point", 21.0),
        ("1,260 /min", "comma", 1.26 / 60),
        ("1.260 /min", "comma", 21.0),
        ("1.260 /min", "point", 1.26 / 60),
        ("1.260,5 msec", "comma", 1.2605),
        ("1.260,5 msec", "point", None),  # not a number in that notation: not read
        ("0.5 sec", "comma", None),
        ("97", "comma", 97.0),
    ],
)
def test_values_in_a_given_notation(text, notation, value) -> None:
    got = ccms.parse_value(text, notation)
    assert got == (pytest.approx(value) if value is not None else None)


@pytest.mark.parametrize(
    ("descriptions", "given", "notation"),
    [
        (["1,260 /min", "0,5 sec", "97"], None, "comma"),
        (["1,260 /min", "0.5 sec", "-"], None, "point"),
        (["1.260 /min", "1,234.5 msec"], None, "point"),
        (["1,260 /min", "250 msec", None, ""], None, None),  # nothing tells
        (["0,5 sec", "0.5 sec"], None, None),  # contradicting values: none read two ways
        (["1,260 /min", "0,5 sec"], "point", "point"),  # WLMON_SAPCONTROL_DECIMAL wins
    ],
)
def test_a_trees_notation_from_its_own_values(descriptions, given, notation) -> None:
    assert ccms.tree_notation(descriptions, given) == notation


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


def _parentless(tree: list[dict]) -> list[dict]:
    return [{**node, "parent": None} for node in tree]


def test_a_tree_without_parents_is_read_by_unique_node_names() -> None:
    """Issue 25: without `parent` elements DBRequestTime and CPU_Utilization were lost.
    Names that occur once are found; ResponseTime (Dialog and Update) is not guessed."""
    tree = _parentless(schema.decode_response("GetAlertTree", recorded("GetAlertTree.xml")))
    nodes = ccms.paths(tree)
    db = ccms.find(nodes, ("Dialog", "DBRequestTime"))
    cpu = ccms.find(nodes, ("CPU", "CPU_Utilization"))
    assert db is not None and ccms.parse_value(db["description"]) is not None
    assert cpu is not None and ccms.parse_value(cpu["description"]) is not None
    assert ccms.find(nodes, ("Dialog", "ResponseTime")) is None
    assert ccms.find(nodes, ("Update", "PerformanceU1", "ResponseTime")) is None


def test_a_missing_parent_element_decodes_as_none() -> None:
    xml = recorded("GetAlertTree.xml").replace(b"<parent>", b"<x>").replace(b"</parent>", b"</x>")
    tree = schema.decode_response("GetAlertTree", xml)
    assert {node["parent"] for node in tree} == {None}
    assert ccms.find(ccms.paths(tree), ("Dialog", "DBRequestTime")) is not None
