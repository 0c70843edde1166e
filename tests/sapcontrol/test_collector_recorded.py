"""The sapcontrol collector on recorded answers: discovery, methods by features, every metric
in our vocabulary, the golden exposition, promtool, and no secret in a label or a log."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from exporters.collectors.base import ExporterCollector
from exporters.collectors.sapcontrol import (
    Identity,
    InstanceResult,
    SAPControlCollector,
    SAPControlReading,
    Target,
    wp_activity,
)
from exporters.sapcontrol.client import Endpoint
from exporters.sapcontrol.settings import SAPControlSettings
from exporters.sources.model import ModelSource
from exporters.sources.sapcontrol import SAPControlScraper
from landscape_model.engine import Simulation
from tests.collectors.exposition import differences, golden_rewritten
from tests.promtool import promtool_path
from tests.sapcontrol.conftest import PASSWORD, USER

GOLDEN = Path(__file__).parents[1] / "golden" / "sapcontrol.prom"


def _collector(client_factory, **over) -> SAPControlCollector:
    settings = SAPControlSettings(
        discover="http://sapapp1:50013/",
        username=USER,
        password=PASSWORD,
        timeout_s=2.0,
        **over,
    )
    scraper = SAPControlScraper(settings, client_factory=client_factory, clock=lambda: 0.0)
    return SAPControlCollector(scraper, clock=lambda: 0.0)


def _samples(text: str) -> dict[tuple, float]:
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def _get(samples, name, **labels) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


@pytest.fixture
def exposition(client_factory) -> str:
    registry = CollectorRegistry()
    # observIQ's tree shows "1,260 /min" and no value that tells its decimal notation.
    collector = _collector(client_factory, decimal="point")
    registry.register(collector)
    text = generate_latest(registry).decode()
    collector.source.close()
    return text


def test_discovery_finds_the_system_from_one_instance(exposition: str) -> None:
    s = _samples(exposition)
    up = {k[1]: v for k, v in s.items() if k[0] == "sap_up"}
    assert up == {
        (("sap_instance", "sapapp1_D00"), ("sid", "EPP"), ("source", "sapcontrol")): 1.0,
        (("sap_instance", "sapapp2_D00"), ("sid", "EPP"), ("source", "sapcontrol")): 1.0,
        (("sap_instance", "sapascs_ASCS01"), ("sid", "EPP"), ("source", "sapcontrol")): 1.0,
        # Never seen answering: named by SAP's convention for its features, and down.
        (("sap_instance", "sapers_ERS02"), ("sid", "EPP"), ("source", "sapcontrol")): 0.0,
    }
    assert _get(s, "sap_sapcontrol_discovery_success") == 1.0
    assert _get(s, "sap_instance_status", sid="EPP", sap_instance="sapapp2_D00") == 3.0


def test_methods_follow_what_the_instance_runs(client_factory, system) -> None:
    collector = _collector(client_factory)
    list(collector.families(collector.read()))
    by_host: dict[str, set[str]] = {}
    for host, op, _ in system.calls:
        by_host.setdefault(host, set()).add(op)
    assert by_host["sapapp1"] >= {
        "ABAPGetWPTable",
        "GetQueueStatistic",
        "GetAlertTree",
        "GetVersionInfo",
        "ABAPGetComponentList",
    }
    assert "EnqGetStatistic" not in by_host["sapapp1"]
    assert "HAGetFailoverConfig" not in by_host["sapapp1"]  # not a cluster resource
    assert by_host["sapascs"] == {
        "GetInstanceProperties",
        "GetProcessList",
        "GetVersionInfo",  # every instance; ABAPGetComponentList only where ABAP runs
        "EnqGetStatistic",
        "EnqGetLockTable",
        "HAGetFailoverConfig",
        "HACheckConfig",
        "HACheckFailoverConfig",
    }
    # Identities are cached: a second scrape does not ask GetInstanceProperties again, nor
    # the HA methods and the syslog within their intervals (60 s).
    system.calls.clear()
    list(collector.families(collector.read()))
    asked = {c[1] for c in system.calls}
    assert not asked & {
        "GetInstanceProperties",
        "HAGetFailoverConfig",
        "ABAPReadSyslog",
        "GetVersionInfo",
        "ABAPGetComponentList",
    }
    assert "EnqGetStatistic" in asked


def test_work_processes_by_type_status_and_activity(exposition: str) -> None:
    s = _samples(exposition)
    inst = {"sid": "EPP", "sap_instance": "sapapp1_D00"}
    wp = {
        st: _get(s, "sap_work_processes", **inst, type="DIA", status=st)
        for st in ("wait", "run", "hold", "stopped", "ended")
    }
    assert wp == {"wait": 2.0, "run": 5.0, "hold": 2.0, "stopped": 1.0, "ended": 0.0}
    act = {
        a: _get(s, "sap_work_processes_activity", **inst, type="DIA", activity=a)
        for a in ("roll_in", "roll_out", "load_gen", "db_request", "enqueue", "processing", "hold")
    }
    assert act == {
        "roll_in": 1.0,
        "roll_out": 1.0,
        "load_gen": 1.0,
        "db_request": 1.0,
        "enqueue": 1.0,
        "processing": 1.0,
        "hold": 2.0,  # on hold for RFC, and the stopped one
    }
    assert _get(s, "sap_work_processes_activity", **inst, type="UPD", activity="db_request") == 1
    # Known combinations start at 0 for every type the instance runs.
    assert _get(s, "sap_work_processes", **inst, type="BTC", status="run") == 0.0
    assert _get(s, "sap_work_processes_cpu_seconds_total", **inst, type="SPO") == 4428.0


def test_dispatcher_queues_gauges_and_counters(exposition: str) -> None:
    s = _samples(exposition)
    q = {"sid": "EPP", "sap_instance": "sapapp1_D00", "queue": "ABAP/DIA"}
    assert _get(s, "sap_dispatcher_queue_length", **q) == 5
    assert _get(s, "sap_dispatcher_queue_peak", **q) == 35
    assert _get(s, "sap_dispatcher_queue_capacity", **q) == 14000
    assert _get(s, "sap_dispatcher_queue_writes_total", **q) == 479801
    assert _get(s, "sap_dispatcher_queue_reads_total", **q) == 479796
    # dpmon's counters are xsd:int: a wrapped (negative) one reads as unsigned.
    up2 = {**q, "queue": "ABAP/UP2"}
    assert _get(s, "sap_dispatcher_queue_writes_total", **up2) == 2**32 - 2147483000


def test_enqueue_statistics(exposition: str) -> None:
    s = _samples(exposition)
    e = {"sid": "EPP", "sap_instance": "sapascs_ASCS01"}
    assert _get(s, "sap_enqueue_table_entries", **e, table="locks") == 4
    assert _get(s, "sap_enqueue_table_entries_peak", **e, table="arguments") == 104
    assert _get(s, "sap_enqueue_table_entries_capacity", **e, table="owners") == 56415
    assert _get(s, "sap_enqueue_requests_total", **e, operation="enqueue") == 109408
    assert _get(s, "sap_enqueue_requests_total", **e, operation="dequeue_all") == 150372
    assert _get(s, "sap_enqueue_errors_total", **e, operation="dequeue") == 0
    assert _get(s, "sap_enqueue_rejects_total", **e) == 4
    assert _get(s, "sap_enqueue_lock_time_seconds_total", **e) == pytest.approx(174.574351)
    assert _get(s, "sap_enqueue_server_time_seconds_total", **e) == pytest.approx(181.03)
    assert _get(s, "sap_enqueue_replication_state", **e) == 1.0
    # Enqueue statistics come only from where the enqueue server runs.
    assert not [k for k in s if k[0].startswith("sap_enqueue") and "sapapp1_D00" in str(k)]


def test_ccms_values_in_base_units_and_dash_left_out(exposition: str) -> None:
    s = _samples(exposition)
    i = {"sid": "EPP", "sap_instance": "sapapp1_D00"}
    assert _get(s, "sap_ccms_dialog_response_time_seconds", **i) == pytest.approx(0.25)
    assert _get(s, "sap_ccms_dialog_queue_time_seconds", **i) == pytest.approx(0.062)
    assert _get(s, "sap_ccms_dialog_db_request_time_seconds", **i) == pytest.approx(0.18)
    assert _get(s, "sap_ccms_dialog_steps_per_second", **i) == pytest.approx(21.0)
    assert _get(s, "sap_ccms_dialog_users_logged_in", **i) == 97
    assert _get(s, "sap_ccms_dialog_utilisation_ratio", **i) == pytest.approx(0.35)
    assert _get(s, "sap_ccms_update_response_time_seconds", **i) == pytest.approx(0.943)
    # RollTime reads "-": no sample (not 0), its node still shows its colour.
    assert not [k for k in s if k[0] == "sap_ccms_dialog_roll_time_seconds"]
    assert _get(s, "sap_ccms_node_state", **i, node="Dialog/RollTime") == 1.0
    assert _get(s, "sap_ccms_node_state", **i, node="Dialog/QueueTime") == 3.0


def test_a_ccms_value_read_two_ways_is_left_unread_and_said_once(client_factory, caplog) -> None:
    """Without WLMON_SAPCONTROL_DECIMAL, "1,260 /min" (1260 or 1.26) in a tree whose other
    values are integers is no sample, not a guess; the log names instance, node and setting,
    once, not at every scrape. The values that read one way are still there."""
    collector = _collector(client_factory)
    with caplog.at_level(logging.WARNING, logger="exporters.collectors.sapcontrol"):
        for _ in range(2):
            registry = CollectorRegistry()
            registry.register(collector)
            s = _samples(generate_latest(registry).decode())
    collector.source.close()
    i = {"sid": "EPP", "sap_instance": "sapapp1_D00"}
    assert not [k for k in s if k[0] == "sap_ccms_dialog_steps_per_second"]
    assert _get(s, "sap_ccms_dialog_response_time_seconds", **i) == pytest.approx(0.25)
    said = [
        r.getMessage() for r in caplog.records if "sapapp1:50013/ GetAlertTree" in r.getMessage()
    ]
    assert len(said) == 1, said
    assert "Dialog/DialogSteps" in said[0]
    assert "'1,260 /min' reads as 1260 (point) or 1.26 (comma)" in said[0]
    assert "WLMON_SAPCONTROL_DECIMAL" in said[0]


def test_process_status_lights(exposition: str) -> None:
    s = _samples(exposition)
    assert (
        _get(s, "sap_process_status", sid="EPP", sap_instance="sapapp1_D00", process="disp+work")
        == 3
    )
    assert (
        _get(s, "sap_process_status", sid="EPP", sap_instance="sapascs_ASCS01", process="enserver")
        == 2
    )


def test_a_protected_method_without_credentials_fails_alone(client_factory, system) -> None:
    def no_auth(endpoint, auth):
        return client_factory(endpoint, auth=None)

    collector = SAPControlCollector(
        SAPControlScraper(
            SAPControlSettings(discover="http://sapapp1:50013/", timeout_s=2.0),
            client_factory=no_auth,
        )
    )
    registry = CollectorRegistry()
    registry.register(collector)
    s = _samples(generate_latest(registry).decode())
    inst = {"sid": "EPP", "sap_instance": "sapapp1_D00"}
    assert _get(s, "sap_up", **inst, source="sapcontrol") == 1.0  # it answered: 401
    assert _get(s, "sap_sapcontrol_request_success", **inst, method="GetProcessList") == 1.0
    assert _get(s, "sap_sapcontrol_request_success", **inst, method="ABAPGetWPTable") == 0.0


def test_credentials_never_in_labels_or_logs(client_factory, caplog) -> None:
    caplog.set_level(logging.DEBUG)

    def wrong(endpoint, auth):
        return client_factory(endpoint, auth=(USER, "not-" + PASSWORD))

    settings = SAPControlSettings(
        discover="http://sapapp1:50013/", username=USER, password=PASSWORD, timeout_s=2.0
    )
    for factory in (client_factory, wrong):
        registry = CollectorRegistry()
        registry.register(SAPControlCollector(SAPControlScraper(settings, client_factory=factory)))
        text = generate_latest(registry).decode()
        assert PASSWORD not in text and USER not in text
    assert "401" in caplog.text  # the failure is logged...
    assert PASSWORD not in caplog.text  # ...without the secret
    assert PASSWORD not in repr(settings)


def test_classification_of_sm50_rows() -> None:
    row = {"Status": "Running", "Reason": "", "Action": "Direct Read"}
    assert wp_activity(row) == "db_request"
    assert wp_activity({**row, "Status": "Waiting"}) is None
    assert wp_activity({**row, "Status": "On Hold", "Reason": "ENQ", "Action": ""}) == "enqueue"
    assert wp_activity({**row, "Action": "Generating"}) == "load_gen"


def test_inside_the_exporter_sap_up_is_one_family(client_factory) -> None:
    sim = Simulation("sd-benchmark-2003", seed=3)
    registry = CollectorRegistry()
    registry.register(
        ExporterCollector(
            ModelSource(sim.snapshot), {"sapcontrol": _collector(client_factory)}, clock=lambda: 0.0
        )
    )
    text = generate_latest(registry).decode()
    assert text.count("# TYPE sap_up gauge") == 1
    s = _samples(text)
    assert _get(s, "sap_up", sid="BMK") == 1.0  # the model's own
    assert _get(s, "sap_up", sid="EPP", sap_instance="sapapp1_D00", source="sapcontrol") == 1.0
    assert _get(s, "sap_scrape_collector_success", collector="sapcontrol") == 1.0


def test_exposition_matches_golden_file(exposition: str) -> None:
    """WLMON_UPDATE_GOLDEN=1 rewrites tests/golden/sapcontrol.prom after a deliberate change."""
    if golden_rewritten(GOLDEN, exposition):
        pytest.skip(
            f"rewrote {GOLDEN}: read `git diff`, then run again without WLMON_UPDATE_GOLDEN"
        )
    problems = differences(exposition, GOLDEN.read_text())
    assert not problems, "\n".join(problems[:40])


def test_promtool_check_metrics_is_clean(exposition: str) -> None:
    result = subprocess.run(
        [promtool_path(), "check", "metrics"],
        input=exposition,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "" and result.stderr.strip() == ""


def test_a_recent_reading_is_shared_when_cache_s_is_set(client_factory, system) -> None:
    collector = _collector(client_factory, cache_s=60.0)
    list(collector.families(collector.read()))
    calls = len(system.calls)
    list(collector.families(collector.read()))
    assert len(system.calls) == calls  # the second scrape reused the first reading
    uncached = _collector(client_factory)
    list(uncached.families(uncached.read()))
    before = len(system.calls)
    list(uncached.families(uncached.read()))
    assert len(system.calls) > before


def test_icm_threads_by_status_requests_and_connections(exposition: str) -> None:
    s = _samples(exposition)
    i = {"sid": "EPP", "sap_instance": "sapapp1_D00"}
    assert _get(s, "sap_icm_threads", **i, status="free") == 8
    assert _get(s, "sap_icm_threads", **i, status="running") == 2
    # Every thread's `requests` summed: 8 idle ones (4000 + 37k) and the two running ones.
    assert _get(s, "sap_icm_requests_total", **i) == 8 * 4000 + 37 * 40 + 5121 + 4980
    conns = {
        (p, r): _get(s, "sap_icm_connections", **i, protocol=p, role=r)
        for p in ("http", "https", "smtp")
        for r in ("server", "client")
    }
    assert conns == {
        ("http", "server"): 1,
        ("http", "client"): 1,
        ("https", "server"): 2,
        ("https", "client"): 0,
        ("smtp", "server"): 0,
        ("smtp", "client"): 0,
    }
    # The ASCS runs no ICM: nothing asked, nothing exported.
    assert not [k for k in s if k[0].startswith("sap_icm") and "sapascs_ASCS01" in str(k)]


def _flat_tree(*nodes: tuple[str, str]) -> list[dict]:
    """An alert tree as observIQ's samples have it: named nodes under one root."""
    root = {"name": "EPP", "parent": -1, "ActualValue": "SAPControl-GREEN", "description": ""}
    rows = [root]
    for name, text in nodes:
        rows.append(
            {"name": name, "parent": 0, "ActualValue": "SAPControl-GREEN", "description": text}
        )
    return rows


def _ccms_samples(tree: list[dict]) -> dict[tuple, float]:
    target = Target(Endpoint("http://sapapp1:50013/"))
    result = InstanceResult(target, Identity("EPP", "sapapp1_D00", "ABAP"), up=True)
    result.data["GetAlertTree"] = tree
    registry = CollectorRegistry()
    registry.register(SAPControlCollector(_Fixed(SAPControlReading([result]))))
    return _samples(generate_latest(registry).decode())


class _Fixed:
    def __init__(self, reading: SAPControlReading) -> None:
        self.reading = reading

    def read(self) -> SAPControlReading:
        return self.reading


def test_flat_response_time_nodes_are_read_as_aliases() -> None:
    i = {"sid": "EPP", "sap_instance": "sapapp1_D00"}
    s = _ccms_samples(
        _flat_tree(("ResponseTimeDialog", "15 msec"), ("ResponseTimeDialogRFC", "16 msec"))
    )
    assert _get(s, "sap_ccms_dialog_response_time_seconds", **i) == pytest.approx(0.015)
    assert _get(s, "sap_ccms_dialog_rfc_response_time_seconds", **i) == pytest.approx(0.016)
    assert _get(s, "sap_ccms_node_state", **i, node="ResponseTimeDialog") == 2.0
    # Where both exist, Dialog/ResponseTime wins and the alias is not read twice.
    both = _flat_tree(("Dialog", ""), ("ResponseTimeDialog", "15 msec"))
    both.append(
        {
            "name": "ResponseTime",
            "parent": 1,
            "ActualValue": "SAPControl-YELLOW",
            "description": "250 msec",
        }
    )
    s = _ccms_samples(both)
    assert _get(s, "sap_ccms_dialog_response_time_seconds", **i) == pytest.approx(0.25)
    assert not [
        k for k in s if k[0] == "sap_ccms_node_state" and ("node", "ResponseTimeDialog") in k[1]
    ]
