"""Each server's own checker accepts the configs wlmon renders from provisioning/."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import bcrypt
import pytest
import yaml

from exporters.durations import parse_duration
from tests.telegraf_secrets import telegraf_password_reference
from tests.victorialogs import free_port
from wlmon.stack import render
from wlmon.stack.components import COMPONENTS
from wlmon.stack.runtime import Stack
from wlmon.stack.settings import REPO_DIR, Ports, StackSettings
from wlmon.stack.template import TemplateError


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Stack:
    stack = Stack(StackSettings(state_dir=tmp_path_factory.mktemp("state")))
    stack.render()
    return stack


def _run(argv: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    binary = argv[0]
    assert os.path.isfile(binary), f"{binary} missing: run `wlmon stack install`"
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, **(env or {})},
    )


def test_promtool_checks_the_rendered_prometheus_config(rendered) -> None:
    cfg = rendered.config_dir / "prometheus" / "prometheus.yml"
    result = _run([str(COMPONENTS["prometheus"].path("promtool")), "check", "config", str(cfg)])
    assert result.returncode == 0, result.stdout + result.stderr


def test_amtool_checks_the_alertmanager_config(rendered) -> None:
    cfg = rendered.config_dir / "alertmanager" / "alertmanager.yml"
    result = _run([str(COMPONENTS["alertmanager"].path("amtool")), "check-config", str(cfg)])
    assert result.returncode == 0, result.stdout + result.stderr


def test_victorialogs_runs_with_the_retention_and_cap_the_settings_give(tmp_path) -> None:
    """VictoriaLogs has no config file and no -verify-config: the rendered flags are checked
    by starting it as `wlmon up` does and reading back its /flags (behind basic auth)."""
    if not COMPONENTS["victorialogs"].path("victoria-logs").is_file():
        pytest.skip("victorialogs missing: run `wlmon stack install --only victorialogs`")
    settings = StackSettings(
        state_dir=tmp_path,
        victorialogs_retention="7d",
        victorialogs_max_disk="2GiB",
        ports=Ports(victorialogs=free_port()),
    )
    stack = Stack(settings)
    try:
        stack.up(only=["victorialogs"])
        with stack.logs_client() as c:
            flags = c.get("/flags").text
            metrics = c.get("/metrics").text
    finally:
        stack.down()
    assert '-retentionPeriod="7d"' in flags
    assert "-retention.maxDiskSpaceUsageBytes=" in flags and "2GiB" in flags
    assert f'-httpListenAddr="127.0.0.1:{settings.ports.victorialogs}"' in flags
    assert '-httpAuth.password="secret"' in flags  # it does not show the password
    assert "vl_data_size_bytes" in metrics  # what the log-store alerts read


def test_the_settings_default_retention_matches_influxdbs(rendered) -> None:
    """The log store keeps what InfluxDB keeps (forensics read both for the same runs)."""
    s = rendered.settings
    assert parse_duration(s.victorialogs_retention) == parse_duration(s.influxdb_retention)


def test_the_exporters_up_series_carries_the_sid(tmp_path) -> None:
    stack = Stack(StackSettings(state_dir=tmp_path, sid="QAS"))
    secrets = stack.logs_secret_files()
    out = render.render_prometheus(stack.settings, tmp_path, "p", secrets)
    doc = yaml.safe_load(out.read_text())
    job = next(j for j in doc["scrape_configs"] if j["job_name"] == "wlmon-exporter")
    # honor_labels: the exporter's own sid stays sid (not exported_sid) on its series.
    assert job["honor_labels"] is True
    assert [sc["labels"] for sc in job["static_configs"]] == [{"sid": "QAS"}]


@pytest.fixture
def no_stack_env(monkeypatch) -> None:
    """Settings from the test alone: the integration stack exports its WLMON_* variables for
    the whole session (SMTP sink, e-mail addresses), which would leak in here."""
    for name in list(os.environ):
        if name.startswith("WLMON_") and name != "WLMON_CACHE":
            monkeypatch.delenv(name)


def cfg_text(tmp_path) -> str:
    return (tmp_path / "config" / "alertmanager" / "alertmanager.yml").read_text()


def _alertmanager(tmp_path, **settings) -> dict:
    stack = Stack(StackSettings(state_dir=tmp_path, api_token="t", **settings))
    stack.render()
    cfg = stack.config_dir / "alertmanager" / "alertmanager.yml"
    result = _run([str(COMPONENTS["alertmanager"].path("amtool")), "check-config", str(cfg)])
    assert result.returncode == 0, result.stdout + result.stderr
    return yaml.safe_load(cfg.read_text())


def test_without_smtp_no_receiver_mails(tmp_path, no_stack_env) -> None:
    doc = _alertmanager(tmp_path)
    assert not any("email_configs" in r for r in doc["receivers"])
    assert not any(key.startswith("smtp_") for key in doc["global"])
    people = [r for r in doc["receivers"] if r["name"] != "watchdog"]
    assert people and all(r["webhook_configs"] for r in people)


def test_a_yellow_dispatcher_is_muted_by_the_st03_alert_that_names_its_cause(
    tmp_path, no_stack_env
) -> None:
    """The model's sapstartsrv, read like a real system's, turns the dispatcher YELLOW when
    its queue does not drain: SAPProcessDegraded is muted where a workload page of the same
    instance names a cause, and each cause named there is the cause label of a real page
    of workload.rules.yml."""
    doc = _alertmanager(tmp_path)
    (rule,) = [
        r for r in doc["inhibit_rules"] if 'alertname="SAPProcessDegraded"' in r["target_matchers"]
    ]
    assert rule["equal"] == ["sid", "sap_instance"]
    assert 'process="disp+work"' in rule["target_matchers"]
    cause_matcher, severity = rule["source_matchers"]
    assert severity == 'severity="critical"'
    causes = set(cause_matcher.split('"')[1].split("|"))
    workload = yaml.safe_load((REPO_DIR / "alerts" / "workload.rules.yml").read_text())
    pages = {
        r["labels"]["cause"]
        for g in workload["groups"]
        for r in g["rules"]
        if "alert" in r and r["labels"]["severity"] == "critical"
    }
    assert causes == pages == {"work-processes", "database", "enqueue", "roll-area"}


def test_alerts_with_a_cause_are_grouped_by_it_at_each_receiver(tmp_path, no_stack_env) -> None:
    """One fault, one message per receiver: under both people's routes, alerts with a cause
    label are grouped by cause and SID (not alert name), with a group_wait and
    group_interval short enough for a page within 2 minutes and a resolved message within
    3 minutes of the fault's removal (docs/alerts.md); amtool routes them there."""
    doc = _alertmanager(tmp_path)
    for receiver in ("oncall-critical", "noc-warning"):
        (route,) = [r for r in doc["route"]["routes"] if r["receiver"] == receiver]
        (child,) = route["routes"]
        assert child["matchers"] == ['cause=~".+"']
        assert child["group_by"] == ["cause", "sid"]
        assert (child["group_wait"], child["group_interval"]) == ("15s", "30s")
    cfg = tmp_path / "config" / "alertmanager" / "alertmanager.yml"
    amtool = str(COMPONENTS["alertmanager"].path("amtool"))
    for labels, receiver in (
        (
            ["severity=critical", "cause=roll-area", "alertname=SAPRollInTimeHigh"],
            "oncall-critical",
        ),
        (["severity=warning", "cause=roll-area", "alertname=SAPRollFileInUse"], "noc-warning"),
        (["severity=warning", "alertname=SAPBufferSwaps"], "noc-warning"),
    ):
        result = _run([amtool, "config", "routes", "test", f"--config.file={cfg}", *labels])
        assert result.returncode == 0 and result.stdout.strip() == receiver, result.stdout


def test_without_a_watchdog_url_the_heartbeats_go_nowhere(tmp_path, no_stack_env) -> None:
    doc = _alertmanager(tmp_path)
    (watchdog,) = [r for r in doc["receivers"] if r["name"] == "watchdog"]
    assert watchdog == {"name": "watchdog"}


def test_the_watchdog_beats_to_its_url_at_its_interval(tmp_path, no_stack_env) -> None:
    doc = _alertmanager(
        tmp_path, watchdog_url="https://hc.example/ping/abc", watchdog_interval="2m"
    )
    (watchdog,) = [r for r in doc["receivers"] if r["name"] == "watchdog"]
    # The URL is the check's token: in a 0600 file, never in the config.
    (hook,) = watchdog["webhook_configs"]
    assert "url" not in hook and "ping/abc" not in cfg_text(tmp_path)
    assert Path(hook["url_file"]).read_text() == "https://hc.example/ping/abc"
    assert Path(hook["url_file"]).stat().st_mode & 0o777 == 0o600
    (route,) = [r for r in doc["route"]["routes"] if r["receiver"] == "watchdog"]
    # A repeat at every flush: half the interval (the log's time is after each delivery).
    assert (route["group_interval"], route["repeat_interval"]) == ("2m", "60s")
    assert "continue" not in route  # a heartbeat never reaches people


def test_with_smtp_each_receiver_mails_its_address(tmp_path, no_stack_env) -> None:
    doc = _alertmanager(
        tmp_path, smtp_smarthost="mail.example:587", alert_email_critical="pager@example"
    )
    assert doc["global"]["smtp_smarthost"] == "mail.example:587"
    mails = {
        r["name"]: [e["to"] for e in r["email_configs"]]
        for r in doc["receivers"]
        if r["name"] != "watchdog"  # a heartbeat is never mailed
    }
    assert mails == {"oncall-critical": ["pager@example"], "noc-warning": ["noc@localhost"]}


def test_telegraf_loads_its_config(rendered, tmp_path) -> None:
    cfg = rendered.config_dir / "telegraf" / "telegraf.conf"
    # Its secret store's folder: InfluxDB's password as a file (not read by --test, but the
    # store is opened at load, and the @{store:name} reference resolved against it).
    folder, name = telegraf_password_reference()
    (tmp_path / "secrets").mkdir(mode=0o700)
    (tmp_path / "secrets" / name).write_text("pw")
    result = _run(
        [
            str(COMPONENTS["telegraf"].path("telegraf")),
            "--config",
            str(cfg),
            "--test",
            "--input-filter",
            "mem",
        ],
        env={
            "INFLUX_URL": "http://127.0.0.1:1",
            "TELEGRAF_PROMETHEUS_LISTEN": "127.0.0.1:0",
            "TELEGRAF_INTERVAL": "10s",
            "WLMON_SID": "BMK",
            "WLMON_EXPORTER_URL": "http://127.0.0.1:1/metrics",
            "TELEGRAF_EXPORTER_INTERVAL": "10s",
            folder: str(tmp_path / "secrets"),
        },
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "mem," in result.stdout


@pytest.mark.parametrize(
    ("labels", "receiver"),
    [
        (
            ["severity=critical", "sid=BMK", "alertname=SAPDispatcherWaitTimeHigh"],
            "oncall-critical",
        ),
        (["severity=warning", "sid=BMK", "alertname=SAPEnqueueTimeHigh"], "noc-warning"),
        (["severity=info", "sid=BMK"], "noc-warning"),
        (["severity=info", "alertname=SAPWatchdog"], "watchdog"),
        (["severity=critical", "alertname=SAPAPIDown", "job=wlmon-api"], "oncall-critical"),
    ],
)
def test_alertmanager_routes_by_severity(rendered, labels: list[str], receiver: str) -> None:
    cfg = rendered.config_dir / "alertmanager" / "alertmanager.yml"
    result = _run(
        [
            str(COMPONENTS["alertmanager"].path("amtool")),
            "config",
            "routes",
            "test",
            f"--config.file={cfg}",
            *labels,
        ]
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == receiver


def test_rendered_alertmanager_secrets_are_private(rendered) -> None:
    for name in ("api-token",):
        path = rendered.config_dir / "alertmanager" / name
        assert path.stat().st_mode & 0o777 == 0o600
    assert (rendered.config_dir / "alertmanager" / "api-token").read_text() == rendered.api_token()


def test_alertmanager_web_config_asks_for_the_stacks_password(rendered) -> None:
    """promtool (exporter-toolkit's own parser) accepts web.yml; its one user's hash is a
    bcrypt hash of the state's password and of nothing else."""
    web = rendered.config_dir / "alertmanager" / "web.yml"
    promtool = str(COMPONENTS["prometheus"].path("promtool"))
    result = _run([promtool, "check", "web-config", str(web)])
    assert result.returncode == 0, result.stdout + result.stderr
    user, password = rendered.alertmanager_auth()
    assert user == "wlmon" and len(password) >= 32
    assert rendered.secret_file("alertmanager-password").stat().st_mode & 0o777 == 0o600
    (hashed,) = yaml.safe_load(web.read_text())["basic_auth_users"].values()
    assert hashed.startswith("$2b$10$") and password not in web.read_text()
    assert bcrypt.checkpw(password.encode(), hashed.encode())
    assert not bcrypt.checkpw(password[:-1].encode(), hashed.encode())


def test_alertmanager_web_config_is_kept_while_the_password_is_the_same(tmp_path) -> None:
    web = tmp_path / "web.yml"
    first = render.render_web_config(web, "one").read_text()
    assert render.render_web_config(web, "one").read_text() == first  # the same salt
    changed = yaml.safe_load(render.render_web_config(web, "two").read_text())
    hashed = changed["basic_auth_users"]["wlmon"].encode()
    assert bcrypt.checkpw(b"two", hashed) and not bcrypt.checkpw(b"one", hashed)


def test_alertmanager_is_not_rendered_without_a_password(tmp_path) -> None:
    with pytest.raises(TemplateError, match="set WLMON_ALERTMANAGER_PASSWORD"):
        render.render_alertmanager(
            REPO_DIR / "provisioning" / "alertmanager", {"WLMON_API_TOKEN": "t"}, tmp_path
        )
    assert not (tmp_path / "web.yml").exists()


def _runbook_urls(rules_dir) -> dict[str, set[str]]:
    urls: dict[str, set[str]] = {}
    for path in rules_dir.glob("*.rules.yml"):
        for group in yaml.safe_load(path.read_text())["groups"]:
            for rule in group["rules"]:
                if "alert" in rule:
                    urls.setdefault(rule["alert"], set()).add(rule["annotations"]["runbook_url"])
    return urls


@pytest.mark.parametrize(
    ("env", "api_port", "base"),
    [
        ({}, 8000, "http://127.0.0.1:8000/runbooks"),
        ({}, 18000, "http://127.0.0.1:18000/runbooks"),
        (
            {"WLMON_RUNBOOK_BASE_URL": "https://noc.example/wlmon/runbooks"},
            18000,
            "https://noc.example/wlmon/runbooks",
        ),
    ],
)
def test_rendered_rules_link_the_runbooks_this_stack_serves(
    tmp_path, monkeypatch, env: dict, api_port: int, base: str
) -> None:
    monkeypatch.delenv("WLMON_RUNBOOK_BASE_URL", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = StackSettings(state_dir=tmp_path, ports=Ports(api=api_port))
    urls = _runbook_urls(render.render_rules(settings, tmp_path))
    assert urls and urls == {name: {f"{base}#{name.lower()}"} for name in urls}
    assert urls.keys() == _runbook_urls(settings.repo_dir / "alerts").keys()


def test_the_runbook_base_reaches_the_rules_as_a_setting_not_read_again(
    tmp_path, monkeypatch
) -> None:
    """Configuration flows down: the rendering links what the settings object says, even
    when the environment says otherwise after it was read (issue 33 item 6)."""
    monkeypatch.setenv("WLMON_RUNBOOK_BASE_URL", "https://env.example/runbooks")
    settings = StackSettings(
        state_dir=tmp_path, runbook_base_url="https://given.example/runbooks", ports=Ports()
    )
    monkeypatch.setenv("WLMON_RUNBOOK_BASE_URL", "https://later.example/runbooks")
    urls = _runbook_urls(render.render_rules(settings, tmp_path))
    assert {u.partition("#")[0] for links in urls.values() for u in links} == {
        "https://given.example/runbooks"
    }
    with pytest.raises(ValueError, match="WLMON_RUNBOOK_BASE_URL"):
        StackSettings(state_dir=tmp_path, runbook_base_url="runbooks#x")


def test_render_config_writes_docker_composes_web_config(tmp_path, monkeypatch) -> None:
    """The alertmanager-config job of docker-compose: the hash from the environment, and
    a clear line (no traceback) when .env lacks the password."""
    from typer.testing import CliRunner

    from wlmon.cli import app

    monkeypatch.setenv("WLMON_API_TOKEN", "t")
    monkeypatch.delenv("WLMON_ALERTMANAGER_PASSWORD", raising=False)
    result = CliRunner().invoke(app, ["render-config", "alertmanager", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "WLMON_ALERTMANAGER_PASSWORD" in result.output
    assert "Traceback" not in result.output
    monkeypatch.setenv("WLMON_ALERTMANAGER_PASSWORD", "from-env")
    result = CliRunner().invoke(app, ["render-config", "alertmanager", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    web = yaml.safe_load((tmp_path / "web.yml").read_text())
    assert bcrypt.checkpw(b"from-env", web["basic_auth_users"]["wlmon"].encode())


def test_one_external_host_sets_every_link_operators_follow(tmp_path, no_stack_env) -> None:
    """WLMON_EXTERNAL_HOST: Prometheus' and Alertmanager's --web.external-url (the alerts'
    generator and Alertmanager links), the runbook links in the rules and the dashboard
    links of the notification templates all name the address operators use."""
    stack = Stack(StackSettings(state_dir=tmp_path, api_token="t", external_host="noc.example"))
    stack.render()
    p = stack.settings.ports
    argv = {s.name: s.argv for s in stack.services()}
    assert f"--web.external-url=http://noc.example:{p.prometheus}" in argv["prometheus"]
    assert f"--web.external-url=http://noc.example:{p.alertmanager}" in argv["alertmanager"]
    rules = yaml.safe_load(
        (stack.config_dir / "prometheus" / "rules" / "workload.rules.yml").read_text()
    )
    links = {r["annotations"]["runbook_url"] for g in rules["groups"] for r in g["rules"]}
    assert links and all(u.startswith(f"http://noc.example:{p.api}/runbooks#") for u in links)
    tmpl = (stack.config_dir / "alertmanager" / "dashboards.tmpl").read_text()
    assert f'{{{{ define "wlmon.perses_url" }}}}http://noc.example:{p.perses}{{{{ end }}}}' in tmpl


def test_an_external_host_with_a_scheme_or_path_is_refused(tmp_path, no_stack_env) -> None:
    with pytest.raises(ValueError, match="external_host"):
        StackSettings(state_dir=tmp_path, external_host="http://noc.example/x")


def test_alerts_about_wlmon_itself_reach_a_person_without_the_api(tmp_path, no_stack_env) -> None:
    """Every alert of monitoring.rules.yml and exporter.rules.yml (the API, its storage,
    Alertmanager, the exporter...) is routed (amtool, on the rendered config) to a receiver
    that has an integration besides the API's webhook: e-mail, chat or pager straight from
    Alertmanager, so the API's death is told while it is dead. The watchdog excepted: it
    goes to the dead man's switch, outside too."""
    doc = _alertmanager(
        tmp_path,
        smtp_smarthost="mail.example:587",
        slack_webhook_url="https://hooks.slack.example/services/T/B/x1",
        pagerduty_routing_key="k" * 32,
        watchdog_url="https://hc.example/ping/abc",
    )
    direct = {
        r["name"]
        for r in doc["receivers"]
        if set(r) - {"name", "webhook_configs"} or r["name"] == "watchdog"
    }
    assert direct == {"watchdog", "oncall-critical", "noc-warning"}
    cfg = tmp_path / "config" / "alertmanager" / "alertmanager.yml"
    amtool = str(COMPONENTS["alertmanager"].path("amtool"))
    own = [
        r
        for name in ("monitoring", "exporter")
        for g in yaml.safe_load((REPO_DIR / "alerts" / f"{name}.rules.yml").read_text())["groups"]
        for r in g["rules"]
        if "alert" in r
    ]
    assert {"SAPAPIDown", "SAPAPIStorageDegraded", "SAPExporterDown"} <= {r["alert"] for r in own}
    for rule in own:
        labels = [f"alertname={rule['alert']}", *(f"{k}={v}" for k, v in rule["labels"].items())]
        result = _run([amtool, "config", "routes", "test", f"--config.file={cfg}", *labels])
        assert result.returncode == 0, result.stdout + result.stderr
        (receiver,) = result.stdout.split()
        assert receiver in direct, (rule["alert"], receiver)
        if rule["labels"]["severity"] == "critical":
            # Pages page: PagerDuty is on the on-call receiver only.
            assert receiver == "oncall-critical" or rule["alert"] == "SAPWatchdog"
    (oncall,) = [r for r in doc["receivers"] if r["name"] == "oncall-critical"]
    assert {"email_configs", "slack_configs", "pagerduty_configs"} <= set(oncall)
