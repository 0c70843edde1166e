from __future__ import annotations

import os
from pathlib import Path

import pytest

# The CLI's rich consoles, created now (before any CliRunner invoke sets COLUMNS): rich
# fixes a console's width from COLUMNS at its creation, so one first imported inside a test's
# `invoke(env={"COLUMNS": "200"})` kept 200 columns for every later test (the 80-column
# ST03 table test failed after test_check.py). Created without it, each invoke's COLUMNS counts.
import wlmon.cli.common  # noqa: F401
from landscape_model.catalog import Catalog
from landscape_model.engine import Simulation

FIXTURES = Path(__file__).parent / "fixtures"


def pytest_configure(config: pytest.Config) -> None:
    """WLMON_UPDATE_GOLDEN=1 under CI=true stops the session before any test, in one line:
    a CI run must compare the golden files, never rewrite them (the per-file guard,
    tests/collectors/exposition.golden_rewritten, stays for a run without this conftest)."""
    del config
    if os.environ.get("WLMON_UPDATE_GOLDEN") == "1" and os.environ.get("CI", "").lower() == "true":
        raise pytest.UsageError(
            "WLMON_UPDATE_GOLDEN=1 is refused under CI=true (a CI run compares the golden "
            "files, it does not rewrite them): unset WLMON_UPDATE_GOLDEN"
        )


# What the integration session's stack fixture sets in the environment. That fixture is
# session-scoped, so its variables stay set until the last test: the unit tests collected
# after tests/integration (model, sapcontrol, ...) would read its settings as defaults (CI
# saw WLMON_SAPCONTROL_CACHE_S=4 make an "uncached" collector share its reading).
STACK_ENVIRONMENT: set[str] = set()


@pytest.fixture(autouse=True)
def _unit_tests_see_no_stack_environment(request, monkeypatch) -> None:
    if "integration" in request.node.path.parts:
        return
    for name in STACK_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def fixture_catalog() -> Catalog:
    return Catalog(FIXTURES / "model")


@pytest.fixture(scope="session")
def healthy_hour() -> Simulation:
    """The SD benchmark, healthy, one simulated hour (shared: it takes ~2 s)."""
    sim = Simulation("sd-benchmark-2003", seed=7)
    sim.run(3600)
    return sim
