"""Real-time runs: one at a time drives the live exporter (there is one live model)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

from api.config import Settings
from api.runs.fromprom import PrometheusError
from api.runs.realtime import ExporterError, RealtimeRun, prepare
from api.runs.spec import RealtimeRunRequest
from api.services.errors import Conflict, Invalid, Unreachable
from api.services.runs import get_run
from api.store import Store


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
