"""The whitepaper matrix (seed 000 section 4.3.5.1): each fault breaks its own rule only."""

from __future__ import annotations

import pytest

from alerts.thresholds import load_thresholds
from landscape_model.engine import Simulation
from landscape_model.summary import run_figures, st03_summary
from landscape_model.terms import COMPONENTS
from tests.model.indicators import indicator_values, thresholds_ms

ENQ = COMPONENTS.index("enqueue")
FAULT_INDICATOR = {
    "too-few-work-processes": "dispatcher_wait",
    "db-bottleneck": "db_request",
    "slow-enqueue-link": "enqueue",
    "roll-area-too-small": "roll",
}
# Faults only SAPControl shows (the twin's sapstartsrv lays them over the model's steps):
# they must move no whitepaper indicator (tests/sapcontrol/test_noc_nodes.py shows them).
SAPCONTROL_FAULTS = {
    "short-dump-storm": "short_dumps",
    "update-errors": "update",
    "update-hang": "update",
    "lock-held": "locks",
    "long-running-dialog-step": "long_running_step",
    "ascs-failover": "ha",
    "java-thread-pool-exhausted": "java_thread_pool",
    "kernel-patch-drift": "versions",
}
# What the edge hands the model: the shipped alerts/thresholds.yml, in ms.
THRESHOLDS_MS = thresholds_ms(load_thresholds())


def _indicators(faults: tuple[str, ...]) -> dict[str, float]:
    sim = Simulation("sd-benchmark-2003", faults=faults, seed=11)
    sim.run(1800)
    return indicator_values(st03_summary(sim.snapshot()))


def test_healthy_benchmark_is_below_all_four_thresholds(healthy_hour) -> None:
    values = indicator_values(st03_summary(healthy_hour.snapshot()))
    for name, limit in THRESHOLDS_MS.items():
        assert values[name] < limit, f"{name} = {values[name]:.1f} ms, threshold {limit} ms"


@pytest.mark.parametrize(("fault", "indicator"), FAULT_INDICATOR.items())
def test_fault_drives_its_indicator_past_twice_the_threshold_and_no_other(
    fault: str, indicator: str
) -> None:
    values = _indicators((fault,))
    assert values[indicator] >= 2 * THRESHOLDS_MS[indicator], values
    for name, limit in THRESHOLDS_MS.items():
        if name != indicator:
            assert values[name] < limit, f"{fault} also breaches {name}: {values[name]:.1f} ms"


def test_every_shipped_fault_is_in_the_matrix() -> None:
    from landscape_model.catalog import Catalog

    faults = {f.name: f.indicator for f in Catalog().faults()}
    assert faults == FAULT_INDICATOR | SAPCONTROL_FAULTS


@pytest.mark.parametrize("fault", SAPCONTROL_FAULTS)
def test_sapcontrol_only_fault_breaches_no_whitepaper_threshold(fault: str) -> None:
    values = _indicators((fault,))
    for name, limit in THRESHOLDS_MS.items():
        assert values[name] < limit, f"{fault} breaches {name}: {values[name]:.1f} ms"


@pytest.mark.parametrize("faults", [(), *[(f,) for f in FAULT_INDICATOR]])
def test_response_time_law_holds_within_1_percent(faults: tuple[str, ...]) -> None:
    """Interactive response-time law X = N / (R + Z) (FACTS.md, seed 000 Table 5) on the
    measured steps and response of a run. For the analytic engine this checks that the
    drawn parts add up to a response consistent with its throughput (Little's law holds for
    its means by construction); the discrete-event engine's twin test is the behavioural
    check (tests/model/test_des_engine.py)."""
    sim = Simulation("sd-benchmark-2003", faults=faults, seed=5)
    sim.run(1800)
    f = run_figures(sim.snapshot())
    assert f["dialog_steps_per_s"] == pytest.approx(f["response_time_law_steps_per_s"], rel=0.01)


def test_switching_a_fault_mid_run_moves_the_indicator_within_minutes() -> None:
    sim = Simulation("sd-benchmark-2003", seed=2)
    sim.run(300)
    before = sim.snapshot().totals.copy()
    sim.set_faults(["slow-enqueue-link"])
    sim.run(300)
    after = sim.snapshot().totals
    steps = after.steps[:, 0].sum() - before.steps[:, 0].sum()
    enq = after.seconds[:, 0, :, ENQ].sum() - before.seconds[:, 0, :, ENQ].sum()
    assert enq / steps * 1000 > 2 * THRESHOLDS_MS["enqueue"]
