"""Runs: simulate one now (fast), register a real system's past window (external), list and
fetch them. Real-time runs, which hold the live exporter, are in api/services/live.py."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import fields
from datetime import UTC, datetime, timedelta

from api.config import Settings
from api.runs.annotations import RunAnnotations
from api.runs.fromprom import PrometheusError, read_window, sid_scrape_interval_s
from api.runs.realtime import SCRAPES_PER_STEP
from api.runs.recorder import record_fast_run
from api.runs.spec import ExternalRunRequest, RunSpec, too_many_points
from api.runs.storage import RunPage, RunRow, StoredRunError
from api.schemas import Run
from api.services.errors import Conflict, Invalid, NotFound, Unreachable
from api.store import Store
from landscape_model.catalog import ConfigError

log = logging.getLogger(__name__)

# increase() over a step needs two samples of the counter in it.
# Three, not two: a step of exactly two intervals holds two samples only while scrapes
# keep time; with jitter one falls outside and the step reads empty (CI: 1 of 10 steps of
# 4 s on a 2 s scrape).
MIN_SCRAPES_PER_STEP = 3

# Runs of the system this stack monitors: in Prometheus and Alertmanager's record.
MONITORED = ("realtime", "external")


def answer(run: RunRow) -> Run:
    """The run as the API answers it. Runs on the monitored system open in the forensics
    dashboard at their window: in the stack's Perses (`dashboard_path`) and in a Grafana of
    the user's own that imported dashboards/grafana/ (`grafana_path`, the same dashboard by
    its uid); other runs leave both out (the routes answer only what is set)."""
    links = {}
    if run.kind in MONITORED:
        start = int(run.start.timestamp() * 1000)
        end = int(run.end.timestamp() * 1000)
        links = {
            "dashboard_path": (
                f"/projects/wlmon/dashboards/forensics?start={start}&end={end}&var-run={run.id}"
            ),
            "grafana_path": (
                f"/d/wlmon-forensics/run-forensics?var-run={run.id}&from={start}&to={end}"
            ),
        }
    return Run(**{f.name: getattr(run, f.name) for f in fields(run)}, **links)


def get_run(store: Store, run_id: str) -> RunRow:
    try:
        run = store.runs.get(run_id)
    except StoredRunError as exc:  # a row this version cannot read: say which and why
        raise Conflict(str(exc)) from exc
    if run is None:
        raise NotFound(f"no run {run_id!r}")
    return run


def list_runs(store: Store, limit: int | None = None, offset: int = 0) -> RunPage:
    """A page of runs, newest first; rows this version cannot read are named in the page,
    each logged with its reason (GET /runs/{id} answers that reason as a 409)."""
    page = store.runs.list(limit, offset)
    for bad in page.unreadable:
        log.warning("stored run %s cannot be read: %s", bad.id, bad.reason)
    return page


def delete_run(store: Store, run_id: str) -> None:
    """A run and its data; a run in progress must be cancelled first."""
    run = store.runs.get(run_id)
    if run is None:
        raise NotFound(f"no run {run_id!r}")
    if run.status == "running":
        raise Conflict(f"run {run_id} is in progress: cancel it first (POST /runs/{run_id}/cancel)")
    store.runs.delete(run_id)


def record_fast(
    store: Store, spec: RunSpec, progress: Callable[[float, float], None] | None = None
) -> RunRow:
    """Simulate the run now and store it with its series; the run."""
    try:
        data = record_fast_run(spec, progress=progress)
    except ConfigError as exc:  # an unknown scenario or fault
        raise Invalid(str(exc)) from exc
    run_id = store.runs.add(
        kind="simulated",
        scenario=spec.scenario,
        label=spec.label,
        start=spec.start,
        duration_s=spec.duration_s,
        ramp_up_s=spec.ramp_up_s,
        spec=spec.model_dump(mode="json", exclude={"mode"}),
        data=data,
    )
    return get_run(store, run_id)


def register_external(store: Store, settings: Settings, req: ExternalRunRequest) -> RunRow:
    """Read the window's series from Prometheus and store them as a run; the run."""
    start, end = req.start.astimezone(UTC), req.end.astimezone(UTC)
    if end <= start:
        raise Invalid("end must be after start")
    if end > datetime.now(UTC):
        raise Invalid("end is in the future: register the window once it has ended")
    if req.ramp_up_s >= (end - start).total_seconds():
        raise Invalid("ramp_up_s must be shorter than the window")
    try:
        resolution = external_resolution(settings, req)
        data = read_window(
            settings.prometheus_url,
            req.sid,
            start,
            end,
            resolution,
            req.users,
            req.think_time_s,
            steady_from=start + timedelta(seconds=req.ramp_up_s),
        )
    except PrometheusError as exc:
        raise Unreachable(str(exc)) from exc
    run_id = store.runs.add(
        kind="external",
        scenario=req.sid,
        label=req.label,
        start=start,
        duration_s=(end - start).total_seconds(),
        ramp_up_s=req.ramp_up_s,
        spec=req.model_dump(mode="json") | {"resolution_s": resolution},
        data=data,
    )
    # The window's start and end as run events and annotations, at the times they happened.
    run = get_run(store, run_id)
    ann = RunAnnotations(settings, run)
    try:
        steady_at = start + timedelta(seconds=req.ramp_up_s)
        ann.start(start, steady_at, end, f"external window registered: {req.sid}")
        ann.end("finished", "", start, steady_at, end)
    finally:
        ann.close()
    return run


def external_resolution(settings: Settings, req: ExternalRunRequest) -> float:
    """The step of an external window: the one asked for, or SCRAPES_PER_STEP scrape
    intervals of the sid's targets. A step shorter than three scrape intervals can hold a
    single sample of a counter (two when scrapes keep time), from which increase() gives
    nothing: the default 15 s on a 15 s scrape answered 502 "no sap_workload_* data".
    Refused with the step that works."""
    scrape = sid_scrape_interval_s(settings.prometheus_url, req.sid)
    resolution = req.resolution_s or SCRAPES_PER_STEP * scrape
    if resolution < MIN_SCRAPES_PER_STEP * scrape:
        raise Invalid(
            f"resolution_s {resolution:g} is shorter than three scrape intervals of {req.sid}'s "
            f"targets ({scrape:g} s each): a step needs two samples of a counter for its "
            f"increase, whatever the scrapes' jitter; use resolution_s "
            f"{MIN_SCRAPES_PER_STEP * scrape:g} or more "
            f"(left out, it is {SCRAPES_PER_STEP * scrape:g})"
        )
    if error := too_many_points((req.end - req.start).total_seconds(), resolution):
        raise Invalid(error)
    return resolution
