"""Real-time runs: one at a time drives the live exporter (there is one live model)."""

from __future__ import annotations

import logging
import sqlite3
import threading
from dataclasses import replace
from datetime import UTC, datetime

from pydantic import ValidationError

from api.config import Settings
from api.runs.annotations import RunAnnotations
from api.runs.fromprom import PrometheusError
from api.runs.realtime import (
    ExporterControl,
    ExporterError,
    LivePlan,
    RealtimeRun,
    conclude,
    prepare,
    store_end,
)
from api.runs.spec import RealtimeRunRequest
from api.runs.storage import LeftRunning, RunRow
from api.services.errors import Conflict, Invalid, Unreachable
from api.services.runs import get_run
from api.store import Store
from exporters.control import ControlChange

log = logging.getLogger(__name__)


def _hms(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%H:%M:%S")


def planned_stop(when: datetime) -> str:
    return f"the API was stopped (a planned stop) at {_hms(when)} UTC while the run was in progress"


def crashed(alive_at: datetime) -> str:
    return (
        "the API ended without stopping (a crash or kill) while the run was in progress; "
        f"its last sign of life was at {_hms(alive_at)} UTC"
    )


class LiveRuns:
    """The API's real-time run, if any; one per application (held in `app.state`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._driver: RealtimeRun | None = None
        # Drivers of runs that have ended but whose end the database has not taken yet
        # (full): they no longer drive the exporter, and write the end when room comes.
        self._ending: dict[str, RealtimeRun] = {}

    def _busy(self) -> RealtimeRun | None:
        driver = self._driver
        if driver is None or not driver.is_alive() or driver.pending is not None:
            return None
        return driver

    def _ended_unstored(self, run_id: str) -> RealtimeRun | None:
        for driver in (self._driver, *self._ending.values()):
            if (
                driver is not None
                and driver.run_id == run_id
                and driver.is_alive()
                and driver.pending is not None
            ):
                return driver
        return None

    def view(self, run: RunRow) -> RunRow:
        """A run as it is: one that has ended but whose end waits for room in the database
        is answered with that end, saying it is not stored yet."""
        if run.status != "running" or (driver := self._ended_unstored(run.id)) is None:
            return run
        status, message = driver.pending or ("failed", "")
        note = "not stored yet: the database refuses the write; retried until it has room"
        return replace(run, status=status, message=f"{message} ({note})")

    def start(self, store: Store, settings: Settings, req: RealtimeRunRequest) -> RunRow:
        """Check the plan against the live exporter, store the run as running and start the
        thread that drives it; the run."""
        with self._lock:
            if (busy := self._busy()) is not None:
                raise Conflict(
                    f"run {busy.run_id} is driving the live exporter; cancel it or wait for its end"
                )
            try:
                plan = prepare(settings, req)
            except ValueError as exc:
                raise Invalid(str(exc)) from exc
            except (ExporterError, PrometheusError) as exc:
                raise Unreachable(str(exc)) from exc
            if self._driver is not None and self._driver.is_alive():
                self._ending[self._driver.run_id] = self._driver  # ended, end unstored
            self._ending = {k: d for k, d in self._ending.items() if d.is_alive()}
            spec = req.model_dump(mode="json") | plan.stored()
            run_id = store.runs.begin(
                kind="realtime",
                scenario=req.scenario,
                label=req.label,
                start=datetime.now(UTC),
                duration_s=plan.wall(req.duration_s),
                ramp_up_s=req.ramp_up_s,
                spec=spec,
            )
            run = get_run(store, run_id)
            self._driver = RealtimeRun(store, settings, run, req, plan)
            self._driver.start()
        return run

    def cancel(self, store: Store, settings: Settings, run_id: str) -> RunRow:
        """End the run early; its window so far is still read and reported. A run stored as
        running that no thread drives (its driver gone) is ended here and now, `cancelled`,
        saying so: any run not finished can be cancelled."""
        run = get_run(store, run_id)
        busy = self._busy()
        if busy is not None and busy.run_id == run_id:
            busy.cancel()
            return run
        if (ended := self._ended_unstored(run_id)) is not None:
            status = (ended.pending or ("failed", ""))[0]
            raise Conflict(
                f"run {run_id} has ended ({status}); its end waits for room to be stored"
            )
        if run.status != "running":
            raise Conflict(f"run {run_id} is {run.status}")
        now = datetime.now(UTC)
        notes = [*filter(None, [run.message])]
        notes.append(f"cancelled through the API at {_hms(now)} UTC; no driver was running it")
        if run.kind == "realtime":
            notes.extend(_release(settings, run_id, LivePlan.from_spec(_spec(store, run_id))))
        end = min(now, run.end)
        store.runs.finish(run_id, "cancelled", end, None, "; ".join(notes))
        store.failures.ok()
        return get_run(store, run_id)

    def shutdown(self, store: Store) -> None:
        """The API stops on purpose: the run in progress is marked as stopped (not failed)
        and left 'running', the exporter holding its plan under its lease; the next API
        resumes it or ends it `interrupted`, saying it was a planned stop."""
        with self._lock:
            for driver in self._ending.values():
                driver.halt(timeout=1.0)  # an end still unstored: the next API ends the run
            if (busy := self._busy()) is None:
                if self._driver is not None:
                    self._driver.halt(timeout=1.0)
                return
            try:
                store.runs.stopped(busy.run_id, datetime.now(UTC), planned_stop(datetime.now(UTC)))
            except (sqlite3.Error, OSError) as exc:  # the next API calls it a crash
                log.error("run %s: its planned stop was not stored: %s", busy.run_id, exc)
            busy.halt()

    def recover(self, store: Store, settings: Settings) -> threading.Thread | None:
        """On API start: runs left 'running' have no driver any more.

        A real-time run whose window has not ended is resumed (its plan was stored with it):
        the exporter is given what holds now, and the run's record says when and why the API
        stopped. Any other ends `interrupted`, naming why (a planned stop, or a crash with
        the last moment its driver was alive), with the window read from Prometheus up to
        then: what was recorded before is kept and reportable. The exporter is asked in a
        thread: the API must start even while it or Prometheus is down."""
        now = datetime.now(UTC)
        left = sorted(store.runs.left_running(), key=lambda r: r.row.start, reverse=True)
        to_end = []
        for found in left:
            run = found.row
            stopped_at = found.alive_at or run.start
            why = found.stopped or crashed(stopped_at)
            req, plan = _plan_of(found)
            planned_end = run.end
            if (
                req is not None
                and plan is not None
                and self._driver is None
                and (planned_end - now).total_seconds() >= plan.wall_step_s
            ):
                note = "; ".join(filter(None, (run.message, f"{why}; resumed at {_hms(now)} UTC")))
                store.runs.stopped(run.id, now, "")  # a later crash is not this stop
                store.runs.note(run.id, note)
                self._driver = RealtimeRun(store, settings, run, req, plan, resumed=note)
                self._driver.start()
                log.warning("run %s resumed: %s", run.id, note)
                continue
            to_end.append((found, plan, min(stopped_at, planned_end), why))
        if not to_end:
            return None
        thread = threading.Thread(
            target=_end_interrupted,
            args=(store, settings, to_end),
            name="wlmon-recover",
            daemon=True,
        )
        thread.start()
        return thread


def _spec(store: Store, run_id: str) -> dict:
    found = next((r for r in store.runs.left_running() if r.row.id == run_id), None)
    return found.spec if found is not None else {}


def _plan_of(found: LeftRunning) -> tuple[RealtimeRunRequest | None, LivePlan | None]:
    """The request and plan a real-time run was started with; (None, None) when the run
    is of another kind or was stored before plans were kept."""
    if found.row.kind != "realtime":
        return None, None
    spec = found.spec
    try:
        req = RealtimeRunRequest.model_validate(
            {k: v for k, v in spec.items() if k in RealtimeRunRequest.model_fields}
        )
    except ValidationError:
        return None, None
    plan = LivePlan.from_spec(spec)
    return (req, plan) if plan is not None else (None, None)


def _end_interrupted(
    store: Store,
    settings: Settings,
    runs: list[tuple[LeftRunning, LivePlan | None, datetime, str]],
) -> None:
    for found, plan, end, why in runs:
        run = found.row
        # An earlier stop it was resumed from is in its message already.
        notes = [*filter(None, [run.message]), f"{why}; ended at its restart"]
        if run.kind == "realtime":
            notes.extend(_release(settings, run.id, plan))
        if plan is None:
            store_end(store, run.id, "interrupted", end, None, "; ".join(notes))
            continue
        req = _plan_of(found)[0]
        ann = RunAnnotations(settings, run)
        faults = req.faults if req is not None else ()
        conclude(store, settings, run, plan, "interrupted", notes, end, ann, faults)


def _release(settings: Settings, run_id: str, plan: LivePlan | None) -> list[str]:
    """The exporter gives up the run's faults if it still holds them (its lease would drop
    them anyway, within `exporter_lease_s`); what happened, for the run's record."""
    control = ExporterControl.of(settings)
    try:
        if control.state().get("run_id", "") != run_id:
            return ["the exporter no longer held it (lease expired)"]
        restore = plan.restore if plan is not None else {"faults": [], "users": None}
        control.apply(ControlChange(**restore, run_id=""))
        return [f"its faults were removed from the exporter at {_hms(datetime.now(UTC))} UTC"]
    except ExporterError as exc:
        log.warning("could not release the exporter after a restart: %s", exc)
        return [f"the exporter could not be told: {exc}"]
