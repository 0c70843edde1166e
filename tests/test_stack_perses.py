"""Perses without a server: its rendered config and provisioning, the plugin archives
assembled from npm packages, and the cache keeping only what is used."""

from __future__ import annotations

import json
import re
import tarfile
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from alerts.monitoring import watchdog
from wlmon.cli import app
from wlmon.stack import perses, persesplugins
from wlmon.stack.components import COMPONENTS
from wlmon.stack.install import prune, stale
from wlmon.stack.runtime import Running, Stack
from wlmon.stack.settings import REPO_DIR, StackSettings

SCHEMAS = REPO_DIR / "provisioning" / "perses" / "plugin-schemas"


def _inputs(tmp_path: Path, **changes) -> perses.PersesInputs:
    values = {
        "data_dir": tmp_path / "data",
        "plugins_archive": tmp_path / "archive",
        "dashboards_dir": REPO_DIR / "dashboards" / "perses",
        "prometheus_url": "http://127.0.0.1:9090",
        "logs_url": "https://127.0.0.1:9428",
        "logs_user": "wlmon",
        "logs_password_file": tmp_path / "vl",
        "logs_ca_file": None,
        "admin_password": "pw-1",
        "encryption_key_file": tmp_path / "key",
    }
    return perses.PersesInputs(**(values | changes))


def test_the_config_turns_native_auth_on_and_provisions_both_folders(tmp_path) -> None:
    path = perses.render(REPO_DIR, tmp_path / "config", _inputs(tmp_path))
    doc = yaml.safe_load(path.read_text())
    security = doc["security"]
    assert security["enable_auth"] is True
    assert security["authentication"]["providers"] == {"enable_native": True}
    assert security["authentication"]["disable_sign_up"] is True
    assert security["encryption_key_file"] == str(tmp_path / "key")
    prov = tmp_path / "config" / "perses" / "provisioning"
    assert doc["provisioning"]["folders"] == [
        str(prov),
        str(REPO_DIR / "dashboards" / "perses"),
    ]
    assert doc["plugin"] == {
        "path": str(tmp_path / "data" / "plugins"),
        "archive_paths": [str(tmp_path / "archive")],
    }
    # The folder is the stack user's alone; the files it renders too (one holds the
    # password in clear until Perses hashes it).
    assert prov.stat().st_mode & 0o777 == 0o700
    for item in (path, prov / "admin-user.yaml", prov / "datasources.yaml"):
        assert item.stat().st_mode & 0o777 == 0o600, item
    user = yaml.safe_load((prov / "admin-user.yaml").read_text())
    assert user["metadata"]["name"] == "admin"
    assert user["spec"]["nativeProvider"]["password"] == "pw-1"


def test_the_datasources_are_prometheus_by_default_and_logs_with_basic_auth(tmp_path) -> None:
    perses.render(REPO_DIR, tmp_path / "config", _inputs(tmp_path))
    prov = tmp_path / "config" / "perses" / "provisioning"
    docs = yaml.safe_load((prov / "datasources.yaml").read_text())
    by = {(d["kind"], d["metadata"]["name"]): d["spec"] for d in docs}
    prom = by[("GlobalDatasource", "prometheus")]
    assert prom["default"] and prom["plugin"]["kind"] == "PrometheusDatasource"
    assert prom["plugin"]["spec"]["proxy"]["spec"]["url"] == "http://127.0.0.1:9090"
    logs = by[("GlobalDatasource", "logs")]["plugin"]
    assert logs["kind"] == "VictoriaLogsDatasource"
    assert logs["spec"]["proxy"]["spec"] == {"url": "https://127.0.0.1:9428", "secret": "logs"}
    # The password stays a file on the server: never in the provisioning text.
    secret = by[("GlobalSecret", "logs")]["basicAuth"]
    assert secret == {"username": "wlmon", "passwordFile": str(tmp_path / "vl")}
    assert "password:" not in (prov / "datasources.yaml").read_text()


def test_an_empty_admin_password_is_refused(tmp_path) -> None:
    with pytest.raises(ValueError, match="admin password is empty"):
        perses.render(REPO_DIR, tmp_path, _inputs(tmp_path, admin_password=""))


def test_the_stack_renders_perses_with_its_secrets(tmp_path, monkeypatch) -> None:
    for name in ("PERSES_ADMIN_PASSWORD", "VICTORIALOGS_PASSWORD"):
        monkeypatch.delenv(f"WLMON_{name}", raising=False)
    stack = Stack(StackSettings(state_dir=tmp_path))
    inputs = stack.perses_inputs()
    key = stack.secret_file("perses-encryption-key").read_text()
    assert len(key.encode()) == 32  # AES-256, as Perses requires
    assert inputs.admin_password == stack.perses_password()[0]
    assert inputs.logs_password_file.read_text() == stack.logs_access().password
    assert inputs.logs_user == stack.logs_access().username
    assert inputs.logs_ca_file == stack.logs_pki().ca
    assert inputs.plugins_archive == COMPONENTS["perses"].directory / "plugins-archive"
    (svc,) = [s for s in stack.services() if s.name == "perses"]
    assert svc.health_url.endswith("/api/v1/health")
    assert f"127.0.0.1:{stack.settings.ports.perses}" in svc.argv


def test_module_cue_loses_its_deps_block_only() -> None:
    text = (SCHEMAS / "prometheus" / "cue.mod" / "module.cue").read_text()
    assert "deps:" in text
    out = persesplugins.module_cue_without_deps(text)
    assert "deps" not in out and "perses/perses/cue" not in out
    assert out.startswith('module: "github.com/perses/plugins/prometheus@v0"')
    assert 'version: "v0.14.0"' in out and 'kind: "git"' in out
    with pytest.raises(persesplugins.PluginError, match="unbalanced"):
        persesplugins.module_cue_without_deps('module: "x"\ndeps: {\n  a: {\n')


def _fake_package(root: Path, version: str = "0.10.0") -> Path:
    pkg = root / "node_modules" / "@perses-dev" / "stat-chart-plugin"
    (pkg / "__mf" / "js").mkdir(parents=True)
    (pkg / "__mf" / "js" / "StatChart.js").write_text("// built")
    (pkg / "lib").mkdir()
    (pkg / "lib" / "index.js").write_text("// for bundlers")
    (pkg / "package.json").write_text(
        json.dumps(
            {
                "name": "@perses-dev/stat-chart-plugin",
                "version": version,
                "perses": {"plugins": [{"kind": "Panel", "spec": {"name": "StatChart"}}]},
            }
        )
    )
    manifest = {"id": "StatChart", "name": "StatChart", "metaData": {"buildInfo": {}}}
    manifest["metaData"]["buildInfo"] = {"buildVersion": version, "buildName": "x"}
    (pkg / "mf-manifest.json").write_text(json.dumps(manifest))
    return pkg


def test_an_archive_holds_the_served_files_the_schemas_and_a_vendored_cue_mod(tmp_path) -> None:
    pkg = _fake_package(tmp_path)
    folder = persesplugins.assemble(
        pkg, SCHEMAS / "statchart", SCHEMAS / persesplugins.CUE_PKG, tmp_path / "work"
    )
    archive = persesplugins.write_archive(folder, tmp_path / "out")
    assert archive.name == "StatChart-0.10.0.tar.gz"
    with tarfile.open(archive) as tar:
        names = set(tar.getnames())
    assert {"package.json", "mf-manifest.json", "__mf/js/StatChart.js"} <= names
    assert "schemas/stat.cue" in names and "cue.mod/module.cue" in names
    assert "cue.mod/pkg/github.com/perses/perses/cue/common/threshold.cue" in names
    assert not any(n.startswith("lib/") for n in names)
    package = json.loads((folder / "package.json").read_text())
    assert package["perses"]["schemasPath"] == "schemas"


def test_schemas_of_another_release_than_the_package_are_refused(tmp_path) -> None:
    pkg = _fake_package(tmp_path, version="0.11.0")
    with pytest.raises(
        persesplugins.PluginError, match=r"npm 0\.11\.0, but the schemas are of 0\.10\.0"
    ):
        persesplugins.assemble(
            pkg, SCHEMAS / "statchart", SCHEMAS / persesplugins.CUE_PKG, tmp_path / "work"
        )


def test_every_npm_plugin_has_its_schemas_at_the_version_the_ui_installs() -> None:
    lock = json.loads((REPO_DIR / "webui" / "package-lock.json").read_text())["packages"]
    for package, folder in persesplugins.PLUGINS.items():
        version = lock[f"node_modules/{package}"]["version"]
        assert (SCHEMAS / folder / "VERSION").read_text().strip() == version, package
    for name, folder in persesplugins.SOURCE_PLUGINS.items():
        vendored = json.loads((REPO_DIR / "webui" / "vendor" / name / "package.json").read_text())
        assert (SCHEMAS / folder / "VERSION").read_text().strip() == vendored["version"]


def test_the_cache_keeps_only_what_is_used(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("WLMON_CACHE", str(tmp_path))
    used = COMPONENTS["perses"].directory
    used.mkdir()
    (tmp_path / f"{used.name}.build.log").write_text("log")
    old = tmp_path / "perses-0.54.0-uiold"
    for retired in (old, tmp_path / "grafana-10.1.0-pre.20230609", tmp_path / ".perses-x"):
        retired.mkdir()
    (tmp_path / "grafana-ui-10.1.0-pre.20230609.build.log").write_text("log")
    gone = stale(tmp_path)
    assert [p.name for p in gone] == [
        ".perses-x",
        "grafana-10.1.0-pre.20230609",
        "grafana-ui-10.1.0-pre.20230609.build.log",
        "perses-0.54.0-uiold",
    ]
    result = CliRunner().invoke(app, ["stack", "prune", "--dry-run"])
    assert result.exit_code == 0 and "would delete" in result.output
    assert old.is_dir()
    prune(gone)
    assert sorted(p.name for p in tmp_path.iterdir()) == [used.name, f"{used.name}.build.log"]


def test_up_prints_perses_as_the_home_page_with_the_nocs_url(tmp_path, monkeypatch) -> None:
    running = [Running("perses", 1, "http://127.0.0.1:3999", "h", "perses", "log")]
    monkeypatch.setattr(Stack, "up", lambda self, only=None, on_event=None: running)
    env = {"WLMON_STATE_DIR": str(tmp_path), "COLUMNS": "300"}
    result = CliRunner().invoke(app, ["up", "--no-install-missing"], env=env)
    assert result.exit_code == 0, result.output
    home = (
        "Web UI: Perses, served by wlmon (sign in as admin): "
        "http://127.0.0.1:3999/projects/wlmon/dashboards/noc"
    )
    assert home in result.output
    assert "(active, inhibited, silenced): http://127.0.0.1:3999/alerts" in result.output
    assert "Grafana" not in result.output
    # Nobody configured: who is told, and the two warnings.
    assert "Notifications go to: the API's webhook (stored, NOC, log line)\n" in result.output
    assert "only the API's webhook receives alerts" in result.output
    assert "no dead man's switch" in result.output


def test_up_lists_the_configured_receivers_and_no_secret(tmp_path, monkeypatch) -> None:
    running = [Running("perses", 1, "http://127.0.0.1:3999", "h", "perses", "log")]
    monkeypatch.setattr(Stack, "up", lambda self, only=None, on_event=None: running)
    key = tmp_path / "pd-key"
    key.write_text("pd-secret-routing-key")
    env = {
        "WLMON_STATE_DIR": str(tmp_path),
        "COLUMNS": "300",
        "WLMON_SMTP_SMARTHOST": "mail.example:587",
        "WLMON_SLACK_WEBHOOK_URL": "https://hooks.slack.example/services/T/B/slack-secret",
        "WLMON_PAGERDUTY_ROUTING_KEY_FILE": str(key),
        "WLMON_WATCHDOG_URL": "https://hc.example/ping/watchdog-secret",
    }
    result = CliRunner().invoke(app, ["up", "--no-install-missing"], env=env)
    assert result.exit_code == 0, result.output
    assert (
        "Notifications go to: the API's webhook (stored, NOC, log line), e-mail via "
        "mail.example:587 to oncall@localhost (pages), noc@localhost (warnings), Slack, "
        "PagerDuty, dead man's switch"
    ) in result.output
    assert "warning:" not in result.output
    for secret in ("slack-secret", "pd-secret-routing-key", "watchdog-secret"):
        assert secret not in result.output


def test_compose_renders_perses_for_the_official_image(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("WLMON_PERSES_ADMIN_PASSWORD", raising=False)
    args = ["render-config", "perses", "--out", str(tmp_path), "--seen-as", "/etc/perses/config"]
    refused = CliRunner().invoke(app, args)
    assert refused.exit_code == 2 and "set WLMON_PERSES_ADMIN_PASSWORD" in refused.output
    assert not (tmp_path / "perses").exists()
    env = {"WLMON_PERSES_ADMIN_PASSWORD": "c-pw", "WLMON_PERSES_PROMETHEUS_URL": "http://q:10902"}
    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code == 0, result.output
    doc = yaml.safe_load((tmp_path / "perses" / "config.yaml").read_text())
    # Paths as the container sees them: the mounted volume, the image's plugin folders.
    assert doc["provisioning"]["folders"] == [
        "/etc/perses/config/perses/provisioning",
        "/etc/perses/dashboards",
    ]
    assert doc["plugin"] == {
        "path": "/etc/perses/plugins",
        "archive_paths": ["/etc/perses/plugins-archive"],
    }
    assert doc["security"]["encryption_key_file"] == "/run/secrets/perses_encryption_key"
    prov = tmp_path / "perses" / "provisioning"
    ds = yaml.safe_load((prov / "datasources.yaml").read_text())
    prom = next(d for d in ds if d["metadata"]["name"] == "prometheus")
    assert prom["spec"]["plugin"]["spec"]["proxy"]["spec"]["url"] == "http://q:10902"
    user = yaml.safe_load((prov / "admin-user.yaml").read_text())
    assert user["spec"]["nativeProvider"]["password"] == "c-pw"


def test_the_alerts_datasource_is_read_only_and_its_password_stays_in_a_file(tmp_path) -> None:
    password_file = tmp_path / "am-password"
    password_file.write_text("am-secret-1")
    inputs = _inputs(
        tmp_path,
        alertmanager_url="http://127.0.0.1:9093",
        alertmanager_user="wlmon",
        alertmanager_password_file=password_file,
    )
    perses.render(REPO_DIR, tmp_path / "config", inputs)
    text = (tmp_path / "config" / "perses" / "provisioning" / "datasources.yaml").read_text()
    assert "am-secret-1" not in text
    resources = {(r["kind"], r["metadata"]["name"]): r for r in yaml.safe_load(text)}
    secret = resources[("GlobalSecret", perses.ALERTS_DATASOURCE)]["spec"]["basicAuth"]
    assert secret == {"username": "wlmon", "passwordFile": str(password_file)}
    spec = resources[("GlobalDatasource", perses.ALERTS_DATASOURCE)]["spec"]
    assert spec["default"] is False
    proxy = spec["plugin"]["spec"]["proxy"]["spec"]
    assert proxy["url"] == "http://127.0.0.1:9093"
    assert proxy["secret"] == perses.ALERTS_DATASOURCE
    allowed = proxy["allowedEndpoints"]
    assert {e["method"] for e in allowed} == {"GET"}
    # Anchored: Perses matches the pattern anywhere in the path otherwise.
    assert {e["endpointPattern"] for e in allowed} == {"^/api/v2/alerts$", "^/api/v2/status$"}
    # The Prometheus datasource stays the one the dashboards' queries use.
    assert resources[("GlobalDatasource", "prometheus")]["spec"]["default"] is True


def test_without_an_alertmanager_there_is_no_alerts_datasource(tmp_path) -> None:
    perses.render(REPO_DIR, tmp_path / "config", _inputs(tmp_path))
    text = (tmp_path / "config" / "perses" / "provisioning" / "datasources.yaml").read_text()
    names = {r["metadata"]["name"] for r in yaml.safe_load(text)}
    assert perses.ALERTS_DATASOURCE not in names


def test_the_alerts_page_knows_the_heartbeat_by_the_rule_s_name() -> None:
    """webui/src/alerts.tsx sets the heartbeat apart by name: the name alerts/ gives it."""
    source = (REPO_DIR / "webui" / "src" / "alerts.tsx").read_text()
    (name,) = re.findall(r"const HEARTBEAT = '([^']+)';", source)
    assert name == watchdog()["alert"]
