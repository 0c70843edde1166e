"""ST05, buffer-pool, SAP-buffer and OS collectors: what the model says through them."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from exporters.sources.model import statement_totals
from landscape_model.engine import Simulation
from tests.collectors.exposition import scrape_registered

MIX_TABLES = {
    "VBAK",
    "VBAP",
    "VBEP",
    "VBUK",
    "VBUP",
    "VBFA",
    "VBBE",
    "LIKP",
    "LIPS",
    "VBRK",
    "VBRP",
}


def test_st05_is_bounded_and_never_puts_sql_in_labels(sim) -> None:
    text = scrape_registered(sim.snapshot, "st05")
    statements = {
        line.split('statement="')[1].split('"')[0]
        for line in text.splitlines()
        if line.startswith("sap_st05_statement_elapsed")
    }
    assert len(statements) == 10
    assert "SELECT" not in "".join(
        line.split("}")[0] for line in text.splitlines() if "{" in line and "operation" not in line
    )


def test_buffer_pools_are_seed_000_table_4(sim) -> None:
    snap = sim.snapshot()
    pools = dict(zip(snap.state.bufferpools, snap.pool_pages, strict=True))
    assert pools == {
        "IBMDEFAULTBP": 24900,
        "INS4K": 25000,
        "VBDATABP": 8000,
        "MIX4K": 90000,
        "MIX4KIX": 40000,
        "VOL4K": 11000,
        "VBHDRBP": 18000,
    }
    assert (
        dict(zip(snap.state.bufferpools, snap.pool_page_bytes, strict=True))["VBDATABP"]
        == 32 * 1024
    )


def _hit_ratio(snap, pool: str, kind: str) -> float:
    p = snap.state.bufferpools.index(pool)
    logical = getattr(snap.totals, f"pool_{kind}_logical")[p]
    return 1 - getattr(snap.totals, f"pool_{kind}_physical")[p] / logical


def test_shrinking_mix4k_lowers_its_hit_ratio_and_raises_io_of_its_statements() -> None:
    healthy = Simulation("sd-benchmark-2003", seed=3)
    faulty = Simulation("sd-benchmark-2003", faults=["db-bottleneck"], seed=3)
    for s in (healthy, faulty):
        s.run(600)
    h, f = healthy.snapshot(), faulty.snapshot()
    assert _hit_ratio(f, "MIX4K", "data") < _hit_ratio(h, "MIX4K", "data") - 0.02
    assert _hit_ratio(f, "MIX4KIX", "index") < _hit_ratio(h, "MIX4KIX", "index")
    assert _hit_ratio(f, "IBMDEFAULTBP", "data") == pytest.approx(
        _hit_ratio(h, "IBMDEFAULTBP", "data"), abs=0.005
    )
    # Seed 000 4.3.5.2: the statements on the shrunken pool's tables slow down the most,
    # so they lead the SQL trace sorted by the growth of their elapsed time.
    per_exec_h = {
        r.statement: r.elapsed / r.executions for r in statement_totals(h) if r.executions
    }
    growth = sorted(
        (
            (r.elapsed / r.executions / per_exec_h[r.statement], r.table)
            for r in statement_totals(f)
            if r.executions and r.statement in per_exec_h
        ),
        reverse=True,
    )
    assert {table for _, table in growth[:5]} <= MIX_TABLES, growth[:8]


def test_io_cleaners_keep_up_when_healthy(sim) -> None:
    t = sim.snapshot().totals
    assert (t.pool_data_writes == t.pool_async_data_writes).all()
    assert (t.pool_index_writes == t.pool_async_index_writes).all()


def test_processor_time_of_the_simulated_hosts_is_seed_000_table_5(sim) -> None:
    """% Processor Time from the counters: DB server 94 %, dialog/update servers 61 %."""
    text = scrape_registered(sim.snapshot, "oscounters")
    cpu = next(f for f in text_string_to_metric_families(text) if f.name == "windows_cpu_time")
    idle: dict[str, float] = {}
    total: dict[str, float] = {}
    for sample in cpu.samples:
        host = sample.labels["host"]
        total[host] = total.get(host, 0.0) + sample.value
        if sample.labels["mode"] == "idle":
            idle[host] = idle.get(host, 0.0) + sample.value
    busy = {h: 1 - idle[h] / total[h] for h in total}
    assert busy["walrus"] == pytest.approx(0.94, abs=0.03)
    assert busy["penguin2"] == pytest.approx(0.61, abs=0.03)
    assert busy["penguin1"] == pytest.approx(0.04, abs=0.01)


def test_sap_buffers_meet_seed_000_guidelines_when_healthy(sim) -> None:
    """Seed 000 4.3.1: hit ratio >= 98 % (program, single record, export/import excepted),
    no swaps in any buffer."""
    snap = sim.snapshot()
    t, names = snap.totals, snap.state.sap_buffers
    ratio = t.sap_buffer_hits.sum(axis=0) / t.sap_buffer_requests.sum(axis=0)
    for name, r in zip(names, ratio, strict=True):
        if name not in {"program", "single_record", "export_import"}:
            assert r >= 0.98, (name, r)
    assert t.sap_buffer_swaps.sum() == 0
