"""Real-time runs: one at a time drives the live exporter (there is one live model)."""

from __future__ import annotations

import logging
import threading
from datetime import UTC, datetime

from api.config import Settings
from api.runs.fromprom import PrometheusError
from api.runs.realtime import ExporterControl, ExporterError, RealtimeRun, prepare
from api.runs.spec import RealtimeRunRequest
from api.services.errors import Conflict, Invalid, Unreachable
from api.services.runs import get_run
from api.store import Store
from exporters.control import ControlChange

log = logging.getLogger(__name__)
INTERRUPTED = "the API stopped while the run was in progress; ended at its restart"


class LiveRuns:
    """The API's real-time run, if any; one per application (held in `app.state`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._driver: RealtimeRun | None = None

    def _busy(self) -> RealtimeRun | None:
        driver = self._driver
        return driver if driver is not None and driver.is_alive() else None

    def start(self, store: Store, settings: Settings, req: RealtimeRunRequest) -> dict:
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
            spec = req.model_dump(mode="json") | {
                "speed": plan.speed,
                "wall_resolution_s": plan.wall_step_s,
            }
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

    def cancel(self, store: Store, run_id: str) -> dict:
        """End the run early; its window so far is still read and reported."""
        run = get_run(store, run_id)
        busy = self._busy()
        if busy is None or busy.run_id != run_id:
            raise Conflict(f"run {run_id} is {run['status']}")
        busy.cancel()
        return run

    def recover(self, store: Store, settings: Settings) -> threading.Thread | None:
        """On API start: runs left 'running' have no driver any more. They end 'failed'
        (the plan's state before the run is not known, so it cannot be resumed faithfully)
        and the exporter is told to drop their faults if it still holds them (its lease
        would drop them anyway, within `exporter_lease_s`). The exporter is asked in a
        thread: the API must start even while the exporter is down."""
        now = datetime.now(UTC)
        orphans = {}
        for run in store.runs.list():
            if run["status"] != "running":
                continue
            # When the API died is not known; the run ends when it is noticed.
            store.runs.finish(run["id"], "failed", now, None, INTERRUPTED)
            if run["kind"] == "realtime":
                orphans[run["id"]] = now
        store.runs.fail_interrupted()  # anything left (none, unless written meanwhile)
        if not orphans:
            return None
        thread = threading.Thread(
            target=_release, args=(store, settings, orphans), name="wlmon-recover", daemon=True
        )
        thread.start()
        return thread


def _release(store: Store, settings: Settings, orphans: dict[str, datetime]) -> None:
    control = ExporterControl.of(settings)
    try:
        state = control.state()
        run_id = state.get("run_id", "")
        if run_id in orphans:
            control.apply(ControlChange(faults=[], users=None, run_id=""))
            note = f"its faults were removed from the exporter at {_hms(datetime.now(UTC))} UTC"
        else:
            run_id, note = "", ""
            for orphan in orphans:
                store.runs.finish(
                    orphan,
                    "failed",
                    orphans[orphan],
                    None,
                    f"{INTERRUPTED}; the exporter no longer held it (lease expired)",
                )
    except ExporterError as exc:
        log.warning("could not release the exporter after a restart: %s", exc)
        run_id, note = next(iter(orphans)), f"the exporter could not be told: {exc}"
    if run_id:
        store.runs.finish(run_id, "failed", orphans[run_id], None, f"{INTERRUPTED}; {note}")


def _hms(when: datetime) -> str:
    return when.strftime("%H:%M:%S")
