"""HTTP front of the exporter: /metrics, /healthz and a small control endpoint.

`PUT /control/faults` with `{"faults": ["db-bottleneck"]}` switches the model's active
faults while it runs; `GET` shows them. The API's real-time runs drive it with the optional
fields too: `scenario`, `users` (logged-on users; null: the scenario's) and `run_id`, which
tags the run events the exporter emits until it is cleared with `""`.
"""

from __future__ import annotations

import json
import logging
import re
import signal
import threading
from collections.abc import Callable, Iterable
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app

from exporters.collectors import COLLECTORS
from exporters.collectors.base import ExporterCollector
from exporters.collectors.postgres import PostgresCollector
from exporters.config import ExporterSettings, get_settings
from exporters.model.catalog import ConfigError
from exporters.model.engine import RealTimeRunner, Simulation
from exporters.sapcontrol.settings import SapStartSrvSettings
from exporters.sapstartsrv.server import fleet_from_settings
from exporters.sinks.events import RunEvents
from exporters.sinks.loki import LokiSink
from exporters.sinks.st05trace import TracePublisher

log = logging.getLogger(__name__)
MAX_BODY = 64 * 1024
RUN_ID = re.compile(r"^[A-Za-z0-9_-]{0,64}$")


class LiveModel:
    """The simulation the exporter serves, advancing in real time; its scenario can be
    replaced while running (counters then restart from 0, as after an instance restart)."""

    def __init__(
        self, sim: Simulation, speed: float = 1.0, events: RunEvents | None = None
    ) -> None:
        sim.catalog.preload()
        self.sim = sim
        self.speed = speed
        self.events = events
        self.runner = RealTimeRunner(sim, speed=speed)
        self._lock = threading.Lock()
        self.run_id = ""

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
    def users(self) -> int:
        return self.sim.scenario.users

    def set_users(self, users: int | None) -> None:
        """`None`: the scenario's own number of users."""
        if users is None:
            users = self.catalog.scenario(self.sim.scenario_name).users
        if users != self.sim.scenario.users:
            self.sim.set_users(users)

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

    def set_faults(self, faults: list[str]) -> None:
        before = set(self.sim.faults)
        self.sim.set_faults(faults)
        for name in [f for f in faults if f not in before]:
            self._event("fault_injected", f"fault {name} injected")
        for name in sorted(before - set(faults)):
            self._event("fault_removed", f"fault {name} removed")

    def switch_scenario(self, scenario: str, faults: list[str]) -> None:
        new = Simulation(
            scenario,
            faults=faults,
            seed=self.sim.seed,
            dt=self.sim.dt,
            catalog=self.catalog,
            overrides=self.sim.overrides,
        )
        with self._lock:
            old_runner = self.runner
            self.sim, self.runner = new, RealTimeRunner(new, speed=self.speed)
            old_runner.stop()
            self.runner.start()
        self._event("scenario_switched", f"scenario {scenario} started")

    def start(self) -> None:
        self.runner.start()
        self._event("start", f"model started: scenario {self.sim.scenario_name}")

    def stop(self) -> None:
        self.runner.stop()
        self._event(
            "end", f"model stopped after {self.sim.snapshot().totals.sim_time:.0f} simulated s"
        )


def build_registry(sim, settings: ExporterSettings | None = None) -> CollectorRegistry:
    settings = settings or get_settings()
    enabled = [
        cls.from_settings(sim.snapshot, settings)
        for name, cls in COLLECTORS.items()
        if getattr(settings, f"collector_{name}")
        # A real PostgreSQL takes the place of the model's buffer pools (same metric names).
        and not (name == "dbbuffer" and settings.postgres_dsn)
    ]
    if settings.postgres_dsn:
        enabled.append(
            PostgresCollector(
                sim.snapshot, settings.postgres_dsn.get_secret_value(), sid=settings.postgres_sid
            )
        )
    registry = CollectorRegistry(auto_describe=True)
    registry.register(ExporterCollector(sim.snapshot, enabled))
    return registry


def _json(start_response: Callable, status: str, body: dict) -> Iterable[bytes]:
    data = json.dumps(body).encode()
    start_response(
        status, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))]
    )
    return [data]


def build_app(sim: LiveModel, registry: CollectorRegistry) -> Callable:
    metrics_app = make_wsgi_app(registry)

    def control(environ, start_response) -> Iterable[bytes]:
        method = environ["REQUEST_METHOD"]
        if method == "GET":
            return _json(start_response, "200 OK", _fault_state(sim))
        if method not in ("PUT", "POST"):
            return _json(start_response, "405 Method Not Allowed", {"error": "use GET or PUT"})
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
        except json.JSONDecodeError as exc:
            return _json(start_response, "400 Bad Request", {"error": f"body is not JSON: {exc}"})
        faults = body.get("faults") if isinstance(body, dict) else None
        if not isinstance(faults, list) or not all(isinstance(f, str) for f in faults):
            return _json(
                start_response,
                "400 Bad Request",
                {"error": "field 'faults' must be a list of names"},
            )
        known = set(sim.catalog.fault_names())
        unknown = [f for f in faults if f not in known]
        if unknown:
            return _json(
                start_response,
                "400 Bad Request",
                {"error": f"unknown fault(s): {', '.join(unknown)}", "available": sorted(known)},
            )
        users = body.get("users", sim.users)
        if users is not None and (
            isinstance(users, bool) or not isinstance(users, int) or users <= 0
        ):
            return _json(
                start_response,
                "400 Bad Request",
                {"error": "field 'users' must be a positive integer or null"},
            )
        run_id = body.get("run_id", sim.run_id)
        if not isinstance(run_id, str) or not RUN_ID.match(run_id):
            return _json(
                start_response,
                "400 Bad Request",
                {"error": "field 'run_id' must be up to 64 letters, digits, '-' or '_'"},
            )
        scenario = body.get("scenario", sim.scenario_name)
        if scenario not in sim.catalog.scenarios():
            return _json(
                start_response,
                "400 Bad Request",
                {"error": f"unknown scenario {scenario!r}", "available": sim.catalog.scenarios()},
            )
        previous_run_id, sim.run_id = sim.run_id, run_id
        try:
            if scenario != sim.scenario_name:
                sim.switch_scenario(scenario, faults)
            else:
                sim.set_faults(faults)
            sim.set_users(users)
        except (ConfigError, ValueError) as exc:
            sim.run_id = previous_run_id
            return _json(start_response, "400 Bad Request", {"error": str(exc)})
        log.info("faults now %s", faults)
        return _json(start_response, "200 OK", _fault_state(sim))

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


def _fault_state(sim: LiveModel) -> dict:
    return {
        "scenario": sim.scenario_name,
        "faults": list(sim.faults),
        "available": sim.catalog.fault_names(),
        "scenarios": sim.catalog.scenarios(),
        "users": sim.users,
        "run_id": sim.run_id,
        "speed": sim.speed,
        "simulated_seconds": sim.snapshot().totals.sim_time,
    }


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args) -> None:
        log.debug("%s - %s", self.address_string(), format % args)


class ExporterServer:
    """The exporter as an object: start in a thread (tests) or serve forever (CLI).

    With `loki_url`, ST05 summaries go to Loki every `trace_interval_s`; with `loki_url` or
    `influx_url`, run events (start, faults, end) go there too.
    """

    def __init__(
        self,
        sim: Simulation,
        host: str = "127.0.0.1",
        port: int = 9300,
        speed: float = 1.0,
        loki_url: str | None = None,
        influx_url: str | None = None,
        trace_interval_s: float = 60.0,
        sapstartsrv: SapStartSrvSettings | None = None,
    ) -> None:
        self.loki = LokiSink(loki_url).start() if loki_url else None
        self.events = (
            RunEvents(sim.snapshot().sid, influx_url=influx_url, loki=self.loki)
            if (loki_url or influx_url)
            else None
        )
        self.live = LiveModel(sim, speed=speed, events=self.events)
        self.tracer = (
            TracePublisher(self.live.snapshot, self.loki, trace_interval_s) if self.loki else None
        )
        # The model answering as sapstartsrv, one SAPControl endpoint per instance.
        srv = sapstartsrv or SapStartSrvSettings()
        self.sapstartsrv = (
            fleet_from_settings(self.live.snapshot, lambda: self.live.sim.scenario, srv)
            if srv.enabled
            else None
        )
        self.httpd = make_server(
            host,
            port,
            build_app(self.live, build_registry(self.live)),
            server_class=_ThreadingServer,
            handler_class=_QuietHandler,
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
    loki_url: str | None = None,
    influx_url: str | None = None,
    trace_interval_s: float = 60.0,
    sapstartsrv: SapStartSrvSettings | None = None,
) -> None:
    server = ExporterServer(
        sim,
        host=host,
        port=port,
        speed=speed,
        loki_url=loki_url,
        influx_url=influx_url,
        trace_interval_s=trace_interval_s,
        sapstartsrv=sapstartsrv,
    )
    server.start_model()
    console.print(
        f"wlmon exporter: http://{host}:{server.port}/metrics "
        f"(scenario {sim.scenario_name}, faults: {', '.join(sim.faults) or 'none'})"
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
