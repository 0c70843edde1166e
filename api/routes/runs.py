"""Runs: simulate one now (fast), drive one on the live exporter (realtime), register a
real system's window (external); list them, report on them, compare two."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Response, status
from fastapi.responses import HTMLResponse

from api.deps import LiveDep, SettingsDep, StoreDep, WriteAuth
from api.runs.spec import ExternalRunRequest, FastRunRequest, RealtimeRunRequest
from api.schemas import CheckRequest, CheckResult, Comparison, Report, Run, refusals
from api.services import checks, reports, runs

router = APIRouter(prefix="/runs", tags=["runs"])
NO_RUN = {404: "no run with this id"}
TopQuery = Annotated[int, Query(ge=1, le=1000, description="rows of the transaction profile")]
IntervalQuery = Annotated[
    float, Query(gt=0, le=86400, description="the time profile's interval in seconds")
]


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    response_model=Run,
    response_model_exclude_unset=True,
    dependencies=[WriteAuth],
    summary="Simulate a run now (fast), drive one on the live exporter (realtime, 202: it "
    "runs in the background) or register a real system's past window (external)",
    responses={
        202: {
            "model": Run,
            "description": "realtime: the run started; poll GET /runs/{id} for its end",
        },
        **refusals(
            {
                409: "realtime: another run is driving the live exporter",
                422: "the plan or window is wrong (the message says what)",
                502: "the exporter or Prometheus cannot be reached",
            },
            write=True,
        ),
    },
)
def create_run(
    body: FastRunRequest | RealtimeRunRequest | ExternalRunRequest,
    store: StoreDep,
    settings: SettingsDep,
    live: LiveDep,
    response: Response,
) -> dict:
    if isinstance(body, RealtimeRunRequest):
        response.status_code = status.HTTP_202_ACCEPTED
        return live.start(store, settings, body)
    if isinstance(body, ExternalRunRequest):
        return runs.register_external(store, settings, body)
    return runs.record_fast(store, body)


@router.get(
    "",
    response_model=list[Run],
    response_model_exclude_unset=True,
    summary="All runs, newest first",
)
def list_runs(store: StoreDep) -> list[dict]:
    return runs.list_runs(store)


@router.get(
    "/compare",
    response_model=Comparison,
    summary="Compare two runs figure by figure",
    responses=refusals(
        {**NO_RUN, 409: "a run is still running or has no data", 422: "a tolerance is wrong"}
    ),
)
def compare_runs(
    store: StoreDep,
    base: Annotated[str, Query()],
    new: Annotated[str, Query()],
    tolerance: Annotated[
        list[str], Query(description="FIGURE=PERCENT, e.g. dialog_p95_s=10 (default 5)")
    ] = [],  # noqa: B006 (FastAPI copies a query list's default)
) -> dict:
    return reports.compare_runs(store, base, new, reports.parse_tolerances(tolerance))


@router.get(
    "/{run_id}",
    response_model=Run,
    response_model_exclude_unset=True,
    summary="One run",
    responses=refusals(NO_RUN),
)
def get_run(run_id: str, store: StoreDep) -> dict:
    return runs.get_run(store, run_id)


@router.post(
    "/{run_id}/cancel",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=Run,
    response_model_exclude_unset=True,
    dependencies=[WriteAuth],
    summary="End a real-time run early; its window so far is still read and reported",
    responses=refusals({**NO_RUN, 409: "the run is not driving the exporter"}, write=True),
)
def cancel_run(run_id: str, store: StoreDep, live: LiveDep) -> dict:
    return live.cancel(store, run_id)


@router.get(
    "/{run_id}/report",
    response_model=Report,
    # Keys a run does not have (alerts_fired, benchmark checks) stay out, not null.
    response_model_exclude_unset=True,
    summary="The run's report for its steady-state window (JSON or HTML)",
    responses={
        200: {"content": {"text/html": {"schema": {"type": "string"}}}},
        **refusals({**NO_RUN, 409: "the run is still running or has no data"}),
    },
)
def get_report(
    run_id: str,
    store: StoreDep,
    format: Annotated[Literal["json", "html"], Query()] = "json",
    top: TopQuery = 20,
    interval: IntervalQuery = 3600.0,
) -> Any:
    options = {"top": top, "interval_s": interval}
    if format == "html":
        return HTMLResponse(reports.page(store, run_id, **options))
    return reports.report(store, run_id, **options)


CHECK_REFUSALS = refusals(
    {
        **NO_RUN,
        409: "a run is still running or has no data",
        422: "the SLA file is wrong (the message names its line)",
    }
)


@router.get(
    "/{run_id}/check",
    response_model=CheckResult,
    summary="Pass/fail of the built-in criteria (SD, whitepaper indicators, BAIT) and, "
    "with a baseline, repeatability within 5 %",
    responses=CHECK_REFUSALS,
)
def get_check(
    run_id: str, store: StoreDep, baseline: Annotated[str | None, Query()] = None
) -> dict:
    return checks.check(store, run_id, baseline=baseline)


@router.post(
    "/{run_id}/check",
    response_model=CheckResult,
    summary="As GET, with an SLA file's bounds and tolerances (its YAML text in `sla`)",
    responses=CHECK_REFUSALS,
)
def post_check(run_id: str, body: CheckRequest, store: StoreDep) -> dict:
    return checks.check(store, run_id, body.sla, body.baseline)
