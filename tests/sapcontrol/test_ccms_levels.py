"""The model's CCMS alert levels come from alerts/thresholds.yml through the vocabulary:
editing a threshold moves the colour of the node that mirrors it."""

from __future__ import annotations

import pytest

from exporters import vocabulary
from exporters.model.engine import Simulation
from exporters.sapcontrol import ccms
from exporters.sapcontrol.schema import GREEN, RED
from exporters.sapstartsrv.landscape import ModelLandscape, ccms_levels_ms


def test_the_shipped_thresholds_give_the_levels_ccms_showed_before() -> None:
    levels = ccms_levels_ms()
    # The SD bound: missing it is not a page (no critical twin), so never red.
    assert levels["ResponseTime"][0] == pytest.approx(2000.0)
    assert levels["ResponseTime"][1] is None
    assert levels["QueueTime"] == pytest.approx((50.0, 200.0))
    # RollTime is roll-in plus roll-out: twice the per-part threshold.
    assert levels["RollTime"] == pytest.approx((40.0, 160.0))
    assert levels["DBRequestTime"] == pytest.approx((400.0, 800.0))


def test_editing_a_threshold_moves_the_node_colour(monkeypatch) -> None:
    sim = Simulation("sd-benchmark-2003", seed=4)
    sim.run(120)
    land = ModelLandscape(sim.snapshot, lambda: sim.scenario)
    inst = land.instance("penguin2_D00")

    def db_node():
        return ccms.find(ccms.paths(land.alert_tree(inst)), ("Dialog", "DBRequestTime"))

    assert db_node()["ActualValue"] == GREEN  # a healthy run: well below 400 ms
    shipped = dict(vocabulary.thresholds())
    monkeypatch.setattr(vocabulary, "thresholds", lambda: {**shipped, "db_request_seconds": 0.001})
    assert ccms_levels_ms()["DBRequestTime"] == pytest.approx((1.0, 2.0))
    assert db_node()["ActualValue"] == RED
