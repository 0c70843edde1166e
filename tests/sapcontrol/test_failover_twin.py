"""The twin's ascs-failover fault answers as sapstartsrv does during an HA failover: the
enqueue server stopped on the old node, then the ASCS listed on the other node with the ERS
replication lost, then replicating again (issue 31 item 5)."""

from __future__ import annotations

import time

import httpx
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from alerts.thresholds import load_thresholds
from exporters.collectors.sapcontrol import SAPControlCollector
from exporters.sapcontrol.settings import SAPControlSettings
from exporters.sapstartsrv.landscape import ASCS_NAME, GRAY, GREEN, RED, ModelLandscape
from exporters.sapstartsrv.server import Credentials, SapStartSrvFleet
from exporters.sources.sapcontrol import SAPControlScraper
from landscape_model.engine import Simulation


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

    # The cluster runs it on penguin9 from the start, its enqueue server not yet up; the
    # old node's listener is the one moving (its connections refused by the fleet).
    row = _ascs_row(land)
    assert (row["hostname"], row["dispstatus"]) == ("penguin9", RED)
    assert land.moving_instance() == f"penguin1_{ASCS_NAME}"
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
    assert land.moving_instance() is None
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


def _metrics(registry: CollectorRegistry) -> dict:
    out: dict = {}
    for fam in text_string_to_metric_families(generate_latest(registry).decode()):
        for s in fam.samples:
            out.setdefault(s.name, []).append((s.labels, s.value))
    return out


def _up(m: dict) -> dict[str, float]:
    return {lab["sap_instance"]: v for lab, v in m["sap_up"]}


def test_the_old_nodes_listener_refuses_and_the_exporter_follows_in_seconds() -> None:
    """The twin's fleet refuses the ASCS's connections while it moves; the exporter, asking
    for the instance list as soon as it stops answering, counts one failover and reads the
    ASCS on penguin9 within seconds, with no series left for penguin1."""
    healthy = Simulation("sd-benchmark-2003", seed=4)
    healthy.run(60)
    faulted = Simulation("sd-benchmark-2003", faults=("ascs-failover",), seed=4)
    scenario = [healthy.scenario]
    clock = _Clock()
    land = ModelLandscape(
        healthy.snapshot, lambda: scenario[0], load_thresholds(), 120, clock=clock
    )
    fleet = SapStartSrvFleet(land, credentials=Credentials("bmkadm", "pw")).start()
    d00 = next(i.name for i in land.instances() if i.instance_name == "D00")
    ascs = f"penguin1_{ASCS_NAME}"
    scraper = SAPControlScraper(
        SAPControlSettings(
            discover=fleet.url(d00),
            hosts={"*": "127.0.0.1"},
            username="bmkadm",
            password="pw",
            timeout_s=2.0,
            discovery_interval_s=300,
        )
    )
    registry = CollectorRegistry()
    registry.register(SAPControlCollector(scraper))
    try:
        m = _metrics(registry)
        assert _up(m)[ascs] == 1.0
        scenario[0] = faulted.scenario
        fleet.follow_failover()
        try:
            httpx.post(fleet.url(ascs), timeout=2)
            raise AssertionError("the moving ASCS's listener still accepts connections")
        except httpx.ConnectError:
            pass
        start = time.monotonic()
        for _ in range(20):
            m = _metrics(registry)
            if "penguin9_ASCS01" in _up(m):
                break
            time.sleep(0.5)
        seen = time.monotonic() - start
        print(f"failover seen by the exporter after {seen:.1f} s")
        failovers = {lab["instance_name"]: v for lab, v in m["sap_sapcontrol_failovers_total"]}
        assert failovers["ASCS01"] == 1.0
        assert ascs not in _up(m) and seen < 10
        # Moved: the listener answers again, now as the ASCS on penguin9.
        clock.t += 25
        fleet.follow_failover()
        for _ in range(20):
            m = _metrics(registry)
            if _up(m).get("penguin9_ASCS01") == 1.0:
                break
            time.sleep(0.5)
        assert _up(m)["penguin9_ASCS01"] == 1.0 and ascs not in _up(m)
    finally:
        scraper.close()
        fleet.stop()
