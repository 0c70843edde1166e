"""`wlmon up`, `down` and `status`: the native stack as processes on 127.0.0.1.

`up` renders the configs into the state directory, starts each service of services.yml in
order, waits for its health endpoint and records name, pid, start time and url in
run/services.json. `down` stops exactly those processes (a recorded pid that the system
has since given to another process is left alone), SIGTERM first, SIGKILL after a grace
period. Data directories stay across down/up.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
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

from wlmon.stack import render
from wlmon.stack.services import Service, fill, read_table
from wlmon.stack.settings import StackSettings

LOCAL = "127.0.0.1"
START_LEEWAY_S = 30.0


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


class Stack:
    def __init__(self, settings: StackSettings | None = None) -> None:
        self.settings = settings or StackSettings()
        self.state = self.settings.state_dir
        self.config_dir = self.state / "config"
        self.data_dir = self.state / "data"
        self.log_dir = self.state / "logs"
        self.run_file = self.state / "run" / "services.json"

    # ------------------------------------------------------------------ services
    def grafana_password(self) -> tuple[str, str]:
        """The admin password and a sentence saying where it comes from."""
        return self._secret(
            self.settings.grafana_admin_password,
            "WLMON_GRAFANA_ADMIN_PASSWORD",
            "grafana-admin-password",
        )

    def api_token(self) -> str:
        """The token the API requires on writes (Alertmanager's webhook sends it)."""
        return self._secret(self.settings.api_token, "WLMON_API_TOKEN", "api-token")[0]

    def exporter_token(self) -> str:
        """The token the exporter requires on control writes (the API's runs send it)."""
        return self._secret(self.settings.exporter_token, "WLMON_EXPORTER_TOKEN", "exporter-token")[
            0
        ]

    def _secret(self, given: SecretStr | None, variable: str, filename: str) -> tuple[str, str]:
        if given is not None:
            return given.get_secret_value(), f"environment variable {variable}"
        path = self.state / "secrets" / filename
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as fh:
                fh.write(secrets.token_urlsafe(24))
        return path.read_text().strip(), f"generated on first start, stored in {path} (mode 600)"

    def services(self) -> list[Service]:
        """services.yml filled from the settings, in start order."""
        s, p = self.settings, self.settings.ports
        values = {
            "local": LOCAL,
            "ports": p,
            "http": SimpleNamespace(**{name: f"http://{LOCAL}:{port}" for name, port in p}),
            "settings": s,
            "config": self.config_dir,
            "data": self.data_dir,
            "logs": self.log_dir,
            "repo": s.repo_dir,
            "python": sys.executable,
            "grafana_password": self.grafana_password()[0],
            "api_token": self.api_token(),
            "exporter_token": self.exporter_token(),
            "alertmanager_cluster": f"{LOCAL}:{p.alertmanager_cluster}"
            if p.alertmanager_cluster
            else "",
        }
        hooks = {"create_influx_database": _create_influx_database}
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
        return list(dict.fromkeys(s.component for s in self.select(only) if s.component))

    def render(self) -> None:
        render.render_prometheus(self.settings, self.config_dir)
        render.render_alertmanager(
            self.settings.repo_dir / "provisioning" / "alertmanager",
            render.alertmanager_values(self.settings, self.config_dir, self.api_token()),
            self.config_dir / "alertmanager",
        )
        for server in ("loki", "influxdb", "telegraf"):
            render.copy_tree(self.settings, server, self.config_dir)
        grafana = render.copy_tree(self.settings, "grafana", self.config_dir)
        # Grafana wants plugins/ and alerting/ beside the provisioning it is given.
        for sub in ("plugins", "alerting", "notifiers"):
            (grafana / sub).mkdir(exist_ok=True)

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
            for svc in to_start:
                on_event(f"starting {svc.name}")
                running.append(self._start(svc))
                self._record(running)
                on_event(f"{svc.name} healthy at {svc.url}")
        except Exception:
            self._record(running)
            raise
        return running

    def _start(self, svc: Service) -> Running:
        log_path = self.log_dir / f"{svc.name}.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, **svc.env}
        with log_path.open("ab") as log:
            # A session of its own: a Ctrl-C in the terminal that ran `wlmon up` (or a
            # test run) does not reach the servers.
            proc = subprocess.Popen(
                svc.argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=self.state,
                start_new_session=True,
            )
        try:
            started = psutil.Process(proc.pid).create_time()
            _wait_healthy(svc, proc, log_path)
            if svc.after_start:
                svc.after_start(svc)
        except BaseException:
            # Not yet recorded, so nothing else would ever stop it (also on Ctrl-C).
            if proc.poll() is None:
                _terminate(psutil.Process(proc.pid))
            raise
        return Running(
            svc.name, proc.pid, svc.url, svc.health_url, svc.argv[0], str(log_path), started
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
        for r in self.recorded():
            alive = _alive(r) is not None
            rows.append(
                {
                    "name": r.name,
                    "pid": r.pid,
                    "url": r.url,
                    "healthy": bool(alive and _healthy(r.health_url)),
                }
            )
        return rows


def _create_influx_database(svc: Service) -> None:
    try:
        r = httpx.post(f"{svc.url}/query", data={"q": "CREATE DATABASE wlmon"}, timeout=10)
    except httpx.HTTPError as exc:
        raise StackError(f"influxdb: CREATE DATABASE wlmon failed: {exc}") from exc
    if r.status_code != 200:
        raise StackError(f"influxdb: CREATE DATABASE wlmon answered {r.status_code}: {r.text}")


def _wait_healthy(svc: Service, proc: subprocess.Popen, log_path: Path) -> None:
    deadline = time.monotonic() + svc.ready_timeout
    while not _healthy(svc.health_url):
        if proc.poll() is not None:
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


def _healthy(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2.0).status_code in (200, 204)
    except httpx.HTTPError:
        return False


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


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"
