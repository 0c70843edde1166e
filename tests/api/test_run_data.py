"""RunRecord as every producer makes it (fast runs, PerfMon and ST03 imports, windows read from
Prometheus) holds what its type hints declare, and the report reads all of them. Imports
and Prometheus windows have no steady-state counters: None, which the type must admit."""

from __future__ import annotations

import types
from dataclasses import fields
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

import numpy as np
import pytest

from alerts.thresholds import load_thresholds
from api.runs import fromprom
from api.runs.record import RunMeta, RunRecord
from api.runs.recorder import record_fast_run
from api.runs.report import build_report
from api.runs.spec import RunSpec
from api.services import imports, runs
from api.store import Store
from landscape_model.engine import Totals
from tests.api.rows import run_row

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _conforms(value: Any, hint: Any) -> bool:
    """isinstance() against a type hint, unions (X | None) included; generics by origin."""
    if get_origin(hint) in (Union, types.UnionType):
        return any(_conforms(value, arg) for arg in get_args(hint))
    if hint is type(None):
        return value is None
    return isinstance(value, get_origin(hint) or hint)


def _mistyped(data: Any) -> list[str]:
    # Totals is named for type checkers only (the record does not load the model).
    hints = get_type_hints(type(data), localns={"Totals": Totals})
    return [
        f"{f.name} = {type(getattr(data, f.name)).__name__}, declared {hints[f.name]}"
        for f in fields(type(data))
        if not _conforms(getattr(data, f.name), hints[f.name])
    ]


def test_the_conformance_check_can_fail() -> None:
    assert not _conforms(None, int) and _conforms(None, int | None) and _conforms([], list[str])


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> dict[str, RunRecord]:
    # The services store what the producers made; reading back goes through SQLite too.
    store = Store(tmp_path_factory.mktemp("data") / "db.sqlite")
    out = {"fast": record_fast_run(RunSpec(duration_s=120, ramp_up_s=30))}
    for name, parse, path in (
        ("perfmon", imports.store_perfmon, FIXTURES / "perfmon" / "relog-utf8.csv"),
        ("st03", imports.store_st03, FIXTURES / "st03" / "per-task-type.csv"),
    ):
        run = parse(store, path.read_bytes(), name)
        out[name] = store.runs.data(run.id)
    fast = runs.record_fast(store, RunSpec(duration_s=60, label="stored"))
    out["fast, stored"] = store.runs.data(fast.id)
    start = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)

    def answer(url, query, start, end, step) -> list[dict]:
        """Prometheus's answer to every range query: one series of 1s."""
        labels = {
            "task_type": "dialog",
            "transaction": "VA01",
            "sap_instance": "a",
            "host": "h",
            "le": "+Inf",
        }
        stamps = start.timestamp() + step * np.arange(1, 5)
        return [{"metric": labels, "values": [[t, "1"] for t in stamps]}]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fromprom, "_range", answer)
        mp.setattr(fromprom, "_instant", lambda url, query, at: [])
        out["prometheus"] = fromprom.read_window(
            "http://prometheus", "BMK", start, start + timedelta(minutes=4), 60, None, None
        )
    return out


@pytest.mark.parametrize("producer", ["fast", "perfmon", "st03", "fast, stored", "prometheus"])
def test_every_producer_makes_run_data_as_declared(stored, producer) -> None:
    data = stored[producer]
    assert _mistyped(data) == [] and _mistyped(data.meta) == []
    assert isinstance(data.meta, RunMeta)
    assert data.meta.source == producer.split(",")[0].replace("fast", "simulated")
    report = build_report(run_row(producer), data, thresholds=load_thresholds())
    assert set(report) >= {"st03", "top_sql", "bufferpools"}
