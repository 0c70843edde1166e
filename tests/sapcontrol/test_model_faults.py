"""Each whitepaper fault of the model shows through SAPControl as on a real system: busy work
processes and a growing dialog queue, work processes on hold for ENQ, slow CCMS DB request
times, rolling work processes, and the derived per-step times near the model's own."""

from __future__ import annotations

import numpy as np
import pytest

from alerts.thresholds import load_thresholds
from exporters.collectors.sapcontrol import wp_activity
from exporters.sapcontrol import ccms
from exporters.sapstartsrv.landscape import ModelLandscape
from landscape_model.engine import Simulation
from landscape_model.terms import COMPONENTS

CALLS = 400  # WP-table reads to average (a monitor's samples over time)


def _run(faults: tuple[str, ...], seconds: float = 600) -> tuple[Simulation, ModelLandscape]:
    sim = Simulation("sd-benchmark-2003", faults=faults, seed=21)
    sim.run(seconds)
    land = ModelLandscape(
        sim.snapshot, lambda: sim.scenario, load_thresholds(), ccms_interval_s=120
    )
    return sim, land


def _mean_activity(land: ModelLandscape, name: str, activity: str) -> float:
    inst = land.instance(name)
    total = 0
    for _ in range(CALLS):
        total += sum(
            1 for r in land.wp_table(inst) if r["Typ"] == "DIA" and wp_activity(r) == activity
        )
    return total / CALLS


def _ccms(land: ModelLandscape, name: str, suffix: tuple[str, ...]) -> float:
    nodes = ccms.paths(land.alert_tree(land.instance(name)))
    return ccms.parse_value(ccms.find(nodes, suffix)["description"])


def _model_ms(sim: Simulation, i: int, component: str) -> float:
    st = sim.current
    rate = st.step_rate[i, 0]
    return 1000 * float(np.dot(rate, st.means[i, 0, :, COMPONENTS.index(component)]) / rate.sum())


@pytest.fixture(scope="module")
def healthy():
    return _run(())


def test_healthy_instance_is_green_and_quiet(healthy) -> None:
    _sim, land = healthy
    inst = land.instance("penguin2_D00")
    assert all(p["dispstatus"] == "SAPControl-GREEN" for p in land.process_list(inst))
    assert _ccms(land, "penguin2_D00", ("Dialog", "QueueTime")) < 0.005
    assert _mean_activity(land, "penguin2_D00", "enqueue") / 16 < 0.002  # well below 5 ms


def test_too_few_work_processes_busy_wps_and_a_growing_dialog_queue() -> None:
    _sim, land = _run(("too-few-work-processes",))
    inst = land.instance("penguin2_D00")
    rows = [r for r in land.wp_table(inst) if r["Typ"] == "DIA"]
    assert len(rows) == 4 and sum(r["Status"] != "Wait" for r in rows) >= 3
    nows = [
        next(q for q in land.queue_statistic(inst) if q["Typ"] == "ABAP/DIA")["Now"]
        for _ in range(50)
    ]
    assert np.mean(nows) > 10  # about 18 waiting (seed 000 rule 1: too few WPs)
    assert _ccms(land, "penguin2_D00", ("Dialog", "QueueTime")) > 0.2
    disp = land.process_list(inst)[0]
    assert disp["dispstatus"] == "SAPControl-YELLOW" and "Dialog Queue time" in disp["textstatus"]


def test_slow_enqueue_link_puts_work_processes_on_hold_for_enq() -> None:
    sim, land = _run(("slow-enqueue-link",))
    rate = float(sim.current.step_rate[0, 0].sum())
    derived_ms = 1000 * _mean_activity(land, "penguin2_D00", "enqueue") / rate
    assert derived_ms == pytest.approx(_model_ms(sim, 0, "enqueue"), rel=0.1)
    assert derived_ms > 5  # the whitepaper threshold


def test_db_bottleneck_shows_in_ccms_db_request_time() -> None:
    sim, land = _run(("db-bottleneck",))
    value = _ccms(land, "penguin2_D00", ("Dialog", "DBRequestTime"))
    assert value > 0.4
    assert 1000 * value == pytest.approx(_model_ms(sim, 0, "db_request"), rel=0.1)
    # GetAlerts lists the node CCMS colours, on its monitoring object.
    found = land.alerts(land.instance("penguin2_D00"))
    db = [a for a in found["alert"] if a["Attribute"] == "DBRequestTime"]
    assert [(a["Object"], a["Value"]) for a in db] in (
        [("Dialog", "SAPControl-YELLOW")],
        [("Dialog", "SAPControl-RED")],
    )
    assert found["RootTidName"] == "penguin2_BMK_00"


def test_a_healthy_instance_has_no_ccms_alert(healthy) -> None:
    _, land = healthy
    assert land.alerts(land.instance("penguin2_D00"))["alert"] == []


def test_roll_area_too_small_shows_rolling_work_processes() -> None:
    sim, land = _run(("roll-area-too-small",))
    rate = float(sim.current.step_rate[0, 0].sum())
    for activity in ("roll_in", "roll_out"):
        derived_ms = 1000 * _mean_activity(land, "penguin2_D00", activity) / rate
        assert derived_ms == pytest.approx(_model_ms(sim, 0, activity), rel=0.1)
        assert derived_ms > 20
    assert _ccms(land, "penguin2_D00", ("Dialog", "RollTime")) > 0.04


def test_ccms_values_are_the_models_means_over_the_interval(healthy) -> None:
    sim, land = healthy
    for suffix, comp in (
        (("Dialog", "ResponseTime"), "response"),
        (("Dialog", "DBRequestTime"), "db_request"),
        (("Dialog", "Load+GenTime"), "load_gen"),
    ):
        got = 1000 * _ccms(land, "penguin2_D00", suffix)
        assert got == pytest.approx(_model_ms(sim, 0, comp), rel=0.05, abs=1), suffix
    steps = _ccms(land, "penguin2_D00", ("Dialog", "DialogSteps"))
    assert steps == pytest.approx(float(sim.current.step_rate[0, 0].sum()), rel=0.05)


def test_queue_counters_count_the_steps_and_never_go_back(healthy) -> None:
    sim, land = healthy
    inst = land.instance("penguin2_D00")
    before = next(q for q in land.queue_statistic(inst) if q["Typ"] == "ABAP/DIA")
    sim.run(60)
    land._cache = None
    after = next(q for q in land.queue_statistic(inst) if q["Typ"] == "ABAP/DIA")
    steps = float(sim.snapshot().totals.steps[0, 0].sum())
    assert after["Reads"] == int(steps)
    assert after["Writes"] >= before["Writes"] and after["Reads"] >= before["Reads"]


def test_enqueue_server_counts_lock_requests(healthy) -> None:
    sim, land = healthy
    first = land.enq_statistic()
    sim.run(60)
    land._cache = None
    second = land.enq_statistic()
    assert second["enqueue-requests"] > first["enqueue-requests"] > 0
    assert second["lock-time"] > first["lock-time"]
    assert second["server-time"] >= second["lock-time"] + second["lock-wait-time"] - 1e-6
