"""`wlmon up` with real SIDs (issue 31 item 1): the twin, the monitor-only exporter, or both,
chosen by WLMON_MODEL and WLMON_MONITOR_FILE, never by inherited WLMON_SAPCONTROL_*."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from wlmon.stack import render
from wlmon.stack.pki import LogStorePKI
from wlmon.stack.runtime import Stack
from wlmon.stack.settings import Ports, StackSettings
from wlmon.stack.template import TemplateError


def _monitor_file(tmp_path: Path, sids: list[str]) -> Path:
    path = tmp_path / "real.yml"
    entries = [
        {"sid": s, "sapcontrol": {"discover": [f"https://{s.lower()}:50114/"]}} for s in sids
    ]
    path.write_text(yaml.safe_dump({"sids": entries}))
    return path


def _targets(settings: StackSettings, tmp_path: Path) -> list[dict]:
    logs_tls = LogStorePKI(tmp_path / "victorialogs-tls")
    secret_files = logs_tls.compose_secrets() | {"victorialogs_password": tmp_path / "pw"}
    out = render.render_prometheus(settings, tmp_path, "am", secret_files)
    doc = yaml.safe_load(out.read_text())
    (job,) = [j for j in doc["scrape_configs"] if j["job_name"] == "wlmon-exporter"]
    return job["static_configs"]


def test_real_sids_only_no_twin(tmp_path) -> None:
    settings = StackSettings(
        state_dir=tmp_path,
        model=False,
        monitor_file=_monitor_file(tmp_path, ["PRD"]),
        ports=Ports(monitor=19301),
    )
    names = [s.name for s in Stack(settings).services()]
    assert "exporter" not in names and "monitor" in names
    (monitor,) = [s for s in Stack(settings).services() if s.name == "monitor"]
    assert monitor.argv[-2:] == ["--monitor", str(settings.monitor_file)]
    assert "--scenario" not in monitor.argv and monitor.port == 19301
    assert _targets(settings, tmp_path) == [
        {"targets": ["127.0.0.1:19301"], "labels": {"sid": "PRD"}}
    ]


def test_twin_and_real_side_by_side(tmp_path) -> None:
    settings = StackSettings(
        state_dir=tmp_path,
        monitor_file=_monitor_file(tmp_path, ["PRD", "QAS"]),
        ports=Ports(exporter=19300, monitor=19301),
    )
    names = [s.name for s in Stack(settings).services()]
    assert {"exporter", "monitor"} <= set(names)
    assert _targets(settings, tmp_path) == [
        {"targets": ["127.0.0.1:19300"], "labels": {"sid": "BMK"}},
        # Two SIDs behind one target: each series carries its own (honor_labels).
        {"targets": ["127.0.0.1:19301"]},
    ]


def test_the_default_stack_has_no_monitor_exporter(tmp_path) -> None:
    names = [s.name for s in Stack(StackSettings(state_dir=tmp_path)).services()]
    assert "exporter" in names and "monitor" not in names


def test_nothing_to_watch_and_a_bad_monitor_file_are_refused(tmp_path) -> None:
    with pytest.raises(ValidationError, match="WLMON_MODEL=false and no WLMON_MONITOR_FILE"):
        StackSettings(state_dir=tmp_path, model=False)
    bad = tmp_path / "bad.yml"
    bad.write_text("sids:\n  - {sid: PRD, sapcontrol: {discover: [ftp://x/]}}\n")
    settings = StackSettings(state_dir=tmp_path, monitor_file=bad)
    with pytest.raises(TemplateError, match=r"WLMON_MONITOR_FILE: .*sids\.0\.sapcontrol\.discover"):
        _targets(settings, tmp_path)


def test_without_a_twin_the_secrets_table_has_no_model_sapstartsrv(tmp_path) -> None:
    real = _monitor_file(tmp_path, ["PRD"])
    without = Stack(StackSettings(state_dir=tmp_path, model=False, monitor_file=real))
    assert not [k for k in without.secret_sources() if "model's sapstartsrv" in k]
    twin = Stack(StackSettings(state_dir=tmp_path / "twin"))
    assert [k for k in twin.secret_sources() if "model's sapstartsrv" in k]


def test_native_prometheus_asks_no_dns_for_composes_monitor(tmp_path) -> None:
    """prometheus.yml finds compose's `monitor` service by DNS; natively that name means
    nothing (a lookup error every refresh): `wlmon up` lists its targets itself."""
    source = yaml.safe_load(
        (StackSettings().repo_dir / "provisioning" / "prometheus" / "prometheus.yml").read_text()
    )
    assert any("dns_sd_configs" in j for j in source["scrape_configs"])
    for settings in (
        StackSettings(state_dir=tmp_path),
        StackSettings(state_dir=tmp_path, monitor_file=_monitor_file(tmp_path, ["PRD"])),
    ):
        logs_tls = LogStorePKI(tmp_path / "victorialogs-tls")
        secret_files = logs_tls.compose_secrets() | {"victorialogs_password": tmp_path / "pw"}
        out = render.render_prometheus(settings, tmp_path, "am", secret_files)
        doc = yaml.safe_load(out.read_text())
        assert not [j["job_name"] for j in doc["scrape_configs"] if "dns_sd_configs" in j]
