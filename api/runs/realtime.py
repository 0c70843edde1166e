"""Real-time runs: the API drives the live exporter through the run's plan (users ramped in
levels, faults switched at their offsets), marks start, faults, steady state and end in
InfluxDB, Loki and Grafana, and when the run is over reads its window back from Prometheus,
so the report shows what the monitoring saw.

Offsets are in the model's time; the exporter's speed (simulated seconds per wall second,
1 in production) turns them into wall time. One real-time run at a time: there is one live
model.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import httpx

from api.config import Settings
from api.runs.annotations import RunAnnotations
from api.runs.fromprom import PrometheusError, read_window, scrape_interval_s
from api.runs.gaps import describe as describe_gaps
from api.runs.spec import RealtimeRunRequest
from exporters.model.catalog import Catalog, ConfigError

log = logging.getLogger(__name__)
SCRAPES_PER_STEP = 3


class ExporterError(RuntimeError):
    pass


class ExporterControl:
    """The exporter's control endpoint (`/control/faults`)."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/") + "/control/faults"

    def state(self) -> dict:
        return self._call("GET")

    def apply(self, **body) -> dict:
        return self._call("PUT", body)

    def _call(self, method: str, body: dict | None = None) -> dict:
        try:
            r = httpx.request(method, self.url, json=body, timeout=30)
        except httpx.HTTPError as exc:
            raise ExporterError(f"cannot reach the exporter at {self.url}: {exc}") from exc
        if r.status_code != 200:
            raise ExporterError(f"the exporter refused {method} {self.url}: {r.text[:300]}")
        return r.json()


@dataclass(frozen=True)
class LivePlan:
    """What the request resolves to against the live exporter and Prometheus."""

    speed: float
    wall_step_s: float
    full_users: int
    think_time_s: float
    restore: dict  # the exporter's state before the run, put back afterwards

    def wall(self, offset_s: float) -> float:
        return offset_s / self.speed


def prepare(settings: Settings, req: RealtimeRunRequest) -> LivePlan:
    """Checks the request against the live exporter. ValueError: the request is wrong;
    ExporterError / PrometheusError: a server cannot be used."""
    state = ExporterControl(settings.exporter_url).state()
    if req.scenario not in state["scenarios"]:
        raise ValueError(
            f"unknown scenario {req.scenario!r}; the exporter has {', '.join(state['scenarios'])}"
        )
    unknown = sorted({f.name for f in req.faults} - set(state["available"]))
    if unknown:
        raise ValueError(f"unknown fault(s): {', '.join(unknown)}")
    faults_before = state["faults"]
    if state.get("run_id"):
        # Called only when this API drives no run: the tag was left by an API that stopped
        # mid-run (that run is marked failed on start), so its faults are not the baseline.
        log.warning("exporter still tagged with run %s; taking it over", state["run_id"])
        faults_before = []
    try:
        scenario = Catalog().scenario(req.scenario)
    except ConfigError as exc:
        raise ValueError(str(exc)) from exc
    speed = float(state["speed"])
    scrape = scrape_interval_s(settings.prometheus_url, settings.exporter_url)
    wall_step = max(req.resolution_s / speed, SCRAPES_PER_STEP * scrape)
    if req.duration_s / speed < 2 * wall_step:
        raise ValueError(
            f"duration_s is {req.duration_s / speed:g} s of wall time at the exporter's speed "
            f"{speed:g}; it must span at least two samples of {wall_step:g} s"
        )
    return LivePlan(
        speed=speed,
        wall_step_s=wall_step,
        full_users=req.users or scenario.users,
        think_time_s=scenario.think_time_s,
        restore={"scenario": state["scenario"], "faults": faults_before, "users": None},
    )


class RealtimeRun(threading.Thread):
    def __init__(
        self, store, settings: Settings, run: dict, req: RealtimeRunRequest, plan: LivePlan
    ) -> None:
        super().__init__(name=f"wlmon-run-{run['id']}", daemon=True)
        self.store, self.settings, self.run_row, self.req, self.plan = (
            store,
            settings,
            run,
            req,
            plan,
        )
        self.control = ExporterControl(settings.exporter_url)
        self.start_at = datetime.fromisoformat(run["start"])
        self._cancel = threading.Event()

    @property
    def run_id(self) -> str:
        return self.run_row["id"]

    def cancel(self) -> None:
        self._cancel.set()

    def _at(self, offset_s: float) -> datetime:
        return self.start_at + timedelta(seconds=self.plan.wall(offset_s))

    def _sleep_until(self, when: datetime) -> bool:
        """False when the run was cancelled meanwhile."""
        delay = (when - datetime.now(UTC)).total_seconds()
        return not self._cancel.wait(max(0.0, delay))

    def run(self) -> None:
        ann = RunAnnotations(self.settings, self.run_row)
        req, plan = self.req, self.plan
        steady_at = self._at(req.ramp_up_s)
        status, notes = "finished", []
        try:
            ann.start(
                self.start_at,
                steady_at,
                self._at(req.duration_s),
                f"run started: {req.scenario}, {plan.full_users} users, "
                f"{req.duration_s:g} s (ramp-up {req.ramp_up_s:g} s)",
            )
            faults: tuple[str, ...] = ()
            for offset in req.change_points():
                if not self._sleep_until(self._at(offset)):
                    break
                new_faults = req.faults_at(offset)
                self.control.apply(
                    scenario=req.scenario,
                    faults=list(new_faults),
                    users=req.users_at(offset, plan.full_users),
                    run_id=self.run_id,
                )
                now = datetime.now(UTC)
                # The exporter writes its own fault events (tagged with the run id) to Loki
                # and InfluxDB; Grafana hears of them from here.
                for name in new_faults:
                    if name not in faults:
                        ann.annotate("fault_injected", now, f"fault {name} injected", name)
                for name in faults:
                    if name not in new_faults:
                        ann.annotate("fault_removed", now, f"fault {name} removed", name)
                faults = new_faults
                if req.ramp_up_s and offset == req.ramp_up_s:
                    ann.event("steady_state", now, "ramp-up over: steady state begins")
            if not self._cancel.is_set():
                self._sleep_until(self._at(req.duration_s))
            if self._cancel.is_set():
                status = "cancelled"
                notes.append("cancelled through the API")
        except Exception as exc:  # the run is recorded as failed, with why
            log.exception("run %s failed", self.run_id)
            status = "failed"
            notes.append(str(exc))
        end = min(datetime.now(UTC), self._at(req.duration_s))
        try:
            self.control.apply(**plan.restore, run_id="")
        except ExporterError as exc:
            notes.append(f"the exporter was not restored: {exc}")
        ann.end(status, "; ".join(notes), self.start_at, steady_at, end)
        data = None
        if status != "failed" and (end - steady_at).total_seconds() >= plan.wall_step_s:
            # Let Prometheus scrape the run's last interval before reading it back.
            time.sleep(plan.wall_step_s)
            try:
                data = read_window(
                    self.settings.prometheus_url,
                    self.settings.sid,
                    self.start_at,
                    end,
                    plan.wall_step_s,
                    plan.full_users,
                    plan.think_time_s,
                    speed=plan.speed,
                )
                if data.meta.get("gaps"):  # the run's record says where its data has holes
                    notes.append(describe_gaps(data.meta["gaps"]))
            except PrometheusError as exc:
                status = "failed"
                notes.append(str(exc))
        elif status != "failed":
            notes.append("ended before its steady state: no data")
        try:
            self.store.runs.finish(self.run_id, status, end, data, "; ".join(notes + ann.failures))
        finally:
            ann.close()
