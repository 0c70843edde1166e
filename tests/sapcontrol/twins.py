"""The twin's sapstartsrv standing in for real systems: one SAPControl endpoint per
instance of a model landscape, the landscape's SID given (tests, bench/)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from exporters.sapstartsrv.landscape import ModelLandscape
from exporters.sapstartsrv.server import Credentials, SapStartSrvFleet
from exporters.thresholds import Thresholds
from landscape_model.config import Scenario
from landscape_model.engine import Simulation


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


class FaultableTwin:
    """The benchmark landscape's sapstartsrvs, answering with or without one fault: set
    `fault` to the fault's name, or "" for the healthy scenario (the model keeps its state;
    only the scenario answered changes)."""

    def __init__(self, fault: str, thresholds: Thresholds, user: str, password: str) -> None:
        sim = Simulation("sd-benchmark-2003", seed=11)
        sim.run(60)
        self.scenario: Scenario = sim.scenario  # the healthy one
        self._scenarios = {
            "": sim.scenario,
            fault: Simulation("sd-benchmark-2003", faults=(fault,)).scenario,
        }
        self.fault = ""
        self.landscape = ModelLandscape(
            sim.snapshot, lambda: self._scenarios[self.fault], thresholds
        )
        self.fleet = SapStartSrvFleet(self.landscape, credentials=Credentials(user, password))


@contextmanager
def faultable_twin(
    fault: str, thresholds: Thresholds, user: str = "bmkadm", password: str = "pw"
) -> Iterator[FaultableTwin]:
    """sd-benchmark-2003 run for a minute, its sapstartsrvs started, switchable between the
    healthy scenario and `fault`."""
    twin = FaultableTwin(fault, thresholds, user, password)
    twin.fleet.start()
    try:
        yield twin
    finally:
        twin.fleet.stop()
