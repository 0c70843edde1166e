"""Real-time runs: the API drives the live exporter through the run's plan (users ramped in
levels, faults switched at their offsets), marks start, faults, steady state and end in
InfluxDB, the log store and Grafana, and when the run is over reads its window back from Prometheus,
so the report shows what the monitoring saw.

Offsets are in the model's time; the exporter's speed (simulated seconds per wall second,
1 in production) turns them into wall time. One real-time run at a time: there is one live
model.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import httpx

from api.config import Settings
from api.runs.annotations import RunAnnotations
from api.runs.fromprom import PrometheusError, read_window, scrape_interval_s
from api.runs.gaps import describe as describe_gaps
from api.runs.record import fault_windows
from api.runs.spec import RealtimeRunRequest
from api.runs.storage import RunRow, RunStatus
from api.store import limit_met
from exporters.control import ControlChange
from landscape_model.catalog import Catalog, ConfigError

log = logging.getLogger(__name__)
SCRAPES_PER_STEP = 3
ALIVE_EVERY_S = 2.0
# A run's end that the database refused (its cap, a full disk) is written again this often
# until it goes through (room made: runs deleted, the disk cleaned) or the API stops.
END_RETRY_S = 5.0


class ExporterError(RuntimeError):
    pass


class ExporterRefused(ExporterError):
    """The exporter answered and said no (4xx): asking again gets the same answer, so a run
    it happens to cannot go on as planned."""


class ExporterControl:
    """The exporter's control endpoint (`/control/faults`); writes carry its bearer token."""

    def __init__(self, url: str, token: str | None = None) -> None:
        self.url = url.rstrip("/") + "/control/faults"
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}

    @classmethod
    def of(cls, settings: Settings) -> ExporterControl:
        token = settings.exporter_token
        return cls(settings.exporter_url, token.get_secret_value() if token else None)

    def state(self) -> dict:
        return self._call("GET")

    def apply(self, change: ControlChange) -> dict:
        return self._call("PUT", change.body())

    def _call(self, method: str, body: dict | None = None) -> dict:
        try:
            r = httpx.request(method, self.url, json=body, headers=self.headers, timeout=30)
        except httpx.HTTPError as exc:
            raise ExporterError(f"cannot reach the exporter at {self.url}: {exc}") from exc
        if r.status_code != 200:
            error = ExporterRefused if 400 <= r.status_code < 500 else ExporterError
            raise error(f"the exporter refused {method} {self.url}: {_why(r)}")
        return r.json()


def _why(r: httpx.Response) -> str:
    """The exporter's own message (its JSON `error`), else the start of the body."""
    try:
        return str(r.json()["error"])
    except (ValueError, KeyError, TypeError):
        return r.text[:300]


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

    def stored(self) -> dict:
        """What the run's stored spec keeps of the plan, so a restarted API can resume it."""
        return {
            "speed": self.speed,
            "wall_resolution_s": self.wall_step_s,
            "full_users": self.full_users,
            "think_time_s": self.think_time_s,
            "restore": self.restore,
        }

    @classmethod
    def from_spec(cls, spec: dict) -> LivePlan | None:
        """The plan a run was started with; None for a run stored before plans were kept."""
        try:
            return cls(
                speed=float(spec["speed"]),
                wall_step_s=float(spec["wall_resolution_s"]),
                full_users=int(spec["full_users"]),
                think_time_s=float(spec["think_time_s"]),
                restore=dict(spec["restore"]),
            )
        except (KeyError, TypeError, ValueError):
            return None


def prepare(settings: Settings, req: RealtimeRunRequest) -> LivePlan:
    """Checks the request against the live exporter. ValueError: the request is wrong;
    ExporterError / PrometheusError: a server cannot be used."""
    state = ExporterControl.of(settings).state()
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
    full_users = req.users or scenario.users
    max_users = state.get("max_users")
    if isinstance(max_users, int) and full_users > max_users:
        raise ValueError(
            f"users: {full_users} is more than the live exporter holds ({max_users}, "
            "WLMON_EXPORTER_MAX_USERS)"
        )
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
        full_users=full_users,
        think_time_s=scenario.think_time_s,
        restore={"scenario": state["scenario"], "faults": faults_before, "users": None},
    )


def _holds(state: dict, expected: dict) -> bool:
    return (
        state.get("scenario") == expected["scenario"]
        and sorted(state.get("faults", ())) == sorted(expected["faults"])
        and state.get("users") == expected["users"]
        and state.get("run_id") == expected["run_id"]
    )


def _hms(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%H:%M:%S")


class ExporterGaps:
    """Spans in which the exporter did not hold the run's plan (out of reach, restarted,
    or given other faults), for the run's record: from the last check that found the plan
    held to the check that found it held again or put it back."""

    def __init__(self) -> None:
        self.last_ok: datetime | None = None
        self.started: float | None = None
        self.open_since: datetime | None = None
        self.why: list[str] = []
        self.closed: list[str] = []

    def _open(self, now: datetime, why: str) -> None:
        if self.open_since is None:
            self.open_since = self.last_ok or now
        if why not in self.why:
            self.why.append(why)

    def unreachable(self, now: datetime) -> None:
        self._open(now, "out of reach")

    def seen(self, now: datetime, started: float | None, held: bool) -> None:
        if started is not None and self.started is not None and started != self.started:
            self._open(now, f"restarted at {_hms(datetime.fromtimestamp(started, UTC))}")
        if started is not None:
            self.started = started
        if not held:
            self._open(now, "had lost the plan, put back")

    def restored(self, now: datetime) -> None:
        if self.open_since is not None:
            self.closed.append(
                f"the exporter did not hold the plan from {_hms(self.open_since)} to "
                f"{_hms(now)} UTC ({', '.join(self.why)})"
            )
            self.open_since, self.why = None, []
        self.last_ok = now

    def notes(self, now: datetime) -> list[str]:
        out = list(self.closed)
        if self.open_since is not None:
            out.append(
                f"the exporter did not hold the plan from {_hms(self.open_since)} UTC to the "
                f"end ({', '.join(self.why)})"
            )
        return out


class RealtimeRun(threading.Thread):
    """Drives one run from its start, or from where a restarted API found it (`resumed`:
    the note saying when and why the API stopped)."""

    def __init__(
        self,
        store,
        settings: Settings,
        run: RunRow,
        req: RealtimeRunRequest,
        plan: LivePlan,
        resumed: str = "",
    ) -> None:
        super().__init__(name=f"wlmon-run-{run.id}", daemon=True)
        self.store, self.settings, self.run_row, self.req, self.plan = (
            store,
            settings,
            run,
            req,
            plan,
        )
        self.resumed = resumed
        self.control = ExporterControl.of(settings)
        self.start_at = run.start
        self._cancel = threading.Event()
        # Set when the API stops on purpose: the driver leaves the run 'running' (for the
        # next API to resume) and the exporter holding the plan under its lease.
        self._halt = threading.Event()
        # Renewed at every check; a driver that dies stops renewing and the exporter drops
        # the run's faults when it runs out.
        self.lease_s = settings.exporter_lease_s
        self.check_every_s = min(plan.wall_step_s, self.lease_s / 3)
        self.gaps = ExporterGaps()
        self._alive_at: datetime | None = None
        # (status, message) of a run that has ended but whose end the database has not
        # taken yet: what GET /runs/{id} answers meanwhile (api/services/live.py).
        self.pending: tuple[RunStatus, str] | None = None

    @property
    def run_id(self) -> str:
        return self.run_row.id

    def cancel(self) -> None:
        self._cancel.set()

    def halt(self, timeout: float = 5.0) -> None:
        """Stop driving without ending the run (a planned stop of the API)."""
        self._halt.set()
        self._cancel.set()
        self.join(timeout)

    def _at(self, offset_s: float) -> datetime:
        return self.start_at + timedelta(seconds=self.plan.wall(offset_s))

    def _expected(self, offset: float) -> dict:
        """What the exporter must hold from `offset` on."""
        return {
            "scenario": self.req.scenario,
            "faults": list(self.req.faults_at(offset)),
            "users": self.req.users_at(offset, self.plan.full_users),
            "run_id": self.run_id,
        }

    def _put(self, expected: dict) -> None:
        state = self.control.apply(ControlChange(**expected, lease_s=self.lease_s))
        # The exporter that took the plan: a later check seeing another one saw a restart.
        now = datetime.now(UTC)
        self.gaps.seen(now, state.get("started"), True)
        self.gaps.restored(now)

    def _keep(self, expected: dict) -> None:
        """Reconcile: the exporter holds the plan (renew its lease), or it is given the plan
        back and the gap is recorded; an exporter out of reach opens a gap."""
        now = datetime.now(UTC)
        try:
            state = self.control.state()
            held = _holds(state, expected)
            self.gaps.seen(now, state.get("started"), held)
            if held:
                self.control.apply(ControlChange(run_id=self.run_id, lease_s=self.lease_s))
            else:
                log.warning("run %s: the exporter lost the plan; putting it back", self.run_id)
                self._put(expected)
            self.gaps.restored(datetime.now(UTC))
        except ExporterRefused:
            raise
        except ExporterError as exc:
            log.warning("run %s: %s", self.run_id, exc)
            self.gaps.unreachable(now)

    def _wait_keeping(self, until: datetime, expected: dict | None) -> bool:
        """Sleep until `until`, checking the exporter on the way; False when cancelled."""
        while True:
            now = datetime.now(UTC)
            self._alive(now)
            if now >= until:
                return not self._cancel.is_set()
            step = min((until - now).total_seconds(), self.check_every_s)
            if self._cancel.wait(step):
                return False
            if expected is not None and datetime.now(UTC) < until:
                self._keep(expected)

    def _alive(self, now: datetime) -> None:
        """The driver's sign of life in the run's row (where a crashed run's data ends), at
        most every ALIVE_EVERY_S: a write each check would put the database on the driver's
        path to the exporter."""
        if self._alive_at is None or (now - self._alive_at).total_seconds() >= ALIVE_EVERY_S:
            self.store.runs.alive(self.run_id, now)
            self._alive_at = now

    def _change_points(self) -> list[float]:
        """The plan's change points still to come; resumed, the one in force now first
        (the ones before it are past: the exporter gets what holds now)."""
        points = self.req.change_points()
        if not self.resumed:
            return points
        elapsed = (datetime.now(UTC) - self.start_at).total_seconds() * self.plan.speed
        past = [p for p in points if p <= elapsed]
        return [*past[-1:], *(p for p in points if p > elapsed)]

    def run(self) -> None:
        ann = RunAnnotations(self.settings, self.run_row)
        req, plan = self.req, self.plan
        steady_at = self._at(req.ramp_up_s)
        status, notes = "finished", [self.resumed] if self.resumed else []
        try:
            if self.resumed:
                ann.event("run_resumed", datetime.now(UTC), f"run resumed: {self.resumed}")
            else:
                ann.start(
                    self.start_at,
                    steady_at,
                    self._at(req.duration_s),
                    f"run started: {req.scenario}, {plan.full_users} users, "
                    f"{req.duration_s:g} s (ramp-up {req.ramp_up_s:g} s)",
                )
            faults: tuple[str, ...] = ()
            expected: dict | None = None
            for offset in self._change_points():
                if not self._wait_keeping(self._at(offset), expected):
                    break
                expected = self._expected(offset)
                new_faults = tuple(expected["faults"])
                try:
                    self._put(expected)
                except ExporterRefused:
                    raise  # the plan itself is refused: the run fails with the reason
                except ExporterError as exc:  # the next check puts it back
                    log.warning("run %s: %s", self.run_id, exc)
                    self.gaps.unreachable(datetime.now(UTC))
                now = datetime.now(UTC)
                # The exporter writes its own fault events (tagged with the run id) to the log store
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
                self._wait_keeping(self._at(req.duration_s), expected)
            if self._halt.is_set():
                ann.close()
                return  # a planned stop: the next API resumes or ends the run
            if self._cancel.is_set():
                status = "cancelled"
                notes.append("cancelled through the API")
        except Exception as exc:  # the run is recorded as failed, with why
            log.exception("run %s failed", self.run_id)
            status = "failed"
            notes.append(self._why(exc))
        try:
            notes.extend(self.gaps.notes(datetime.now(UTC)))
            end = min(datetime.now(UTC), self._at(req.duration_s))
            try:
                self.control.apply(ControlChange(**plan.restore, run_id=""))
            except ExporterError as exc:
                notes.append(f"the exporter was not restored: {exc}")
        except Exception as exc:  # nothing may keep the run from ending
            log.exception("run %s: ending it failed", self.run_id)
            status, end = "failed", datetime.now(UTC)
            notes.append(f"ending the run failed: {exc}")
        conclude(
            self.store,
            self.settings,
            self.run_row,
            plan,
            status,
            notes,
            end,
            ann,
            req.faults,
            halt=self._halt,
            pending=self._pending,
        )

    def _why(self, exc: Exception) -> str:
        """A failure's true reason: a write the database refused names the limit met, and
        is counted where /healthz and write_failures_total see it."""
        if isinstance(exc, sqlite3.Error | OSError):
            why = limit_met(self.store.path, self.store.max_bytes, exc)
            self.store.failures.record(why)
            return f"a write of the run's progress was refused: {why}"
        return f"{type(exc).__name__}: {exc}" if not str(exc) else str(exc)

    def _pending(self, status: RunStatus, message: str) -> None:
        self.pending = (status, message)


def conclude(
    store,
    settings: Settings,
    run: RunRow,
    plan: LivePlan,
    status: RunStatus,
    notes: list[str],
    end: datetime,
    ann: RunAnnotations,
    faults: Sequence = (),
    *,
    halt: threading.Event | None = None,
    pending: Callable[[str, str], None] | None = None,
) -> None:
    """End a run: the end event, its window read back from Prometheus (when it reached its
    steady state and did not fail), its status and notes stored with the data; `faults`:
    the plan's faults, kept in the record as its fault windows. The end is stored whatever
    fails on the way (`store_end`)."""
    start = run.start
    steady_at = start + timedelta(seconds=plan.wall(run.ramp_up_s))
    try:
        ann.end(status, "; ".join(notes), start, steady_at, end)
    except Exception as exc:  # a side write: the run's own record matters more
        log.exception("run %s: the end event failed", run.id)
        notes.append(f"the end event was not written: {exc}")
    data = None
    if status != "failed" and (end - steady_at).total_seconds() >= plan.wall_step_s:
        # Let Prometheus scrape the run's last interval before reading it back (a run ended
        # long ago, by a restarted API, has been scraped).
        since_end = (datetime.now(UTC) - end).total_seconds()
        time.sleep(min(plan.wall_step_s, max(0.0, plan.wall_step_s - since_end)))
        try:
            data = read_window(
                settings.prometheus_url,
                settings.sid,
                start,
                end,
                plan.wall_step_s,
                plan.full_users,
                plan.think_time_s,
                speed=plan.speed,
                steady_from=steady_at,
            )
            if data is not None:
                # The plan's faults: what the exporter was told to inject, and when.
                data.meta.fault_windows = fault_windows(faults)
                if data.meta.gaps:  # the run's record says where its data has holes
                    notes.append(describe_gaps(data.meta.gaps))
        except PrometheusError as exc:
            status = "failed" if status != "interrupted" else status
            notes.append(str(exc))
        except Exception as exc:  # a bug reading the window must not leave it running
            log.exception("run %s: reading its window failed", run.id)
            status = "failed" if status != "interrupted" else status
            notes.append(f"reading its window failed: {type(exc).__name__}: {exc}")
    elif status != "failed":
        notes.append("ended before its steady state: no data")
    try:
        message = "; ".join(notes + ann.failures)
        store_end(store, run.id, status, end, data, message, halt=halt, pending=pending)
    finally:
        ann.close()


def store_end(
    store,
    run_id: str,
    status: RunStatus,
    end: datetime,
    data,
    message: str,
    *,
    halt: threading.Event | None = None,
    pending: Callable[[str, str], None] | None = None,
    retry_s: float | None = None,
) -> bool:
    """Store a run's end, whatever it takes: a run must not stay 'running' because its last
    write failed (issue 38: past the cap the driver died on SQLITE_FULL, the run stayed
    running, cancel answered 409 and `wlmon down` waited on it until a restart).

    Refused with its data, the run ends `failed` without it, naming the limit met (what was
    recorded before stays: the row, the window in Prometheus). Refused even so, the same is
    tried again every `retry_s` until the database takes it, `pending` told meanwhile, or
    until `halt` (the API stops: the next API ends the run). Every refusal is counted
    where /healthz and write_failures_total see it. True when stored."""
    retry_s = END_RETRY_S if retry_s is None else retry_s
    while True:
        try:
            store.runs.finish(run_id, status, end, data, message)
        except (sqlite3.Error, OSError) as exc:
            why = limit_met(store.path, store.max_bytes, exc)
            store.failures.record(why)
            log.error("run %s: its end was not stored: %s", run_id, why)
            if data is not None or status != "failed":
                data, status = None, "failed"
                message = "; ".join(filter(None, [message, f"its end was refused: {why}"]))
                continue
            if pending is not None:
                pending(status, message)
            if halt is not None and halt.wait(retry_s):
                return False
            if halt is None:
                time.sleep(retry_s)
            continue
        store.failures.ok()
        return True
