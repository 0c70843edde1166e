"""The model's CCMS alert levels come from the thresholds the edge reads (alerts/thresholds.yml)
and hands to the landscape: other thresholds move the colour of the node that mirrors them."""

from __future__ import annotations

import pytest

from alerts.thresholds import load_thresholds
from exporters.sapcontrol import ccms
from exporters.sapcontrol.schema import GREEN, RED
from exporters.sapstartsrv.landscape import ModelLandscape, ccms_levels_ms
from landscape_model.engine import Simulation


def test_the_shipped_thresholds_give_the_levels_ccms_showed_before() -> None:
    levels = ccms_levels_ms(load_thresholds())
    # The SD bound: missing it is not a page (no critical twin), so never red.
    assert levels["ResponseTime"][0] == pytest.approx(2000.0)
    assert levels["ResponseTime"][1] is None
    assert levels["QueueTime"] == pytest.approx((50.0, 200.0))
    # RollTime is roll-in plus roll-out: twice the per-part threshold.
    assert levels["RollTime"] == pytest.approx((40.0, 160.0))
    assert levels["DBRequestTime"] == pytest.approx((400.0, 800.0))


def test_other_thresholds_move_the_node_colour() -> None:
    sim = Simulation("sd-benchmark-2003", seed=4)
    sim.run(120)
    shipped = load_thresholds()
    tuned = shipped.model_copy(update={"db_request_seconds": 0.001})
    land = ModelLandscape(sim.snapshot, lambda: sim.scenario, shipped)
    strict = ModelLandscape(sim.snapshot, lambda: sim.scenario, tuned)
    inst = land.instance("penguin2_D00")

    def db_node(landscape: ModelLandscape):
        tree = landscape.alert_tree(landscape.instance("penguin2_D00"))
        return ccms.find(ccms.paths(tree), ("Dialog", "DBRequestTime"))

    assert inst is not None
    assert db_node(land)["ActualValue"] == GREEN  # a healthy run: well below 400 ms
    assert ccms_levels_ms(tuned)["DBRequestTime"] == pytest.approx((1.0, 2.0))
    assert db_node(strict)["ActualValue"] == RED
