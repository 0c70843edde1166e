"""Runs: start a simulated run (fast mode), list them, report on them, compare two."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query, status
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from api.deps import SettingsDep, StoreDep, WriteAuth
from api.runs.fromprom import PrometheusError, read_window
from api.runs.html import render as render_html
from api.runs.recorder import record_fast_run
from api.runs.report import build_report, compare
from api.runs.spec import RunSpec
from exporters.model.catalog import ConfigError

router = APIRouter(prefix="/runs", tags=["runs"])


class RunRequest(RunSpec):
    mode: Literal["fast"] = "fast"


class ExternalRun(BaseModel):
    """A window of a real system monitored by this stack; its series are read from
    Prometheus when it is registered, so the report does not depend on retention."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["external"]
    sid: str = "BMK"
    start: datetime
    end: datetime
    ramp_up_s: float = Field(default=0.0, ge=0)
    resolution_s: float = Field(default=15.0, ge=1, le=3600)
    users: int | None = Field(default=None, gt=0, description="for the response-time law")
    think_time_s: float | None = Field(default=None, ge=0)
    label: str = ""


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


def register_external(store, body: ExternalRun, prometheus_url: str) -> str:
    start, end = body.start.astimezone(UTC), body.end.astimezone(UTC)
    if end <= start:
        raise ValueError("end must be after start")
    if end > datetime.now(UTC):
        raise ValueError("end is in the future: register the window once it has ended")
    if body.ramp_up_s >= (end - start).total_seconds():
        raise ValueError("ramp_up_s must be shorter than the window")
    data = read_window(
        prometheus_url, body.sid, start, end, body.resolution_s, body.users, body.think_time_s
    )
    return store.runs.add(
        kind="external",
        scenario=body.sid,
        label=body.label,
        start=start,
        duration_s=(end - start).total_seconds(),
        ramp_up_s=body.ramp_up_s,
        spec=body.model_dump(mode="json"),
        data=data,
    )


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    dependencies=[WriteAuth],
    summary="Run the model for a window (fast) or register a real system's window (external)",
)
def create_run(body: RunRequest | ExternalRun, store: StoreDep, settings: SettingsDep) -> dict:
    if isinstance(body, ExternalRun):
        try:
            return store.runs.get(register_external(store, body, settings.prometheus_url))
        except ValueError as exc:
            raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from exc
        except PrometheusError as exc:
            raise HTTPException(status.HTTP_502_BAD_GATEWAY, str(exc)) from exc
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
