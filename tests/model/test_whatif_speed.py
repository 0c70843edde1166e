"""The fast what-if paths give the answers of the slow ones (docs/model.md, Speed)."""

from __future__ import annotations

import math
import pickle
from decimal import Decimal, getcontext

import numpy as np
import pytest
import yaml

from landscape_model import catalog, convolution
from landscape_model.chains import bounded_chain, bounded_chain_by_scaling, closed_chain, open_chain
from landscape_model.convolution import (
    Station,
    closed_network,
    closed_network_by_population,
    log_convolve,
    log_station_function,
)
from landscape_model.network import compile_network
from landscape_model.solver import Solver, SolverOptions
from landscape_model.whatif import Configuration, WhatIf


def test_one_shadowed_station_is_convolved_once_with_the_same_result() -> None:
    """The solver's networks (a shadowed host CPU beside queues, a disk array, a stream and
    a delay) against solving every population as its own network."""
    rng = np.random.default_rng(2)
    for _ in range(25):
        k_max = int(rng.integers(1, 30))
        stations = [
            Station(
                demand=float(rng.uniform(0.01, 0.2)),
                servers=int(rng.integers(1, 9)),
                background=float(rng.uniform(0, 10)),
                shadow_away=float(rng.uniform(0, 1)),
                shadow_along=float(rng.choice([0.0, rng.uniform(0, 1)])),
                stream_load=float(rng.choice([0.0, rng.uniform(0, 3)])),
                stream_cap=int(rng.integers(1, 40)),
            ),
            Station(demand=float(rng.uniform(0.01, 0.2)), servers=4, background=2.5),
            Station(demand=0.2, servers=1, copies=int(rng.integers(1, 60)), background=1.0),
            Station(demand=0.004, servers=1, stream_load=0.3, stream_cap=10),
            Station(demand=float(rng.uniform(0.01, 0.1)), servers=0),
        ]
        fast = closed_network(stations, k_max)
        slow = closed_network_by_population(stations, k_max)
        np.testing.assert_allclose(fast.throughput, slow.throughput, rtol=1e-9)
        np.testing.assert_allclose(fast.queue, slow.queue, rtol=1e-9, atol=1e-12)


def test_identical_copies_convolve_by_squaring_as_one_by_one() -> None:
    """A disk array of c copies met by an update stream: the c-fold convolution of one copy's
    factor, here convolved copy by copy."""
    rng = np.random.default_rng(5)
    for copies in (1, 2, 7, 56, 63):
        one_copy = dict(servers=int(rng.integers(1, 4)), stream_cap=int(rng.integers(1, 30)))
        demand, background, load = 0.3, 2.0, 1.5
        array = Station(
            demand=demand,
            copies=copies,
            background=background,
            stream_load=load,
            **one_copy,
        )
        one = log_station_function(
            Station(
                demand=demand / copies,
                background=background / copies,
                stream_load=load / copies,
                **one_copy,
            ),
            20,
        )
        expected = one
        for _ in range(copies - 1):
            expected = log_convolve(expected, one)
        np.testing.assert_allclose(log_station_function(array, 20), expected, rtol=1e-12)


@pytest.mark.parametrize("settings", [(), ("landscape.database.disks.kind=ssd",)])
def test_the_bracketed_search_finds_what_bisection_finds(settings) -> None:
    """Regula falsi from a users sweep's points against bisection from the scenario's users:
    both stop with the crossing bracketed to 0.2 %, so they agree within that."""
    model = WhatIf("sd-two-tier", settings=("landscape.app_servers.cpus=2", *settings))
    config = Configuration("two cores")
    sweep = model.sweep(config, "users", [60, 120, 180, 240, 300])
    fast = model.max_users(config, known=sweep)
    slow = model.max_users(config, method="bisection")
    assert fast is not None and slow is not None
    assert fast.response_s < 2.0 and slow.response_s < 2.0
    assert abs(fast.users - slow.users) <= math.ceil(0.002 * slow.users) + 1


def test_extrapolation_reaches_the_damped_iterations_fixed_point_in_fewer_sweeps() -> None:
    """The damped fallback from a cold start at the two-tier host's knee, with and without
    the vector extrapolation: the same operating point."""
    scenario = WhatIf("sd-two-tier").scenario(Configuration("knee"), ["users=900"])
    results = {}
    for jump in (True, False):
        solver = Solver(compile_network(scenario), histogram_samples=10)
        solver.iterations, solver.converged = 0, False
        n_inst, n_st = len(solver.layout), len(solver.station_names)
        solver._memo = {}

        def g(v, solver=solver, n_inst=n_inst, n_st=n_st):
            q, x = v[:-n_inst].reshape(3, n_inst, n_st), v[-n_inst:]
            new_q, new_x, classes = solver._sweep(q, x)
            return np.concatenate((new_q.ravel(), new_x)), classes

        def converged(v, gv):
            return float(np.abs(gv - v).max()) <= 1e-8 * max(1.0, float(np.abs(gv).max()))

        v = solver._extrapolated(g, converged, np.zeros(3 * n_inst * n_st + n_inst), jump=jump)
        assert solver.converged
        results[jump] = (v, solver.iterations)
    (fast, fast_sweeps), (slow, slow_sweeps) = results[True], results[False]
    np.testing.assert_allclose(fast, slow, rtol=1e-5, atol=1e-6)
    assert fast_sweeps < slow_sweeps


# Two instances sharing cores 6-7 beside five pinned one per core and the central one.
MIXED = "landscape.instance_affinity={sapsrv_D06: {cores: [6, 7]}, sapsrv_D07: {cores: [6, 7]}}"


@pytest.mark.parametrize(
    ("scenario", "users", "settings", "most_copied"),
    [
        ("sd-benchmark-2003", 3475, [], None),
        ("sd-two-tier", 900, [], None),
        # Pinned one per core, the database on the central instance's core: the central
        # instance uses one station fewer; the other seven are copies of the first of them.
        ("sd-two-tier-8core", 520, [], 6),
        # Mixed: five of the seven alike (own core), two alike (sharing two cores).
        ("sd-two-tier-8core", 520, [MIXED], 5),
    ],
    ids=["sd-benchmark-2003", "sd-two-tier", "8core-pinned", "8core-mixed"],
)
def test_identical_instances_are_copied_with_the_same_answer(
    monkeypatch, scenario, users, settings, most_copied
) -> None:
    """Classes of identical instances copied within a sweep against every class solved: the
    same fixed point and figures. 3,475 SD users are 116 on 25 instances and 115 on 5 (two
    kinds); the two-tier host's central instance has fewer work processes than the rest."""
    sc = WhatIf(scenario, settings=settings).scenario(Configuration("copies"), [f"users={users}"])
    copied = []
    copies = Solver._copies

    def counted(self, *args):
        out = copies(self, *args)
        copied.append(len(out))
        return out

    monkeypatch.setattr(Solver, "_copies", counted)
    fast = Solver(compile_network(sc), histogram_samples=10)
    fast_op = fast.solve()
    assert max(copied) > 0
    if most_copied is not None:
        assert max(copied) == most_copied
    slow = Solver(compile_network(sc), SolverOptions(group_instances=False), histogram_samples=10)
    slow_op = slow.solve()
    assert fast.iterations == slow.iterations
    np.testing.assert_allclose(fast.state, slow.state, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(fast_op.means, slow_op.means, rtol=1e-12, equal_nan=True)
    np.testing.assert_allclose(fast_op.step_rate, slow_op.step_rate, rtol=1e-12)


def test_a_class_is_slowed_to_its_share_as_by_proportional_steps() -> None:
    """The secant method on log X(c) against the proportional steps it replaced: the bound
    met to 1e-9 and the same slowed chain where the steps reach it within their 50."""
    rng = np.random.default_rng(11)
    compared = 0
    for _ in range(60):
        wps = int(rng.integers(1, 30))
        per = float(rng.uniform(1, 50))
        rate = per * np.minimum(np.arange(wps + 1), float(rng.uniform(1, wps + 1)))
        users, think = int(rng.integers(1, 400)), float(rng.uniform(0.5, 30))
        free = closed_chain(users, think, rate).throughput
        for share in (0.2, 0.8, 0.97, 1.0 - 1e-6, 1.5):
            bound = free * share
            fast, fast_rate = bounded_chain(users, think, rate, bound)
            slow, slow_rate = bounded_chain_by_scaling(users, think, rate, bound)
            assert fast.throughput == pytest.approx(min(free, bound), rel=2e-9)
            if slow.throughput <= bound * (1.0 + 1e-9):
                compared += 1
                np.testing.assert_allclose(fast_rate, slow_rate, rtol=1e-6)
                np.testing.assert_allclose(fast.mean_queue, slow.mean_queue, rtol=1e-5, atol=1e-9)
                np.testing.assert_allclose(fast.busy, slow.busy, rtol=1e-5, atol=1e-9)
    assert compared > 150


def test_a_users_sweep_solved_from_the_top_gives_the_cold_answers_in_order() -> None:
    """Warm starts from the most users down (and users points copied from the configuration's
    scenario) against every point solved cold from the documents: the same points, in the
    order asked, and a scenario equal to the one the catalog builds."""
    model = WhatIf("sd-two-tier")
    config = Configuration("two-tier")
    values = [300, 900, 600, 1200]
    warm = model.sweep(config, "users", values)
    cold = model.sweep(config, "users", values, warm_start=False)
    assert [p.users for p in warm] == values
    for a, b in zip(warm, cold, strict=True):
        assert a.response_s == pytest.approx(b.response_s, rel=1e-6)
        assert a.dialog_steps_per_hour == pytest.approx(b.dialog_steps_per_hour, rel=1e-6)
    built = model.catalog.scenario(model.name, settings=("users=900",))
    assert model.scenario(config, ["users=900"]) == built


def test_one_customer_networks_match_the_convolution() -> None:
    """An update class with one work process: the closed form (X = 1 / sum f_s(1)) against
    the convolution's population 1 of the same network solved up to 2."""
    rng = np.random.default_rng(8)
    for _ in range(40):
        stations = [
            Station(
                demand=float(rng.uniform(0.001, 0.2)),
                servers=int(rng.integers(0, 9)),
                copies=int(rng.integers(1, 60)),
                background=float(rng.uniform(0, 400)),
                stream_load=float(rng.choice([0.0, rng.uniform(0, 3)])),
                stream_cap=int(rng.integers(1, 40)),
            )
            for _ in range(int(rng.integers(1, 7)))
        ]
        one, two = closed_network(stations, 1), closed_network(stations, 2)
        np.testing.assert_allclose(one.throughput[1], two.throughput[1], rtol=1e-12)
        np.testing.assert_allclose(one.queue[:, 1], two.queue[:, 1], rtol=1e-12, atol=1e-15)


def test_linear_space_convolution_is_the_log_space_sum() -> None:
    """`log_convolve` in linear space against the log-space sum over the [K, K] table it
    replaced: random factors of every shape the solver convolves, and inputs whose bins
    underflow in linear space (a range of 1,500 in logs), -inf entries (no weight) and
    all-(-inf) inputs, which must take the log-space sum."""
    rng = np.random.default_rng(24)
    cases = []
    for _ in range(300):
        size = int(rng.integers(1, 60))
        spread = float(rng.choice([1.0, 30.0, 300.0, 1500.0]))
        a = rng.normal(0.0, 1.0, size).cumsum() * spread / math.sqrt(size) + rng.normal(0, 50)
        b = rng.uniform(-spread, spread, size)
        cases.append((a, b))
    n = np.arange(40.0)
    cases.append((-(n**2), -(n**2)))  # bins fall like e^-n^2: underflow past n = 27
    cases.append((np.where(n < 5, -np.inf, n), np.zeros(40)))  # leading bins of no weight
    cases.append((np.zeros(40), np.where(n > 30, -np.inf, -n)))  # trailing -inf
    cases.append((np.full(10, -np.inf), np.zeros(10)))
    fell_back = 0
    for a, b in cases:
        fast, slow = convolution.log_convolve(a, b), convolution._log_convolve_logs(a, b)
        np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-12)
        if np.isfinite(a.max() + b.max()):
            scaled = np.convolve(np.exp(a - a.max()), np.exp(b - b.max()))[: len(a)]
            fell_back += scaled.min() < 1e-280
        else:
            fell_back += 1
    assert 5 < fell_back < len(cases) - 100  # both branches taken


def _log_stream_sum_decimal(c: float, a: float, m: int, cap: int) -> float:
    """log of sum_{u <= cap} prod_{v <= u} (a / v) max(1, (c + v) / m) to 40 digits."""
    getcontext().prec = 40
    total = term = Decimal(1)
    for v in range(1, cap + 1):
        term *= Decimal(a) / v * max(Decimal(1), (Decimal(c) + v) / m)
        total += term
    return float(total.ln())


def test_stream_sums_in_linear_space_are_exact_and_the_log_space_sums() -> None:
    """A station shared with an open stream (`_log_mixed_function`): its stream sums in
    linear space against the same sums to 40 digits (decimal), and the whole factor
    against the log-space table it was computed from before (`_log_mixed_by_logs`, whose
    own rounding reaches 1e-11 at 2,000 terms); streams far above their servers, whose
    linear sums overflow, take that table. The shadowed station's factors for every
    population at once (`_log_shadowed_table`) against each population's own
    (`_log_shadowed_function`, log space)."""
    rng = np.random.default_rng(6)
    overflowed = exact = 0
    for _ in range(200):
        d, b = float(rng.uniform(1e-4, 0.5)), float(rng.choice([0.0, rng.uniform(0, 400)]))
        a = float(rng.choice([rng.uniform(1e-4, 1), rng.uniform(1, 40)]))
        m, cap = int(rng.integers(1, 9)), int(rng.choice([1, 30, 300, 2000]))
        k_max = int(rng.integers(1, 40))
        fast = convolution._log_mixed_function(d, b, a, cap, m, k_max)
        slow = convolution._log_mixed_by_logs(d, b, a, cap, m, k_max)
        np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=3e-11)
        sums = convolution._log_stream_sums(np.array([b, b + k_max]), a, m, cap)
        if sums is None:
            overflowed += 1
        elif cap <= 300:
            exact += 1
            want = [_log_stream_sum_decimal(c, a, m, cap) for c in (b, b + k_max)]
            np.testing.assert_allclose(sums, want, rtol=1e-14, atol=1e-13)
    assert overflowed > 10 and exact > 50
    for _ in range(40):
        st = Station(
            demand=float(rng.uniform(0.001, 0.3)),
            servers=int(rng.integers(1, 9)),
            background=float(rng.uniform(0, 50)),
            stream_load=float(rng.uniform(0.01, 5)),
            stream_cap=int(rng.integers(1, 60)),
            shadow_away=float(rng.uniform(0, 1)),
            shadow_along=float(rng.choice([0.0, rng.uniform(0, 1)])),
        )
        k_max = int(rng.integers(1, 30))
        shares = convolution.shadowed_share_table(
            k_max, st.background, st.servers, st.shadow_away, st.shadow_along
        )
        table = convolution._log_shadowed_table(st, k_max, shares)
        for k in range(1, k_max + 1):
            own = convolution._log_shadowed_function(st, k, shares)
            np.testing.assert_allclose(table[k, : k + 1], own, rtol=1e-12, atol=1e-12)


def test_one_customer_of_identical_copies_as_convolved() -> None:
    """Two entries (one customer): the copies' factor outright against copy by copy."""
    rng = np.random.default_rng(9)
    for copies in (2, 3, 56, 63):
        one = np.array([float(rng.normal()), float(rng.normal(0, 20))])
        expected = one
        for _ in range(copies - 1):
            expected = convolution._log_convolve_logs(expected, one)
        np.testing.assert_allclose(convolution._log_power(one, copies), expected, rtol=1e-13)


def test_a_warm_start_made_alike_reaches_the_same_fixed_point(monkeypatch) -> None:
    """5,941 SD users from 5,858's solution (their users split differently over the
    instances): with the start made alike for alike instances (`Solver._alike`) and as it
    came, the same operating point to the solver's tolerance, and fewer classes solved."""
    model = WhatIf("sd-benchmark-2003")
    config = Configuration("alike")
    neighbour = Solver(
        compile_network(model.scenario(config, ["users=5858"])), histogram_samples=10
    )
    neighbour.solve()
    scenario = model.scenario(config, ["users=5941"])
    solved = []
    solve_class = Solver._solve_class

    def counted(self, *args, **kwargs):
        solved.append(self)
        return solve_class(self, *args, **kwargs)

    monkeypatch.setattr(Solver, "_solve_class", counted)
    results = {}
    for alike in (True, False):
        if not alike:
            monkeypatch.setattr(Solver, "_alike", lambda self, v: v.copy())
        solver = Solver(compile_network(scenario), histogram_samples=10)
        op = solver.solve(warm_start=neighbour.state)
        assert solver.converged
        results[alike] = (op, sum(s is solver for s in solved))
    (fast, fast_classes), (slow, slow_classes) = results[True], results[False]
    np.testing.assert_allclose(fast.step_rate, slow.step_rate, rtol=1e-7)
    np.testing.assert_allclose(fast.means, slow.means, rtol=1e-6, atol=1e-9, equal_nan=True)
    assert fast_classes < slow_classes


def test_stream_sums_of_a_networks_stations_together_as_each_alone() -> None:
    """`log_station_functions` (the stations shared with a stream summed in one table)
    against `log_station_function` station by station: the same numbers, to the bit."""
    rng = np.random.default_rng(12)
    for _ in range(60):
        cap = int(rng.integers(1, 60))
        stations = [
            Station(
                demand=float(rng.uniform(0.0001, 0.2)),
                servers=int(rng.integers(0, 9)),
                copies=int(rng.integers(1, 60)),
                background=float(rng.uniform(0, 400)),
                stream_load=float(rng.choice([0.0, rng.uniform(0, 3)])),
                stream_cap=cap,
            )
            for _ in range(int(rng.integers(1, 7)))
        ]
        k_max = int(rng.integers(1, 40))
        together = convolution.log_station_functions(stations, k_max)
        for st, f in zip(stations, together, strict=True):
            np.testing.assert_array_equal(f, convolution.log_station_function(st, k_max))


@pytest.mark.parametrize("scv", [0.25, 2.0, 5.0])
@pytest.mark.parametrize("rho", [0.5, 0.9])
def test_the_open_chains_lazy_arrivals_are_m_g_1s_and_pickle(scv: float, rho: float) -> None:
    """The open phase chain's arrival distribution, computed when first read: with one
    work process it is M/G/1's number in system (PASTA), whose mean is Pollaczek-
    Khinchine's rho + rho^2 (1 + SCV) / (2 (1 - rho)), computed here; and the chain
    pickles before and after that read, to the same numbers (an OperatingPoint holds its
    classes' chains, and pickled when the tail was computed eagerly)."""
    mu = 5.0
    chain = open_chain(rho * mu, np.array([0.0, mu]), scv)
    before = pickle.loads(pickle.dumps(chain))
    dist = chain.arrival_distribution
    mean = rho + rho**2 * (1.0 + scv) / (2.0 * (1.0 - rho))
    assert float(np.arange(dist.size) @ dist) == pytest.approx(mean, rel=1e-6)
    assert dist.sum() == pytest.approx(1.0, rel=1e-12)
    after = pickle.loads(pickle.dumps(chain))
    np.testing.assert_array_equal(before.arrival_distribution, dist)
    np.testing.assert_array_equal(after.arrival_distribution, dist)


def test_yaml_through_libyaml_reads_as_the_python_parser(tmp_path) -> None:
    """`catalog._read_yaml` (libyaml where PyYAML has it) against PyYAML's Python parser:
    every shipped landscape, scenario and fault the same; a document libyaml refuses and
    the Python parser reads (a %YAML 1.3 directive) read by the fallback; one both refuse
    reported with the Python parser's line."""
    files = sorted(catalog.DATA_DIR.rglob("*.yml"))
    assert len(files) >= 10
    for path in files:
        want = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
        assert catalog._read_yaml(path) == want, path
    newer = tmp_path / "newer.yml"
    newer.write_text("%YAML 1.3\n---\nusers: 500\nsticky: yes\n", encoding="utf-8")
    if yaml.__with_libyaml__:
        with pytest.raises(yaml.YAMLError):
            yaml.load(newer.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    assert catalog._read_yaml(newer) == {"users": 500, "sticky": True}
    broken = tmp_path / "broken.yml"
    broken.write_text("users: 500\n  think: 10\n", encoding="utf-8")
    with pytest.raises(catalog.ConfigError, match="line 2"):
        catalog._read_yaml(broken)
