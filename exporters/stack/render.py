"""Turns provisioning/ (written for docker-compose) into the native stack's configs.

Servers that expand environment variables themselves (Loki, Telegraf, Grafana,
InfluxDB's INFLUXDB_* overrides) get the files unchanged plus variables. Prometheus and
Alertmanager do not expand variables, so their compose service names are rewritten to
127.0.0.1 and the configured ports here.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from exporters.stack.settings import StackSettings

# docker-compose service name and container port -> settings port attribute.
SERVICE_ADDRESSES = {
    "exporter:9300": "exporter",
    "prometheus:9090": "prometheus",
    "alertmanager:9093": "alertmanager",
    "loki:3100": "loki",
    "telegraf:9273": "telegraf",
    "api:8000": "api",
    "influxdb:8086": "influxdb",
    "grafana:3000": "grafana",
}


def native_address(compose_address: str, settings: StackSettings) -> str:
    attr = SERVICE_ADDRESSES.get(compose_address)
    if attr is None:
        return compose_address
    return f"127.0.0.1:{getattr(settings.ports, attr)}"


def _rewrite_urls(text: str, settings: StackSettings) -> str:
    for compose, attr in SERVICE_ADDRESSES.items():
        text = text.replace(f"//{compose}", f"//127.0.0.1:{getattr(settings.ports, attr)}")
    return text


def render_prometheus(settings: StackSettings, out_dir: Path) -> Path:
    src = settings.repo_dir / "provisioning" / "prometheus" / "prometheus.yml"
    doc = yaml.safe_load(src.read_text())
    doc.setdefault("global", {})["scrape_interval"] = settings.scrape_interval
    doc["global"]["evaluation_interval"] = settings.scrape_interval
    doc["rule_files"] = [str(settings.repo_dir / "alerts" / "*.rules.yml")]
    for am in doc.get("alerting", {}).get("alertmanagers", []):
        for sc in am.get("static_configs", []):
            sc["targets"] = [native_address(t, settings) for t in sc["targets"]]
    for job in doc.get("scrape_configs", []):
        for sc in job.get("static_configs", []):
            sc["targets"] = [native_address(t, settings) for t in sc["targets"]]
    out = out_dir / "prometheus" / "prometheus.yml"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(yaml.safe_dump(doc, sort_keys=False))
    return out


def render_alertmanager(settings: StackSettings, out_dir: Path) -> Path:
    src = settings.repo_dir / "provisioning" / "alertmanager" / "alertmanager.yml"
    out = out_dir / "alertmanager" / "alertmanager.yml"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(_rewrite_urls(src.read_text(), settings))
    return out


def copy_tree(settings: StackSettings, server: str, out_dir: Path) -> Path:
    """Servers that expand variables themselves: their folder as it is."""
    src = settings.repo_dir / "provisioning" / server
    dst = out_dir / server
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst)
    return dst
