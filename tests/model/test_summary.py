"""Figures of landscape_model/summary.py checked against values computed here from the
landscape, not by the summary's own helpers."""

from __future__ import annotations

import pytest

from landscape_model.catalog import Catalog
from landscape_model.config import Landscape
from landscape_model.engine import Simulation
from landscape_model.network import compile_network
from landscape_model.solver import Solver
from landscape_model.summary import point_figures, run_figures


def _distinct_app_cpus(land: Landscape) -> int:
    """CPUs of the application servers and the central services' host, each host once."""
    names = {*land.app_servers.hosts, land.central_services.host}
    return sum(land.host(name).cpus for name in names)


@pytest.mark.parametrize("name", ["sd-two-tier", "sd-benchmark-2003"])
def test_app_servers_cpu_ratio_counts_a_shared_host_once(name: str) -> None:
    """sd-two-tier runs the central services on its one application server: the ratio is
    over that host's 8 CPUs, not 8 + 8 (it read 0.43 where the host's SAP share was 0.85).
    The benchmark's central services have a host of their own: its CPUs add."""
    sc = Catalog().scenario(name)
    land = sc.landscape
    op = Solver(compile_network(sc), histogram_samples=10).solve()
    busy = (
        float(op.host_cpu_util.sum()) * land.app_servers.cpus
        + op.cs_cpu_util * land.host(land.central_services.host).cpus
    )
    f = point_figures(op, sc)
    assert f["app_servers_cpu_ratio"] == pytest.approx(busy / _distinct_app_cpus(land))
    if name == "sd-two-tier":
        # One host, one denominator: the SAP share plus the central services' share of it.
        assert f["app_servers_cpu_ratio"] == pytest.approx(
            f["dia_upd_servers_cpu_ratio"] + f["msg_enq_server_cpu_ratio"]
        )


def test_run_app_servers_cpu_ratio_counts_a_shared_host_once() -> None:
    """The same figure from a run's counters (`wlmon simulate`'s calibration and --json)."""
    sc = Catalog().scenario("sd-two-tier")
    land = sc.landscape
    sim = Simulation("sd-two-tier", seed=1)
    sim.run(60.0)
    t = sim.snapshot().totals
    busy = float(t.host_cpu_seconds.sum()) + t.cs_cpu_seconds
    f = run_figures(sim.snapshot())
    assert f["app_servers_cpu_ratio"] == pytest.approx(
        busy / (_distinct_app_cpus(land) * t.sim_time)
    )
    assert f["app_servers_cpu_ratio"] == pytest.approx(
        f["dia_upd_servers_cpu_ratio"] + f["msg_enq_server_cpu_ratio"]
    )
