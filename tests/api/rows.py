"""Run rows for tests that build a report or annotate a run without a store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from api.runs.storage import RunKind, RunRow

START = datetime(2026, 11, 23, 7, 0, tzinfo=UTC)


def run_row(
    run_id: str = "x",
    *,
    ramp_up_s: float = 0.0,
    kind: RunKind = "simulated",
    scenario: str = "sd-benchmark-2003",
    label: str = "",
    start: datetime = START,
    duration_s: float = 3600.0,
) -> RunRow:
    return RunRow(
        id=run_id,
        kind=kind,
        status="finished",
        scenario=scenario,
        label=label,
        start=start,
        end=start + timedelta(seconds=duration_s),
        ramp_up_s=ramp_up_s,
        created_at=start,
        message="",
    )
