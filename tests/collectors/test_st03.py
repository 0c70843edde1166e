"""The ST03 collector through a scrape: names, consistency, and failure handling."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from exporters.collectors.st03 import TRANSACTION_ALLOW_LIST, ST03Collector, Workload
from exporters.sources.model import ModelSource
from landscape_model.engine import Simulation
from tests.collectors.exposition import scrape, scrape_registered


@pytest.fixture(scope="module")
def exposition(sim: Simulation) -> str:
    return scrape_registered(sim.snapshot, "st03")


def test_names_follow_house_style(exposition: str) -> None:
    for family in text_string_to_metric_families(exposition):
        assert family.name.startswith(("sap_", "wlmon_")), family.name
        for sample in family.samples:
            assert not {"instance", "job", "type"} & set(sample.labels), sample
            assert "sql" not in "".join(sample.labels).lower()


def test_steps_and_time_parts_are_consistent(exposition: str) -> None:
    fams = {f.name: f for f in text_string_to_metric_families(exposition)}
    steps = {tuple(sorted(s.labels.items())): s.value for s in fams["sap_workload_steps"].samples}
    resp = {
        tuple(sorted(s.labels.items())): s.value
        for s in fams["sap_workload_response_seconds"].samples
    }
    hist_count = {
        tuple(sorted(s.labels.items())): s.value
        for s in fams["sap_workload_response_time_seconds"].samples
        if s.name.endswith("_count")
    }
    assert len(steps) == 60  # 30 instances x dialog/update
    assert steps.keys() == resp.keys() == hist_count.keys()
    for key, n in steps.items():
        assert hist_count[key] == n
        assert resp[key] >= 0
    dialog = [v for k, v in steps.items() if ("task_type", "dialog") in k]
    # Seed 000 Table 5: ~484 dialog steps/s over 120 s.
    assert sum(dialog) / 120 == pytest.approx(484, rel=0.05)


def test_the_histogram_per_transaction_adds_up_to_the_one_per_task_type(exposition) -> None:
    """Every bucket per task type (summed over instances) is the sum of the allow-listed
    transactions' and "other": exactly, these are counts."""
    fams = {f.name: f for f in text_string_to_metric_families(exposition)}
    per_task: dict[tuple[str, str], float] = {}
    for s in fams["sap_workload_response_time_seconds"].samples:
        if s.name.endswith("_bucket"):
            key = (s.labels["task_type"], s.labels["le"])
            per_task[key] = per_task.get(key, 0.0) + s.value
    per_tx: dict[tuple[str, str], float] = {}
    transactions = set()
    for s in fams["sap_workload_transaction_response_time_seconds"].samples:
        assert set(s.labels) <= {"sid", "task_type", "transaction", "le"}, s
        if s.name.endswith("_bucket"):
            transactions.add(s.labels["transaction"])
            key = (s.labels["task_type"], s.labels["le"])
            per_tx[key] = per_tx.get(key, 0.0) + s.value
    assert transactions <= {*TRANSACTION_ALLOW_LIST, "other"} and "VA01" in transactions
    assert per_tx == per_task and per_task[("dialog", "+Inf")] > 0


class _Broken(ST03Collector):
    def read(self) -> Workload:
        raise RuntimeError("source unreachable")


def test_a_failing_collector_reports_success_0_and_the_others_still_export() -> None:
    sim = Simulation("sd-benchmark-2003", seed=1)
    sim.run(5)
    model = ModelSource(sim.snapshot)
    text = scrape(model, {"st03": ST03Collector(model), "broken": _Broken(model)})
    assert 'sap_scrape_collector_success{collector="broken"} 0.0' in text
    assert 'sap_scrape_collector_success{collector="st03"} 1.0' in text
    assert "sap_workload_steps_total{" in text


def test_an_unreadable_system_reports_sap_up_0_without_raising() -> None:
    def snapshot():
        raise RuntimeError("model gone")

    model = ModelSource(snapshot)
    text = scrape(model, {"st03": ST03Collector(model)})
    assert "sap_up 0.0" in text
    assert 'sap_scrape_collector_success{collector="st03"} 0.0' in text
