"""Stack pieces that need no server: rendering, port clashes, unknown services."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import psutil
import pytest
import yaml
from pydantic import SecretStr
from typer.testing import CliRunner

from api.config import Settings as ApiSettings
from exporters.durations import parse_duration
from tests.telegraf_secrets import telegraf_password_reference
from wlmon.cli import app
from wlmon.stack import render
from wlmon.stack.components import COMPONENTS
from wlmon.stack.fleet import DEFAULT_FLEET_FILE, FleetLayout, load_fleet
from wlmon.stack.pki import LogStorePKI
from wlmon.stack.runtime import Stack, StackError, _port_free, _prepare_influxdb
from wlmon.stack.services import Service, fill, read_table
from wlmon.stack.settings import REPO_DIR, Ports, StackSettings
from wlmon.stack.template import TemplateError, expand


def test_prometheus_config_is_rendered_for_loopback(tmp_path) -> None:
    settings = StackSettings(state_dir=tmp_path, ports=Ports(exporter=19300, alertmanager=19093))
    logs_tls = LogStorePKI(tmp_path / "victorialogs-tls")
    logs_password = tmp_path / "victorialogs-password"
    secret_files = logs_tls.compose_secrets() | {"victorialogs_password": logs_password}
    out = render.render_prometheus(settings, tmp_path, "am-secret", secret_files)
    doc = yaml.safe_load(out.read_text())
    targets = {j["job_name"]: j["static_configs"][0]["targets"] for j in doc["scrape_configs"]}
    assert targets["wlmon-exporter"] == ["127.0.0.1:19300"]
    (am,) = doc["alerting"]["alertmanagers"]
    assert am["static_configs"][0]["targets"] == ["127.0.0.1:19093"]
    # Alerts and the scrape of Alertmanager both log in, with the state's copy of the
    # password (docker-compose's /run/secrets path replaced), private to the user.
    (scrape,) = [j for j in doc["scrape_configs"] if j["job_name"] == "alertmanager"]
    password_file = tmp_path / "prometheus" / "alertmanager-password"
    for auth in (am["basic_auth"], scrape["basic_auth"]):
        assert auth == {"username": "wlmon", "password_file": str(password_file)}
    assert password_file.read_text() == "am-secret"
    assert password_file.stat().st_mode & 0o777 == 0o600
    # VictoriaLogs is scraped over HTTPS (its CA) with its own basic auth, the state's files.
    (logs,) = [j for j in doc["scrape_configs"] if j["job_name"] == "victorialogs"]
    assert logs["scheme"] == "https"
    assert logs["tls_config"] == {"ca_file": str(logs_tls.ca)}
    assert logs["basic_auth"] == {"username": "wlmon-logs", "password_file": str(logs_password)}
    assert logs["static_configs"][0]["targets"] == [f"127.0.0.1:{settings.ports.victorialogs}"]
    authed = (scrape, logs)
    assert all("basic_auth" not in j for j in doc["scrape_configs"] if j not in authed)
    assert all("tls_config" not in j for j in doc["scrape_configs"] if j is not logs)
    # Relative: Prometheus starts in its config directory (short rule namespaces).
    assert doc["rule_files"] == ["rules/*.rules.yml"]
    assert (tmp_path / "prometheus" / "rules" / "workload.rules.yml").is_file()


def test_for_state_restoration_is_scaled_with_the_rules() -> None:
    """The grace must stay below the shortest for: (the critical twins' 30 s) or
    Prometheus skips restoring it."""
    for scale in (1.0, 0.1):
        settings = StackSettings(rules_time_scale=scale)
        (prom,) = [s for s in Stack(settings).services() if s.name == "prometheus"]
        flags = dict(a.split("=", 1) for a in prom.argv if a.startswith("--rules.alert."))
        grace = parse_duration(flags["--rules.alert.for-grace-period"])
        assert 0 < grace < 30 * scale
        assert parse_duration(flags["--rules.alert.for-outage-tolerance"]) == 3600 * scale


def test_rules_time_scale_compresses_windows_and_for(tmp_path) -> None:
    settings = StackSettings(state_dir=tmp_path, rules_time_scale=0.1)
    out = render.render_rules(settings, tmp_path)
    rec = yaml.safe_load((out / "recording.rules.yml").read_text())["groups"][0]["rules"]
    assert "[30s]" in rec[0]["expr"] and "[5m]" not in rec[0]["expr"]
    alerts = yaml.safe_load((out / "workload.rules.yml").read_text())["groups"][0]["rules"]
    assert {r["for"] for r in alerts} == {"3s", "30s", "6s"}  # 30s, 5m, 1m
    # Every workload alert holds 40 s (the roll file too, since its cause resolves together).
    assert {r.get("keep_firing_for") for r in alerts} == {"4s"}  # 40s
    sapcontrol = yaml.safe_load((out / "sapcontrol.rules.yml").read_text())["groups"]
    assert "0s" in {r.get("for") for g in sapcontrol for r in g["rules"]}  # zero stays zero
    assert render.scale_duration("1h30m", 0.5) == "2700s"


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A loopback port something listens on."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        yield busy.getsockname()[1]


def test_a_port_in_use_names_the_service_and_the_port(tmp_path, busy_port: int) -> None:
    stack = Stack(StackSettings(state_dir=tmp_path, ports=Ports(exporter=busy_port)))
    with pytest.raises(
        StackError, match=rf"exporter: port {busy_port} on 127.0.0.1 is already in use"
    ):
        stack.up(only=["exporter"])
    assert not (tmp_path / "run" / "services.json").exists()


def test_unknown_service_is_refused(tmp_path) -> None:
    with pytest.raises(StackError, match="unknown service"):
        Stack(StackSettings(state_dir=tmp_path)).up(only=["oracle"])


def test_generated_perses_password_is_private_and_stable(tmp_path) -> None:
    stack = Stack(StackSettings(state_dir=tmp_path, perses_admin_password=None))
    first, source = stack.perses_password()
    again, _ = stack.perses_password()
    assert first == again and len(first) >= 20
    path = tmp_path / "secrets" / "perses-admin-password"
    assert str(path) in source
    assert path.stat().st_mode & 0o777 == 0o600


def test_every_secret_says_where_it_is(tmp_path, monkeypatch) -> None:
    for name in (
        "PERSES_ADMIN_PASSWORD",
        "VICTORIALOGS_PASSWORD",
        "API_TOKEN",
        "INFLUXDB_ADMIN_PASSWORD",
        "EXPORTER_TOKEN",
        "SAPSTARTSRV_PASSWORD",
        "ALERTMANAGER_PASSWORD",
        "VICTORIALOGS_PASSWORD",
    ):
        monkeypatch.delenv(f"WLMON_{name}", raising=False)
    stack = Stack(StackSettings(state_dir=tmp_path, api_token=SecretStr("given")))
    sources = stack.secret_sources()
    assert len(sources) == 8
    perses, api, influx, exporter, sapstartsrv, alertmanager, logs, logs_tls = sources.values()
    assert str(tmp_path / "secrets" / "victorialogs-tls") in logs_tls
    path = tmp_path / "secrets" / "victorialogs-password"
    assert str(path) in logs and path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    # Every client of the log store logs in with it; the server reads it from the file.
    services = {svc.name: svc for svc in stack.services()}
    assert services["victorialogs"].health_auth == ("wlmon-logs", path.read_text())
    assert f"-httpAuth.password=file://{path}" in services["victorialogs"].argv
    assert not any(path.read_text() in a for a in services["victorialogs"].argv)
    assert services["exporter"].env["WLMON_LOGS_PASSWORD"] == path.read_text()
    assert services["api"].env["WLMON_API_LOGS_PASSWORD"] == path.read_text()
    assert stack.logs_access().auth == ("wlmon-logs", path.read_text())
    path = tmp_path / "secrets" / "alertmanager-password"
    assert str(path) in alertmanager and path.stat().st_mode & 0o777 == 0o600
    assert stack.alertmanager_auth() == ("wlmon", path.read_text())
    # Its consumers get the same password: the health check.
    services = {svc.name: svc for svc in stack.services()}
    assert services["alertmanager"].health_auth == stack.alertmanager_auth()
    path = tmp_path / "secrets" / "sapstartsrv-password"
    assert str(path) in sapstartsrv and path.stat().st_mode & 0o777 == 0o600
    assert str(tmp_path / "secrets" / "exporter-token") in exporter
    assert str(tmp_path / "secrets" / "perses-admin-password") in perses
    assert api == "environment variable WLMON_API_TOKEN"
    path = tmp_path / "secrets" / "influxdb-admin-password"
    assert str(path) in influx and path.stat().st_mode & 0o777 == 0o600
    user, password, _ = stack.influx_credentials()
    assert (user, password) == ("wlmon-admin", path.read_text())
    # Every client of InfluxDB gets the same credentials.
    env = {svc.name: svc.env for svc in stack.services()}
    token = f"{user}:{password}"
    assert env["exporter"]["WLMON_INFLUX_TOKEN"] == token
    assert env["api"]["WLMON_API_INFLUX_TOKEN"] == token
    assert env["telegraf"]["INFLUX_USERNAME"] == user
    assert not any("PASSWORD" in name for name in env["telegraf"])
    # Telegraf's password: a 600 file in a 700 folder its secret store reads, named as
    # the @{secrets:NAME} reference of provisioning/telegraf/telegraf.conf.
    folder = Path(env["telegraf"]["TELEGRAF_SECRETS_DIR"])
    _, name = telegraf_password_reference()
    assert (folder / name).read_text() == password
    assert folder.stat().st_mode & 0o777 == 0o700
    assert (folder / name).stat().st_mode & 0o777 == 0o600
    assert [p.name for p in folder.iterdir()] == [name]  # Telegraf sees no other secret


@pytest.mark.parametrize(("scrape", "interval"), [("15s", "10s"), ("2s", "2s"), ("1m", "30s")])
def test_telegrafs_buffer_holds_the_outage_it_is_sized_for(tmp_path, scrape, interval) -> None:
    settings = StackSettings(state_dir=tmp_path, scrape_interval=scrape, telegraf_interval=interval)
    buffer = Stack(settings).telegraf_buffer()
    shipped_per_s = settings.exporter_series / parse_duration(scrape) + 100 / parse_duration(
        interval
    )
    held_s = buffer / shipped_per_s
    assert held_s >= settings.telegraf_outage_s == 600
    assert held_s <= 2 * settings.telegraf_outage_s  # not memory for hours


def test_a_missing_server_binary_says_how_to_install_it(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("WLMON_CACHE", str(tmp_path / "empty-cache"))
    with pytest.raises(
        StackError,
        match=r"victorialogs: .*victorialogs-1.52.1/victoria-logs is not installed; "
        r"run `wlmon stack install`",
    ):
        Stack(StackSettings(state_dir=tmp_path)).up(only=["victorialogs"])


# Every port differs from its default and from the others, so a port read from the wrong
# setting shows; paths are fixed so the table below is the whole answer.
PINNED_PORTS = Ports(
    perses=10001,
    prometheus=10002,
    alertmanager=10003,
    alertmanager_cluster=0,
    victorialogs=10005,
    influxdb=10007,
    influxdb_rpc=10008,
    telegraf=10009,
    exporter=10010,
    api=10011,
    sapstartsrv=52013,
)


def _pinned_settings(**changes) -> StackSettings:
    return StackSettings(
        state_dir=Path("/state"),
        repo_dir=Path("/repo"),
        sid="QAS",
        scenario="demo",
        exporter_speed=2.5,
        st05_trace_interval_s=7.0,
        scrape_interval="20s",
        telegraf_interval="5s",
        # Pinned, not left to the environment: the integration stack sets 0.1 for its
        # whole session, and the rendered for-grace flags scale with it.
        rules_time_scale=1.0,
        perses_admin_password=SecretStr("gpw"),
        api_token=SecretStr("tok"),
        exporter_token=SecretStr("etok"),
        influxdb_admin_password=SecretStr("ipw"),
        sapstartsrv_password=SecretStr("spw"),
        alertmanager_password=SecretStr("apw"),
        victorialogs_password=SecretStr("vpw"),
        # Pinned: the integration stack sets its own cache and deadline.
        model_sapstartsrv=True,
        sapcontrol_cache_s=5.0,
        sapcontrol_timeout_s=3.0,
        ports=PINNED_PORTS,
        **changes,
    )


def _rendered(settings: StackSettings) -> list[dict]:
    return [
        {
            "name": svc.name,
            "argv": [a.replace(sys.executable, "PYTHON") for a in svc.argv],
            "port": svc.port,
            "url": svc.url,
            "health_url": svc.health_url,
            "env": svc.env,
            "ready_timeout": svc.ready_timeout,
            "after_start": svc.after_start is not None,
            **({"cwd": svc.cwd} if svc.cwd else {}),
            **({"health_auth": svc.health_auth} if svc.health_auth else {}),
            **({"health_ca": svc.health_ca} if svc.health_ca else {}),
        }
        for svc in Stack(settings).services()
    ]


# What `wlmon up` started before the services became data: argv, env, urls and order.
PERSES_DIR = f"perses-{COMPONENTS['perses'].version}"
PINNED_SERVICES = [
    {
        "name": "influxdb",
        "argv": [
            "/cache/influxdb-1.8.10/influxd",
            "-config",
            "/state/config/influxdb/influxdb.conf",
        ],
        "port": 10007,
        "url": "http://127.0.0.1:10007",
        "health_url": "http://127.0.0.1:10007/ping",
        "env": {
            "INFLUXDB_META_DIR": "/state/data/influxdb/meta",
            "INFLUXDB_DATA_DIR": "/state/data/influxdb/data",
            "INFLUXDB_DATA_WAL_DIR": "/state/data/influxdb/wal",
            "INFLUXDB_HTTP_BIND_ADDRESS": "127.0.0.1:10007",
            "INFLUXDB_BIND_ADDRESS": "127.0.0.1:10008",
        },
        "ready_timeout": 60.0,
        "after_start": True,
    },
    {
        "name": "victorialogs",
        "argv": [
            "/cache/victorialogs-1.52.1/victoria-logs",
            "-httpListenAddr=127.0.0.1:10005",
            "-storageDataPath=/state/data/victorialogs",
            "-tls",
            "-tlsCertFile=/state/secrets/victorialogs-tls/server.pem",
            "-tlsKeyFile=/state/secrets/victorialogs-tls/server.key",
            "-tlsMinVersion=TLS12",
            "-httpAuth.username=wlmon-logs",
            "-httpAuth.password=file:///state/secrets/victorialogs-password",
            "-retentionPeriod=30d",
            "-retention.maxDiskSpaceUsageBytes=10GiB",
            "-loggerLevel=WARN",
        ],
        "port": 10005,
        "url": "https://127.0.0.1:10005",
        "health_url": "https://127.0.0.1:10005/insert/loki/ready",
        "health_auth": ("wlmon-logs", "vpw"),
        "health_ca": Path("/state/secrets/victorialogs-tls/ca.pem"),
        "env": {},
        "ready_timeout": 60.0,
        "after_start": False,
    },
    {
        "name": "alertmanager",
        "argv": [
            "/cache/alertmanager-0.34.2/alertmanager",
            "--config.file=/state/config/alertmanager/alertmanager.yml",
            "--storage.path=/state/data/alertmanager",
            "--data.maintenance-interval=10s",
            "--enable-feature=receiver-name-in-metrics",
            "--web.listen-address=127.0.0.1:10003",
            "--web.external-url=http://127.0.0.1:10003",
            "--web.config.file=/state/config/alertmanager/web.yml",
            "--cluster.listen-address=",
        ],
        "port": 10003,
        "url": "http://127.0.0.1:10003",
        "health_url": "http://127.0.0.1:10003/-/ready",
        "health_auth": ("wlmon", "apw"),
        "env": {},
        "ready_timeout": 60.0,
        "after_start": False,
    },
    {
        "name": "exporter",
        "argv": [
            "PYTHON",
            "-m",
            "wlmon",
            "exporter",
            "--host",
            "127.0.0.1",
            "--port",
            "10010",
            "--scenario",
            "demo",
            "--speed",
            "2.5",
            "--logs-url",
            "https://127.0.0.1:10005",
            "--influx-url",
            "http://127.0.0.1:10007",
            "--trace-interval",
            "7.0",
            "--state-file",
            "/state/data/exporter/control.json",
        ],
        "port": 10010,
        "url": "http://127.0.0.1:10010/metrics",
        "health_url": "http://127.0.0.1:10010/healthz",
        "env": {
            "WLMON_INFLUX_TOKEN": "wlmon-admin:ipw",
            "WLMON_EXPORTER_TOKEN": "etok",
            "WLMON_LOGS_CA_FILE": "/state/secrets/victorialogs-tls/ca.pem",
            "WLMON_LOGS_USERNAME": "wlmon-logs",
            "WLMON_LOGS_PASSWORD": "vpw",
            "WLMON_SAPSTARTSRV_ENABLED": "True",
            "WLMON_SAPSTARTSRV_BASE_PORT": "52013",
            "WLMON_SAPSTARTSRV_USERNAME": "wlmon",
            "WLMON_SAPSTARTSRV_PASSWORD": "spw",
            "WLMON_EXPORTER_COLLECTOR_SAPCONTROL": "True",
            "WLMON_SAPCONTROL_CACHE_S": "5.0",
            "WLMON_SAPCONTROL_TIMEOUT_S": "3.0",
            "WLMON_SAPCONTROL_SYSLOG_INTERVAL_S": "60.0",
            "WLMON_SAPCONTROL_LOCK_TABLE_INTERVAL_S": "30.0",
            "WLMON_SAPCONTROL_VERSION_INTERVAL_S": "900.0",
        },
        "ready_timeout": 60.0,
        "after_start": False,
    },
    {
        "name": "api",
        "argv": ["PYTHON", "-m", "wlmon", "api", "--host", "127.0.0.1", "--port", "10011"],
        "port": 10011,
        "url": "http://127.0.0.1:10011",
        "health_url": "http://127.0.0.1:10011/healthz",
        "env": {
            "WLMON_API_TOKEN": "tok",
            "WLMON_API_DB_PATH": "/state/data/api/wlmon.sqlite",
            "WLMON_API_LOGS_URL": "https://127.0.0.1:10005",
            "WLMON_API_LOGS_CA_FILE": "/state/secrets/victorialogs-tls/ca.pem",
            "WLMON_API_LOGS_USERNAME": "wlmon-logs",
            "WLMON_API_LOGS_PASSWORD": "vpw",
            "WLMON_API_PROMETHEUS_URL": "http://127.0.0.1:10002",
            "WLMON_API_INFLUX_URL": "http://127.0.0.1:10007",
            "WLMON_API_INFLUX_TOKEN": "wlmon-admin:ipw",
            "WLMON_API_EXPORTER_URL": "http://127.0.0.1:10010",
            "WLMON_EXPORTER_TOKEN": "etok",
            "WLMON_API_SID": "QAS",
            "WLMON_API_DASHBOARDS_URL": "http://127.0.0.1:10001",
        },
        "ready_timeout": 60.0,
        "after_start": False,
    },
    {
        "name": "prometheus",
        "argv": [
            "/cache/prometheus-3.16.0/prometheus",
            "--config.file=prometheus.yml",
            "--storage.tsdb.path=/state/data/prometheus",
            "--web.listen-address=127.0.0.1:10002",
            "--web.external-url=http://127.0.0.1:10002",
            "--rules.alert.for-grace-period=20s",
            "--rules.alert.for-outage-tolerance=3600s",
            "--rules.alert.resend-delay=20s",
            "--storage.tsdb.retention.time=15d",
            "--storage.tsdb.retention.size=10GB",
        ],
        "port": 10002,
        "url": "http://127.0.0.1:10002",
        "health_url": "http://127.0.0.1:10002/-/ready",
        "env": {},
        "ready_timeout": 60.0,
        "after_start": False,
        "cwd": "/state/config/prometheus",
    },
    {
        "name": "telegraf",
        "argv": [
            f"/cache/telegraf-{COMPONENTS['telegraf'].version}/telegraf",
            "--config",
            "/state/config/telegraf/telegraf.conf",
        ],
        "port": 10009,
        "url": "http://127.0.0.1:10009/metrics",
        "health_url": "http://127.0.0.1:10009/metrics",
        "env": {
            "INFLUX_URL": "http://127.0.0.1:10007",
            "INFLUX_USERNAME": "wlmon-admin",
            "TELEGRAF_SECRETS_DIR": "/state/secrets/telegraf",
            # 600 s: 30 scrapes of 7830 series (20 s), 120 intervals of 100 host metrics (5 s).
            "TELEGRAF_METRIC_BUFFER_LIMIT": str(round((30 * 7830 + 120 * 100) * 1.5)),
            "TELEGRAF_PROMETHEUS_LISTEN": "127.0.0.1:10009",
            "TELEGRAF_INTERVAL": "5s",
            "WLMON_SID": "QAS",
            "WLMON_EXPORTER_URL": "http://127.0.0.1:10010/metrics",
            "TELEGRAF_EXPORTER_INTERVAL": "20s",
        },
        "ready_timeout": 60.0,
        "after_start": False,
    },
    {
        "name": "perses",
        "argv": [
            f"/cache/{PERSES_DIR}/perses",
            "--config",
            "/state/config/perses/config.yaml",
            "--web.listen-address",
            "127.0.0.1:10001",
            "--web.hide-port",
        ],
        "port": 10001,
        "url": "http://127.0.0.1:10001",
        "health_url": "http://127.0.0.1:10001/api/v1/health",
        "env": {},
        "ready_timeout": 60.0,
        "after_start": True,  # the admin signs in
    },
]


def test_services_render_exactly_as_pinned(monkeypatch) -> None:
    monkeypatch.setenv("WLMON_CACHE", "/cache")
    assert _rendered(_pinned_settings()) == PINNED_SERVICES


def test_alertmanager_clustering_listens_on_loopback_when_given_a_port(monkeypatch) -> None:
    monkeypatch.setenv("WLMON_CACHE", "/cache")
    ports = PINNED_PORTS.model_copy(update={"alertmanager_cluster": 10004})
    settings = _pinned_settings().model_copy(update={"ports": ports})
    (am,) = [s for s in _rendered(settings) if s["name"] == "alertmanager"]
    assert am["argv"][-1] == "--cluster.listen-address=127.0.0.1:10004"


ROW = "- {name: api, argv: ['{python}'], port: api, url: '{http.api}', health: '{http.api}/h'}\n"


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            ROW.replace("port: api", "port: apii"),
            r"api: port 'apii' is not a WLMON_PORT_\* setting",
        ),
        (ROW.replace("health:", "healthz:"), r"(?s)row 1 \(api\):.*healthz"),
        (ROW.replace("port: api", "port: api, component: oracle"), "api: component 'oracle'"),
        (ROW + ROW, "api: listed twice"),
        (ROW.replace("port: api", "port: api, uses: [ui]"), "api: uses 'ui', which is not built"),
    ],
)
def test_a_wrong_services_table_names_the_service(table: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        read_table(table)


def test_an_unknown_placeholder_names_the_service_and_the_template() -> None:
    specs = read_table(ROW.replace("{http.api}/h", "{http.apii}/h"))
    with pytest.raises(ValueError, match=r"api: '\{http.apii\}/h': unknown placeholder"):
        fill(specs, {"python": "py", "http": SimpleNamespace(api="u")}, PINNED_PORTS, {})


def test_the_table_and_the_fleet_start_every_server_that_wlmon_builds(tmp_path) -> None:
    built = {s.component for s in read_table()} - {None}
    layout = FleetLayout(StackSettings(), load_fleet(DEFAULT_FLEET_FILE), tmp_path)
    secrets = dict.fromkeys(
        ("api_token", "exporter_token", "alertmanager_password", "perses_password"), "x"
    )
    built |= {s.component for s in layout.services(secrets, tmp_path)} - {None}

    built |= {name for s in read_table() for name in s.uses}
    # Not servers of the stack: the compose loader and the optional third-party clients.
    tools = {"composecheck"} | {name for name, c in COMPONENTS.items() if c.optional}
    assert built == set(COMPONENTS) - tools


def test_no_prometheus_of_the_stack_or_the_fleet_takes_orders_over_http(tmp_path) -> None:
    """Issue 26: /-/quit and /-/reload answered anyone on the machine. Nothing of wlmon uses
    them (a reload is SIGHUP; the Thanos sidecars run without their reloader), so no
    Prometheus, the stack's or a fleet replica, is started with them."""
    layout = FleetLayout(StackSettings(), load_fleet(DEFAULT_FLEET_FILE), tmp_path)
    secrets = dict.fromkeys(
        ("api_token", "exporter_token", "alertmanager_password", "perses_password"), "x"
    )
    services = Stack(StackSettings(state_dir=tmp_path)).services()
    services += layout.services(secrets, tmp_path)
    proms = [s for s in services if s.component == "prometheus"]
    assert {s.name for s in proms} >= {"prometheus", "prometheus-A", "prometheus-B"}
    for svc in proms:
        assert "--web.enable-lifecycle" not in svc.argv, svc.name
    for svc in services:
        if svc.component == "thanos":
            assert not any(a.startswith("--reloader.") for a in svc.argv), svc.name


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _web_service(after_start=None) -> Service:
    """A real process with a health endpoint, standing in for a server."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    argv = [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port)]
    return Service("web", argv, port, url, f"{url}/", ready_timeout=20, after_start=after_start)


def _stack_of(tmp_path, monkeypatch, *services: Service) -> Stack:
    stack = Stack(StackSettings(state_dir=tmp_path))
    monkeypatch.setattr(stack, "services", lambda: list(services))
    return stack


def test_up_records_a_healthy_service_and_down_stops_it(tmp_path, monkeypatch) -> None:
    web = _web_service()
    stack = _stack_of(tmp_path, monkeypatch, web)
    (running,) = stack.up()
    try:
        assert [r["healthy"] for r in stack.status()] == [True]
        assert stack.recorded() == [running]
    finally:
        assert stack.down() == ["web"]
    assert stack.recorded() == [] and not psutil.pid_exists(running.pid)
    assert _port_free(web.port)


def test_a_service_whose_after_start_fails_is_stopped_not_orphaned(tmp_path, monkeypatch) -> None:
    def refuse(svc: Service) -> None:
        raise StackError(f"{svc.name}: CREATE DATABASE wlmon answered 500")

    web = _web_service(after_start=refuse)
    stack = _stack_of(tmp_path, monkeypatch, web)
    with pytest.raises(StackError, match="CREATE DATABASE"):
        stack.up()
    assert stack.recorded() == []
    assert _port_free(web.port), "the started process still listens, and nothing records it"


def test_down_leaves_alone_a_process_that_was_given_a_recorded_pid(tmp_path) -> None:
    # The same interpreter, started later than the recorded one: after a reboot or a long
    # uptime the system hands a pid out again, and `down` must not signal the newcomer.
    other = subprocess.Popen(
        [sys.executable, "-c", "import time; print('ready', flush=True); time.sleep(60)"],
        start_new_session=True,
        stdout=subprocess.PIPE,
    )
    try:
        other.stdout.readline()  # it runs the interpreter now, not a copy of pytest
        record = {
            "name": "exporter",
            "pid": other.pid,
            "url": "http://127.0.0.1:1",
            "health_url": "http://127.0.0.1:1/healthz",
            "executable": sys.executable,
            "log": str(tmp_path / "exporter.log"),
            "started": psutil.Process(other.pid).create_time() - 3600,
        }
        run_file = tmp_path / "run" / "services.json"
        run_file.parent.mkdir()
        run_file.write_text(json.dumps([record]))
        assert Stack(StackSettings(state_dir=tmp_path)).down() == []
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()


@pytest.mark.parametrize(
    ("text", "values", "expected"),
    [
        ("${A:-x}|${B:-y}|${C:-}", {"A": "1", "B": ""}, "1|y|"),  # :- when unset or empty
        ("${A-x}|${B-y}", {"B": ""}, "x|"),  # - only when unset
        ("${A}|${B}", {"A": "1", "B": ""}, "1|"),  # set to empty is a value
        ("${A:?say A}|${B?say B}", {"A": "1", "B": ""}, "1|"),
        ("$${A} costs $$5 ${lower_case:-ok}", {"A": "1"}, "${A} costs $5 ok"),  # $$ is $
        ("${A:-http://x:1/y}", {}, "http://x:1/y"),
    ],
)
def test_templates_expand_as_docker_compose_does(text: str, values: dict, expected: str) -> None:
    assert expand(text, values, "t.yml") == expected


@pytest.mark.parametrize(
    ("text", "values", "message"),
    [
        ("${A} ${B} ${A}", {}, r"t.yml: set A, B \(no default\)"),
        ("${A:?set A in .env}", {"A": ""}, r"t.yml: A: set A in .env"),
        ("${A?} ${B}", {}, r"t.yml: set B \(no default\); A: required"),
    ],
)
def test_a_missing_template_variable_names_itself_and_the_file(
    text: str, values: dict, message: str
) -> None:
    with pytest.raises(TemplateError, match=message):
        expand(text, values, "t.yml")


def _repo_with_rule(tmp_path: Path, expr: str, for_: str) -> StackSettings:
    rules = {"groups": [{"name": "t", "rules": [{"alert": "A", "expr": expr, "for": for_}]}]}
    (tmp_path / "repo" / "alerts").mkdir(parents=True)
    (tmp_path / "repo" / "alerts" / "t.rules.yml").write_text(yaml.safe_dump(rules))
    return StackSettings(state_dir=tmp_path, repo_dir=tmp_path / "repo", rules_time_scale=0.1)


def test_rules_time_scale_reads_durations_as_prometheus_does(tmp_path) -> None:
    # Prometheus 3 reads a bare number in a range selector as seconds; 1m30s and 500ms
    # are durations too, and a label matcher's [smh] class is not a window.
    settings = _repo_with_rule(
        tmp_path, 'rate(x{a=~"[smh]"}[300]) > rate(x[1m30s]) + rate(x[500ms])', "1m30s"
    )
    out = render.render_rules(settings, tmp_path)
    (rule,) = yaml.safe_load((out / "t.rules.yml").read_text())["groups"][0]["rules"]
    assert rule["expr"] == 'rate(x{a=~"[smh]"}[30s]) > rate(x[9s]) + rate(x[1s])'
    assert rule["for"] == "9s"


def test_a_duration_prometheus_would_refuse_is_not_scaled_into_one_it_accepts(tmp_path) -> None:
    settings = _repo_with_rule(tmp_path, "up == 0", "5min")
    with pytest.raises(ValueError, match=r"not a duration: '5min'"):
        render.render_rules(settings, tmp_path)


def test_up_of_some_services_builds_only_the_servers_they_run(tmp_path, busy_port: int) -> None:
    # No Go on PATH and an empty cache: building anything would fail first. The exporter
    # needs no built server, so `up --only exporter` goes straight to starting it (and
    # finds its port taken).
    (tmp_path / "bin").mkdir()
    env = {
        "PATH": str(tmp_path / "bin"),
        "WLMON_CACHE": str(tmp_path / "cache"),
        "WLMON_STATE_DIR": str(tmp_path / "state"),
        "WLMON_PORT_EXPORTER": str(busy_port),
    }
    result = CliRunner().invoke(app, ["up", "--only", "exporter"], env=env)
    assert result.exit_code == 2
    assert f"exporter: port {busy_port} on 127.0.0.1 is already in use" in result.output
    stack = Stack(StackSettings(state_dir=tmp_path))
    assert stack.components(["api", "victorialogs", "perses"]) == ["victorialogs", "perses"]
    assert "composecheck" not in stack.components()


def test_a_config_that_cannot_be_rendered_stops_up_with_a_stack_error(
    tmp_path, monkeypatch
) -> None:
    # A StackError is what `wlmon up` prints as a one-line error instead of a traceback.
    settings = _repo_with_rule(tmp_path, "up == 0", "5min")
    shutil.copytree(REPO_DIR / "provisioning", settings.repo_dir / "provisioning")
    stack = Stack(settings)
    monkeypatch.setattr(stack, "services", lambda: [])
    with pytest.raises(StackError, match="not a duration: '5min'"):
        stack.up()


def test_a_failed_influx_database_creation_is_a_stack_error() -> None:
    url = f"http://127.0.0.1:{_free_port()}"  # nothing listens there
    influx = Service("influxdb", ["influxd"], 1, url, f"{url}/ping")
    with pytest.raises(StackError, match="influxdb: SHOW DATABASES failed"):
        _prepare_influxdb(influx, user="u", password="p", retention="30d")


def test_up_prints_where_every_secret_and_the_runs_database_are(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(Stack, "up", lambda self, only=None, on_event=None: [])
    for name in ("PERSES_ADMIN_PASSWORD", "API_TOKEN", "INFLUXDB_ADMIN_PASSWORD"):
        monkeypatch.delenv(f"WLMON_{name}", raising=False)
    env = {"WLMON_STATE_DIR": str(tmp_path), "COLUMNS": "300"}
    result = CliRunner().invoke(app, ["up", "--no-install-missing"], env=env)
    assert result.exit_code == 0, result.output
    for name in ("perses-admin-password", "api-token", "influxdb-admin-password"):
        assert str(tmp_path / "secrets" / name) in result.output
    assert str(tmp_path / "data" / "api" / "wlmon.sqlite") in result.output


@pytest.mark.parametrize("state_dir", ["", "custom"])
def test_the_cli_and_the_stacks_api_share_one_database(tmp_path, monkeypatch, state_dir) -> None:
    # The CLI (wlmon runs, report) opens api.config's db_path; `wlmon up` gives the API its own.
    monkeypatch.delenv("WLMON_API_DB_PATH", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    if state_dir:
        monkeypatch.setenv("WLMON_STATE_DIR", str(tmp_path / state_dir))
    else:
        monkeypatch.delenv("WLMON_STATE_DIR", raising=False)
    api_env = next(s.env for s in Stack(StackSettings()).services() if s.name == "api")
    assert Path(api_env["WLMON_API_DB_PATH"]) == ApiSettings().db_path


# Exits naming a race the first time (as some servers do on a fresh database), serves after.
RACY_SERVER = """
import http.server, pathlib, sys
marker = pathlib.Path(sys.argv[1])
if not marker.exists():
    marker.write_text("1")
    print(sys.argv[3], flush=True)
    sys.exit(1)
http.server.test(http.server.SimpleHTTPRequestHandler, port=int(sys.argv[2]), bind="127.0.0.1")
"""


def _racy_service(tmp_path: Path, line: str, retry_on: str | None) -> Service:
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    argv = [sys.executable, "-c", RACY_SERVER, str(tmp_path / "marker"), str(port), line]
    return Service("racy", argv, port, url, f"{url}/", ready_timeout=20, retry_on=retry_on)


def test_a_start_that_fails_on_the_known_race_is_tried_once_more(tmp_path, monkeypatch) -> None:
    race = "failed to create default organization: UNIQUE constraint failed: org.id"
    stack = _stack_of(tmp_path, monkeypatch, _racy_service(tmp_path, race, "org.id"))
    (running,) = stack.up()
    try:
        assert [r["healthy"] for r in stack.status()] == [True]
        assert race in Path(running.log).read_text()
    finally:
        stack.down()


def test_a_start_that_fails_otherwise_is_not_retried(tmp_path, monkeypatch) -> None:
    svc = _racy_service(tmp_path, "database is locked", "org.id")
    stack = _stack_of(tmp_path, monkeypatch, svc)
    with pytest.raises(StackError, match=r"racy: exited with code 1(?s:.*)database is locked"):
        stack.up()
    assert stack.recorded() == []


def test_up_names_a_used_component_that_is_not_installed(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("WLMON_CACHE", str(tmp_path / "cache"))
    web = _web_service()
    web.uses = ["sap_host_exporter"]
    web.argv[0] = sys.executable
    stack = _stack_of(tmp_path, monkeypatch, web)
    with pytest.raises(StackError, match="web: needs sap_host_exporter, which is not installed"):
        stack.up()


def test_the_readme_port_table_names_every_port_setting() -> None:
    """Issue 26: WLMON_PORT_INFLUXDB_RPC was missing from the README's table."""
    readme = (REPO_DIR / "README.md").read_text()
    table = readme[readme.index("| service | version | default port | override |") :]
    table = table[: table.index("\n\n")]
    missing = [
        f"WLMON_PORT_{name.upper()}"
        for name in Ports.model_fields
        if f"`WLMON_PORT_{name.upper()}`" not in table
    ]
    assert not missing, f"README's port table lacks {missing}"


# A server whose health endpoint asks for basic auth, as Alertmanager's /-/ready does.
GUARDED_SERVER = """
import base64, http.server, sys
WANTED = "Basic " + base64.b64encode(b"wlmon:" + sys.argv[2].encode()).decode()
class Guarded(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.headers.get("Authorization") == WANTED else 401)
        self.end_headers()
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Guarded).serve_forever()
"""


def _guarded_service(auth: tuple[str, str] | None) -> Service:
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    argv = [sys.executable, "-c", GUARDED_SERVER, str(port), "right"]
    return Service("guarded", argv, port, url, f"{url}/-/ready", ready_timeout=5, health_auth=auth)


def test_up_and_status_log_in_to_a_health_endpoint_behind_basic_auth(tmp_path, monkeypatch):
    stack = _stack_of(tmp_path, monkeypatch, _guarded_service(("wlmon", "right")))
    stack.up()
    try:
        assert [r["healthy"] for r in stack.status()] == [True]
        assert "right" not in stack.run_file.read_text()  # no secret in the record of pids
    finally:
        stack.down()
    # The same server, checked without the credentials: never healthy, stopped, named.
    stack = _stack_of(tmp_path, monkeypatch, _guarded_service(None))
    with pytest.raises(StackError, match=r"guarded: not healthy at .*/-/ready after 5 s"):
        stack.up()
    assert stack.recorded() == []


def test_a_missing_ca_is_named_at_start_and_unhealthy_in_status(tmp_path) -> None:
    from wlmon.stack import runtime

    gone = tmp_path / "ca.pem"
    svc = Service(
        "victorialogs", ["victoria-logs"], 1, "https://127.0.0.1:1", "https://127.0.0.1:1/health"
    )
    svc.health_ca = gone
    with pytest.raises(StackError, match=r"victorialogs: the CA for .* cannot be loaded .*ca\.pem"):
        runtime._ca_loads(svc)
    assert runtime._healthy(svc.health_url, ca=gone) is False
