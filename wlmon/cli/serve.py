"""`wlmon exporter`, `wlmon api` and `wlmon render-config`: the long-running services."""

from __future__ import annotations

import os
import signal
import ssl
import threading
from pathlib import Path

import typer
import uvicorn
from pydantic import ValidationError

from alerts.thresholds import ThresholdsError, load_thresholds
from api.config import get_settings
from api.serving import HEADER_TIMEOUT_S, server_config
from exporters.config import DEFAULT_MAX_USERS, ExporterConfig, load_config
from exporters.monitor import MonitorFileError, MonitorServer, load_monitor_file
from exporters.registry import COLLECTORS
from exporters.secretfiles import deprecated_names_in_use
from exporters.server import serve
from exporters.sinks.loki import DEFAULT_PUSH_PATH, LOKI_PUSH_PATH, LogStoreAccess
from landscape_model.catalog import ConfigError
from landscape_model.engines import ENGINE_HELP, ENGINES, RUN_ENGINE, make_simulation
from wlmon.cli.common import console, err, fail
from wlmon.cli.edge import thresholds
from wlmon.cli.simulate import DATA_DIR_HELP, LANDSCAPE_HELP, SET_HELP, open_catalog
from wlmon.stack import perses
from wlmon.stack.fleet import SID
from wlmon.stack.render import render_alertmanager
from wlmon.stack.runtime import EXPORTER_TOKEN_FILE, LOGS_USER, Stack
from wlmon.stack.settings import REPO_DIR
from wlmon.stack.template import TemplateError

app = typer.Typer()


@app.command()
def exporter(
    scenario: str = typer.Option("sd-benchmark-2003", help="scenario name"),
    fault: list[str] = typer.Option([], "--fault", help="fault to inject at start (repeatable)"),
    host: str = typer.Option("127.0.0.1", help="address to bind"),
    port: int = typer.Option(9300, help="port for /metrics"),
    seed: int = typer.Option(1, help="random seed"),
    speed: float = typer.Option(1.0, help="simulated seconds per wall-clock second"),
    think_time: float = typer.Option(None, help="override the scenario's think time (s)"),
    users: int = typer.Option(
        None, help="override the scenario's users (a fleet member below its benchmark limit)"
    ),
    logs_url: str = typer.Option(
        None,
        help="push ST05 summaries and run events to this log store (Loki's push protocol: "
        "VictoriaLogs, or a Loki with --logs-push-path)",
    ),
    logs_push_path: str = typer.Option(
        DEFAULT_PUSH_PATH,
        envvar="WLMON_LOGS_PUSH_PATH",
        help=f"the push endpoint under --logs-url (a Loki: {LOKI_PUSH_PATH})",
    ),
    logs_ca_file: Path = typer.Option(
        None,
        envvar="WLMON_LOGS_CA_FILE",
        help="trust the log store's certificate by this CA (PEM; default: the system's)",
    ),
    logs_username: str = typer.Option(
        "", envvar="WLMON_LOGS_USERNAME", help="basic auth user of the log store"
    ),
    logs_password: str = typer.Option(
        "",
        envvar="WLMON_LOGS_PASSWORD",
        show_default=False,
        help="its password (from the environment, not the command line)",
    ),
    logs_password_file: Path = typer.Option(
        None,
        envvar="WLMON_LOGS_PASSWORD_FILE",
        help="read that password from this file (a compose secret: not in `docker inspect`)",
    ),
    logs_cert_file: Path = typer.Option(
        None,
        envvar="WLMON_LOGS_CERT_FILE",
        help="a client certificate (PEM), for a Loki of your own behind mutual TLS",
    ),
    logs_key_file: Path = typer.Option(
        None, envvar="WLMON_LOGS_KEY_FILE", help="that certificate's private key (PEM)"
    ),
    influx_url: str = typer.Option(None, help="write run events to this InfluxDB"),
    trace_interval: float = typer.Option(
        60.0, help="seconds between ST05 summaries sent to the log store"
    ),
    state_file: Path = typer.Option(
        None,
        help="keep the control state (faults, users, run, lease) here across restarts; "
        "a saved state wins over --scenario/--fault",
    ),
    influx_token: str = typer.Option(
        "",
        envvar="WLMON_INFLUX_TOKEN",
        show_default=False,
        help="InfluxDB credentials as user:password (from the environment, not the command line)",
    ),
    influx_username: str = typer.Option(
        "", envvar="WLMON_INFLUX_USERNAME", help="InfluxDB user, with --influx-password-file"
    ),
    influx_password_file: Path = typer.Option(
        None,
        envvar="WLMON_INFLUX_PASSWORD_FILE",
        help="that user's password from this file (instead of WLMON_INFLUX_TOKEN)",
    ),
    engine: str = typer.Option(RUN_ENGINE, "--engine", help=ENGINE_HELP, show_default=False),
    sid: str = typer.Option(
        None,
        help="report as this SID instead of the landscape's (two SIDs of one scenario in a "
        "fleet, docs/fleet.md)",
    ),
    sapstartsrv_port: int = typer.Option(
        None,
        help="also answer as sapstartsrv (SAPControl SOAP), instance k on this port + k "
        "(0: free ports); more settings: WLMON_SAPSTARTSRV_*",
    ),
    collector: list[str] = typer.Option(
        [],
        "--collector",
        help="switch a collector on (repeatable): "
        + ", ".join(f"{r.name} ({r.help}, {'on' if r.default else 'off'})" for r in COLLECTORS),
    ),
    no_collector: list[str] = typer.Option(
        [], "--no-collector", help="switch a collector off (repeatable)"
    ),
    landscape: Path = typer.Option(None, "--landscape", help=LANDSCAPE_HELP),
    data_dir: Path = typer.Option(None, "--data-dir", help=DATA_DIR_HELP),
    setting: list[str] = typer.Option([], "--set", help=SET_HELP),
    monitor: Path = typer.Option(
        None,
        "--monitor",
        help="monitor-only: serve the real SIDs this file names (SAPControl; docs/monitor.md), "
        "no model at all; the model's options do not apply",
    ),
) -> None:
    """Serve /metrics from the real-time model (faults switchable via /control/faults with
    the bearer token of WLMON_EXPORTER_TOKEN, else of <state>/secrets/exporter-token),
    or with --monitor from real SIDs only."""

    if monitor is not None:
        model_only = {
            "--fault": fault,
            "--sid": sid,
            "--users": users,
            "--sapstartsrv-port": sapstartsrv_port,
            "--collector": collector,
            "--no-collector": no_collector,
            "--landscape": landscape,
            "--set": setting,
            "--state-file": state_file,
        }
        given = [name for name, value in model_only.items() if value]
        if given:
            fail(f"{given[0]}: a --monitor exporter runs no model; drop {given[0]}")
        _serve_monitor(monitor, host, port)
        return
    if engine not in ENGINES:
        fail(f"--engine: {engine!r} is not one of {', '.join(ENGINES)}")
    config = _config(sapstartsrv_port, collector, no_collector)
    overrides: dict = {"think_time_s": think_time} if think_time is not None else {}
    if users is not None:
        if not 1 <= users <= DEFAULT_MAX_USERS:
            fail(f"--users: {users} is not from 1 to {DEFAULT_MAX_USERS}")
        overrides["users"] = users
    if sid is not None:
        if not SID.fullmatch(sid):
            fail(f"--sid: {sid!r} is not a SAP system ID (three characters: A-Z, then A-Z or 0-9)")
        overrides["landscape"] = {"sid": sid}
    if think_time is not None and think_time < 0:
        fail(f"--think-time: {think_time:g} s is negative")
    try:
        sim = make_simulation(
            engine,
            scenario,
            faults=fault,
            seed=seed,
            overrides=overrides or None,
            catalog=open_catalog(data_dir),
            landscape=landscape,
            settings=setting,
        )
    except (ConfigError, ValueError) as exc:  # a model refusing too (the DES, a placement)
        fail(str(exc))
    try:
        # Read at the edge: the model's sapstartsrv colours its CCMS nodes by these.
        thresholds = load_thresholds()
    except ThresholdsError as exc:
        fail(str(exc))
    logs_password = _password_from_file(
        logs_password, logs_password_file, "WLMON_LOGS_PASSWORD", "--logs-password-file"
    )
    if influx_password_file is not None:
        if not influx_username:
            fail("--influx-password-file: give --influx-username (WLMON_INFLUX_USERNAME) too")
        password = _password_from_file(
            influx_token, influx_password_file, "WLMON_INFLUX_TOKEN", "--influx-password-file"
        )
        influx_token = f"{influx_username}:{password}"
    logs_access = _logs_access(
        logs_ca_file, logs_username, logs_password, logs_cert_file, logs_key_file
    )
    token, token_source = _control_token(config)
    err.print(f"control writes: token from {token_source}")
    try:
        serve(
            sim,
            host=host,
            port=port,
            speed=speed,
            console=err,
            control_token=token,
            logs_url=logs_url,
            influx_url=influx_url,
            trace_interval_s=trace_interval,
            state_file=state_file,
            influx_token=influx_token,
            config=config,
            thresholds=thresholds,
            logs_access=logs_access,
            logs_push_path=logs_push_path,
        )
    except OSError as exc:
        fail(f"exporter: cannot listen on {host}:{port}: {exc.strerror or exc}")


def _serve_monitor(path: Path, host: str, port: int) -> None:
    """The monitor-only exporter (exporters.monitor) until SIGTERM or Ctrl-C."""
    try:
        sids = load_monitor_file(path)
    except MonitorFileError as exc:
        fail(str(exc))
    try:
        server = MonitorServer(sids, host=host, port=port)
    except OSError as exc:
        fail(f"exporter: cannot listen on {host}:{port}: {exc.strerror or exc}")
    server.warm()
    err.print(
        f"wlmon exporter (monitor-only): http://{host}:{server.port}/metrics "
        f"(SIDs {', '.join(s for s, _ in sids)}; no model)"
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    threading.Thread(target=lambda: (stop.wait(), server.httpd.shutdown()), daemon=True).start()
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()
        server.collector.close()


def _password_from_file(value: str, path: Path | None, variable: str, option: str) -> str:
    """A secret from its file (compose secrets under /run/secrets) or the variable; both
    given is a contradiction, refused; the file's last newline is not part of it."""
    if path is None:
        return value
    if value:
        fail(f"{option}: {variable} is set too; give one of them")
    try:
        text = path.read_text(encoding="utf-8").removesuffix("\n")
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"{option}: {path}: {exc.strerror if isinstance(exc, OSError) else exc}")
    if not text:
        fail(f"{option}: {path} is empty")
    return text


def _logs_access(
    ca: Path | None, user: str, password: str, cert: Path | None, key: Path | None
) -> LogStoreAccess | None:
    """Each file given readable (a typo fails here, not at the first push); a client
    certificate with its key; a password only with a user."""
    if password and not user:
        fail("WLMON_LOGS_PASSWORD: set, but --logs-username (WLMON_LOGS_USERNAME) is not")
    if (cert is None) != (key is None):
        fail("--logs-cert-file/--logs-key-file: give both (a client certificate and its key)")
    given = {"--logs-ca-file": ca, "--logs-cert-file": cert, "--logs-key-file": key}
    if not user and not any(given.values()):
        return None
    for option, path in given.items():
        if path is not None and not path.is_file():
            fail(f"{option}: {path} is not a readable file")
    access = LogStoreAccess(
        ca_file=ca, username=user, password=password, cert_file=cert, key_file=key
    )
    try:
        access.context()
    except (OSError, ssl.SSLError) as exc:
        fail(f"--logs-ca-file/--logs-cert-file/--logs-key-file: {exc}")
    return access


def _config(port: int | None, on: list[str], off: list[str]) -> ExporterConfig:
    """The exporter's one configuration: the environment, the flags over it."""
    names = [r.name for r in COLLECTORS]
    for option, given in (("--collector", on), ("--no-collector", off)):
        for name in given:
            if name not in names:
                fail(f"{option}: {name!r} is not one of {', '.join(names)}")
    both = set(on) & set(off)
    if both:
        fail(f"--collector and --no-collector both name {', '.join(sorted(both))}")
    _warn_deprecated_names()
    try:
        return load_config(port, {**dict.fromkeys(on, True), **dict.fromkeys(off, False)})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'settings'}: {e['msg']}" for e in exc.errors()
        )
        fail(f"exporter configuration ({exc.title}): {problems}")
    except ValueError as exc:
        fail(f"exporter configuration: {exc}")


def _warn_deprecated_names() -> None:
    for line in deprecated_names_in_use(os.environ):
        err.print(f"warning: {line}", soft_wrap=True)


def _control_token(config: ExporterConfig) -> tuple[str | None, str]:
    """The control token and where it came from: WLMON_EXPORTER_TOKEN, else the
    state's secret file that `wlmon up` writes (so an exporter started by hand takes the
    token the stack's API sends)."""
    given = config.exporter.control_token
    if given is not None:
        return given.get_secret_value(), "WLMON_EXPORTER_TOKEN"
    path = Stack().secret_file(EXPORTER_TOKEN_FILE)
    try:
        token = path.read_text().strip()
    except FileNotFoundError:
        token = ""
    except OSError as exc:
        fail(f"cannot read the exporter token {path}: {exc.strerror or exc}")
    if token:
        return token, str(path)
    return None, (
        f"nowhere: writes are refused (set WLMON_EXPORTER_TOKEN or create {path}, "
        "as `wlmon up` does)"
    )


@app.command()
def api(
    host: str = typer.Option("127.0.0.1", help="address to bind"),
    port: int = typer.Option(8000, help="port"),
    header_timeout: float = typer.Option(
        HEADER_TIMEOUT_S,
        min=0.1,
        envvar="WLMON_API_HEADER_TIMEOUT_S",
        help="close a connection whose request headers take longer (seconds; slowloris guard)",
    ),
) -> None:
    """Serve the wlmon API (FastAPI) with uvicorn."""
    # The app factory reads the thresholds and the settings again (the settings cached); a
    # wrong file or WLMON_API_* value is one line and exit 2 here rather than uvicorn's
    # traceback from inside the factory.
    thresholds()
    _warn_deprecated_names()
    try:
        get_settings()
    except ValidationError as exc:
        problems = "; ".join(
            f"{'WLMON_API_' + '_'.join(map(str, e['loc'])).upper() if e['loc'] else 'settings'}: "
            f"{e['msg']}"
            for e in exc.errors()
        )
        fail(f"API settings: {problems}")
    uvicorn.Server(server_config(host, port, header_timeout)).run()


@app.command("render-config")
def render_config(
    server: str = typer.Argument(..., help="alertmanager or perses"),
    out: str = typer.Option(..., "--out", help="directory to write the config into"),
    template_dir: str = typer.Option(None, help="template folder (default: provisioning/<server>)"),
    seen_as: str = typer.Option(
        None, help="perses: where the Perses container mounts --out (default: --out)"
    ),
) -> None:
    """Fill a config template from WLMON_* environment variables (docker-compose uses it)."""

    if server == "perses":
        _render_perses(Path(out), Path(seen_as) if seen_as else None)
        return
    if server != "alertmanager":
        fail(f"render-config: no template for {server!r} (known: alertmanager, perses)")
    src = Path(template_dir) if template_dir else REPO_DIR / "provisioning" / server
    try:
        path = render_alertmanager(src, dict(os.environ), Path(out))
    except TemplateError as exc:
        fail(str(exc))
    console.print(f"wrote {path}")


def _render_perses(out: Path, seen_as: Path | None) -> None:
    """Perses' config for the official image: its paths, the compose services' names."""
    env = os.environ
    password = env.get("WLMON_PERSES_ADMIN_PASSWORD", "")
    if not password:
        fail("render-config perses: set WLMON_PERSES_ADMIN_PASSWORD (Perses' admin user)")
    inputs = perses.PersesInputs(
        data_dir=Path("/perses"),
        plugins_archive=Path("/etc/perses/plugins-archive"),
        plugin_path=Path("/etc/perses/plugins"),
        dashboards_dir=Path("/etc/perses/dashboards"),
        prometheus_url=env.get("WLMON_PERSES_PROMETHEUS_URL", "http://prometheus:9090"),
        logs_url=env.get("WLMON_PERSES_LOGS_URL", "https://victorialogs:9428"),
        logs_user=LOGS_USER,
        logs_password_file=Path("/run/secrets/victorialogs_password"),
        logs_ca_file=Path("/run/secrets/victorialogs_ca"),
        admin_password=password,
        encryption_key_file=Path("/run/secrets/perses_encryption_key"),
        provisioning_interval=env.get("WLMON_PERSES_PROVISIONING_INTERVAL", "1m"),
    )
    path = perses.render(REPO_DIR, out, inputs, seen_as=seen_as)
    # The image runs Perses as its own user (nobody): it reads, never writes, these.
    for item in [out / "perses", *(out / "perses").rglob("*")]:
        item.chmod(0o755 if item.is_dir() else 0o644)
    console.print(f"wrote {path}")
