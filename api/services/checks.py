"""Checks of stored runs: built-in criteria, an SLA file's bounds and a baseline."""

from __future__ import annotations

from api.runs.checks import evaluate
from api.runs.sla import SlaError, parse_sla
from api.services.errors import Invalid
from api.services.reports import report
from api.store import Store
from exporters.thresholds import Thresholds


def check(
    store: Store,
    run_id: str,
    thresholds: Thresholds,
    sla_text: str = "",
    baseline: str | None = None,
    think_time_s: float | None = None,
) -> dict:
    """The run's verdicts against `thresholds` (handed down from the edge); Invalid (422)
    for an SLA file that is wrong, naming its line."""
    try:
        sla = parse_sla(sla_text) if sla_text.strip() else None
    except SlaError as exc:
        raise Invalid(f"SLA: {exc}") from exc
    doc = report(store, run_id, thresholds)
    base = report(store, baseline, thresholds) if baseline else None
    try:
        return evaluate(doc, thresholds, sla, base, think_time_s)
    except SlaError as exc:
        raise Invalid(f"SLA: {exc}") from exc
