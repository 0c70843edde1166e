"""Runs: simulate one now (fast), drive one on the live exporter (realtime), register a
real system's window (external); list them, report on them, compare two."""

from __future__ import annotations

from typing import Annotated, Literal
from urllib.parse import quote

from fastapi import APIRouter, Header, Query, Response, status
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import PlainTextResponse

from api.config import Settings
from api.deps import (
    LiveDep,
    PoolDep,
    ReportCacheDep,
    SettingsDep,
    StoreDep,
    ThresholdsDep,
    WriteAuth,
)
from api.runs.spec import ExternalRunRequest, FastRunRequest, RealtimeRunRequest
from api.schemas import CheckRequest, CheckResult, Comparison, Deleted, Report, Run, refusals
from api.services import reports, runs, workers
from api.services.errors import Invalid
from api.services.report_cache import (
    etag_matches,
    rendered_check,
    rendered_compare,
    rendered_report,
)
from api.services.workers import Rendered

router = APIRouter(prefix="/runs", tags=["runs"])
NO_RUN = {404: "no run with this id"}
# More runs than any database holds, and well inside SQLite's 64-bit integers.
MAX_OFFSET = 1_000_000_000
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
                503: "fast: every worker is busy; retry after the Retry-After seconds",
            },
            write=True,
        ),
    },
)
async def create_run(
    body: FastRunRequest | RealtimeRunRequest | ExternalRunRequest,
    store: StoreDep,
    settings: SettingsDep,
    live: LiveDep,
    pool: PoolDep,
    response: Response,
) -> Run:
    # Talking to the exporter and Prometheus waits on the network: threads. Simulating is
    # CPU work: a worker process, so the event loop keeps answering meanwhile.
    if isinstance(body, RealtimeRunRequest):
        response.status_code = status.HTTP_202_ACCEPTED
        return runs.answer(await run_in_threadpool(live.start, store, settings, body))
    if isinstance(body, ExternalRunRequest):
        return runs.answer(await run_in_threadpool(runs.register_external, store, settings, body))
    if body.duration_s > settings.max_fast_run_s:
        raise Invalid(
            f"duration_s: {body.duration_s:g} s is more than this API simulates "
            f"({settings.max_fast_run_s:g} s, WLMON_API_MAX_FAST_RUN_S)"
        )
    return await pool.run(workers.record_fast, body)


@router.get(
    "",
    response_model=list[Run],
    response_model_exclude_unset=True,
    summary="Runs, newest first, a page at a time (X-Total-Count: how many in all; "
    "X-Unreadable-Runs: the ids of stored runs on the page this version cannot read, "
    "GET /runs/{id} says why)",
)
def list_runs(
    store: StoreDep,
    live: LiveDep,
    response: Response,
    limit: Annotated[int, Query(ge=1, le=1000, description="runs per page")] = 100,
    # Bounded: past SQLite's 64-bit integers an offset answered 500 (OverflowError).
    offset: Annotated[
        int, Query(ge=0, le=MAX_OFFSET, description="runs to skip (newest first)")
    ] = 0,
) -> list[Run]:
    response.headers["X-Total-Count"] = str(store.runs.count())
    page = runs.list_runs(store, limit, offset)
    if page.unreadable:
        # One damaged row does not hide the others. Its id is stored text: quoted so that
        # any id is a valid header value.
        response.headers["X-Unreadable-Runs"] = ", ".join(
            quote(bad.id, safe="") for bad in page.unreadable
        )
    return [runs.answer(live.view(r)) for r in page.rows]


@router.get(
    "/compare",
    response_model=Comparison,
    summary="Compare two runs figure by figure (JSON or a side-by-side HTML page); computed "
    "once per change of either run",
    responses={
        200: {"content": {"text/html": {"schema": {"type": "string"}}}},
        **refusals(
            {
                **NO_RUN,
                409: "a run is still running or has no data, or the runs share no figure",
                422: "a tolerance is wrong, or base and new are the same run",
                503: "workers busy",
            }
        ),
    },
)
async def compare_runs(
    store: StoreDep,
    pool: PoolDep,
    cache: ReportCacheDep,
    thresholds: ThresholdsDep,
    settings: SettingsDep,
    base: Annotated[str, Query()],
    new: Annotated[str, Query()],
    tolerance: Annotated[
        list[str], Query(description="FIGURE=PERCENT, e.g. dialog_p95_s=10 (default 5)")
    ] = [],  # noqa: B006 (FastAPI copies a query list's default)
    format: Annotated[Literal["json", "html"], Query()] = "json",
    if_none_match: Annotated[str | None, Header()] = None,
) -> Response:
    # Two reports and their comparison: CPU work, so a worker process, like the report.
    tolerances = reports.parse_tolerances(tolerance)
    rendered = await rendered_compare(
        store, pool, cache, thresholds, base, new, tolerances, format, _judging(settings)
    )
    return _send(rendered, if_none_match)


@router.get(
    "/{run_id}",
    response_model=Run,
    response_model_exclude_unset=True,
    summary="One run",
    responses=refusals(NO_RUN),
)
def get_run(run_id: str, store: StoreDep, live: LiveDep) -> Run:
    return runs.answer(live.view(runs.get_run(store, run_id)))


@router.delete(
    "/{run_id}",
    response_model=Deleted,
    dependencies=[WriteAuth],
    summary="Delete a run and its data (retention does it for old runs by itself)",
    responses=refusals({**NO_RUN, 409: "the run is in progress: cancel it first"}, write=True),
)
def delete_run(run_id: str, store: StoreDep) -> dict:
    runs.delete_run(store, run_id)
    return {"id": run_id}


@router.post(
    "/{run_id}/cancel",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=Run,
    response_model_exclude_unset=True,
    dependencies=[WriteAuth],
    summary="End a run not finished: a real-time run early (its window so far is still read "
    "and reported), one no thread drives at once",
    responses=refusals(
        {**NO_RUN, 409: "the run has ended", 507: "the database refused the write (full)"},
        write=True,
    ),
)
def cancel_run(run_id: str, store: StoreDep, settings: SettingsDep, live: LiveDep) -> Run:
    return runs.answer(live.cancel(store, settings, run_id))


@router.get(
    "/{run_id}/report",
    response_model=Report,
    # Keys a run does not have (alerts_fired, benchmark checks) stay out, not null.
    response_model_exclude_unset=True,
    summary="The run's report for its steady-state window (JSON or HTML); computed once per "
    "change of the run, with an ETag (If-None-Match answers 304)",
    responses={
        200: {"content": {"text/html": {"schema": {"type": "string"}}}},
        304: {"description": "the report is unchanged since the ETag given in If-None-Match"},
        **refusals({**NO_RUN, 409: "the run is still running or has no data", 503: "workers busy"}),
    },
)
async def get_report(
    run_id: str,
    store: StoreDep,
    pool: PoolDep,
    cache: ReportCacheDep,
    thresholds: ThresholdsDep,
    settings: SettingsDep,
    format: Annotated[Literal["json", "html"], Query()] = "json",
    top: TopQuery = 20,
    interval: IntervalQuery = 3600.0,
    if_none_match: Annotated[str | None, Header()] = None,
) -> Response:
    options = {"top": top, "interval_s": interval, **_judging(settings)}
    rendered = await rendered_report(store, pool, cache, thresholds, run_id, format, options)
    return _send(rendered, if_none_match)


def _judging(settings: Settings) -> dict[str, float]:
    """The report's settings beside the thresholds: APDEX's T when one is configured."""
    return {} if settings.apdex_t_s is None else {"apdex_t_s": settings.apdex_t_s}


def _send(rendered: Rendered, if_none_match: str | None) -> Response:
    # no-cache: clients keep the copy but ask each time (a late alert or a deleted run
    # changes the answer); the ETag makes asking cheap.
    headers = {"ETag": rendered.etag, "Cache-Control": "no-cache"}
    if etag_matches(if_none_match, rendered.etag):
        return Response(status_code=status.HTTP_304_NOT_MODIFIED, headers=headers)
    return Response(rendered.body, media_type=rendered.media_type, headers=headers)


CHECK_REFUSALS = refusals(
    {
        **NO_RUN,
        409: "a run is still running or has no data",
        422: "the SLA file is wrong (the message names its line)",
        503: "workers busy",
    }
)
CHECK_WRITE_REFUSALS = refusals(
    {
        **NO_RUN,
        409: "a run is still running or has no data",
        422: "the SLA file is wrong (the message names its line)",
        503: "workers busy, or writes disabled (no WLMON_API_TOKEN)",
    },
    write=True,
)


@router.get(
    "/{run_id}/series.csv",
    response_class=PlainTextResponse,
    summary="Every series of the run as CSV (t_s, utc, one column per series, unrounded)",
    responses={
        200: {"content": {"text/csv": {"schema": {"type": "string"}}}},
        **refusals({**NO_RUN, 409: "the run is still running or has no data"}),
    },
)
def get_series_csv(run_id: str, store: StoreDep) -> PlainTextResponse:
    return PlainTextResponse(
        reports.series_csv(store, run_id),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{run_id}-series.csv"'},
    )


@router.get(
    "/{run_id}/check",
    response_model=CheckResult,
    summary="Pass/fail of the built-in criteria (SD, whitepaper indicators, BAIT) and, "
    "with a baseline, repeatability within 5 %",
    responses=CHECK_REFUSALS,
)
async def get_check(
    run_id: str,
    store: StoreDep,
    pool: PoolDep,
    cache: ReportCacheDep,
    thresholds: ThresholdsDep,
    baseline: Annotated[str | None, Query()] = None,
    if_none_match: Annotated[str | None, Header()] = None,
) -> Response:
    rendered = await rendered_check(store, pool, cache, thresholds, run_id, "", baseline)
    return _send(rendered, if_none_match)


@router.post(
    "/{run_id}/check",
    response_model=CheckResult,
    dependencies=[WriteAuth],
    summary="As GET, with an SLA file's bounds and tolerances (its YAML text in `sla`)",
    # A POST like every write: it takes a body, costs a worker, and must not be open to
    # anything that can reach the port (the GET form, with built-in criteria, stays open).
    responses=CHECK_WRITE_REFUSALS,
)
async def post_check(
    run_id: str,
    body: CheckRequest,
    store: StoreDep,
    pool: PoolDep,
    cache: ReportCacheDep,
    thresholds: ThresholdsDep,
) -> Response:
    rendered = await rendered_check(store, pool, cache, thresholds, run_id, body.sla, body.baseline)
    return _send(rendered, None)
