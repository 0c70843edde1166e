from __future__ import annotations

from pathlib import Path

import pytest

from exporters.model.catalog import Catalog
from exporters.model.engine import Simulation

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session")
def fixture_catalog() -> Catalog:
    return Catalog(FIXTURES / "model")


@pytest.fixture(scope="session")
def healthy_hour() -> Simulation:
    """The SD benchmark, healthy, one simulated hour (shared: it takes ~2 s)."""
    sim = Simulation("sd-benchmark-2003", seed=7)
    sim.run(3600)
    return sim
