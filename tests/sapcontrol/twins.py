"""The twin's sapstartsrv standing in for real systems: one SAPControl endpoint per
instance of a model landscape, the landscape's SID given (tests, bench/)."""

from __future__ import annotations

from exporters.model.engine import Simulation
from exporters.sapstartsrv.landscape import ModelLandscape
from exporters.sapstartsrv.server import Credentials, SapStartSrvFleet
from exporters.thresholds import Thresholds


def twin_system(
    sid: str,
    thresholds: Thresholds,
    scenario: str = "sd-small-three-tier",
    user: str = "wlmonmon",
    password: str = "pw",
    settings: list[str] | None = None,
) -> SapStartSrvFleet:
    """A started sapstartsrv per instance of `scenario` renamed `sid` (not advancing: the
    answers are the model's state at start, enough for what the reader does with them)."""
    sim = Simulation(
        scenario, seed=1, overrides={"landscape": {"sid": sid}}, settings=settings or []
    )
    landscape = ModelLandscape(sim.snapshot, lambda: sim.scenario, thresholds)
    return SapStartSrvFleet(landscape, credentials=Credentials(user, password)).start()
