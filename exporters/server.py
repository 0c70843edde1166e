"""HTTP front of the exporter: /metrics, /healthz and a small control endpoint.

`PUT /control/faults` with `{"faults": ["db-bottleneck"]}` and `Authorization: Bearer
<token>` switches the model's active faults while it runs; `GET` shows them. The API's
real-time runs drive it with the optional fields too: `scenario`, `users` (logged-on users;
null: the scenario's), `run_id`, which tags the run events the exporter emits until it is
cleared with `""`, and `lease_s` (see exporters/control.py). Every field is checked before
anything changes, and the state is kept in the state file across restarts.
"""

from __future__ import annotations

import gc
import hmac
import json
import logging
import signal
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from wsgiref.simple_server import make_server

from prometheus_client import CollectorRegistry

from exporters.collectors.exposition import QuietHandler, ThreadingWSGIServer, make_metrics_app
from exporters.config import DEFAULT_MAX_USERS, ExporterConfig
from exporters.control import ControlChange, ControlError, ControlState, StateFile, parse_change
from exporters.registry import exporter_collector
from exporters.sapstartsrv.server import fleet_from_settings
from exporters.sinks.events import RunEvents
from exporters.sinks.loki import DEFAULT_PUSH_PATH, LogStoreAccess, LokiSink
from exporters.sinks.st05trace import TracePublisher
from exporters.sources.sapcontrol_syslog import LineSink
from exporters.thresholds import Thresholds
from landscape_model.catalog import ConfigError
from landscape_model.engine import ModelRun, RealTimeRunner, Simulation

log = logging.getLogger(__name__)
MAX_BODY = 64 * 1024


class LiveModel:
    """The simulation the exporter serves, advancing in real time, and the control state it
    was given. `reconfigure` is the one path that changes it (faults, users, scenario, a run's
    tag and lease); a saved state (`restore`) and an expired lease take the same path. A
    change is validated first and applied completely or not at all, its fault events are
    emitted and the state is saved; a new scenario replaces the simulation while running
    (counters then restart from 0, as after an instance restart)."""

    def __init__(
        self,
        sim: ModelRun,
        speed: float = 1.0,
        events: RunEvents | None = None,
        state_file: StateFile | None = None,
        default_users: int | None = None,
        max_users: int = DEFAULT_MAX_USERS,
    ) -> None:
        sim.catalog.preload()
        # The exporter's own users (`wlmon exporter --users`, a fleet member run below its
        # scenario's benchmark limit): what "the scenario's own" means here, so a run's end
        # or `users: null` returns to them, not to the scenario's number.
        self.default_users = default_users
        self.max_users = max_users  # the cap a change's `users` is checked against
        self.sim = sim
        self.speed = speed
        self.events = events
        self.state_file = state_file
        self.runner = RealTimeRunner(sim, speed=speed)
        self._started = False
        self._lock = threading.Lock()
        # One control change at a time: the lease watchdog and HTTP calls both change it.
        self._control = threading.RLock()
        self.state = ControlState(
            scenario=sim.scenario_name,
            faults=tuple(sim.faults),
            users=sim.overrides.get("users"),
        )
        self._watchdog_stop = threading.Event()
        self._watchdog: threading.Thread | None = None

    def _event(self, event: str, message: str = "") -> None:
        if self.events is not None:
            self.events.emit(
                event,
                scenario=self.sim.scenario_name,
                faults=self.sim.faults,
                message=message,
                run_id=self.run_id,
            )

    @property
    def run_id(self) -> str:
        return self.state.run_id

    @property
    def users(self) -> int:
        return self.sim.scenario.users

    @property
    def catalog(self):
        return self.sim.catalog

    @property
    def scenario_name(self) -> str:
        return self.sim.scenario_name

    @property
    def faults(self) -> tuple[str, ...]:
        return self.sim.faults

    def snapshot(self):
        return self.sim.snapshot()

    def reconfigure(self, change: dict | ControlChange, now: float | None = None) -> ControlState:
        """Change the model as `change` (a `PUT /control/faults` body) asks: checked against
        the catalog and the users cap (ControlError, nothing changed), then applied whole or
        not at all (ConfigError, ValueError, MemoryError: the model as it was). Returns the
        state now in force."""
        body = change.body() if isinstance(change, ControlChange) else change
        with self._control:
            new = parse_change(
                body,
                self.state,
                self.catalog.scenarios(),
                self.catalog.fault_names(),
                self.max_users,
                time.time() if now is None else now,
            )
            self._apply(new)
            return new

    def restore(self, saved: ControlState, now: float | None = None) -> None:
        """Take up a state saved before a restart (StateFile.load has checked it against the
        catalog): a run whose lease ran out meanwhile comes back without its faults."""
        with self._control:
            if saved.lease_expired(time.time() if now is None else now):
                log.warning(
                    "run %s lost its lease while the exporter was down; not restoring its faults",
                    saved.run_id,
                )
                saved = saved.without_run()
            self._apply(saved)

    def _apply(self, new: ControlState) -> None:
        with self._control:
            old_faults = self.sim.faults
            if new.scenario != self.sim.scenario_name:
                self._switch(new)
            else:
                users = (
                    new.users
                    or self.default_users
                    or self.catalog.scenario(self.sim.scenario_name).users
                )
                self.sim.configure(new.faults, users)
            self.state = new
            for name in [f for f in self.sim.faults if f not in old_faults]:
                self._event("fault_injected", f"fault {name} injected")
            for name in sorted(set(old_faults) - set(self.sim.faults)):
                self._event("fault_removed", f"fault {name} removed")
            self._save()

    def _save(self) -> None:
        if self.state_file is None:
            return
        try:
            self.state_file.save(self.state)
        except OSError as exc:  # the model still runs; a restart would lose the plan
            log.error("cannot save the control state to %s: %s", self.state_file.path, exc)

    def _switch(self, new: ControlState) -> None:
        sim = self.sim.rebuild(new.scenario, new.faults, new.users or self.default_users)
        with self._lock:
            old_runner = self.runner
            self.sim, self.runner = sim, RealTimeRunner(sim, speed=self.speed)
            old_runner.stop()
            if self._started:
                self.runner.start()
        self._event("scenario_switched", f"scenario {new.scenario} started")

    def expire_lease(self, now: float) -> bool:
        """Drop a run whose driver stopped renewing its lease: its faults and tag go."""
        with self._control:
            state = self.state
            if not state.lease_expired(now):
                return False
            log.warning("lease of run %s expired: dropping its faults", state.run_id)
            self._event(
                "lease_expired",
                f"run {state.run_id} stopped renewing its lease; its faults are removed",
            )
            self._apply(state.without_run())
            return True

    def _watch(self, interval: float) -> None:
        while not self._watchdog_stop.wait(interval):
            try:
                self.expire_lease(time.time())
            except Exception:  # keep watching; the next tick tries again
                log.exception("dropping an expired run failed")

    def start(self, watch_interval: float = 0.5) -> None:
        with self._lock:
            self._started = True
            self.runner.start()
        self._event("start", f"model started: scenario {self.sim.scenario_name}")
        self._watchdog = threading.Thread(
            target=self._watch, args=(watch_interval,), name="wlmon-lease", daemon=True
        )
        self._watchdog.start()

    def stop(self) -> None:
        self._watchdog_stop.set()
        self.runner.stop()
        self._event(
            "end", f"model stopped after {self.sim.snapshot().totals.sim_time:.0f} simulated s"
        )


def build_registry(
    sim, config: ExporterConfig, log_sink: LineSink | None = None
) -> CollectorRegistry:
    """/metrics of the model `sim` (anything with a `snapshot()`, e.g. a LiveModel), as
    `config` (read at the edge, exporters.config.load_config) configures its collectors;
    a sapcontrol source's SM21 lines go to `log_sink`."""
    registry = CollectorRegistry(auto_describe=True)
    registry.register(exporter_collector(sim.snapshot, config, log_sink))
    return registry


def _json(start_response: Callable, status: str, body: dict) -> Iterable[bytes]:
    data = json.dumps(body).encode()
    start_response(
        status, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))]
    )
    return [data]


def build_app(
    sim: LiveModel,
    registry: CollectorRegistry,
    token: str | None = None,
) -> Callable:
    """The WSGI app. Control writes need `Authorization: Bearer <token>`; without a token
    they are refused (anything on the host could otherwise inject faults the NOC watches)."""
    metrics_app = make_metrics_app(registry, registry.collect)
    started = time.time()

    def authorized(environ) -> tuple[str, str] | None:
        """None when the caller may write, else (status, why)."""
        if not token:
            return (
                "403 Forbidden",
                "control writes are disabled: the exporter has no token (set WLMON_EXPORTER_TOKEN)",
            )
        given = environ.get("HTTP_AUTHORIZATION", "")
        scheme, _, value = given.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            value.strip().encode(), token.encode()
        ):
            return ("401 Unauthorized", "control writes need 'Authorization: Bearer <token>'")
        return None

    def control(environ, start_response) -> Iterable[bytes]:
        method = environ["REQUEST_METHOD"]
        if method == "GET":
            return _json(start_response, "200 OK", _fault_state(sim, started))
        if method not in ("PUT", "POST"):
            return _json(start_response, "405 Method Not Allowed", {"error": "use GET or PUT"})
        if (refused := authorized(environ)) is not None:
            return _json(start_response, refused[0], {"error": refused[1]})
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY:
            return _json(
                start_response,
                "413 Content Too Large",
                {"error": f"body must be 0..{MAX_BODY} bytes"},
            )
        try:
            body = json.loads(environ["wsgi.input"].read(length) or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            return _json(start_response, "400 Bad Request", {"error": f"body is not JSON: {exc}"})
        try:
            sim.reconfigure(body)
        except ControlError as exc:
            return _json(start_response, "400 Bad Request", {"error": str(exc), **exc.extra})
        except (ConfigError, ValueError) as exc:
            return _json(start_response, "400 Bad Request", {"error": str(exc)})
        except MemoryError:
            return _json(
                start_response,
                "400 Bad Request",
                {"error": "the model cannot hold that configuration; nothing was changed"},
            )
        log.info("control now %s", sim.state)
        return _json(start_response, "200 OK", _fault_state(sim, started))

    def app(environ, start_response) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "/")
        if path == "/metrics":
            return metrics_app(environ, start_response)
        if path == "/healthz":
            return _json(
                start_response,
                "200 OK",
                {"status": "ok", "simulated_seconds": sim.snapshot().totals.sim_time},
            )
        if path == "/control/faults":
            return control(environ, start_response)
        if path == "/":
            body = (
                b'<html><body><h1>wlmon exporter</h1><a href="/metrics">/metrics</a></body></html>'
            )
            start_response(
                "200 OK", [("Content-Type", "text/html"), ("Content-Length", str(len(body)))]
            )
            return [body]
        return _json(start_response, "404 Not Found", {"error": f"no such path {path}"})

    return app


def _fault_state(sim: LiveModel, started: float) -> dict:
    state = sim.state
    return {
        "scenario": sim.scenario_name,
        "faults": list(sim.faults),
        "available": sim.catalog.fault_names(),
        "scenarios": sim.catalog.scenarios(),
        "users": sim.users,
        "users_requested": state.users,
        # The cap on `users`: a driver checks its plan against it before starting.
        "max_users": sim.max_users,
        "run_id": state.run_id,
        "lease_until": state.lease_until,
        "speed": sim.speed,
        "simulated_seconds": sim.snapshot().totals.sim_time,
        # A driver compares it between steps: a new value means the exporter restarted.
        "started": started,
    }


class ExporterServer:
    """The exporter as an object: start in a thread (tests) or serve forever (CLI).

    With `logs_url`, ST05 summaries go to the log store (Loki's push protocol: VictoriaLogs,
    or a Loki with `logs_push_path`) every `trace_interval_s`; with `logs_url` or
    `influx_url`, run events (start, faults, end) go there too.
    """

    def __init__(
        self,
        sim: Simulation,
        host: str = "127.0.0.1",
        port: int = 9300,
        speed: float = 1.0,
        logs_url: str | None = None,
        influx_url: str | None = None,
        trace_interval_s: float = 60.0,
        control_token: str | None = None,
        state_file: Path | None = None,
        influx_token: str = "",
        *,
        config: ExporterConfig,
        thresholds: Thresholds | None = None,
        logs_access: LogStoreAccess | None = None,
        logs_push_path: str = DEFAULT_PUSH_PATH,
    ) -> None:
        # `config` is read at the edge (the CLI, a test: exporters.config.load_config) and
        # only passed down: nothing from here on reads the environment.
        settings = config.exporter
        if control_token is None and settings.control_token is not None:
            control_token = settings.control_token.get_secret_value()
        state_file = state_file or settings.state_file
        store = StateFile(state_file) if state_file else None
        default_users = sim.overrides.get("users")  # --users, before a saved state applies
        restored = None
        if store is not None:
            restored = store.load(
                sim.catalog.scenarios(), sim.catalog.fault_names(), settings.max_users
            )
        self.loki = (
            LokiSink(logs_url, access=logs_access, push_path=logs_push_path).start()
            if logs_url
            else None
        )
        self.live = LiveModel(
            sim,
            speed=speed,
            state_file=store,
            default_users=default_users,
            max_users=settings.max_users,
        )
        if restored is not None:
            # The engine it was started on (an exporter on --engine des stays on it); users
            # the state does not name are the exporter's own (`default_users`).
            try:
                self.live.restore(restored)
                log.info("restored the control state from %s: %s", state_file, restored)
            except (ConfigError, ValueError) as exc:
                # As a state the catalog no longer knows (StateFile.load): the model refuses
                # it under this exporter's engine or settings, so a bad file never stops
                # the exporter; it starts as its options say.
                log.warning("ignoring the control state in %s: %s", state_file, exc)
        # Run events carry the SID of the model restored (a saved scenario may be another
        # landscape's); its start event records what was restored.
        self.events = (
            RunEvents(
                self.live.snapshot().sid,
                influx_url=influx_url,
                influx_token=influx_token,
                loki=self.loki,
            )
            if (logs_url or influx_url)
            else None
        )
        self.live.events = self.events
        self.tracer = (
            TracePublisher(self.live.snapshot, self.loki, trace_interval_s) if self.loki else None
        )
        # The model answering as sapstartsrv, one SAPControl endpoint per instance.
        srv = config.sapstartsrv
        self.sapstartsrv = None
        if srv is not None and srv.enabled:
            if thresholds is None:
                # Its CCMS alert levels are the alerts' thresholds; the edge reads them.
                raise ValueError("the model's sapstartsrv needs thresholds= (its CCMS levels)")
            self.sapstartsrv = fleet_from_settings(
                self.live.snapshot, lambda: self.live.sim.scenario, srv, thresholds
            )
        self.registry = build_registry(self.live, config, log_sink=self.loki)
        # A sapcontrol source's first reading discovers the system and opens a client per
        # instance (about a second for 31, more on a busy host): made once before /healthz
        # answers, so Prometheus's first scrapes do not time out on it (issue 21).
        self._warm_sapcontrol = config.sapcontrol is not None
        self.httpd = make_server(
            host,
            port,
            build_app(self.live, self.registry, token=control_token),
            server_class=ThreadingWSGIServer,
            handler_class=QuietHandler,
        )
        self._thread: threading.Thread | None = None

    @property
    def sim(self) -> Simulation:
        return self.live.sim

    @property
    def port(self) -> int:
        return self.httpd.server_port

    def start_model(self) -> None:
        self.live.start()
        if self.tracer:
            self.tracer.start()
        if self.sapstartsrv:
            self.sapstartsrv.start()
        if self._warm_sapcontrol:
            for _ in self.registry.collect():
                pass

    def start(self) -> None:
        self.start_model()
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, name="wlmon-http", daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        self.httpd.server_close()
        if self.sapstartsrv:
            self.sapstartsrv.stop()
        if self.tracer:
            self.tracer.stop()
        self.live.stop()
        if self.events:
            self.events.close()
        if self.loki:
            self.loki.stop()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.close()


def serve(
    sim: Simulation,
    host: str,
    port: int,
    speed: float,
    console,
    logs_url: str | None = None,
    influx_url: str | None = None,
    trace_interval_s: float = 60.0,
    state_file: Path | None = None,
    influx_token: str = "",
    *,
    config: ExporterConfig,
    control_token: str | None = None,
    thresholds: Thresholds | None = None,
    logs_access: LogStoreAccess | None = None,
    logs_push_path: str = DEFAULT_PUSH_PATH,
) -> None:
    server = ExporterServer(
        sim,
        host=host,
        port=port,
        speed=speed,
        logs_url=logs_url,
        influx_url=influx_url,
        trace_interval_s=trace_interval_s,
        state_file=state_file,
        influx_token=influx_token,
        config=config,
        control_token=control_token,
        thresholds=thresholds,
        logs_access=logs_access,
        logs_push_path=logs_push_path,
    )
    server.start_model()
    # Everything loaded so far (the catalog, the model's arrays, the libraries) lives as long
    # as the process: out of the collector's sight. Each scrape allocates ~10^5 containers,
    # so a full collection came every ~15 scrapes and walked the whole heap: 100-200 ms,
    # the scrape's p99 (the model's tick, 1 ms a second, was not it). Garbage first, so
    # none of it is kept for good.
    gc.collect()
    gc.freeze()
    console.print(
        f"wlmon exporter: http://{host}:{server.port}/metrics "
        f"(scenario {server.sim.scenario_name}, faults: {', '.join(server.sim.faults) or 'none'}"
        f"{', run ' + server.live.run_id if server.live.run_id else ''})"
    )
    if server.sapstartsrv:
        first = next(iter(server.sapstartsrv.urls().values()))
        console.print(
            f"sapstartsrv: {len(server.sapstartsrv.urls())} instances, the first at {first} "
            "(GetSystemInstanceList there lists the rest)"
        )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    threading.Thread(target=lambda: (stop.wait(), server.httpd.shutdown()), daemon=True).start()
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
