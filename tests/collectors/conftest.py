from __future__ import annotations

import pytest

from landscape_model.engine import Simulation


@pytest.fixture(scope="session")
def sim() -> Simulation:
    """The SD benchmark, healthy, two simulated minutes: what the golden files show.
    Shared and read-only: tests take snapshots, never run it further."""
    s = Simulation("sd-benchmark-2003", seed=42)
    s.run(120)
    return s
