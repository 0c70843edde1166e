"""`wlmon up`, `down` and `status`: the native stack as processes on 127.0.0.1.

`up` renders the configs into the state directory, starts each service of services.yml in
order, waits for its health endpoint and records name, pid, start time and url in
run/services.json. `down` stops exactly those processes (a recorded pid that the system
has since given to another process is left alone), SIGTERM first, SIGKILL after a grace
period. Data directories stay across down/up.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import math
import os
import secrets
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from types import SimpleNamespace

import httpx
import psutil
from pydantic import SecretStr

from exporters.durations import parse_duration
from exporters.sinks.loki import LogStoreAccess
from wlmon.stack import logpipe, perses, pki, reload, render, stored
from wlmon.stack.components import COMPONENTS
from wlmon.stack.install import status
from wlmon.stack.services import Service, fill, read_table
from wlmon.stack.settings import StackSettings

LOCAL = "127.0.0.1"
START_LEEWAY_S = 30.0
INFLUX_DATABASE = "wlmon"
# Telegraf's own inputs (cpu, mem, swap, disk, diskio, net, system) yield 10 metrics per
# interval on the build container (`telegraf --test` without the prometheus input), a few
# dozen on a server with more disks and interfaces: 100 leaves room.
HOST_METRICS_PER_INTERVAL = 100
BUFFER_MARGIN = 1.5


class StackError(RuntimeError):
    """Something the user must fix; the message names the service."""


@dataclass
class Running:
    name: str
    pid: int
    url: str
    health_url: str
    executable: str
    log: str
    # With the pid, the start time names the process: pids are handed out again. 0 in a
    # record written before it was kept: then the executable alone is compared.
    started: float = 0.0
    # What it was started with (wlmon/stack/reload.py): `up` reloads it when this changes.
    fingerprint: str = ""


# The exporter's control token in the state's secrets; `wlmon exporter` reads it too.
EXPORTER_TOKEN_FILE = "exporter-token"
# The log store's CA and server certificate (wlmon/stack/pki.py), a folder of the secrets.
LOGS_TLS_DIR = "victorialogs-tls"
# The one user VictoriaLogs lets in (-httpAuth.username); its password is a secret file.
LOGS_USER = "wlmon-logs"
LOGS_PASSWORD_FILE = "victorialogs-password"
PERSES_PASSWORD_FILE = "perses-admin-password"
# Telegraf's secret store folder and InfluxDB's password in it, named as docker-compose's
# secret (provisioning/telegraf/telegraf.conf: @{secrets:influxdb_admin_password}).
TELEGRAF_SECRETS_DIR = "telegraf"
TELEGRAF_INFLUX_SECRET = "influxdb_admin_password"
PERSES_ENCRYPTION_KEY_FILE = "perses-encryption-key"
PERSES_ALERTMANAGER_PASSWORD_FILE = "perses-alertmanager-password"


class Stack:
    def __init__(self, settings: StackSettings | None = None) -> None:
        self.settings = settings or StackSettings()
        self.state = self.settings.state_dir
        self.config_dir = self.state / "config"
        self.data_dir = self.state / "data"
        self.log_dir = self.state / "logs"
        self.run_file = self.state / "run" / "services.json"
        # Where each setting came from (environment, kept in the state, default): `up` says.
        self.origins = stored.origins(self.settings, self.state)

    # ------------------------------------------------------------------ services
    def perses_password(self) -> tuple[str, str]:
        """Perses' admin password and a sentence saying where it comes from."""
        return self._secret(
            self.settings.perses_admin_password,
            "WLMON_PERSES_ADMIN_PASSWORD",
            PERSES_PASSWORD_FILE,
        )

    def perses_inputs(self) -> perses.PersesInputs:
        """What Perses' config is rendered from (wlmon/stack/perses.py)."""
        s = self.settings
        # 32 bytes, as Perses' AES-256 wants (token_urlsafe(24) is 32 characters).
        self._secret(None, "", PERSES_ENCRYPTION_KEY_FILE)
        return perses.PersesInputs(
            data_dir=self.data_dir / "perses",
            plugins_archive=COMPONENTS["perses"].directory / "plugins-archive",
            dashboards_dir=s.perses_dashboards_dir or s.repo_dir / "dashboards" / "perses",
            prometheus_url=f"http://{LOCAL}:{s.ports.prometheus}",
            logs_url=f"https://{LOCAL}:{s.ports.victorialogs}",
            logs_user=LOGS_USER,
            # Written now, so it exists before Perses reads it.
            logs_password_file=self.logs_password_file(),
            # The stack's own CA signed the log store's certificate (wlmon/stack/pki.py).
            logs_ca_file=self.logs_pki().ca,
            admin_password=self.perses_password()[0],
            encryption_key_file=self.secret_file(PERSES_ENCRYPTION_KEY_FILE),
            provisioning_interval=s.perses_provisioning_interval,
            alertmanager_url=f"http://{LOCAL}:{s.ports.alertmanager}",
            alertmanager_user=render.ALERTMANAGER_USER,
            alertmanager_password_file=self.perses_alertmanager_password_file(),
        )

    def perses_alertmanager_password_file(self) -> Path:
        """Perses' proxy reads Alertmanager's password from this 0600 file (its secret's
        passwordFile), so the password is in no resource Perses stores or serves."""
        path = self.secret_file(PERSES_ALERTMANAGER_PASSWORD_FILE)
        _keep_secret(path, self.alertmanager_auth()[1])
        return path

    def notification_receivers(self) -> list[str]:
        """Who is told besides the API's webhook (e-mail, chat, pager, the dead man's
        switch), as the rendering configures Alertmanager; no secret in the words."""
        values = render.alertmanager_values(self.settings, self.config_dir, "-", "-")
        return render.configured_receivers(values)

    def api_token(self) -> str:
        """The token the API requires on writes (Alertmanager's webhook sends it)."""
        return self._secret(self.settings.api_token, "WLMON_API_TOKEN", "api-token")[0]

    def exporter_token(self) -> str:
        """The token the exporter requires on control writes (the API's runs send it)."""
        return self._secret(
            self.settings.exporter_token, "WLMON_EXPORTER_TOKEN", EXPORTER_TOKEN_FILE
        )[0]

    def sapstartsrv_password(self) -> str:
        """The password of the model's sapstartsrv for its monitoring user (the exporter's
        sapcontrol source logs in with it, as it would to a real system's)."""
        return self._secret(
            self.settings.sapstartsrv_password, "WLMON_SAPSTARTSRV_PASSWORD", "sapstartsrv-password"
        )[0]

    def alertmanager_auth(self) -> tuple[str, str]:
        """The user and password Alertmanager asks of every request (basic auth)."""
        return render.ALERTMANAGER_USER, self._alertmanager_password()[0]

    def _alertmanager_password(self) -> tuple[str, str]:
        return self._secret(
            self.settings.alertmanager_password,
            "WLMON_ALERTMANAGER_PASSWORD",
            render.ALERTMANAGER_PASSWORD_FILE,
        )

    def influx_credentials(self) -> tuple[str, str, str]:
        """InfluxDB's admin user, password and where the password comes from."""
        password, source = self._secret(
            self.settings.influxdb_admin_password,
            "WLMON_INFLUXDB_ADMIN_PASSWORD",
            "influxdb-admin-password",
        )
        return self.settings.influxdb_admin_user, password, source

    def secret_sources(self) -> dict[str, str]:
        """Every secret the stack uses and where an operator finds it."""
        user, _, influx = self.influx_credentials()
        sources = {
            f"Perses admin password (user {perses.PERSES_ADMIN_USER})": self.perses_password()[1],
            "API token (WLMON_API_TOKEN for `wlmon run` and the webhook)": self._secret(
                self.settings.api_token, "WLMON_API_TOKEN", "api-token"
            )[1],
            f"InfluxDB admin password (user {user})": influx,
            "Exporter control token (WLMON_EXPORTER_TOKEN; the API sends it)": self._secret(
                self.settings.exporter_token, "WLMON_EXPORTER_TOKEN", EXPORTER_TOKEN_FILE
            )[1],
            f"The model's sapstartsrv (user {self.settings.sapstartsrv_username})": self._secret(
                self.settings.sapstartsrv_password,
                "WLMON_SAPSTARTSRV_PASSWORD",
                "sapstartsrv-password",
            )[1],
            f"Alertmanager basic auth (user {render.ALERTMANAGER_USER})": (
                self._alertmanager_password()[1]
            ),
            f"VictoriaLogs basic auth (user {LOGS_USER})": self._logs_password()[1],
            "VictoriaLogs TLS (CA and server certificate; wlmon stack logs-certs)": (
                f"made by `wlmon up` in {self.logs_pki().directory} (keys mode 600)"
            ),
        }
        if not self.settings.model:  # no twin: no model's sapstartsrv to log in to
            sources = {k: v for k, v in sources.items() if "model's sapstartsrv" not in k}
        return sources

    def logs_pki(self) -> pki.LogStorePKI:
        """Where the log store's certificates are (`up` makes them: ensure_logs_pki)."""
        return pki.LogStorePKI(self.secret_file(LOGS_TLS_DIR))

    def ensure_logs_pki(self) -> list[str]:
        """The log store's CA and certificate, kept when still good; the names issued now."""
        try:
            return pki.ensure(self.secret_file(LOGS_TLS_DIR))[1]
        except pki.PKIError as exc:
            raise StackError(str(exc)) from exc

    def _logs_password(self) -> tuple[str, str]:
        return self._secret(
            self.settings.victorialogs_password, "WLMON_VICTORIALOGS_PASSWORD", LOGS_PASSWORD_FILE
        )

    def logs_password_file(self) -> Path:
        """VictoriaLogs reads its password from this 0600 file (-httpAuth.password=file://),
        so it is on no command line: the secret itself, or a copy of the one given."""
        path = self.secret_file(LOGS_PASSWORD_FILE)
        _keep_secret(path, self._logs_password()[0])
        return path

    def telegraf_secrets_dir(self) -> Path:
        """The folder Telegraf's secret store reads (its `docker` store, which reads compose's
        /run/secrets there): only InfluxDB's password, under compose's secret name, so the
        one telegraf.conf serves both and the password is in no process's environment."""
        folder = self.secret_file(TELEGRAF_SECRETS_DIR)
        _keep_secret(folder / TELEGRAF_INFLUX_SECRET, self.influx_credentials()[1])
        return folder

    def logs_secret_files(self) -> dict[str, Path]:
        """docker-compose's victorialogs_* secret names -> the state's files (CA, server
        certificate and key, password), for the configs that name /run/secrets/..."""
        return self.logs_pki().compose_secrets() | {
            "victorialogs_password": self.logs_password_file()
        }

    def logs_url(self) -> str:
        """The log store (VictoriaLogs) serves HTTPS only, with basic auth."""
        return f"https://{LOCAL}:{self.settings.ports.victorialogs}"

    def logs_access(self) -> LogStoreAccess:
        """What every client of the stack's log store shows it: trust in its CA, basic auth."""
        return LogStoreAccess(
            ca_file=self.logs_pki().ca, username=LOGS_USER, password=self._logs_password()[0]
        )

    def logs_client(self, timeout_s: float = 30.0) -> httpx.Client:
        """An HTTP client for this stack's log store (LogsQL by hand, tests), base URL set."""
        return self.logs_access().client(base_url=self.logs_url(), timeout=timeout_s)

    def telegraf_buffer(self) -> int:
        """metric_buffer_limit holding settings.telegraf_outage_s of everything Telegraf
        ships: the exporter's series every scrape and the host counters every interval."""
        s = self.settings
        outage = s.telegraf_outage_s
        scrapes = math.ceil(outage / parse_duration(s.scrape_interval))
        intervals = math.ceil(outage / parse_duration(s.telegraf_interval))
        need = scrapes * s.exporter_series + intervals * HOST_METRICS_PER_INTERVAL
        return math.ceil(need * BUFFER_MARGIN)

    def private_dirs(self) -> None:
        """The state and its secrets, mode 700 (older versions made them 755): the files in
        them are 600, but a listing told which secrets and runs there are (issue 38)."""
        for d in (self.state, self.state / "secrets"):
            d.mkdir(parents=True, exist_ok=True)
            d.chmod(0o700)

    def secret_file(self, filename: str) -> Path:
        """Where the secret `filename` is kept (generated there on the stack's first start)."""
        return self.state / "secrets" / filename

    def _secret(self, given: SecretStr | None, variable: str, filename: str) -> tuple[str, str]:
        path = self.secret_file(filename)
        if given is not None:
            origin = self.origins.get(filename.replace("-", "_"))
            if origin is stored.Origin.state and path.is_file():
                return given.get_secret_value(), f"kept in {path} (mode 600)"
            return given.get_secret_value(), f"environment variable {variable}"
        self.private_dirs()
        if not path.is_file():
            _private_dir(path.parent)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as fh:
                fh.write(secrets.token_urlsafe(24))
        return path.read_text().strip(), f"generated on first start, stored in {path} (mode 600)"

    def services(self) -> list[Service]:
        """services.yml filled from the settings, in start order."""
        s, p = self.settings, self.settings.ports
        influx_user, influx_password, _ = self.influx_credentials()
        token = f"{influx_user}:{influx_password}"
        values = {
            "local": LOCAL,
            "ports": p,
            "http": SimpleNamespace(**{name: f"http://{LOCAL}:{port}" for name, port in p}),
            # Where operators' browsers reach each server (WLMON_EXTERNAL_HOST): the links
            # Prometheus and Alertmanager put in alerts and pages.
            "external": SimpleNamespace(**{name: render.external_url(s, port) for name, port in p}),
            "settings": s,
            "config": self.config_dir,
            "data": self.data_dir,
            "logs": self.log_dir,
            "repo": s.repo_dir,
            "python": sys.executable,
            "api_token": self.api_token(),
            "exporter_token": self.exporter_token(),
            "sapstartsrv_password": self.sapstartsrv_password(),
            "alertmanager_auth": SimpleNamespace(
                user=render.ALERTMANAGER_USER, password=self.alertmanager_auth()[1]
            ),
            "influx": SimpleNamespace(user=influx_user, password=influx_password, token=token),
            "telegraf_buffer": self.telegraf_buffer(),
            "telegraf_secrets": self.telegraf_secrets_dir(),
            "rules_for": SimpleNamespace(
                grace=render.scale_duration(s.rules_for_grace_period, s.rules_time_scale),
                tolerance=render.scale_duration(s.rules_for_outage_tolerance, s.rules_time_scale),
            ),
            "logs_url": self.logs_url(),
            "logs_tls": _pki_values(self.logs_pki()),
            "logs_auth": SimpleNamespace(
                user=LOGS_USER,
                password=self._logs_password()[0],
                password_file=self.secret_file(LOGS_PASSWORD_FILE),
            ),
            "alertmanager_cluster": f"{LOCAL}:{p.alertmanager_cluster}"
            if p.alertmanager_cluster
            else "",
        }
        hooks = {
            "create_influx_database": functools.partial(
                _prepare_influxdb,
                user=influx_user,
                password=influx_password,
                retention=s.influxdb_retention,
            ),
            "perses_admin_signs_in": functools.partial(
                perses_admin_signs_in, password=self.perses_password()[0]
            ),
        }
        return fill(read_table(), values, p, hooks)

    def select(self, only: list[str] | None = None) -> list[Service]:
        """The services named in `only` (all when it is empty), in start order."""
        services = self.services()
        unknown = set(only or ()) - {s.name for s in services}
        if unknown:
            raise StackError(f"unknown service(s) {', '.join(sorted(unknown))}")
        return [s for s in services if not only or s.name in only]

    def components(self, only: list[str] | None = None) -> list[str]:
        """The built servers those services run: what `up` needs installed."""
        services = self.select(only)
        names = [n for s in services for n in ([s.component] if s.component else []) + s.uses]
        return list(dict.fromkeys(names))

    def render(self) -> None:
        password = self.alertmanager_auth()[1]
        self.ensure_logs_pki()
        secrets_paths = self.logs_secret_files()
        render.render_prometheus(self.settings, self.config_dir, password, secrets_paths)
        render.render_alertmanager(
            self.settings.repo_dir / "provisioning" / "alertmanager",
            render.alertmanager_values(self.settings, self.config_dir, self.api_token(), password),
            self.config_dir / "alertmanager",
        )
        for server in ("influxdb", "telegraf"):
            render.copy_tree(self.settings, server, self.config_dir)
        perses.render(self.settings.repo_dir, self.config_dir, self.perses_inputs())

    # ------------------------------------------------------------------ lifecycle
    def recorded(self) -> list[Running]:
        if not self.run_file.is_file():
            return []
        return [Running(**r) for r in json.loads(self.run_file.read_text())]

    def _record(self, running: list[Running]) -> None:
        self.run_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.run_file.with_suffix(".tmp")
        tmp.write_text(json.dumps([asdict(r) for r in running], indent=2))
        tmp.replace(self.run_file)

    def up(
        self, only: list[str] | None = None, on_event: Callable[[str], None] = lambda _: None
    ) -> list[Running]:
        services = self.select(only)
        already = {r.name: r for r in self.recorded() if _alive(r)}
        to_start = [s for s in services if s.name not in already]
        for svc in to_start:
            if not Path(svc.argv[0]).is_file():
                raise StackError(
                    f"{svc.name}: {svc.argv[0]} is not installed; run `wlmon stack install`"
                )
            for used in svc.uses:
                if not status(COMPONENTS[used]).installed:
                    raise StackError(
                        f"{svc.name}: needs {used}, which is not installed; "
                        "run `wlmon stack install`"
                    )
            if not _port_free(svc.port):
                raise StackError(f"{svc.name}: port {svc.port} on 127.0.0.1 is already in use")
        try:
            self.render()
        except ValueError as exc:  # a rule duration or template variable to fix first
            raise StackError(f"rendering the configs: {exc}") from exc
        for svc in to_start:
            for d in svc.dirs:
                Path(d).mkdir(parents=True, exist_ok=True)
        running = list(already.values())
        try:
            for svc in services:
                if svc.name in already:
                    self._refresh(svc, running, on_event)
            for svc in to_start:
                on_event(f"starting {svc.name}")
                running.append(self._start(svc))
                self._record(running)
                on_event(f"{svc.name} healthy at {svc.url}")
            self.verify({r.name for r in running} & {s.name for s in services})
            on_event("the running Alertmanager and Prometheus hold the rendered configuration")
        except Exception:
            self._record(running)
            raise
        return running

    def _fingerprint(self, svc: Service) -> str:
        return reload.fingerprint(svc.argv, svc.env, self.config_dir / svc.name)

    def _refresh(
        self, svc: Service, running: list[Running], on_event: Callable[[str], None]
    ) -> None:
        """A running service whose rendered configuration changed: reloaded (Alertmanager,
        Prometheus) or restarted (the rest read theirs only at start)."""
        index = next(i for i, r in enumerate(running) if r.name == svc.name)
        old = running[index]
        now = self._fingerprint(svc)
        if old.fingerprint == now:
            return
        if not old.fingerprint and svc.name not in reload.RELOADABLE:
            # Started by a wlmon that kept no fingerprint: what it runs is not known to
            # differ; adopted as it is (`wlmon down` and `up` restart it for certain).
            running[index].fingerprint = now
            self._record(running)
            return
        try:
            if svc.name == "alertmanager":
                on_event("alertmanager: configuration changed, reloading (POST /-/reload)")
                reload.reload_alertmanager(svc.url, self.alertmanager_auth())
            elif svc.name == "prometheus":
                on_event("prometheus: configuration changed, reloading (SIGHUP)")
                reload.reload_prometheus(old.pid, svc.url)
            else:
                on_event(f"{svc.name}: configuration changed, restarting")
                proc = _alive(old)
                if proc:
                    _terminate(proc)
                running[index] = self._start(svc)
                running[index].fingerprint = now
                self._record(running)
                return
        except (reload.ReloadError, httpx.HTTPError, psutil.Error) as exc:
            raise StackError(f"{svc.name}: reloading its changed configuration: {exc}") from exc
        running[index].fingerprint = now
        self._record(running)

    def verify(self, names: set[str]) -> None:
        """The running Alertmanager and Prometheus hold what was rendered, or a StackError."""
        p = self.settings.ports
        try:
            if "alertmanager" in names:
                reload.verify_alertmanager(
                    f"http://{LOCAL}:{p.alertmanager}",
                    self.alertmanager_auth(),
                    self.config_dir / "alertmanager" / "alertmanager.yml",
                )
            if "prometheus" in names:
                reload.verify_prometheus(
                    f"http://{LOCAL}:{p.prometheus}",
                    self.config_dir / "prometheus" / "prometheus.yml",
                )
        except (reload.ReloadError, httpx.HTTPError) as exc:
            raise StackError(str(exc)) from exc

    def _start(self, svc: Service) -> Running:
        log_path = self.log_dir / f"{svc.name}.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        offset = log_path.stat().st_size if log_path.exists() else 0
        try:
            return self._start_once(svc, log_path)
        except StackError:
            # A known race at a server's first start (services.yml's retry_on): the
            # second start works.
            if svc.retry_on is None or svc.retry_on not in _read_from(log_path, offset):
                raise
        return self._start_once(svc, log_path)

    def _start_once(self, svc: Service, log_path: Path) -> Running:
        # A service's sapcontrol settings are its own (services.yml, a fleet entry's file):
        # none inherited from the shell that ran `wlmon up`, where they would make every
        # exporter read the same real system.
        inherited = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("WLMON_SAPCONTROL_") and k != "WLMON_EXPORTER_COLLECTOR_SAPCONTROL"
        }
        env = {**inherited, **svc.env}
        # The server's output goes through a pipe to a writer that rotates the log by size
        # (wlmon/stack/logpipe.py); the writer ends when the server does.
        writer = _log_writer(log_path)
        _widen(writer.stdin)
        try:
            # A session of its own: a Ctrl-C in the terminal that ran `wlmon up` (or a
            # test run) does not reach the servers. restore_signals=False: the server
            # starts with SIGPIPE ignored, as Python runs, so a writer that died costs the
            # server its log lines (EPIPE), not its life: a Go server writing to a broken
            # stderr otherwise dies of SIGPIPE (Go's runtime spares one started with it
            # ignored).
            proc = subprocess.Popen(
                svc.argv,
                stdout=writer.stdin,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=svc.cwd or self.state,
                start_new_session=True,
                restore_signals=False,
            )
        finally:
            writer.stdin.close()  # the server holds the only write end now
        try:
            started = psutil.Process(proc.pid).create_time()
            _wait_healthy(svc, proc, log_path, writer)
            if svc.after_start:
                svc.after_start(svc)
        except BaseException:
            # Not yet recorded, so nothing else would ever stop it (also on Ctrl-C).
            if proc.poll() is None:
                _terminate(psutil.Process(proc.pid))
            raise
        return Running(
            svc.name,
            proc.pid,
            svc.url,
            svc.health_url,
            svc.argv[0],
            str(log_path),
            started,
            self._fingerprint(svc),
        )

    def down(self, on_event: Callable[[str], None] = lambda _: None) -> list[str]:
        stopped = []
        for r in reversed(self.recorded()):
            proc = _alive(r)
            if proc:
                on_event(f"stopping {r.name} (pid {r.pid})")
                _terminate(proc)
                stopped.append(r.name)
        if self.run_file.exists():
            self.run_file.unlink()
        return stopped

    def stop_service(self, name: str) -> bool:
        """Stop one service (an outage test, a restart); `up` starts it again."""
        running = self.recorded()
        target = next((r for r in running if r.name == name), None)
        if target is None:
            raise StackError(f"{name}: not started by wlmon up")
        proc = _alive(target)
        if proc:
            _terminate(proc)
        self._record([r for r in running if r.name != name])
        return proc is not None

    def status(self) -> list[dict]:
        rows = []
        recorded = self.recorded()
        # The credentials are not in the record (a file of pids, not of secrets): looked up
        # by name in the services as they are now (only when something runs: reading the
        # services generates missing secrets).
        services = {s.name: s for s in self.services()} if recorded else {}
        for r in recorded:
            alive = _alive(r) is not None
            rows.append(
                {
                    "name": r.name,
                    "pid": r.pid,
                    "url": r.url,
                    "healthy": bool(alive and _healthy_service(r, services.get(r.name))),
                }
            )
        return rows


def _keep_secret(path: Path, value: str) -> None:
    """`value` in `path`, mode 600 in a 700 folder; rewritten only when it changed."""
    if path.is_file() and path.read_text().strip() == value:
        return
    _private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(value)
    os.chmod(path, 0o600)


def _private_dir(directory: Path) -> None:
    """The secrets' directory, mode 700 (its files are 600): no other user lists it either."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(directory, 0o700)


def _influx_query(svc: Service, text: str, auth: tuple[str, str] | None) -> httpx.Response:
    try:
        return httpx.post(f"{svc.url}/query", data={"q": text}, auth=auth, timeout=10)
    except httpx.HTTPError as exc:
        raise StackError(f"influxdb: {text.split(' WITH PASSWORD')[0]} failed: {exc}") from exc


def _influx_error(r: httpx.Response) -> str | None:
    """InfluxDB answers 200 with the error inside when a statement fails."""
    if r.status_code != 200:
        return f"answered {r.status_code}: {r.text.strip()}"
    errors = [res["error"] for res in r.json().get("results", []) if "error" in res]
    return "; ".join(errors) or None


def _influx_ident(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _influx_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _prepare_influxdb(svc: Service, *, user: str, password: str, retention: str) -> None:
    """The admin user, the database and its retention policy, on every start (idempotent).

    With auth on and no user yet, InfluxDB 1.8 accepts exactly one unauthenticated
    statement: creating the first admin. Everything after runs as that admin.
    """
    auth = (user, password)
    # 403 "create admin user first" while there is none; 401 when the login is refused.
    if _influx_query(svc, "SHOW DATABASES", auth).status_code in (401, 403):
        created = _influx_query(
            svc,
            f"CREATE USER {_influx_ident(user)} WITH PASSWORD {_influx_string(password)}"
            " WITH ALL PRIVILEGES",
            None,
        )
        if _influx_error(created):
            raise StackError(
                f"influxdb: user {user!r} cannot log in and the database already has users "
                f"({_influx_error(created)}); set WLMON_INFLUXDB_ADMIN_PASSWORD to that "
                "user's password (or WLMON_INFLUXDB_ADMIN_USER to the admin you have)"
            )
    seconds = parse_duration(retention)
    if seconds < 3600:
        raise StackError(f"influxdb: WLMON_INFLUXDB_RETENTION={retention}: at least 1h")
    # InfluxDB drops whole shards: a day per shard for long policies, an hour for short.
    shard = "1d" if seconds >= 2 * 86_400 else "1h"
    for statement in (
        f"CREATE DATABASE {INFLUX_DATABASE}",
        f'ALTER RETENTION POLICY "autogen" ON {INFLUX_DATABASE} '
        f"DURATION {math.ceil(seconds / 3600)}h SHARD DURATION {shard} DEFAULT",
    ):
        error = _influx_error(_influx_query(svc, statement, auth))
        if error:
            raise StackError(f"influxdb: {statement} {error}")


def perses_admin_signs_in(svc: Service, *, password: str) -> None:
    """Perses answers its health check before its first provisioning pass has stored the
    admin user (it runs beside the server's start): on a busy machine a sign-in right after
    `up` was refused (400). `up` returns once the admin can sign in, as the NOC will."""
    deadline = time.monotonic() + svc.ready_timeout
    login = f"{svc.url}/api/auth/providers/native/login"
    answer = "no answer"
    while time.monotonic() < deadline:
        try:
            r = httpx.post(
                login, json={"login": perses.PERSES_ADMIN_USER, "password": password}, timeout=5
            )
        except httpx.HTTPError as exc:
            answer = type(exc).__name__
        else:
            if r.status_code == 200:
                return
            answer = f"{r.status_code} {r.text.strip()[:120]}"
        time.sleep(0.5)
    raise StackError(
        f"{svc.name}: user {perses.PERSES_ADMIN_USER!r} cannot sign in "
        f"{svc.ready_timeout:.0f} s after the start (last answer: {answer}); the password is "
        "WLMON_PERSES_ADMIN_PASSWORD or the state's secrets/perses-admin-password"
    )


_LOG_LIMITS = (str(logpipe.MAX_BYTES), str(logpipe.KEEP))


def _log_writer(log_path: Path) -> subprocess.Popen:
    """The rotating writer of one service's log, reading its output from a pipe."""
    return subprocess.Popen(
        [sys.executable, "-m", "wlmon.stack.logpipe", str(log_path), *_LOG_LIMITS],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


# The pipe's buffer (Linux: 64 KiB by default, up to /proc/sys/fs/pipe-max-size, 1 MiB by
# default): a burst of log lines waits there while the writer is slow (a busy machine) instead
# of blocking the server's logging.
PIPE_BYTES = 1024 * 1024


def _widen(pipe) -> None:
    with contextlib.suppress(OSError, AttributeError):  # not Linux, or a lower limit
        fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)


def _wait_healthy(
    svc: Service, proc: subprocess.Popen, log_path: Path, writer: subprocess.Popen
) -> None:
    deadline = time.monotonic() + svc.ready_timeout
    _ca_loads(svc)
    while not _healthy(svc.health_url, svc.health_auth, svc.health_ca):
        if proc.poll() is not None:
            # Its last lines may still be in the pipe: let the writer finish them.
            with contextlib.suppress(subprocess.TimeoutExpired):
                writer.wait(timeout=5)
            raise StackError(
                f"{svc.name}: exited with code {proc.returncode} during start; "
                f"last lines of {log_path}:\n{_tail(log_path)}"
            )
        if time.monotonic() > deadline:
            raise StackError(
                f"{svc.name}: not healthy at {svc.health_url} after "
                f"{svc.ready_timeout:.0f} s; last lines of {log_path}:\n{_tail(log_path)}"
            )
        time.sleep(0.25)


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _healthy(url: str, auth: tuple[str, str] | None = None, ca: Path | None = None) -> bool:
    """200 or 204 from the health endpoint; False also when the CA it is checked by cannot be
    loaded (`wlmon status` of a stack whose certificates were deleted)."""
    try:
        verify = ssl.create_default_context(cafile=str(ca)) if ca is not None else True
        return httpx.get(url, auth=auth, verify=verify, timeout=2.0).status_code in (200, 204)
    except (httpx.HTTPError, OSError, ValueError):  # ssl.SSLError is an OSError
        return False


def _ca_loads(svc: Service) -> None:
    """A health check that can never pass (a CA file gone) fails now, naming it."""
    if svc.health_ca is None:
        return
    try:
        ssl.create_default_context(cafile=str(svc.health_ca))
    except (OSError, ValueError) as exc:
        raise StackError(
            f"{svc.name}: the CA for {svc.health_url} cannot be loaded ({svc.health_ca}): {exc}"
        ) from exc


def _healthy_service(r: Running, svc: Service | None) -> bool:
    if svc is None:
        return _healthy(r.health_url)
    return _healthy(r.health_url, svc.health_auth, svc.health_ca)


def _pki_values(store: pki.LogStorePKI) -> SimpleNamespace:
    """{logs_tls.ca}, {logs_tls.server.cert}, {logs_tls.server.key} for services.yml."""
    server = SimpleNamespace(cert=str(store.cert("server")), key=str(store.key("server")))
    return SimpleNamespace(ca=str(store.ca), server=server)


def _alive(r: Running) -> psutil.Process | None:
    """The process `up` started, if it still runs (never another one given the same pid)."""
    try:
        proc = psutil.Process(r.pid)
        # A start time is the boot time plus ticks, and the boot time moves when the clock
        # is set (NTP): half a minute of leeway, far less than pids take to come round.
        same = proc.cmdline()[:1] == [r.executable] and (
            not r.started or abs(proc.create_time() - r.started) < START_LEEWAY_S
        )
    except psutil.Error:  # gone, a zombie, or not ours to look at
        return None
    return proc if same else None


def _terminate(proc: psutil.Process, grace: float = 15.0) -> None:
    """SIGTERM to the service and what it started, SIGKILL to what outlives the grace."""
    try:
        group = [proc, *proc.children(recursive=True)]
    except psutil.NoSuchProcess:
        return
    for p in group:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.terminate()
    # wait_procs also reaps our own children, which would otherwise linger as zombies.
    _, left = psutil.wait_procs(group, timeout=grace)
    for p in left:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.kill()
    psutil.wait_procs(left, timeout=5)


def _read_from(path: Path, offset: int) -> str:
    try:
        with path.open("rb") as fh:
            fh.seek(offset)
            return fh.read().decode(errors="replace")
    except OSError:
        return ""


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"
