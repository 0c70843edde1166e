"""Placement and hardware as data (issue 24 item 2): CPU stations per pinned core set,
remote-memory stretch, both engines, and seed 004's scale-up on the shipped landscapes.

Exact values come from this file's own formulas (machine-repairman, exact multi-class MVA
of tests/model/test_exact.py), never from the solver's helpers."""

from __future__ import annotations

import copy

import pytest

from landscape_model.catalog import Catalog, ConfigError
from landscape_model.config import Scenario
from landscape_model.cpu_stations import station_busy
from landscape_model.des import DiscreteEventSimulation
from landscape_model.network import compile_network
from landscape_model.placement import place
from landscape_model.solver import Solver
from landscape_model.summary import point_figures
from landscape_model.terms import COMPONENTS
from landscape_model.whatif import Configuration, WhatIf
from tests.model import des_support as case
from tests.model.test_des_exact import _measure, exact_mva, machine_repairman
from tests.model.test_exact import multiclass_exact_mva


def _analytic(doc: dict) -> tuple[float, float, list[float]]:
    """Throughput, mean dialog response, and each instance's response."""
    sc = Scenario.model_validate(doc)
    op = Solver(compile_network(sc), histogram_samples=10).solve()
    f = point_figures(op, sc)
    resp = op.means[:, 0, :, COMPONENTS.index("response")]
    per = (resp * op.step_rate[:, 0]).sum(axis=1) / op.step_rate[:, 0].sum(axis=1)
    return f["dialog_steps_per_s"], f["avg_dialog_response_s"], per.tolist()


def _des(tmp_path, doc: dict, duration: float = 6000.0) -> dict[str, float]:
    sim = DiscreteEventSimulation("case", seed=5, dt=10.0, catalog=case.catalog(tmp_path, doc))
    return _measure(sim, 200.0, duration)


def _two_instances(pinned: bool, users: int = 100, wps: int = 2) -> dict:
    land = case.landscape(cpus=2, instances_per_host=2, dialog_wps=wps)
    if pinned:
        land["app_servers"]["affinity"] = "per-core"
    return case.scenario(land, users=users, think_s=10.0, cpu_s=0.15)


def test_instances_on_disjoint_pinned_cores_are_independent_machine_repairmen(tmp_path) -> None:
    """Two instances, each pinned to its own core, 2 work processes, CPU-only steps: two
    independent M/M/1//50. Unpinned, the same two share both cores and do better."""
    mr = machine_repairman(50, 10.0, 0.15)
    x, r, per = _analytic(_two_instances(pinned=True))
    assert x == pytest.approx(2 * mr["X"], rel=1e-6)
    assert r == pytest.approx(mr["R"], rel=1e-6)
    assert per == pytest.approx([mr["R"], mr["R"]], rel=1e-6)
    _, shared_r, _ = _analytic(_two_instances(pinned=False))
    assert shared_r < 0.8 * r  # placement is a mechanism, not a label
    got = _des(tmp_path, _two_instances(pinned=True))
    assert got["X"] == pytest.approx(2 * mr["X"], rel=0.02)
    assert got["R"] == pytest.approx(mr["R"], rel=0.04)


APP_CPU, DB_CPU = 0.06, 0.03


def _db_on_core_zero(users: int) -> dict:
    """Two-tier, two cores: instance D00 and the database pinned to core 0, D01 to core 1;
    as many work processes as users (product form)."""
    land = case.landscape(
        cpus=2, instances_per_host=2, dialog_wps=users, two_tier=True, cpu_s_per_call=DB_CPU
    )
    land["app_servers"]["affinity"] = "per-core"
    land["database"]["affinity"] = {"cores": [0]}
    return case.scenario(
        land, users=2 * users, think_s=1.0, cpu_s=APP_CPU, statements=[case.statement()]
    )


@pytest.mark.parametrize("users", [8, 12])
def test_database_on_the_central_instance_core_against_exact_two_class_mva(
    tmp_path, users: int
) -> None:
    """Seed 004's placement in small: the database's CPU competes with D00 on core 0 and
    with nobody on core 1. Exact two-class MVA (stations core 0, core 1) against both
    engines; the central instance is the slower one. Core 0 is 78 % busy with 8 users each,
    97 % with 12. The analytic engine meets D01's DB bursts on core 0 (shorter than D00's)
    as an open stream, D01 meets D00's as a background (docs/model.md, seed 004:
    `Solver._shorter_bursts`): X -0.26 % / -0.45 %, D00's response +1.30 % / +0.98 %,
    D01's +1.66 % / +2.23 %. With every other class a background, as before 2026-11-26:
    X -1.11 % / -2.89 %, D00 +8.65 % / +13.53 %, D01 +3.42 % / +5.90 %."""
    x1, x2 = multiclass_exact_mva(
        [(users, 1.0, [APP_CPU + DB_CPU, 0.0]), (users, 1.0, [DB_CPU, APP_CPU])]
    )
    x, _, per = _analytic(_db_on_core_zero(users))
    assert x == pytest.approx(x1 + x2, rel=0.01)
    r_exact = [users / x1 - 1.0, users / x2 - 1.0]
    assert per == pytest.approx(r_exact, rel=0.03)
    assert r_exact[0] > 1.3 * r_exact[1]
    if users > 8:
        return
    got = _des(tmp_path, _db_on_core_zero(users), duration=3000.0)
    assert got["X"] == pytest.approx(x1 + x2, rel=0.02)
    assert got["R"] == pytest.approx(2 * users / (x1 + x2) - 1.0, rel=0.04)


def test_remote_memory_stretches_cpu_demand_exactly(tmp_path) -> None:
    """One instance unpinned on a 2-socket host, its memory local to where its threads
    run: half its accesses remote, demand x (1 + m r (rho - 1)) = 1.1 for m 0.4, rho 1.5.
    One work process: M/M/1//30 at the stretched service time."""
    land = case.landscape(cpus=2, dialog_wps=1)
    land["hardware"] = {
        "app0": {"sockets": 2, "remote_memory_latency_ratio": 1.5, "memory_stall_share": 0.4}
    }
    doc = case.scenario(land, users=30, think_s=5.0, cpu_s=0.1)
    mr = machine_repairman(30, 5.0, 0.11)
    x, r, _ = _analytic(doc)
    assert x == pytest.approx(mr["X"], rel=1e-6)
    assert r == pytest.approx(mr["R"], rel=1e-6)
    got = _des(tmp_path, doc, duration=4000.0)
    assert got["X"] == pytest.approx(mr["X"], rel=0.02)
    assert got["R"] == pytest.approx(mr["R"], rel=0.04)


def test_remote_shares_follow_cores_and_memory_placement() -> None:
    land = Catalog().scenario("sd-two-tier-8core").landscape
    pl = place(land)
    assert [st.name for st in pl.stations] == [f"cpu:sapsrv/{k}" for k in range(8)]
    assert pl.instance_station == list(range(8)) and pl.db_station == 0
    assert pl.instance_remote == [0.0] * 8  # each on one core, its memory local
    assert pl.db_remote == 0.5  # SQL Server's buffer pool over both nodes
    assert pl.db_stretch == pytest.approx(1 + 0.3 * 0.5 * 0.09)
    spread = Catalog().scenario(
        "sd-two-tier-8core",
        settings=[
            "landscape.database.affinity={sockets: [0, 1]}",
            "landscape.app_servers.affinity=none",
        ],
    )
    # Unpinned, on both sockets: one station; a thread on either socket finds half its
    # memory remote, whether the memory is local to where it runs or interleaved.
    spread_pl = place(spread.landscape)
    assert [st.name for st in spread_pl.stations] == ["cpu:sapsrv"]
    assert spread_pl.db_remote == 0.5 and spread_pl.instance_remote == [0.5] * 8
    four = Catalog().scenario("sd-two-tier-4core").landscape
    assert place(four).db_remote == 0.0 and place(four).db_stretch == 1.0


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        (
            "landscape.database.affinity.cores=[9]",
            "database.affinity.cores: core 9 is not on host 'sapsrv' (cores 0..7)",
        ),
        ("landscape.hardware.sapsrv.sockets=3", "hardware.sapsrv.sockets: 3 sockets do not"),
        (
            "landscape.database.affinity={sockets: [2]}",
            "database.affinity.sockets: socket 2 is not on host 'sapsrv'",
        ),
        (
            "landscape.database.affinity.cores=[0, 1]",
            "database.affinity: cores [0, 1] overlap instance:sapsrv_D00's [0]",
        ),
        ("landscape.database.affinity={cores: [0], sockets: [0]}", "give either cores or sockets"),
        ("landscape.app_servers.cpus=9", "hardware.sapsrv.sockets: 2 sockets do not divide"),
        (
            "landscape.app_servers.instances_per_host=10",
            "app_servers.affinity (instance sapsrv_D08).cores: core 8 is not on host",
        ),
        ("landscape.instance_affinity={sapsrv_D99: {cores: [1]}}", "instance_affinity.sapsrv_D99"),
        ("landscape.hardware={db9: {sockets: 1}}", "hardware.db9: no such host"),
    ],
)
def test_bad_placement_is_an_error_naming_the_path(setting: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        Catalog().scenario("sd-two-tier-8core", settings=[setting])
    assert message in str(err.value)


@pytest.mark.parametrize(("cores", "users"), [(2, 130), (8, 450)])
def test_both_engines_agree_on_the_seed_004_landscapes(cores: int, users: int) -> None:
    """About 85 % of the most users below 2 s: throughput and response within 5 %."""
    name = f"sd-two-tier-{cores}core"
    sc = Catalog().scenario(name, settings=[f"users={users}"])
    f = point_figures(Solver(compile_network(sc)).solve(), sc)
    got = _measure(DiscreteEventSimulation(name, seed=3, overrides={"users": users}), 120, 900)
    assert got["X"] == pytest.approx(f["dialog_steps_per_s"], rel=0.05)
    assert got["R"] == pytest.approx(f["avg_dialog_response_s"], rel=0.05)


def test_seed_004_scale_up_table() -> None:
    """Most users below 2 s on the shipped 1/2/4/8-core landscapes (analytic; the DES
    column is bench/seed004.py's, in docs/model.md). Seed 004: "scaled almost linearly
    from 1-4 instances ... did not scale as well to eight CPUs"."""
    users = {
        n: WhatIf(f"sd-two-tier-{n}core").max_users(Configuration(label=f"{n}")).users
        for n in (1, 2, 4, 8)
    }
    print("\nseed 004 placement, most users < 2 s:", users)
    r = {
        k: users[a] / users[b]
        for k, a, b in (("2/1", 2, 1), ("4/1", 4, 1), ("4/2", 4, 2), ("8/4", 8, 4))
    }
    print("  ".join(f"{k} {v:.2f}" for k, v in r.items()))
    assert users[2] / users[1] >= 1.8
    assert users[4] / users[1] >= 3.4
    assert users[8] / users[4] < users[4] / users[2]


def test_whatif_names_the_pinned_core_that_bounds_the_users() -> None:
    """On the 8-core landscape the host is far from busy at its most users; core 0 (the
    central instance and the database) is the bottleneck and whatif says so."""
    point = WhatIf("sd-two-tier-8core").max_users(Configuration(label="8"))
    stations = {st.station: st.cpu_util for st in point.cpu_stations}
    assert list(stations) == [f"cpu:sapsrv/{k}" for k in range(8)]
    assert max(point.utilisation, key=point.utilisation.__getitem__) == "cpu:sapsrv/0"
    assert stations["cpu:sapsrv/0"] > 0.8 > 0.7 > point.host_cpu["sapsrv"]
    assert all(stations["cpu:sapsrv/0"] > u for n, u in stations.items() if n != "cpu:sapsrv/0")
    # The stations add up to the host: the central services' CPU is core 0's too.
    assert sum(stations.values()) / 8 == pytest.approx(point.host_cpu["sapsrv"], rel=1e-6)


def test_des_refuses_instances_whose_memory_locality_differs(tmp_path) -> None:
    """The DES draws ABAP CPU per transaction for every instance alike: an instance
    spanning two of four sockets beside one within a socket is an error naming
    instance_affinity (the analytic engine solves it: the spanning one pays for its
    remote memory, the other does not)."""
    land = case.landscape(cpus=4, instances_per_host=2, dialog_wps=2, two_tier=True)
    land["instance_affinity"] = {"app0_D00": {"sockets": [0, 1]}, "app0_D01": {"sockets": [2]}}
    land["database"]["affinity"] = {"sockets": [3]}
    land["hardware"] = {
        "app0": {"sockets": 4, "remote_memory_latency_ratio": 1.5, "memory_stall_share": 0.4}
    }
    doc = case.scenario(land, users=40, think_s=5.0, cpu_s=0.1)
    _, _, per = _analytic(doc)
    uniform = copy.deepcopy(doc)
    uniform["landscape"]["hardware"]["app0"]["memory_stall_share"] = 0.0
    _, _, per_uniform = _analytic(uniform)
    assert per[0] > 1.02 * per_uniform[0]
    assert per[1] == pytest.approx(per_uniform[1], rel=0.01)
    with pytest.raises(ValueError, match="instance_affinity: the discrete-event engine"):
        DiscreteEventSimulation("case", catalog=case.catalog(tmp_path, doc))


# ---- the central services on the central instance's pinned core (seed 004: "The central
# instance was comprised of two dialog processes, one update process, and one enqueue
# process"; "Affinity was set in the SAP instance profiles")
ENQ_S, MSG_S, ENQS = 0.02, 0.01, 1.0  # large, so that the test can tell where they run


def _cs_on_app_host(land: dict, affinity: dict | None = None) -> dict:
    cs = land["central_services"]
    for key in ("cpus", "memory_bytes"):
        cs.pop(key)
    cs |= {"host": "app0", "enqueue_service_s": ENQ_S, "message_server_cpu_s_per_step": MSG_S}
    if affinity is not None:
        cs["affinity"] = affinity
    return land


def _with_enqueues(doc: dict) -> dict:
    doc["transactions"]["T"]["dialog"]["enqueues"] = ENQS
    return doc


def _central_alone(users: int, pinned: bool = True) -> dict:
    """One instance (the central one) pinned to the only core, the central services beside
    it, as many work processes as users."""
    land = _cs_on_app_host(case.landscape(cpus=1, dialog_wps=users))
    if pinned:
        land["app_servers"]["affinity"] = "per-core"
    return _with_enqueues(case.scenario(land, users=users, think_s=2.0, cpu_s=APP_CPU))


def test_central_services_on_the_pinned_core_are_its_cpu_demand_exactly(tmp_path) -> None:
    """One pinned core: the step's CPU, its enqueue request and the message server's share
    are one M/M/1//20 demand (0.06 + 0.02 + 0.01 s); the enqueue time is its share of the
    residence there. Unpinned on that one-core host, the same core: the same answer. On a
    host of their own, the enqueue work process is a queue of its own and the message
    server's CPU is not queued for: a different (faster) answer."""
    users, demand = 20, APP_CPU + ENQS * ENQ_S + MSG_S
    mr = machine_repairman(users, 2.0, demand)
    assert place(Scenario.model_validate(_central_alone(users)).landscape).cs_station == 0
    sc = Scenario.model_validate(_central_alone(users))
    op = Solver(compile_network(sc), histogram_samples=10).solve()
    f = point_figures(op, sc)
    assert f["dialog_steps_per_s"] == pytest.approx(mr["X"], rel=1e-6)
    assert f["avg_dialog_response_s"] == pytest.approx(mr["R"], rel=1e-6)
    means = op.means[0, 0, 0]
    enq = means[COMPONENTS.index("enqueue")]
    assert enq == pytest.approx(mr["R"] * ENQS * ENQ_S / demand, rel=1e-6)
    # The host's CPU: the instance's, and the central services' (over its one CPU).
    assert op.cs_cpu_util == pytest.approx(mr["X"] * (ENQS * ENQ_S + MSG_S), rel=1e-6)
    _, unpinned_r, _ = _analytic(_central_alone(users, pinned=False))
    assert unpinned_r == pytest.approx(mr["R"], rel=1e-6)
    own = _with_enqueues(
        case.scenario(
            case.landscape(cpus=1, dialog_wps=users), users=users, think_s=2.0, cpu_s=APP_CPU
        )
    )
    own["landscape"]["central_services"] |= {
        "enqueue_service_s": ENQ_S,
        "message_server_cpu_s_per_step": MSG_S,
    }
    _, own_r, _ = _analytic(own)
    assert own_r < 0.8 * mr["R"]
    doc = _central_alone(users)
    sim = DiscreteEventSimulation("case", seed=5, dt=10.0, catalog=case.catalog(tmp_path, doc))
    got = _measure(sim, 200.0, 4000.0)
    assert got["X"] == pytest.approx(mr["X"], rel=0.02)
    assert got["R"] == pytest.approx(mr["R"], rel=0.04)
    # The DES counts the central services' CPU as the core's: their share of the host's
    # busy time is their share of the demand, and the host is as busy as the core.
    t = sim.snapshot().totals
    assert t.cs_cpu_seconds / t.sim_time == pytest.approx(
        mr["X"] * (ENQS * ENQ_S + MSG_S), rel=0.03
    )
    assert t.os_cpu_busy_seconds[0] / t.sim_time == pytest.approx(mr["X"] * demand, rel=0.03)


def _central_and_dialog(users: int, affinity: dict | None = None) -> dict:
    """Two instances pinned to a core each, the central services on D00's (or `affinity`)."""
    land = _cs_on_app_host(case.landscape(cpus=2, instances_per_host=2, dialog_wps=users), affinity)
    land["app_servers"]["affinity"] = "per-core"
    return _with_enqueues(case.scenario(land, users=2 * users, think_s=1.0, cpu_s=APP_CPU))


@pytest.mark.parametrize("affinity", [None, {"cores": [1]}])
def test_central_services_share_a_pinned_core_against_exact_two_class_mva(
    tmp_path, affinity
) -> None:
    """D00 on core 0, D01 on core 1, every step's enqueue request and message-server share
    on the central instance's core (default) or, with central_services.affinity, on core 1:
    exact two-class MVA against both engines (the same bounds as the database's case above:
    the central instance's bursts on core 0, ABAP and central services, are longer than
    D01's central-services burst there, so it meets D01's as a stream; analytic X -0.26 %,
    responses +1.30 % and +1.66 %, were -1.11 %, +8.65 % and +3.42 % with a background)."""
    users = 8
    cs = ENQS * ENQ_S + MSG_S
    on = 0 if affinity is None else 1
    d00, d01 = [APP_CPU, 0.0], [0.0, APP_CPU]
    d00[on] += cs
    d01[on] += cs
    x0, x1 = multiclass_exact_mva([(users, 1.0, d00), (users, 1.0, d01)])
    doc = _central_and_dialog(users, affinity)
    assert place(Scenario.model_validate(doc).landscape).cs_station == on
    x, _, per = _analytic(doc)
    assert x == pytest.approx(x0 + x1, rel=0.01)
    r_exact = [users / x0 - 1.0, users / x1 - 1.0]
    loaded, other = (0, 1) if on == 0 else (1, 0)
    assert per == pytest.approx(r_exact, rel=0.03)
    assert r_exact[loaded] > 1.2 * r_exact[other]
    got = _des(tmp_path, doc, duration=3000.0)
    assert got["X"] == pytest.approx(x0 + x1, rel=0.02)
    assert got["R"] == pytest.approx(2 * users / (x0 + x1) - 1.0, rel=0.04)


def test_central_services_station_follows_the_landscape() -> None:
    """Seed 004's landscapes: on the central instance's core 0 with the database. Shared
    cores (sd-two-tier): the host's one station, with everyone else. A host of their own
    (sd-benchmark-2003): not on a CPU station (its answers are those of before).
    central_services.affinity places them anywhere."""
    cat = Catalog()
    for n in (1, 2, 4, 8):
        pl = place(cat.scenario(f"sd-two-tier-{n}core").landscape)
        assert pl.cs_station == pl.db_station == pl.instance_station[0] == 0
    pl = place(cat.scenario("sd-two-tier").landscape)
    assert pl.cs_station == pl.db_station == pl.instance_station[7] == 0
    assert pl.stations[0].name == "cpu:sapsrv" and pl.stations[0].cores == 8
    assert place(cat.scenario("sd-benchmark-2003").landscape).cs_station is None
    own = cat.scenario(
        "sd-benchmark-2003", settings=["landscape.central_services.affinity={cores: [0]}"]
    )
    pl = place(own.landscape)
    assert pl.stations[pl.cs_station].name == "cpu:penguin1/0"
    moved = cat.scenario(
        "sd-two-tier-8core", settings=["landscape.central_services.affinity={cores: [7]}"]
    )
    pl = place(moved.landscape)
    assert pl.cs_station == pl.instance_station[7] == 7


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        (
            "landscape.central_services.affinity={cores: [9]}",
            "central_services.affinity.cores: core 9 is not on host 'sapsrv' (cores 0..7)",
        ),
        (
            "landscape.central_services.affinity={sockets: [2]}",
            "central_services.affinity.sockets: socket 2 is not on host 'sapsrv'",
        ),
        (
            "landscape.central_services.affinity={cores: [0, 1]}",
            "central_services.affinity: cores [0, 1] overlap instance:sapsrv_D00's [0]",
        ),
        (
            "landscape.central_services.affinity={cores: [0], sockets: [0]}",
            "give either cores or sockets",
        ),
    ],
)
def test_bad_central_services_affinity_is_an_error_naming_the_path(
    setting: str, message: str
) -> None:
    with pytest.raises(ConfigError) as err:
        Catalog().scenario("sd-two-tier-8core", settings=[setting])
    assert message in str(err.value)


def _central_on_shared_cores(users: int, cpus: int) -> dict:
    """One instance on an unpinned host of `cpus` cores, the central services beside it."""
    land = _cs_on_app_host(case.landscape(cpus=cpus, dialog_wps=users))
    return _with_enqueues(case.scenario(land, users=users, think_s=2.0, cpu_s=APP_CPU))


def test_central_services_on_shared_cores_load_them_exactly(tmp_path) -> None:
    """Not pinned, on an application server's two shared cores: the step's CPU, its enqueue
    request and the message server's share are one demand on that processor-sharing
    station (0.06 + 0.02 + 0.01 s): M/M/2//20 by exact load-dependent MVA, to 1e-6 on the
    analytic engine and within 2 % (X) / 4 % (R) on the DES, whose station and host count
    the central services' CPU too."""
    users, cs = 20, ENQS * ENQ_S + MSG_S
    exact = exact_mva(users, 2.0, [(APP_CPU + cs, 2)])
    doc = _central_on_shared_cores(users, cpus=2)
    pl = place(Scenario.model_validate(doc).landscape)
    assert pl.cs_station == pl.instance_station[0] == 0
    x, r, _ = _analytic(doc)
    assert x == pytest.approx(exact["X"], rel=1e-6)
    assert r == pytest.approx(exact["R"], rel=1e-6)
    sim = DiscreteEventSimulation("case", seed=5, dt=10.0, catalog=case.catalog(tmp_path, doc))
    got = _measure(sim, 200.0, 4000.0)
    assert got["X"] == pytest.approx(exact["X"], rel=0.02)
    assert got["R"] == pytest.approx(exact["R"], rel=0.04)
    t = sim.snapshot().totals
    busy = exact["X"] * (APP_CPU + cs)
    assert t.cpu_station_busy_seconds[0] / t.sim_time == pytest.approx(busy, rel=0.03)
    assert t.os_cpu_busy_seconds[0] / t.sim_time == pytest.approx(busy, rel=0.03)


def test_central_services_on_the_database_host_load_its_cpu_exactly(tmp_path) -> None:
    """Not pinned, on the database's own host (one core): every step's DB CPU (0.03 s),
    enqueue request and message-server share (0.03 s) on one station, the instance's CPU
    (0.06 s) on its host's: a two-station product-form network, exact MVA, against both
    engines (analytic to 1e-6)."""
    users, cs = 12, ENQS * ENQ_S + MSG_S
    land = case.landscape(cpus=1, dialog_wps=users, cpu_s_per_call=DB_CPU)
    # The same host as the database's, so the same cpus and memory_bytes (the validator's).
    land["central_services"] |= {
        "host": "db",
        "enqueue_service_s": ENQ_S,
        "message_server_cpu_s_per_step": MSG_S,
    }
    doc = _with_enqueues(
        case.scenario(land, users=users, think_s=1.0, cpu_s=APP_CPU, statements=[case.statement()])
    )
    pl = place(Scenario.model_validate(doc).landscape)
    assert pl.cs_station == pl.db_station != pl.instance_station[0]
    exact = exact_mva(users, 1.0, [(APP_CPU, 1), (DB_CPU + cs, 1)])
    x, r, _ = _analytic(doc)
    assert x == pytest.approx(exact["X"], rel=1e-6)
    assert r == pytest.approx(exact["R"], rel=1e-6)
    got = _des(tmp_path, doc, duration=3000.0)
    assert got["X"] == pytest.approx(exact["X"], rel=0.02)
    assert got["R"] == pytest.approx(exact["R"], rel=0.04)


# About 85 % of sd-two-tier's most users below 2 s (842, analytic, with the central services
# on its shared cores: docs/model.md).
TWO_TIER_USERS = 716


def test_both_engines_agree_on_the_shared_two_tier_host() -> None:
    """sd-two-tier, every core shared, at ~85 % of its most users: throughput and response
    within 5 %; in both the host's one station carries every tenant's CPU, the central
    services' included (the station as busy as the host), and their CPU agrees within 5 %."""
    sc = Catalog().scenario("sd-two-tier", settings=[f"users={TWO_TIER_USERS}"])
    solver = Solver(compile_network(sc))
    op = solver.solve()
    f = point_figures(op, sc)
    sim = DiscreteEventSimulation("sd-two-tier", seed=3, overrides={"users": TWO_TIER_USERS})
    got = _measure(sim, 120, 900)
    assert got["X"] == pytest.approx(f["dialog_steps_per_s"], rel=0.05)
    assert got["R"] == pytest.approx(f["avg_dialog_response_s"], rel=0.05)
    station = station_busy(solver.net, op)
    assert station.shape == (1,)
    host = WhatIf("sd-two-tier").sweep(Configuration("c"), "users", [TWO_TIER_USERS])[0]
    assert station[0] / 8 == pytest.approx(host.host_cpu["sapsrv"], rel=1e-9)
    t = sim.snapshot().totals
    assert t.cpu_station_busy_seconds[0] == pytest.approx(t.os_cpu_busy_seconds[0], rel=1e-9)
    # The central services' CPU: per dialog step the message server's, per enqueue request
    # the enqueue service (the scenario's own figures).
    cs = sc.landscape.central_services
    enq_per_step = (
        sum(
            t_.dialog.enqueues * t_.dialog_steps + (t_.update.enqueues if t_.update else 0.0)
            for t_ in sc.transactions.values()
        )
        / sc.steps_per_cycle
    )
    expected = f["dialog_steps_per_s"] * (
        cs.message_server_cpu_s_per_step + enq_per_step * cs.enqueue_service_s
    )
    assert op.cs_cpu_util * 8 == pytest.approx(expected, rel=1e-6)
    assert t.cs_cpu_seconds / t.sim_time == pytest.approx(expected, rel=0.05)
