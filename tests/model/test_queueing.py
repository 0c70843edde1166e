"""The model against exact queueing results."""

from __future__ import annotations

import math

import pytest

from exporters.model.engine import Simulation
from exporters.model.queueing import erlang_c, finite_source
from exporters.model.summary import run_figures, st03_summary


def erlang_c_textbook(c: int, a: float) -> float:
    """Erlang C straight from its closed form (Kleinrock vol. 1, eq. 3.40)."""
    top = a**c / math.factorial(c) * c / (c - a)
    bottom = sum(a**k / math.factorial(k) for k in range(c)) + top
    return top / bottom


@pytest.mark.parametrize(("c", "a"), [(1, 0.5), (4, 3.76), (8, 6.0), (24, 7.0)])
def test_erlang_c_recursion_matches_the_closed_form(c: int, a: float) -> None:
    assert erlang_c(c, a) == pytest.approx(erlang_c_textbook(c, a), rel=1e-9)


def test_finite_source_obeys_littles_law_for_the_sd_instance() -> None:
    r = finite_source(sources=193, servers=4, think_time=11.5, service_time=0.45)
    # Cycle time = think + wait + service, and X = N / cycle.
    assert r.throughput == pytest.approx(193 / (11.5 + r.mean_wait + 0.45), rel=1e-9)
    assert r.busy_servers == pytest.approx(r.throughput * 0.45, rel=1e-9)


def test_model_mean_dispatcher_wait_matches_erlang_c_within_5_percent(fixture_catalog) -> None:
    """An M/M/8 case (Poisson arrivals from 20,000 users, exponential 0.6 s service)
    run through the whole model in fast mode: its measured mean dispatcher wait agrees
    with Erlang C at the measured arrival rate."""
    sim = Simulation("mmc", seed=3, catalog=fixture_catalog)
    sim.run(4 * 3600)
    snap = sim.snapshot()
    dialog = st03_summary(snap)[0]
    rate = run_figures(snap)["dialog_steps_per_s"]
    service = 0.6
    a = rate * service
    expected = erlang_c_textbook(8, a) * service / (8 - a)
    measured = dialog["dispatcher_wait_ms"] / 1000.0
    assert 0.05 < expected < 1.0  # a case with real queueing
    assert measured == pytest.approx(expected, rel=0.05)
