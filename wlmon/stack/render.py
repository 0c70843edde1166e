"""Turns provisioning/ (written for docker-compose) into the native stack's configs.

Servers that expand environment variables themselves (Telegraf,
InfluxDB's INFLUXDB_* overrides) get the files unchanged plus variables. Prometheus does
not, so its compose service names are rewritten to 127.0.0.1 and the configured ports.
Alertmanager's file is a template filled from WLMON_* values (also in docker-compose,
by the alertmanager-config job); without an SMTP smarthost its e-mail parts are dropped.
Alertmanager asks for basic auth (its web config, with a bcrypt hash of the password):
Prometheus gets the password as a file beside its config. VictoriaLogs (the log store)
serves HTTPS with basic auth: the configs name docker-compose's secrets
(/run/secrets/victorialogs_ca, ...), which the native stack points at the state's files.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import bcrypt
import yaml
from pydantic import SecretStr

from alerts import dashboards
from alerts.settings import DEFAULT_RUNBOOK_BASE_URL, runbook_url
from exporters.durations import parse_duration
from exporters.monitor import MonitorFileError, load_monitor_file
from wlmon.stack.settings import StackSettings
from wlmon.stack.template import TemplateError, expand

# docker-compose service name and container port -> settings port attribute.
SERVICE_ADDRESSES = {
    "exporter:9300": "exporter",
    "prometheus:9090": "prometheus",
    "alertmanager:9093": "alertmanager",
    "victorialogs:9428": "victorialogs",
    "telegraf:9273": "telegraf",
    "api:8000": "api",
    "influxdb:8086": "influxdb",
    "perses:8080": "perses",
}


# The one user Alertmanager lets in; its password is a secret of the stack's state
# (WLMON_ALERTMANAGER_PASSWORD), or of .env in docker-compose.
ALERTMANAGER_USER = "wlmon"
# Alertmanager (exporter-toolkit) checks the hash once per distinct credential and caches
# the answer, so the cost only slows a guesser: 10 rounds, about 50 ms on one core.
BCRYPT_ROUNDS = 10
ALERTMANAGER_PASSWORD_FILE = "alertmanager-password"


def native_address(compose_address: str, settings: StackSettings) -> str:
    attr = SERVICE_ADDRESSES.get(compose_address)
    if attr is None:
        return compose_address
    return f"127.0.0.1:{getattr(settings.ports, attr)}"


def render_prometheus(
    settings: StackSettings,
    out_dir: Path,
    alertmanager_password: str,
    secret_files: Mapping[str, Path],
) -> Path:
    src = settings.repo_dir / "provisioning" / "prometheus" / "prometheus.yml"
    doc = yaml.safe_load(src.read_text())
    doc.setdefault("global", {})["scrape_interval"] = settings.scrape_interval
    doc["global"]["evaluation_interval"] = settings.scrape_interval
    # Relative to the config's directory, where `wlmon up` starts Prometheus: the rule
    # files' names (Prometheus' alert list shows them as groups' files) are then
    # rules/workload.rules.yml, not the state directory's absolute path.
    rules = render_rules(settings, out_dir)
    doc["rule_files"] = [f"{rules.name}/*.rules.yml"]
    out = out_dir / "prometheus" / "prometheus.yml"
    out.parent.mkdir(parents=True, exist_ok=True)
    password_file = prometheus_alertmanager_password(out.parent, alertmanager_password)
    for am in doc.get("alerting", {}).get("alertmanagers", []):
        _native_basic_auth(am, password_file)
        for sc in am.get("static_configs", []):
            sc["targets"] = [native_address(t, settings) for t in sc["targets"]]
    for job in doc.get("scrape_configs", []):
        _native_basic_auth(job, password_file)
        for sc in job.get("static_configs", []):
            sc["targets"] = [native_address(t, settings) for t in sc["targets"]]
            if "sid" in sc.get("labels", {}):
                sc["labels"]["sid"] = settings.sid
        if job["job_name"] == "wlmon-exporter":
            _exporter_targets(job, settings)
    text = yaml.safe_dump(doc, sort_keys=False)
    out.write_text(native_secret_paths(text, secret_files, str(src)))
    return out


def _exporter_targets(job: dict, settings: StackSettings) -> None:
    """The twin's exporter while the model runs, the real SIDs' monitor exporter when a
    monitor file is set: one job, so SAPExporterDown watches both. The monitor target is
    labelled with its SID when it serves one (its series carry their own either way)."""
    # Compose finds its monitor service by DNS; natively it is a static target or absent.
    job.pop("dns_sd_configs", None)
    configs = job.get("static_configs", []) if settings.model else []
    if settings.monitor_file is not None:
        target: dict = {"targets": [f"127.0.0.1:{settings.ports.monitor}"]}
        sids = monitor_sids(settings.monitor_file)
        if len(sids) == 1:
            target["labels"] = {"sid": sids[0]}
        configs = [*configs, target]
    job["static_configs"] = configs


def monitor_sids(path: Path) -> list[str]:
    """The SIDs of a monitor file, the file checked as the exporter will (a refusal names
    the file and field before anything starts)."""
    try:
        return [sid for sid, _ in load_monitor_file(path)]
    except MonitorFileError as exc:
        raise TemplateError(f"WLMON_MONITOR_FILE: {exc}") from exc


_SECRET_PATH = re.compile(r"/run/secrets/([A-Za-z0-9_]+)")


def native_secret_paths(text: str, files: Mapping[str, Path], origin: str) -> str:
    """docker-compose's /run/secrets/<name> -> the state's file, for the names in `files`
    (the log store's CA and password); a victorialogs_* secret the native stack does not have
    is an error."""

    def sub(match: re.Match) -> str:
        name = match[1]
        if name in files:
            return str(files[name])
        if name.startswith("victorialogs_"):
            raise TemplateError(f"{origin}: names secret {name}, which wlmon does not make")
        return match[0]

    return _SECRET_PATH.sub(sub, text)


def native_secret_files(path: Path, files: Mapping[str, Path]) -> Path:
    """A copied config with its secret paths pointed at the state."""
    path.write_text(native_secret_paths(path.read_text(), files, str(path)))
    return path


def prometheus_alertmanager_password(prometheus_dir: Path, password: str) -> Path:
    """The password Prometheus sends Alertmanager, as a 0600 file beside its config."""
    if not password:
        raise TemplateError("set WLMON_ALERTMANAGER_PASSWORD (Alertmanager asks for basic auth)")
    prometheus_dir.mkdir(parents=True, exist_ok=True)
    path = prometheus_dir / ALERTMANAGER_PASSWORD_FILE
    _write_private(path, password)
    return path


def _native_basic_auth(section: dict, password_file: Path) -> None:
    """docker-compose's secret path (/run/secrets/...) -> the state's file, same user."""
    auth = section.get("basic_auth")
    if auth is not None and auth.get("username") == ALERTMANAGER_USER:
        auth["password_file"] = str(password_file)


# A range selector: a duration such as 5m or 1m30s, or (Prometheus 3) bare seconds.
_WINDOW = re.compile(r"\[(\d+|(?:\d+(?:ms|[smhd]))+)\]")


def scale_duration(text: str, factor: float) -> str:
    """'5m' scaled by 0.1 is '30s' (whole seconds, at least 1 s)."""
    return f"{max(1, round(parse_duration(text) * factor))}s"


def runbook_base(settings: StackSettings) -> str:
    """WLMON_RUNBOOK_BASE_URL; left at its default, the runbooks of this stack's own API
    where operators reach it (WLMON_EXTERNAL_HOST)."""
    base = settings.runbook_base_url
    if base == DEFAULT_RUNBOOK_BASE_URL:
        return f"{external_url(settings, settings.ports.api)}/runbooks"
    return base


def _link_runbooks(doc: dict, base: str) -> None:
    """The committed links name the default API: point them at `base`, made by the rule
    builder's own function (alerts.settings.runbook_url), not by editing the URL's text."""
    for group in doc["groups"]:
        for rule in group["rules"]:
            annotations = rule.get("annotations", {})
            if "runbook_url" in annotations:
                annotations["runbook_url"] = runbook_url(base, rule["alert"])


def render_rules(settings: StackSettings, out_dir: Path) -> Path:
    """alerts/*.rules.yml, with windows, for: and keep_firing_for: compressed when
    rules_time_scale < 1 and runbook links to where this stack serves the runbooks."""
    dst = out_dir / "prometheus" / "rules"
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    factor = settings.rules_time_scale
    base = runbook_base(settings)
    for src in sorted((settings.repo_dir / "alerts").glob("*.rules.yml")):
        doc = yaml.safe_load(src.read_text())
        _link_runbooks(doc, base)
        if factor != 1.0:
            for group in doc["groups"]:
                for rule in group["rules"]:
                    rule["expr"] = _WINDOW.sub(
                        lambda m: f"[{scale_duration(m.group(1), factor)}]",
                        rule["expr"],
                    )
                    # keep_firing_for is a window of the same clock as for:; a zero
                    # (fire at once) stays zero.
                    for key in ("for", "keep_firing_for"):
                        if key in rule and parse_duration(rule[key], allow_zero=True) > 0:
                            rule[key] = scale_duration(rule[key], factor)
        (dst / src.name).write_text(yaml.safe_dump(doc, sort_keys=False, width=1000))
    return dst


def external_url(settings: StackSettings, port: int) -> str:
    """Where an operator's browser reaches a service: WLMON_EXTERNAL_HOST (the address
    operators use for this machine) and the service's port."""
    return f"http://{settings.external_host}:{port}"


def alertmanager_values(
    settings: StackSettings, out_dir: Path, api_token: str, password: str
) -> dict[str, str]:
    """Template values for the native stack, from settings (WLMON_* variables)."""

    def secret(value: SecretStr | None) -> str:
        return value.get_secret_value() if value else ""

    def path(value: Path | None) -> str:
        return str(value) if value else ""

    return {
        "WLMON_API_URL": f"http://127.0.0.1:{settings.ports.api}",
        "WLMON_API_TOKEN": api_token,
        "WLMON_ALERTMANAGER_PASSWORD": password,
        "WLMON_ALERTMANAGER_DIR": str(out_dir / "alertmanager"),
        "WLMON_PERSES_URL": external_url(settings, settings.ports.perses),
        "WLMON_SMTP_SMARTHOST": settings.smtp_smarthost,
        "WLMON_SMTP_FROM": settings.smtp_from,
        "WLMON_SMTP_USERNAME": settings.smtp_username,
        "WLMON_SMTP_PASSWORD": secret(settings.smtp_password),
        "WLMON_SMTP_PASSWORD_FILE": path(settings.smtp_password_file),
        "WLMON_SMTP_REQUIRE_TLS": "true" if settings.smtp_require_tls else "false",
        "WLMON_ALERT_EMAIL_CRITICAL": settings.alert_email_critical,
        "WLMON_ALERT_EMAIL_WARNING": settings.alert_email_warning,
        "WLMON_SLACK_WEBHOOK_URL": secret(settings.slack_webhook_url),
        "WLMON_SLACK_WEBHOOK_URL_FILE": path(settings.slack_webhook_url_file),
        "WLMON_SLACK_CHANNEL": settings.slack_channel,
        "WLMON_TEAMS_WEBHOOK_URL": secret(settings.teams_webhook_url),
        "WLMON_TEAMS_WEBHOOK_URL_FILE": path(settings.teams_webhook_url_file),
        "WLMON_PAGERDUTY_ROUTING_KEY": secret(settings.pagerduty_routing_key),
        "WLMON_PAGERDUTY_ROUTING_KEY_FILE": path(settings.pagerduty_routing_key_file),
        "WLMON_PAGERDUTY_URL": settings.pagerduty_url,
        "WLMON_AM_GROUP_WAIT": settings.am_group_wait,
        "WLMON_AM_GROUP_INTERVAL": settings.am_group_interval,
        "WLMON_AM_CAUSE_GROUP_WAIT": settings.am_cause_group_wait,
        "WLMON_AM_CAUSE_GROUP_INTERVAL": settings.am_cause_group_interval,
        "WLMON_WATCHDOG_URL": secret(settings.watchdog_url),
        "WLMON_WATCHDOG_URL_FILE": path(settings.watchdog_url_file),
        "WLMON_WATCHDOG_INTERVAL": settings.watchdog_interval,
    }


@dataclass(frozen=True)
class Integration:
    """A receiver integration that needs a secret: rendered only when the secret is given
    (WLMON_<NAME>, written to a 0600 file) or its file is (WLMON_<NAME>_FILE, used as it is)."""

    label: str  # what the banner calls it
    value: str  # WLMON_... holding the secret; + "_FILE" for the operator's own file
    key: str  # the receivers' list of this integration
    field: str  # its *_file field
    file: str  # the rendered secret's file name
    receivers: tuple[str, ...] = ()  # only these receivers' (all when empty)


INTEGRATIONS = (
    Integration(
        "Slack", "WLMON_SLACK_WEBHOOK_URL", "slack_configs", "api_url_file", "slack-webhook-url"
    ),
    Integration(
        "Microsoft Teams",
        "WLMON_TEAMS_WEBHOOK_URL",
        "msteamsv2_configs",
        "webhook_url_file",
        "teams-webhook-url",
    ),
    Integration(
        "PagerDuty",
        "WLMON_PAGERDUTY_ROUTING_KEY",
        "pagerduty_configs",
        "routing_key_file",
        "pagerduty-routing-key",
    ),
    Integration(
        "dead man's switch",
        "WLMON_WATCHDOG_URL",
        "webhook_configs",
        "url_file",
        "watchdog-url",
        receivers=("watchdog",),
    ),
)


def configured_receivers(values: Mapping[str, str]) -> list[str]:
    """The people-facing integrations these values render, besides the API's webhook."""
    out = []
    if values.get("WLMON_SMTP_SMARTHOST"):
        out.append(
            f"e-mail via {values['WLMON_SMTP_SMARTHOST']} to "
            f"{values.get('WLMON_ALERT_EMAIL_CRITICAL') or 'oncall@localhost'} (pages), "
            f"{values.get('WLMON_ALERT_EMAIL_WARNING') or 'noc@localhost'} (warnings)"
        )
    out += [i.label for i in INTEGRATIONS if _given(values, i.value)]
    return out


def _given(values: Mapping[str, str], name: str) -> bool:
    return bool(values.get(name) or values.get(f"{name}_FILE"))


def render_alertmanager(template_dir: Path, values: Mapping[str, str], out: Path) -> Path:
    """alertmanager.yml with its variables filled, its secrets as 0600 files, the
    notification templates, and web.yml: the basic auth Alertmanager asks of every
    request (--web.config.file). An integration whose secret is not given is left out."""
    src = template_dir / "alertmanager.yml"
    token = values.get("WLMON_API_TOKEN", "")
    if not token:
        raise TemplateError(f"{src}: set WLMON_API_TOKEN (the webhook authenticates to the API)")
    password = values.get("WLMON_ALERTMANAGER_PASSWORD", "")
    if not password:
        raise TemplateError(
            f"{src}: set WLMON_ALERTMANAGER_PASSWORD (Alertmanager asks for basic auth)"
        )
    out.mkdir(parents=True, exist_ok=True)
    values = {
        **values,
        "WLMON_ALERTMANAGER_DIR": values.get("WLMON_ALERTMANAGER_DIR") or str(out),
        "WLMON_WATCHDOG_REPEAT_INTERVAL": watchdog_repeat(
            values.get("WLMON_WATCHDOG_INTERVAL") or "1m"
        ),
    }
    doc = yaml.safe_load(expand(src.read_text(), values, str(src)))
    if values.get("WLMON_SMTP_SMARTHOST"):
        _secret_file(doc["global"], "smtp_auth_password_file", values, "WLMON_SMTP_PASSWORD", out)
    else:
        doc = without_email(doc)
        _remove(out / "smtp-password")
    for integration in INTEGRATIONS:
        for receiver in doc.get("receivers", []):
            if integration.receivers and receiver["name"] not in integration.receivers:
                continue
            if integration.key not in receiver:
                continue
            if not _given(values, integration.value):
                receiver.pop(integration.key)
                continue
            for config in receiver[integration.key]:
                _secret_file(config, integration.field, values, integration.value, out)
        if not _given(values, integration.value):
            _remove(out / integration.file)
    _write_private(out / "api-token", token)
    render_web_config(out / "web.yml", password)
    shutil.copy(template_dir / "wlmon.tmpl", out / "wlmon.tmpl")
    perses_url = values.get("WLMON_PERSES_URL") or "http://127.0.0.1:3000"
    (out / "dashboards.tmpl").write_text(dashboards.alertmanager_template(perses_url))
    path = out / "alertmanager.yml"
    path.write_text(
        "# Rendered by wlmon from provisioning/alertmanager/alertmanager.yml.\n"
        + yaml.safe_dump(doc, sort_keys=False, width=1000)
    )
    return path


def watchdog_repeat(interval: str) -> str:
    """The watchdog route's repeat_interval: half its group_interval (the template says why),
    whole seconds, at least 1 s."""
    try:
        return f"{max(1, parse_duration(interval) // 2):.0f}s"
    except ValueError as exc:
        raise TemplateError(f"WLMON_WATCHDOG_INTERVAL={interval!r}: {exc}") from exc


def _secret_file(config: dict, field: str, values: Mapping[str, str], name: str, out: Path) -> None:
    """`field` of `config` names the operator's file (NAME_FILE), else the 0600 file the
    secret (NAME) is written to; the secret itself never enters the config."""
    own = values.get(f"{name}_FILE")
    if own:
        config[field] = str(Path(own).resolve())
        return
    # The config names the file where Alertmanager reads it (WLMON_ALERTMANAGER_DIR, in
    # docker-compose a path of the container); it is written into `out`, that directory.
    _write_private(out / Path(config[field]).name, values.get(name, ""))


def _remove(path: Path) -> None:
    path.unlink(missing_ok=True)


def render_web_config(path: Path, password: str) -> Path:
    """Alertmanager's web config (Prometheus exporter-toolkit): basic auth for one user,
    the password as a bcrypt hash. Kept when the hash still matches, so a restart with
    the same secret leaves the file (and its mtime) alone."""
    if path.is_file():
        with contextlib.suppress(yaml.YAMLError, KeyError, TypeError, ValueError):
            kept = yaml.safe_load(path.read_text())["basic_auth_users"][ALERTMANAGER_USER]
            if bcrypt.checkpw(password.encode(), kept.encode()):
                return path
    hashed = bcrypt.hashpw(password.encode(), bcrypt.gensalt(BCRYPT_ROUNDS)).decode()
    doc = {"basic_auth_users": {ALERTMANAGER_USER: hashed}}
    # A hash, not the password: readable by the server's user (docker-compose's volume).
    path.write_text(
        "# Rendered by wlmon (wlmon/stack/render.py): Alertmanager's basic auth.\n"
        + yaml.safe_dump(doc, sort_keys=False)
    )
    return path


SMTP_GLOBALS = (
    "smtp_smarthost",
    "smtp_from",
    "smtp_auth_username",
    "smtp_auth_password_file",
    "smtp_require_tls",
)


def without_email(doc: dict) -> dict:
    """The config with no e-mail receiver and no SMTP globals (no smarthost configured)."""
    for key in SMTP_GLOBALS:
        doc.get("global", {}).pop(key, None)
    for receiver in doc.get("receivers", []):
        receiver.pop("email_configs", None)
    return doc


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.chmod(path, 0o600)


def copy_tree(settings: StackSettings, server: str, out_dir: Path) -> Path:
    """Servers that expand variables themselves: their folder as it is."""
    src = settings.repo_dir / "provisioning" / server
    dst = out_dir / server
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst)
    return dst
