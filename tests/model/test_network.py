"""One compiled network (issue 24 item 4): the analytic solver solves and the discrete-event
engine simulates the same `CompiledNetwork`; the DES derives nothing through a solver."""

from __future__ import annotations

import numpy as np
import pytest

from landscape_model import solver
from landscape_model.catalog import Catalog
from landscape_model.des_network import for_event_loop
from landscape_model.network import compile_network


def test_both_engines_take_one_compiled_network(monkeypatch: pytest.MonkeyPatch) -> None:
    sc = Catalog().scenario("sd-two-tier", ["db-bottleneck"])
    net = compile_network(sc)
    assert solver.Solver(net).net is net

    def no_solver(*_args, **_kwargs):
        raise AssertionError("the discrete-event engine built a Solver")

    # The DES's parameters come from the compiled network alone (they once came from a
    # Solver it built and never solved, through its private fields).
    monkeypatch.setattr(solver.Solver, "__init__", no_solver)
    des = for_event_loop(net)
    assert des.compiled is net
    n_tx = len(net.tx_names)
    for k in range(2):
        for t in range(n_tx):
            cls = des.classes[k * n_tx + t]
            # DB calls per step and ABAP CPU per step: the solver's demands are the DES's.
            assert cls.calls.sum() == pytest.approx(net.db_calls[k, t], rel=1e-12)
            assert cls.cpu_s == pytest.approx(net.cpu_s[k, t] * net.cpu_stretch[0], rel=1e-12)
    assert des.station_cpus == [int(s) for s in net.station_servers[: len(des.station_cpus)]]
    assert des.db_station == net.db_cpu_station
    np.testing.assert_allclose(des.mix, net.mix, rtol=1e-12)


def test_the_event_loop_network_takes_its_scenario_from_the_compiled_one() -> None:
    """One source: the DES's `Network` holds no scenario of its own beside its compiled
    network's, so one replaced with another compiled network cannot keep a stale one."""
    import dataclasses

    from landscape_model.des_network import Network

    assert "scenario" not in {f.name for f in dataclasses.fields(Network)}
    catalog = Catalog()
    des = for_event_loop(compile_network(catalog.scenario("sd-two-tier")))
    assert des.scenario is des.compiled.scenario
    other = compile_network(catalog.scenario("sd-two-tier", ["db-bottleneck"]))
    assert dataclasses.replace(des, compiled=other).scenario is other.scenario


@pytest.mark.parametrize("engine", ["analytic", "des"])
def test_a_run_compiles_each_configuration_once_and_its_engine_none(
    engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Compile once, solve or simulate many (issue 33 item 2): the run compiles each (faults,
    overrides) once, in ModelRun.compiled, whichever engine it runs; the engines' modules
    cannot compile (they do not import compile_network)."""
    from landscape_model import des
    from landscape_model import engine as engine_module
    from landscape_model.engines import engine_class

    assert not hasattr(solver, "compile_network")
    assert not hasattr(des, "compile_network")
    compiled: list[tuple[str, ...]] = []
    real = engine_module.compile_network

    def counting(scenario):
        compiled.append(scenario.name)
        return real(scenario)

    monkeypatch.setattr(engine_module, "compile_network", counting)
    run = engine_class(engine)("sd-two-tier", seed=1)
    run.set_faults(["db-bottleneck"])
    run.step()
    run.set_faults([])
    run.step()
    run.set_faults(["db-bottleneck"])
    run.step()
    assert len(compiled) == 2  # healthy, then db-bottleneck; each switch back reuses it
    assert run.compiled(("db-bottleneck",)) is run.compiled(("db-bottleneck",))
