"""Stack pieces that need no server: rendering, port clashes, unknown services."""

from __future__ import annotations

import socket

import pytest
import yaml

from wlmon.stack import render
from wlmon.stack.runtime import Stack, StackError
from wlmon.stack.settings import Ports, StackSettings


def test_prometheus_config_is_rendered_for_loopback(tmp_path) -> None:
    settings = StackSettings(state_dir=tmp_path, ports=Ports(exporter=19300, alertmanager=19093))
    out = render.render_prometheus(settings, tmp_path)
    doc = yaml.safe_load(out.read_text())
    targets = {j["job_name"]: j["static_configs"][0]["targets"] for j in doc["scrape_configs"]}
    assert targets["wlmon-exporter"] == ["127.0.0.1:19300"]
    assert doc["alerting"]["alertmanagers"][0]["static_configs"][0]["targets"] == [
        "127.0.0.1:19093"
    ]
    assert doc["rule_files"] == [str(tmp_path / "prometheus" / "rules" / "*.rules.yml")]
    assert (tmp_path / "prometheus" / "rules" / "workload.rules.yml").is_file()


def test_rules_time_scale_compresses_windows_and_for(tmp_path) -> None:
    settings = StackSettings(state_dir=tmp_path, rules_time_scale=0.1)
    out = render.render_rules(settings, tmp_path)
    rec = yaml.safe_load((out / "recording.rules.yml").read_text())["groups"][0]["rules"]
    assert "[30s]" in rec[0]["expr"] and "[5m]" not in rec[0]["expr"]
    alerts = yaml.safe_load((out / "workload.rules.yml").read_text())["groups"][0]["rules"]
    assert {r["for"] for r in alerts} == {"30s", "60s"}
    assert render.scale_duration("1h30m", 0.5) == "2700s"


def test_a_port_in_use_names_the_service_and_the_port(tmp_path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        stack = Stack(StackSettings(state_dir=tmp_path, ports=Ports(exporter=port)))
        with pytest.raises(
            StackError, match=rf"exporter: port {port} on 127.0.0.1 is already in use"
        ):
            stack.up(only=["exporter"])
    assert not (tmp_path / "run" / "services.json").exists()


def test_unknown_service_is_refused(tmp_path) -> None:
    with pytest.raises(StackError, match="unknown service"):
        Stack(StackSettings(state_dir=tmp_path)).up(only=["oracle"])


def test_generated_grafana_password_is_private_and_stable(tmp_path) -> None:
    stack = Stack(StackSettings(state_dir=tmp_path, grafana_admin_password=None))
    first, source = stack.grafana_password()
    again, _ = stack.grafana_password()
    assert first == again and len(first) >= 20
    path = tmp_path / "secrets" / "grafana-admin-password"
    assert str(path) in source
    assert path.stat().st_mode & 0o777 == 0o600


def test_a_missing_server_binary_says_how_to_install_it(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("WLMON_CACHE", str(tmp_path / "empty-cache"))
    with pytest.raises(
        StackError, match=r"loki: .*loki-3.7.8/loki is not installed; run `wlmon stack install`"
    ):
        Stack(StackSettings(state_dir=tmp_path)).up(only=["loki"])
