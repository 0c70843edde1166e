"""Long-running work processes (ABAPGetWPTable Time, SM50; issue 31 item 2): the twin's
long-running-dialog-step fault keeps one dialog step running on the first application
server, its Time growing with the wall clock; the collector exports the longest per type."""

from __future__ import annotations

from alerts.thresholds import load_thresholds
from exporters.collectors.sapcontrol import SAPControlCollector, cpu_seconds
from exporters.sapstartsrv.landscape import ModelLandscape
from landscape_model.engine import Simulation


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _land(faults: tuple[str, ...], clock: Clock) -> ModelLandscape:
    sim = Simulation("sd-benchmark-2003", faults=faults, seed=4)
    sim.run(120)
    return ModelLandscape(sim.snapshot, lambda: sim.scenario, load_thresholds(), 120, clock=clock)


def _longest_dia(land: ModelLandscape) -> dict[str, float]:
    out = {}
    for inst in land.instances():
        rows = land.wp_table(inst)
        busy = [cpu_seconds(r["Time"]) for r in rows if r["Typ"] == "DIA" and r["Status"] != "Wait"]
        if inst.abap:
            out[inst.name] = max(busy, default=0.0)
    return out


def test_twin_long_running_step_grows_on_one_instance_only() -> None:
    clock = Clock()
    land = _land(("long-running-dialog-step",), clock)
    first = _longest_dia(land)
    clock.t += 90
    later = _longest_dia(land)
    long = [name for name, s in first.items() if s >= 1800]
    assert len(long) == 1, first
    (name,) = long
    assert abs(later[name] - first[name] - 90) <= 1
    # The other instances' steps stay as short as the model's dialog steps are.
    assert all(s < 60 for n, s in later.items() if n != name), later


def test_twin_healthy_steps_are_short() -> None:
    clock = Clock()
    land = _land((), clock)
    for _ in range(3):
        assert all(s < 60 for s in _longest_dia(land).values())
        clock.t += 30


def test_collector_exports_longest_busy_time_per_type_never_user_or_program() -> None:
    from exporters.collectors.sapcontrol import _Families

    g = _Families()
    rows = [
        {
            "Typ": "DIA",
            "Status": "Run",
            "Time": "1805",
            "Reason": "",
            "Action": "",
            "Cpu": "0:01:00",
            "Program": "ZSD_OPEN_ITEMS",
            "User": "SDREPORT",
        },
        {
            "Typ": "DIA",
            "Status": "Hold",
            "Time": "12",
            "Reason": "RFC",
            "Action": "",
            "Cpu": "",
            "Program": "SAPMV45A",
            "User": "SD00001",
        },
        {
            "Typ": "DIA",
            "Status": "Wait",
            "Time": "99999",
            "Reason": "",
            "Action": "",
            "Cpu": "",
            "Program": "",
            "User": "",
        },
        {
            "Typ": "BTC",
            "Status": "Wait",
            "Time": "",
            "Reason": "",
            "Action": "",
            "Cpu": "",
            "Program": "",
            "User": "",
        },
    ]
    SAPControlCollector._work_processes(g, ["BMK", "app1_D00"], rows)
    (fam,) = [f for f in g.all if f.name == "sap_work_processes_longest_running_seconds"]
    got = {s.labels["type"]: s.value for s in fam.samples}
    assert got == {"DIA": 1805.0, "BTC": 0.0}  # a waiting process's stale Time is not a step
    assert all(set(s.labels) == {"sid", "sap_instance", "type"} for s in fam.samples)
