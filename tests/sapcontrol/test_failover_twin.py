"""The twin's ascs-failover fault answers as sapstartsrv does during an HA failover: the
enqueue server stopped on the old node, then the ASCS listed on the other node with the ERS
replication lost, then replicating again (issue 31 item 5)."""

from __future__ import annotations

from alerts.thresholds import load_thresholds
from exporters.model.engine import Simulation
from exporters.sapstartsrv.landscape import ASCS_NAME, GRAY, GREEN, RED, ModelLandscape


class _Clock:
    def __init__(self) -> None:
        self.t = 1_800_000_000.0

    def __call__(self) -> float:
        return self.t


def _land(faults: tuple[str, ...]) -> tuple[ModelLandscape, _Clock]:
    sim = Simulation("sd-benchmark-2003", faults=faults, seed=4)
    sim.run(60)
    clock = _Clock()
    land = ModelLandscape(sim.snapshot, lambda: sim.scenario, load_thresholds(), 120, clock=clock)
    return land, clock


def _ascs_row(land: ModelLandscape) -> dict:
    rows = land.system_instance_list({}, set())
    (row,) = [r for r in rows if "ENQUE" in r["features"].split("|")]
    return row


def test_failover_phases_down_moved_with_replication_lost_then_replicating() -> None:
    land, clock = _land(("ascs-failover",))
    ascs = next(i for i in land.instances() if i.instance_name == ASCS_NAME)

    # Enqueue server stopped, still on the old node.
    row = _ascs_row(land)
    assert (row["hostname"], row["dispstatus"]) == ("penguin1", RED)
    assert land.unavailable(ascs, "EnqGetStatistic")
    enq = {p["name"]: p["dispstatus"] for p in land.process_list(ascs)}
    assert enq == {"msg_server": GREEN, "enserver": GRAY}
    ha = land.ha_failover_config()
    assert ha["HAActive"] and ha["HAActiveNode"] == "penguin1"
    assert ha["HANodes"] == ["penguin1", "penguin9"]

    # 25 s later: answers from penguin9, replication not active.
    clock.t += 25
    row = _ascs_row(land)
    assert (row["hostname"], row["dispstatus"]) == ("penguin9", GREEN)
    assert not land.unavailable(ascs, "EnqGetStatistic")
    assert land.enq_statistic()["replication-state"] == RED
    assert land.ha_failover_config()["HAActiveNode"] == "penguin9"

    # After the 90 s of lost replication the ERS replicates again; the ASCS stays on penguin9.
    clock.t += 91
    assert land.enq_statistic()["replication-state"] == GREEN
    assert _ascs_row(land)["hostname"] == "penguin9"


def test_without_the_fault_no_cluster_and_no_replication() -> None:
    land, clock = _land(())
    clock.t += 200
    assert _ascs_row(land)["hostname"] == "penguin1"
    assert land.enq_statistic()["replication-state"] == GRAY
    assert land.ha_failover_config()["HAActive"] is False
