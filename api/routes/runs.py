"""Runs: start a simulated run (fast mode), list them, report on them, compare two."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query, status
from fastapi.responses import HTMLResponse
from pydantic import ValidationError

from api.deps import StoreDep, WriteAuth
from api.runs.html import render as render_html
from api.runs.recorder import record_fast_run
from api.runs.report import build_report, compare
from api.runs.spec import RunSpec
from exporters.model.catalog import ConfigError

router = APIRouter(prefix="/runs", tags=["runs"])


class RunRequest(RunSpec):
    mode: Literal["fast"] = "fast"


def execute_fast_run(store, spec: RunSpec, progress=None) -> str:
    """Simulate the run now and store it with its series; the run id."""
    try:
        data = record_fast_run(spec, progress=progress)
    except ConfigError as exc:
        raise ValueError(str(exc)) from exc
    return store.runs.add(
        kind="simulated",
        scenario=spec.scenario,
        label=spec.label,
        start=spec.start,
        duration_s=spec.duration_s,
        ramp_up_s=spec.ramp_up_s,
        spec=spec.model_dump(mode="json"),
        data=data,
    )


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    dependencies=[WriteAuth],
    summary="Run the model for a window and store the run",
)
def create_run(body: RunRequest, store: StoreDep) -> dict:
    if body.duration_s > 24 * 3600:
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT, "duration_s: at most 86400 in fast mode"
        )
    try:
        run_id = execute_fast_run(store, RunSpec(**body.model_dump(exclude={"mode"})))
    except (ValueError, ValidationError) as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from exc
    return store.runs.get(run_id)


@router.get("", summary="All runs, newest first")
def list_runs(store: StoreDep) -> list[dict]:
    return store.runs.list()


def _report(store, run_id: str) -> dict:
    run = store.runs.get(run_id)
    data = store.runs.data(run_id) if run else None
    if run is None or data is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no run {run_id!r}")
    return build_report(run, data)


@router.get("/compare", summary="Compare two runs figure by figure")
def compare_runs(
    store: StoreDep, base: Annotated[str, Query()], new: Annotated[str, Query()]
) -> dict:
    return compare(_report(store, base), _report(store, new))


@router.get("/{run_id}", summary="One run")
def get_run(run_id: str, store: StoreDep) -> dict:
    run = store.runs.get(run_id)
    if run is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no run {run_id!r}")
    return run


@router.get(
    "/{run_id}/report",
    summary="The run's report for its steady-state window (JSON or HTML)",
    responses={200: {"content": {"application/json": {}, "text/html": {}}}},
)
def get_report(
    run_id: str, store: StoreDep, format: Annotated[Literal["json", "html"], Query()] = "json"
) -> Any:
    report = _report(store, run_id)
    if format == "html":
        return HTMLResponse(render_html(report, store.runs.data(run_id)))
    return report
