"""The discrete-event engine against exact queueing results, each computed here from its
textbook formula (not from the model's exact algorithms or the solver).

Cases: M/M/c//N at the dispatcher (finite-source birth-death chain, Kleinrock vol. 1,
section 3.9; with many users it is M/M/c), M/M/1//N at a processor-shared CPU, at a lock
and at a log device (machine-repairman, closed form), and a product-form network (a
two-core CPU, the database CPU, two disks visited alternately at random) by exact mean
value analysis with a load-dependent station (Reiser and Lavenberg 1980).

Tolerances are at least 3.5 standard errors of a run (the spread over 8 seeds): X within
2 % (its standard error 0.2-0.6 %), R within 4 % (0.5-1 %), the mean dispatcher wait
within 10 % (2.3-2.9 %). A 150,000 s run of the first case comes within 0.3 % of all three.
"""

from __future__ import annotations

import math

import pytest

from landscape_model.des import DiscreteEventSimulation
from landscape_model.summary import run_figures, st03_summary
from tests.model import des_support as case


def finite_source(users: int, servers: int, think: float, service: float) -> dict[str, float]:
    """M/M/c//N: p(k) from the birth-death balance, births (N - k)/Z, deaths min(k, c)/S."""
    p = [1.0]
    for k in range(1, users + 1):
        p.append(p[-1] * (users - k + 1) / think * service / min(k, servers))
    total = sum(p)
    p = [x / total for x in p]
    x = sum(min(k, servers) / service * pk for k, pk in enumerate(p))
    queue = sum(max(k - servers, 0) * pk for k, pk in enumerate(p))
    return {"X": x, "W": queue / x, "R": users / x - think}


def machine_repairman(users: int, think: float, service: float) -> dict[str, float]:
    """M/M/1//N: P0 = 1 / sum_k N!/(N-k)! (S/Z)^k, X = (1 - P0)/S, R = N/X - Z."""
    terms = [
        math.factorial(users) / math.factorial(users - k) * (service / think) ** k
        for k in range(users + 1)
    ]
    p0 = 1.0 / sum(terms)
    x = (1.0 - p0) / service
    return {"X": x, "R": users / x - think}


def exact_mva(users: int, think: float, stations: list[tuple[float, int]]) -> dict[str, float]:
    """Exact MVA; a station is (demand, servers), servers > 1 load-dependent with rate
    min(j, servers)/demand, handled through its marginal queue-length distribution."""
    queue = [0.0] * len(stations)
    marg = [[1.0] for _ in stations]  # p_k(j | n), j = 0..n
    x = 0.0
    for n in range(1, users + 1):
        resid = []
        for k, (d, c) in enumerate(stations):
            if c == 1:
                resid.append(d * (1.0 + queue[k]))
            else:
                resid.append(sum(j / min(j, c) * d * marg[k][j - 1] for j in range(1, n + 1)))
        x = n / (think + sum(resid))
        for k, (d, c) in enumerate(stations):
            queue[k] = x * resid[k]
            if c > 1:
                new = [0.0] * (n + 1)
                for j in range(1, n + 1):
                    new[j] = x * d / min(j, c) * marg[k][j - 1]
                new[0] = 1.0 - sum(new[1:])
                marg[k] = new
    return {"X": x, "R": users / x - think}


def _measure(sim: DiscreteEventSimulation, warmup: float, duration: float) -> dict[str, float]:
    """X from completed steps, R and the dispatcher wait from the steps' own timestamps."""
    sim.run(warmup)
    before = sim.snapshot()
    sim.run(duration)
    after = sim.snapshot()
    row0, row1 = st03_summary(before)[0], st03_summary(after)[0]
    n0, n1 = row0["steps"], row1["steps"]
    done = n1 - n0

    def mean(key: str) -> float:
        return (row1[key] * n1 - row0[key] * n0) / 1000.0 / done

    return {"X": done / duration, "R": mean("response_ms"), "W": mean("dispatcher_wait_ms")}


@pytest.mark.parametrize(
    ("users", "servers", "think", "service"),
    [
        (40, 4, 10.0, 0.8),  # finite source: the queue itself throttles the arrivals
        (2000, 8, 200.0, 0.6),  # many users: Poisson arrivals, M/M/8 at offered load 6
    ],
)
def test_dispatcher_queue_is_finite_source_mmc(tmp_path, users, servers, think, service) -> None:
    land = case.landscape(cpus=100_000, dialog_wps=servers)
    doc = case.scenario(land, users=users, think_s=think, cpu_s=service)
    sim = DiscreteEventSimulation("case", seed=3, dt=10.0, catalog=case.catalog(tmp_path, doc))
    got = _measure(sim, 200.0, 15_000.0)
    want = finite_source(users, servers, think, service)
    assert 0.1 < want["W"] < 1.0  # real queueing, not an idle system
    assert got["X"] == pytest.approx(want["X"], rel=0.02)
    assert got["W"] == pytest.approx(want["W"], rel=0.10)
    assert got["R"] == pytest.approx(want["R"], rel=0.04)


def test_processor_shared_cpu_is_machine_repairman(tmp_path) -> None:
    land = case.landscape(cpus=1, dialog_wps=12)
    doc = case.scenario(land, users=12, think_s=4.0, cpu_s=0.25)
    sim = DiscreteEventSimulation("case", seed=5, dt=10.0, catalog=case.catalog(tmp_path, doc))
    got = _measure(sim, 100.0, 15_000.0)
    want = machine_repairman(12, 4.0, 0.25)
    assert want["R"] > 2 * 0.25  # the CPU is a bottleneck: more than half the time queued
    assert got["X"] == pytest.approx(want["X"], rel=0.02)
    assert got["R"] == pytest.approx(want["R"], rel=0.04)
    assert got["W"] == 0.0  # enough work processes: nobody waits in the dispatcher


@pytest.mark.parametrize("station", ["lock", "log"])
def test_lock_and_log_device_are_machine_repairmen(tmp_path, station: str) -> None:
    """A lock held 0.2 s per step (one holder at a time), or a log device taking 0.2 s per
    commit: the only queue in the landscape, an M/M/1//N of 10 users thinking 2 s."""
    locks = [{"name": "NRIV", "hold_s": 0.2}] if station == "lock" else None
    land = case.landscape(cpus=100_000, dialog_wps=10, locks=locks, log_write_s=0.2)
    extra = {"lock": "NRIV"} if station == "lock" else {}
    doc = case.scenario(
        land,
        users=10,
        think_s=2.0,
        cpu_s=0.0,
        statements=[case.statement(calls=1, **extra)],
        commits=1.0 if station == "log" else 0.0,
    )
    sim = DiscreteEventSimulation("case", seed=9, dt=10.0, catalog=case.catalog(tmp_path, doc))
    got = _measure(sim, 100.0, 15_000.0)
    want = machine_repairman(10, 2.0, 0.2)
    assert got["X"] == pytest.approx(want["X"], rel=0.02)
    assert got["R"] == pytest.approx(want["R"], rel=0.04)


@pytest.mark.parametrize("users", [4, 30])
def test_product_form_network_matches_exact_mva(tmp_path, users: int) -> None:
    """ABAP CPU on a 2-core host (0.12 s), DB CPU (1 core, 0.05 s per call), one physical
    read per step on one of two disks (0.03 s), think time 1.5 s."""
    land = case.landscape(
        cpus=2, dialog_wps=users, db_cpus=1, cpu_s_per_call=0.05, disks=2, read_s=0.03
    )
    land["database"]["bufferpools"][0]["miss_floor"] = 1.0  # every read misses the pool
    doc = case.scenario(
        land,
        users=users,
        think_s=1.5,
        cpu_s=0.12,
        statements=[case.statement(calls=1, data_reads=1)],
    )
    sim = DiscreteEventSimulation("case", seed=7, dt=10.0, catalog=case.catalog(tmp_path, doc))
    got = _measure(sim, 100.0, 10_000.0)
    want = exact_mva(users, 1.5, [(0.12, 2), (0.05, 1), (0.015, 1), (0.015, 1)])
    assert got["X"] == pytest.approx(want["X"], rel=0.02)
    assert got["R"] == pytest.approx(want["R"], rel=0.04)
    snap = sim.snapshot()
    f = run_figures(snap)
    # The DB CPU's utilisation is X times its demand (utilisation law).
    assert f["db_server_cpu_ratio"] == pytest.approx(got["X"] * 0.05, abs=0.02)


def test_a_step_with_more_reads_than_disks_waits_for_each_read_once(tmp_path) -> None:
    """One user, ten physical reads of 10 ms per step on two disks, nothing else: each read
    is issued when the one before is done, so R = 10 x 10 ms. (The DES once booked the
    sixth read behind the step's own first on the same disk and counted that wait again
    from the step's start: R = 0.3 s; the grid's batch with 10 calls found it.)"""
    land = case.landscape(cpus=100_000, dialog_wps=1, disks=2, read_s=0.01)
    land["database"]["bufferpools"][0]["miss_floor"] = 1.0
    doc = case.scenario(
        land,
        users=1,
        think_s=1.0,
        cpu_s=0.0,
        statements=[case.statement(calls=10, data_reads=1)],
    )
    sim = DiscreteEventSimulation("case", seed=4, dt=10.0, catalog=case.catalog(tmp_path, doc))
    got = _measure(sim, 10.0, 5_000.0)
    assert got["R"] == pytest.approx(0.1, rel=0.03)
    assert got["X"] == pytest.approx(1.0 / 1.1, rel=0.03)
