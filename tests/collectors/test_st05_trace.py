"""ST05 summaries for the log store: per instance, the interval's longest statements, in logfmt."""

from __future__ import annotations

import re

import pytest

from exporters.sinks.st05trace import trace_lines
from landscape_model.engine import Simulation

OPS = "(SELECT|INSERT|UPDATE|DELETE)"
LINE = re.compile(
    rf"^statement=[0-9a-f]{{16}} table=[A-Z0-9]+ operation={OPS} executions=\d+ records=\d+ "
    rf'elapsed_ms=[0-9.]+ per_execution_ms=[0-9.]+ sql="{OPS} .*"$'
)


@pytest.fixture(scope="module")
def interval():
    sim = Simulation("sd-benchmark-2003", seed=8)
    sim.run(60)
    before = sim.snapshot().totals.copy()
    sim.run(60)
    return before, sim.snapshot()


def test_every_instance_gets_its_longest_statements_sorted(interval) -> None:
    before, snap = interval
    lines = trace_lines(before, snap, top=5)
    assert set(lines) == set(snap.state.instances)
    for inst_lines in lines.values():
        assert 0 < len(inst_lines) <= 5
        assert all(LINE.match(line) for line in inst_lines), inst_lines[0]
        elapsed = [float(re.search(r"elapsed_ms=([0-9.]+)", line).group(1)) for line in inst_lines]
        assert elapsed == sorted(elapsed, reverse=True)


def test_instances_share_the_interval_and_nothing_is_invented(interval) -> None:
    before, snap = interval
    lines = trace_lines(before, snap, top=1000)
    total_ms = sum(
        float(re.search(r"elapsed_ms=([0-9.]+)", line).group(1))
        for inst_lines in lines.values()
        for line in inst_lines
    )
    interval_ms = 1000 * float((snap.totals.stmt_seconds - before.stmt_seconds).sum())
    assert total_ms == pytest.approx(interval_ms, rel=0.01)
