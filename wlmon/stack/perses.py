"""Perses' configuration and the resources it provisions at start (native stack and compose).

Perses reads one YAML config (docs/configuration/configuration.md upstream) and, every
`provisioning.interval`, every resource file of the folders it names: here the rendered
folder (the project, the admin role and user, the two global datasources) and the
repository's dashboards/perses/. Provisioning overrides what the database holds, so a
dashboard edited in the UI returns to its code at the next pass: the dashboards are code.

Authentication is Perses' own (security.enable_auth, native provider): one user `admin`
whose password is a secret of the stack's state; sign-up is off, so nobody else gets an
account, and without a session every API call but /api/v1/health answers 401. The
datasources' credentials (VictoriaLogs' basic auth) stay on the server: the browser queries
through Perses' proxy (/proxy/globaldatasources/NAME/...), which adds them.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import yaml

PERSES_ADMIN_USER = "admin"
PROJECT = "wlmon"
# The NOC overview: `wlmon up` prints its URL as the home page.
HOME_DASHBOARD = "noc"
PROMETHEUS_DATASOURCE = "prometheus"
LOGS_DATASOURCE = "logs"
# wlmon's UI reads Alertmanager's alerts (active, inhibited, silenced) on its /alerts page
# through this datasource's proxy, so the browser never holds Alertmanager's password.
ALERTS_DATASOURCE = "alertmanager"
# Read only: the page lists; silences are made in Alertmanager's own UI or amtool, never
# through a proxy any signed-in viewer can reach.
ALERTS_ENDPOINTS = ("/api/v2/alerts", "/api/v2/status")


@dataclass(frozen=True)
class PersesInputs:
    data_dir: Path  # its database (files) and the extracted plugins
    plugins_archive: Path  # the built component's plugins-archive/
    dashboards_dir: Path  # dashboards/perses/ of the repository (or a test fixture)
    prometheus_url: str  # Prometheus, or Thanos query in the fleet profile
    logs_url: str  # VictoriaLogs (HTTPS)
    logs_user: str
    logs_password_file: Path
    logs_ca_file: Path | None
    admin_password: str
    encryption_key_file: Path  # 32 bytes: Perses encrypts stored secrets with it
    provisioning_interval: str = "1m"
    # Alertmanager (basic auth) for the UI's alerts page; None: no such datasource.
    alertmanager_url: str | None = None
    alertmanager_user: str = ""
    alertmanager_password_file: Path | None = None
    # Where the plugins are extracted (default: data_dir/plugins); the official image
    # ships them extracted in /etc/perses/plugins.
    plugin_path: Path | None = None


def dashboard_path(name: str = HOME_DASHBOARD, project: str = PROJECT) -> str:
    """The UI's path of a dashboard (the same as upstream Perses' UI)."""
    return f"/projects/{project}/dashboards/{name}"


def config(inputs: PersesInputs, provisioning_dir: Path, check_dirs: bool = True) -> dict:
    folders = [str(provisioning_dir)]
    if not check_dirs or inputs.dashboards_dir.is_dir():
        folders.append(str(inputs.dashboards_dir))
    return {
        "security": {
            "enable_auth": True,
            "encryption_key_file": str(inputs.encryption_key_file),
            # Strict: the session cookie never rides along a request from another site.
            "cookie": {"same_site": "strict", "secure": False},
            "authentication": {
                "disable_sign_up": True,
                "providers": {"enable_native": True},
            },
            "authorization": {"provider": {"native": {"enable": True}}},
        },
        "database": {"file": {"folder": str(inputs.data_dir / "db"), "extension": "json"}},
        "provisioning": {"interval": inputs.provisioning_interval, "folders": folders},
        "plugin": {
            "path": str(inputs.plugin_path or inputs.data_dir / "plugins"),
            "archive_paths": [str(inputs.plugins_archive)],
        },
    }


def _datasource(name: str, display: str, kind: str, proxy: dict, default: bool) -> dict:
    """A global datasource whose queries go through Perses' HTTP proxy (`proxy`: its spec)."""
    return {
        "kind": "GlobalDatasource",
        "metadata": {"name": name},
        "spec": {
            "default": default,
            "display": {"name": display},
            "plugin": {"kind": kind, "spec": {"proxy": {"kind": "HTTPProxy", "spec": proxy}}},
        },
    }


def _basic_auth(name: str, user: str, password_file: Path | None, tls: dict) -> dict:
    """The credentials the proxy adds (the password read from its file by Perses)."""
    auth = {"username": user, "passwordFile": str(password_file)}
    return {
        "kind": "GlobalSecret",
        "metadata": {"name": name},
        "spec": {"basicAuth": auth, **({"tlsConfig": tls} if tls else {})},
    }


def datasources(inputs: PersesInputs) -> list[dict]:
    tls: dict = {"caFile": str(inputs.logs_ca_file)} if inputs.logs_ca_file else {}
    return [
        _datasource(
            PROMETHEUS_DATASOURCE,
            "Prometheus",
            "PrometheusDatasource",
            {"url": inputs.prometheus_url},
            default=True,
        ),
        _basic_auth(LOGS_DATASOURCE, inputs.logs_user, inputs.logs_password_file, tls),
        _datasource(
            LOGS_DATASOURCE,
            "Logs (VictoriaLogs)",
            "VictoriaLogsDatasource",
            {"url": inputs.logs_url, "secret": LOGS_DATASOURCE},
            default=True,
        ),
    ]


def alerts_datasource(inputs: PersesInputs) -> list[dict]:
    """Alertmanager behind Perses' proxy. Perses proxies only for a datasource plugin it
    knows, and no Alertmanager plugin exists on npm: the Prometheus plugin's HTTP proxy
    carries it, never the default, its endpoints limited to GETs of the alerts API (the
    proxy answers 403 to anything else), so no dashboard query can land there."""
    if not inputs.alertmanager_url:
        return []
    allowed = [{"endpointPattern": f"^{path}$", "method": "GET"} for path in ALERTS_ENDPOINTS]
    return [
        _basic_auth(
            ALERTS_DATASOURCE, inputs.alertmanager_user, inputs.alertmanager_password_file, {}
        ),
        _datasource(
            ALERTS_DATASOURCE,
            "Alertmanager (the alerts page; not for queries)",
            "PrometheusDatasource",
            {
                "url": inputs.alertmanager_url,
                "secret": ALERTS_DATASOURCE,
                "allowedEndpoints": allowed,
            },
            default=False,
        ),
    ]


def admin_user(password: str) -> dict:
    # Perses hashes the password (bcrypt) before it stores the user.
    return {
        "kind": "User",
        "metadata": {"name": PERSES_ADMIN_USER},
        "spec": {"nativeProvider": {"password": password}},
    }


def render(
    repo_dir: Path, out_dir: Path, inputs: PersesInputs, seen_as: Path | None = None
) -> Path:
    """config.yaml and its provisioning folder under out_dir/perses; the config's path.
    `seen_as`: where the Perses process finds out_dir (docker-compose mounts it elsewhere)."""
    if not inputs.admin_password:
        raise ValueError("Perses: the admin password is empty")
    root = out_dir / "perses"
    prov = root / "provisioning"
    if prov.exists():
        shutil.rmtree(prov)
    prov.mkdir(parents=True, mode=0o700)
    prov.chmod(0o700)  # whatever the umask
    shutil.copy(repo_dir / "provisioning" / "perses" / "resources" / "wlmon.yaml", prov)
    resources = datasources(inputs) + alerts_datasource(inputs)
    _write(prov / "datasources.yaml", yaml.safe_dump(resources, sort_keys=False))
    # The password in clear until Perses hashes it: readable by the stack's user only.
    _write(prov / "admin-user.yaml", yaml.safe_dump(admin_user(inputs.admin_password)))
    path = root / "config.yaml"
    seen = prov if seen_as is None else seen_as / "perses" / "provisioning"
    _write(path, yaml.safe_dump(config(inputs, seen, check_dirs=seen_as is None), sort_keys=False))
    return path


def _write(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.chmod(path, 0o600)
