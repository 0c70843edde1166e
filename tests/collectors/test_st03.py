"""The ST03 collector: golden exposition, promtool, and failure handling."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from exporters.collectors.base import ExporterCollector
from exporters.collectors.st03 import ST03Collector
from exporters.model.engine import Simulation

GOLDEN = Path(__file__).parents[1] / "golden" / "st03.prom"
GOLDEN_DIR = GOLDEN.parent


def _registry(sim: Simulation, collectors=None) -> CollectorRegistry:
    ticks = itertools.count()
    registry = CollectorRegistry()
    registry.register(
        ExporterCollector(
            sim.snapshot,
            collectors if collectors is not None else [ST03Collector(sim.snapshot)],
            clock=lambda: next(ticks) * 0.001,  # a fixed clock keeps durations stable
        )
    )
    return registry


@pytest.fixture(scope="module")
def exposition() -> str:
    sim = Simulation("sd-benchmark-2003", seed=42)
    sim.run(120)
    return generate_latest(_registry(sim)).decode()


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


class _Broken(ST03Collector):
    name = "broken"

    def families(self, snap):
        raise RuntimeError("source unreachable")


def test_a_failing_collector_reports_success_0_and_the_others_still_export() -> None:
    sim = Simulation("sd-benchmark-2003", seed=1)
    sim.run(5)
    text = generate_latest(
        _registry(sim, [ST03Collector(sim.snapshot), _Broken(sim.snapshot)])
    ).decode()
    assert 'sap_scrape_collector_success{collector="broken"} 0.0' in text
    assert 'sap_scrape_collector_success{collector="st03"} 1.0' in text
    assert "sap_workload_steps_total{" in text


def test_a_failing_snapshot_reports_sap_up_0_without_raising() -> None:
    def source():
        raise RuntimeError("model gone")

    registry = CollectorRegistry()
    registry.register(ExporterCollector(source, [ST03Collector(source)]))
    text = generate_latest(registry).decode()
    assert "sap_up 0.0" in text
    assert 'sap_scrape_collector_success{collector="st03"} 0.0' in text
