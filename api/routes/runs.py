"""Runs: simulate one now (fast), drive one on the live exporter (realtime), register a
real system's window (external); list them, report on them, compare two."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query, Request, Response, status
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from api.deps import SettingsDep, StoreDep, WriteAuth
from api.runs.annotations import RunAnnotations
from api.runs.fromprom import PrometheusError, read_window
from api.runs.html import render as render_html
from api.runs.realtime import ExporterError, RealtimeRun, prepare
from api.runs.recorder import record_fast_run
from api.runs.report import build_report, compare
from api.runs.spec import RealtimeRunRequest, RunSpec
from exporters.model.catalog import ConfigError

router = APIRouter(prefix="/runs", tags=["runs"])
# Runs of the system this stack monitors: in Prometheus, Grafana and Alertmanager's record.
MONITORED = ("realtime", "external")


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


def register_external(store, body: ExternalRun, settings) -> str:
    start, end = body.start.astimezone(UTC), body.end.astimezone(UTC)
    if end <= start:
        raise ValueError("end must be after start")
    if end > datetime.now(UTC):
        raise ValueError("end is in the future: register the window once it has ended")
    if body.ramp_up_s >= (end - start).total_seconds():
        raise ValueError("ramp_up_s must be shorter than the window")
    data = read_window(
        settings.prometheus_url,
        body.sid,
        start,
        end,
        body.resolution_s,
        body.users,
        body.think_time_s,
    )
    run_id = store.runs.add(
        kind="external",
        scenario=body.sid,
        label=body.label,
        start=start,
        duration_s=(end - start).total_seconds(),
        ramp_up_s=body.ramp_up_s,
        spec=body.model_dump(mode="json"),
        data=data,
    )
    # The window's start and end as run events and annotations, at the times they happened.
    ann = RunAnnotations(settings, store.runs.get(run_id))
    try:
        steady_at = start + timedelta(seconds=body.ramp_up_s)
        ann.start(start, steady_at, end, f"external window registered: {body.sid}")
        ann.end("finished", "", start, steady_at, end)
    finally:
        ann.close()
    return run_id


def start_realtime(request: Request, body: RealtimeRunRequest) -> dict:
    """Checks the plan against the live exporter, stores the run as running and starts the
    thread that drives it; the run row."""
    store, settings, state = request.app.state.store, request.app.state.settings, request.app.state
    with state.live_lock:
        if state.live_run is not None and state.live_run.is_alive():
            raise HTTPException(
                status.HTTP_409_CONFLICT,
                f"run {state.live_run.run_id} is driving the live exporter; cancel it or wait "
                "for its end",
            )
        try:
            plan = prepare(settings, body)
        except ValueError as exc:
            raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from exc
        except (ExporterError, PrometheusError) as exc:
            raise HTTPException(status.HTTP_502_BAD_GATEWAY, str(exc)) from exc
        spec = body.model_dump(mode="json") | {
            "speed": plan.speed,
            "wall_resolution_s": plan.wall_step_s,
        }
        run_id = store.runs.begin(
            kind="realtime",
            scenario=body.scenario,
            label=body.label,
            start=datetime.now(UTC),
            duration_s=plan.wall(body.duration_s),
            ramp_up_s=body.ramp_up_s,
            spec=spec,
        )
        run = store.runs.get(run_id)
        state.live_run = RealtimeRun(store, settings, run, body, plan)
        state.live_run.start()
    return run


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    dependencies=[WriteAuth],
    summary="Simulate a run now (fast), drive one on the live exporter (realtime, 202: it "
    "runs in the background) or register a real system's past window (external)",
    responses={
        202: {"description": "realtime: the run started; poll GET /runs/{id} for its end"},
        409: {"description": "realtime: another run is driving the live exporter"},
        422: {"description": "the plan or window is wrong (the message says what)"},
        502: {"description": "the exporter or Prometheus cannot be reached"},
    },
)
def create_run(
    body: RunRequest | RealtimeRunRequest | ExternalRun,
    store: StoreDep,
    settings: SettingsDep,
    request: Request,
    response: Response,
) -> dict:
    if isinstance(body, RealtimeRunRequest):
        response.status_code = status.HTTP_202_ACCEPTED
        return _with_link(start_realtime(request, body))
    if isinstance(body, ExternalRun):
        try:
            return _with_link(store.runs.get(register_external(store, body, settings)))
        except ValueError as exc:
            raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from exc
        except PrometheusError as exc:
            raise HTTPException(status.HTTP_502_BAD_GATEWAY, str(exc)) from exc
    try:
        run_id = execute_fast_run(store, RunSpec(**body.model_dump(exclude={"mode"})))
    except (ValueError, ValidationError) as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from exc
    return store.runs.get(run_id)


def _with_link(run: dict) -> dict:
    """Runs on the monitored system open in the forensics dashboard at their window."""
    if run["kind"] in MONITORED:
        start = int(datetime.fromisoformat(run["start"]).timestamp() * 1000)
        end = int(datetime.fromisoformat(run["end"]).timestamp() * 1000)
        run["grafana_path"] = (
            f"/d/wlmon-forensics/run-forensics?var-run={run['id']}&from={start}&to={end}"
        )
    return run


@router.get("", summary="All runs, newest first")
def list_runs(store: StoreDep) -> list[dict]:
    return [_with_link(r) for r in store.runs.list()]


def _report(store, run_id: str) -> dict:
    run = store.runs.get(run_id)
    if run is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no run {run_id!r}")
    data = store.runs.data(run_id)
    if data is None and run["status"] == "running":
        raise HTTPException(
            status.HTTP_409_CONFLICT, f"run {run_id} is still running; it ends at {run['end']}"
        )
    if data is None:
        raise HTTPException(
            status.HTTP_409_CONFLICT,
            f"run {run_id} has no data ({run['status']}: {run['message']})",
        )
    report = build_report(run, data)
    if run["kind"] in MONITORED:
        # The monitored system's own alerts over the run's window, as Alertmanager sent them.
        report["alerts_fired"] = store.fired_between(
            datetime.fromisoformat(run["start"]),
            datetime.fromisoformat(run["end"]),
            data.meta.get("sid", ""),
        )
    return report


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
    return _with_link(run)


@router.post(
    "/{run_id}/cancel",
    status_code=status.HTTP_202_ACCEPTED,
    dependencies=[WriteAuth],
    summary="End a real-time run early; its window so far is still read and reported",
)
def cancel_run(run_id: str, store: StoreDep, request: Request) -> dict:
    run = store.runs.get(run_id)
    if run is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no run {run_id!r}")
    driver = request.app.state.live_run
    if driver is None or driver.run_id != run_id or not driver.is_alive():
        raise HTTPException(status.HTTP_409_CONFLICT, f"run {run_id} is {run['status']}")
    driver.cancel()
    return _with_link(run)


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
