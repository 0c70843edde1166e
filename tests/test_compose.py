"""docker-compose.yml loaded by compose-go (Docker Compose v2's own loader), no engine."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from exporters.durations import parse_duration
from tests.telegraf_secrets import telegraf_password_reference
from wlmon.stack.components import COMPONENTS
from wlmon.stack.pki import LogStorePKI
from wlmon.stack.runtime import Stack
from wlmon.stack.settings import StackSettings

REPO = Path(__file__).resolve().parents[1]
COMPOSE = REPO / "docker-compose.yml"
SECRETS = {
    "PERSES_ADMIN_PASSWORD": "from-test",
    "PERSES_ENCRYPTION_KEY": "0123456789abcdef0123456789abcdef",
    "WLMON_API_TOKEN": "from-test",
    "WLMON_EXPORTER_TOKEN": "from-test",
    "WLMON_INFLUXDB_ADMIN_PASSWORD": "influx-from-test",
    "WLMON_ALERTMANAGER_PASSWORD": "am-from-test",
    "WLMON_VICTORIALOGS_PASSWORD": "logs-from-test",
}


def _load(env: dict[str, str]) -> subprocess.CompletedProcess:
    binary = COMPONENTS["composecheck"].path("composecheck")
    assert binary.is_file(), f"{binary} missing: run `wlmon stack install --only composecheck`"
    clean = {k: v for k, v in os.environ.items() if k not in SECRETS}
    return subprocess.run(
        [str(binary), str(COMPOSE)],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture(scope="module")
def project() -> dict:
    result = _load(SECRETS)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_project_has_a_name_and_every_server(project) -> None:
    assert project["name"] == "wlmon"
    assert set(project["services"]) == {
        "influxdb",
        "victorialogs",
        "alertmanager-config",
        "alertmanager",
        "exporter",
        "api",
        "prometheus",
        "telegraf",
        "perses-config",
        "perses",
    }


def test_images_are_pinned(project) -> None:
    for name, svc in project["services"].items():
        image = svc["image"]
        repo, _, tag = image.rpartition(":")
        assert repo and tag and tag != "latest", f"{name}: {image}"


ONE_SHOT = {"alertmanager-config", "perses-config"}  # render a config and exit
# Images with nothing to run a healthcheck with (distroless: no shell, no HTTP client):
# Prometheus scrapes them; who depends on them waits for the start and buffers until they
# answer.
NO_HEALTHCHECK = {"perses", "victorialogs"}


def test_every_service_has_a_healthcheck_and_waits_for_healthy_dependencies(project) -> None:
    for name, svc in project["services"].items():
        if name in ONE_SHOT:
            assert svc["restart"] == "no"
            continue
        if name in NO_HEALTHCHECK:
            assert "healthcheck" not in svc or svc["healthcheck"].get("disable"), name
        else:
            assert svc.get("healthcheck", {}).get("test"), name
        for dep, cond in (svc.get("depends_on") or {}).items():
            wanted = (
                "service_completed_successfully"
                if dep in ONE_SHOT
                else "service_started"
                if dep in NO_HEALTHCHECK
                else "service_healthy"
            )
            assert cond["condition"] == wanted, f"{name} -> {dep}"
            assert dep in project["services"]


def test_only_perses_and_the_api_are_published_on_loopback(project) -> None:
    published = {
        name: svc["ports"] for name, svc in project["services"].items() if svc.get("ports")
    }
    assert set(published) == {"perses", "api"}
    for ports in published.values():
        for port in ports:
            assert port["host_ip"] == "127.0.0.1"


def test_config_files_are_the_repos_mounted_read_only(project) -> None:
    for name, svc in project["services"].items():
        for vol in svc.get("volumes", []):
            if (
                vol["type"] == "volume"
                and vol["source"] in ("alertmanager-config", "perses-config")
                and name in ONE_SHOT
            ):
                continue  # the job writes the rendered config; everyone else reads it
            if vol["type"] == "bind":
                source = Path(vol["source"])
                assert source.exists(), f"{name}: {source}"
                assert source.is_relative_to(REPO)
                assert vol.get("read_only") is True, f"{name}: {source} not read-only"
            else:
                assert vol["type"] == "volume" and vol["source"] in project["volumes"], vol


def test_secrets_come_from_the_environment_or_dot_env(project) -> None:
    result = _load({})
    assert result.returncode != 0
    assert "PERSES_ADMIN_PASSWORD" in result.stderr or "WLMON_API_TOKEN" in result.stderr
    perses_env = project["services"]["perses-config"]["environment"]
    assert perses_env["WLMON_PERSES_ADMIN_PASSWORD"] == "from-test"
    assert {s["source"] for s in project["services"]["perses"]["secrets"]} == {
        "perses_encryption_key",
        "victorialogs_password",
        "victorialogs_ca",  # its logs datasource trusts the log store's CA
    }
    assert (REPO / ".env.example").is_file()
    tracked = subprocess.run(["git", "ls-files", ".env"], cwd=REPO, capture_output=True, text=True)
    assert tracked.stdout.strip() == ""


def test_influxdb_runs_with_auth_and_every_client_has_its_credentials(project) -> None:
    services = project["services"]
    influx = services["influxdb"]["environment"]
    assert influx["INFLUXDB_HTTP_AUTH_ENABLED"] == "true"
    user, password = influx["INFLUXDB_ADMIN_USER"], influx["INFLUXDB_ADMIN_PASSWORD"]
    assert password == "influx-from-test"
    # The exporter and the API get the user as a variable and the password as a compose
    # secret whose value is InfluxDB's own admin password.
    exporter = services["exporter"]["environment"]
    assert exporter["WLMON_INFLUX_USERNAME"] == user
    assert "WLMON_INFLUX_TOKEN" not in exporter
    (exporter_secret,) = [
        s
        for s in services["exporter"]["secrets"]
        if f"/run/secrets/{s['source']}" == exporter["WLMON_INFLUX_PASSWORD_FILE"]
    ]
    assert services["api"]["environment"]["WLMON_API_INFLUX_USERNAME"] == user
    assert "WLMON_API_INFLUX_TOKEN" not in services["api"]["environment"]
    (api_secret,) = [
        s
        for s in services["api"]["secrets"]
        if Path(s["target"]).name == "wlmon_api_influx_password"
    ]
    assert exporter_secret["source"] == api_secret["source"]
    assert project["secrets"][api_secret["source"]]["environment"] == (
        "WLMON_INFLUXDB_ADMIN_PASSWORD"
    )
    telegraf = services["telegraf"]["environment"]
    assert telegraf["INFLUX_USERNAME"] == user
    assert not any("PASSWORD" in name for name in telegraf), telegraf
    # Telegraf reads the password from its secret store: the folder is compose's
    # /run/secrets, the name a secret the service is given, holding InfluxDB's password.
    folder, name = telegraf_password_reference()
    assert telegraf[folder] == "/run/secrets"
    given = services["telegraf"]["secrets"]
    assert {"source": name, "target": f"/run/secrets/{name}"} in given, given
    assert project["secrets"][name]["environment"] == "WLMON_INFLUXDB_ADMIN_PASSWORD"


def test_alertmanager_asks_for_basic_auth_and_every_client_has_it(project) -> None:
    """Alertmanager's web config comes from the password in .env; Prometheus (alerts and
    scrape, provisioning/) reads it as a secret file, the healthchecks log in with the
    file."""
    services = project["services"]
    secret = project["secrets"]["alertmanager_password"]
    assert secret["environment"] == "WLMON_ALERTMANAGER_PASSWORD"
    config = services["alertmanager-config"]["environment"]
    assert config["WLMON_ALERTMANAGER_PASSWORD"] == "am-from-test"
    # The fleet's services are in a profile the loaded project leaves out: read as written.
    fleet = yaml.safe_load(COMPOSE.read_text())["services"]
    for svc in (services["alertmanager"], fleet["alertmanager-1"], fleet["alertmanager-2"]):
        assert "--web.config.file=/etc/alertmanager/web.yml" in svc["command"]
        assert "/run/secrets/alertmanager_password" in " ".join(svc["healthcheck"]["test"])
    assert [s["source"] for s in services["alertmanager"]["secrets"]] == ["alertmanager_password"]
    assert "alertmanager_password" in {s["source"] for s in services["prometheus"]["secrets"]}
    for name in ("alertmanager-1", "alertmanager-2", "prometheus-a", "prometheus-b"):
        assert fleet[name]["secrets"] == ["alertmanager_password"], name
    for path in ("prometheus/prometheus.yml", "fleet/prometheus.yml"):
        doc = yaml.safe_load((REPO / "provisioning" / path).read_text())
        (scrape,) = [j for j in doc["scrape_configs"] if j["job_name"] == "alertmanager"]
        auth = {"username": "wlmon", "password_file": "/run/secrets/alertmanager_password"}
        assert doc["alerting"]["alertmanagers"][0]["basic_auth"] == auth == scrape["basic_auth"]


def test_compose_keeps_what_the_native_stack_keeps(project, tmp_path) -> None:
    """Retention and Telegraf's outage buffer: the same defaults as `wlmon up`."""
    services = project["services"]
    telegraf = services["telegraf"]["environment"]
    native = StackSettings(
        state_dir=tmp_path,
        scrape_interval=telegraf["TELEGRAF_EXPORTER_INTERVAL"],
        telegraf_interval=telegraf["TELEGRAF_INTERVAL"],
    )
    assert int(telegraf["TELEGRAF_METRIC_BUFFER_LIMIT"]) == Stack(native).telegraf_buffer()
    command = services["prometheus"]["command"]
    assert f"--storage.tsdb.retention.time={native.prometheus_retention_time}" in command
    assert f"--storage.tsdb.retention.size={native.prometheus_retention_size}" in command
    logs = services["victorialogs"]["command"]
    assert f"-retentionPeriod={native.victorialogs_retention}" in logs
    assert f"-retention.maxDiskSpaceUsageBytes={native.victorialogs_max_disk}" in logs
    iql = (REPO / "provisioning" / "influxdb" / "initdb" / "retention.iql").read_text()
    duration = re.search(r"DURATION (\S+)", iql)
    assert duration and parse_duration(duration[1]) == parse_duration(native.influxdb_retention)
    conf = (REPO / "provisioning" / "telegraf" / "telegraf.conf").read_text()
    assert f"TELEGRAF_METRIC_BUFFER_LIMIT:-{telegraf['TELEGRAF_METRIC_BUFFER_LIMIT']}}}" in conf


# Who talks to the log store in docker-compose: each trusts its CA and logs in.
LOG_CLIENTS = ("api", "exporter", "prometheus")


def test_the_log_store_serves_tls_with_basic_auth_and_only_it_has_the_key(project) -> None:
    """The TLS secrets are the files `wlmon stack logs-certs --dir ./secrets/victorialogs-tls`
    makes; VictoriaLogs gets its key and the password file, each client only the CA (and
    Prometheus the password file); every path a config names is a secret the service is
    given; every URL is https; the image is the version `wlmon up` builds."""
    services, secrets = project["services"], project["secrets"]
    expected = LogStorePKI(REPO / "secrets" / "victorialogs-tls").compose_secrets()
    files = {k: Path(v["file"]) for k, v in secrets.items() if "file" in v}
    assert {k: v for k, v in files.items() if k.startswith("victorialogs_")} == expected
    assert secrets["victorialogs_password"]["environment"] == "WLMON_VICTORIALOGS_PASSWORD"

    def given(service: str) -> set[str]:
        """The secrets mounted under their own name (a `target` renames one into a
        settings file, which no config names by path)."""
        return {
            s["source"]
            for s in services[service].get("secrets", [])
            if Path(s.get("target") or s["source"]).name == s["source"]
        }

    logs = services["victorialogs"]
    version = COMPONENTS["victorialogs"].version
    assert logs["image"] == f"victoriametrics/victoria-logs:v{version}"
    assert given("victorialogs") == {
        "victorialogs_server_cert",
        "victorialogs_server_key",
        "victorialogs_password",
    }
    command = logs["command"]
    assert "-tls" in command and "-httpAuth.username=wlmon-logs" in command
    assert "-httpAuth.password=file:///run/secrets/victorialogs_password" in command
    assert not any("logs-from-test" in arg for arg in command)  # a file, not the value
    named = set(re.findall(r"/run/secrets/(victorialogs_\w+)", json.dumps(logs)))
    assert named == given("victorialogs")
    prometheus_yml = (REPO / "provisioning" / "prometheus" / "prometheus.yml").read_text()
    for service in LOG_CLIENTS:
        text = json.dumps(services[service]) + (prometheus_yml if service == "prometheus" else "")
        assert set(re.findall(r"/run/secrets/(victorialogs_\w+)", text)) == {
            name for name in given(service) if name.startswith("victorialogs_")
        }, service
        assert "victorialogs_server_key" not in given(service), service
    assert services["api"]["environment"]["WLMON_API_LOGS_URL"] == "https://victorialogs:9428"
    assert "WLMON_API_LOGS_PASSWORD" not in services["api"]["environment"]  # a file now
    exporter = services["exporter"]["environment"]
    assert "WLMON_LOGS_PASSWORD" not in exporter  # a file too (--logs-password-file)
    assert exporter["WLMON_LOGS_PASSWORD_FILE"] == "/run/secrets/victorialogs_password"
    assert "https://victorialogs:9428" in services["exporter"]["command"]
    assert "victorialogs:9428" in prometheus_yml


def _file_names(cls, prefix: str) -> dict[str, str]:
    """The secret files a settings class reads (lower case) -> its field: the prefixed field
    name, or each name of a field's validation alias (one variable shared by two classes)."""
    names = {}
    for field, info in cls.model_fields.items():
        alias = info.validation_alias
        choices = getattr(alias, "choices", [alias] if alias else [])
        names.update({str(c).lower(): field for c in choices} or {f"{prefix}{field}": field})
    return names


def test_wlmons_own_containers_get_their_secrets_as_files_not_variables(project) -> None:
    """Issue 38 item 3: the API's and the exporter's tokens and the log store's password
    reach them as compose secrets under /run/secrets, each file named as the variable its
    settings class reads (pydantic-settings' secrets_dir, WLMON_SECRETS_DIR), so
    `docker inspect` shows no value. Checked against the settings classes' own fields."""
    from pydantic import SecretStr

    from api.config import Settings
    from exporters.config import ExporterSettings

    services = project["services"]
    for name, cls, prefix in (
        ("api", Settings, "wlmon_api_"),
        ("exporter", ExporterSettings, "wlmon_exporter_"),
    ):
        env = services[name]["environment"]
        assert env["WLMON_SECRETS_DIR"] == "/run/secrets", name
        renamed = {
            Path(s["target"]).name: s
            for s in services[name]["secrets"]
            if Path(s["target"]).name != s["source"]
        }
        assert renamed, name
        for target, secret in renamed.items():
            # A relative target is a file in /run/secrets (compose's rule), WLMON_SECRETS_DIR.
            assert secret["target"] in (target, f"/run/secrets/{target}"), secret
            read = _file_names(cls, prefix)
            assert target in read, f"{secret}: {cls.__name__} reads no such file"
            field = read[target]
            annotation = cls.model_fields[field].annotation
            assert SecretStr in getattr(annotation, "__args__", (annotation,)), secret
        # No token or password in the container's environment: the exporter's command-line
        # options read the log store's and InfluxDB's passwords from files too.
        assert not [v for v in env.values() if "from-test" in str(v)], name
        assert not [k for k in env if k.endswith(("_PASSWORD", "_TOKEN"))], name
    # The fleet profile's exporters (not in the default project: read from the file, its
    # anchors resolved) take their control token as a file the same way.
    fleet = yaml.safe_load(COMPOSE.read_text())["services"]
    for name in ("exporter-bmk", "exporter-two", "exporter-prd"):
        env = fleet[name].get("environment", {})
        assert env.get("WLMON_SECRETS_DIR") == "/run/secrets", name
        assert not [k for k in env if k.endswith(("_PASSWORD", "_TOKEN"))], name
        assert {"source": "exporter_token", "target": "wlmon_exporter_token"} in fleet[name][
            "secrets"
        ], name
    api_targets = {Path(s["target"]).name for s in services["api"]["secrets"]}
    assert api_targets - {"victorialogs_ca"} == {
        "wlmon_api_token",
        "wlmon_api_logs_password",
        "wlmon_exporter_token",  # the exporter's own name: one secret, one name
        "wlmon_api_influx_password",
    }
