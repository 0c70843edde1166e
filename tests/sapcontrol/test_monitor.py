"""Monitor-only exporter (issue 31 item 1): real SIDs, no model. The twin's sapstartsrv
stands in for two real systems; each SID's settings are its entry's alone."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from alerts.thresholds import load_thresholds
from exporters.monitor import MonitorFileError, MonitorServer, load_monitor_file
from tests.sapcontrol.twins import twin_system


@pytest.fixture(scope="module")
def twins():
    thresholds = load_thresholds()
    systems = {
        "QAS": twin_system("QAS", thresholds, user="qasmon", password="qas-pw"),
        "PRD": twin_system("PRD", thresholds, user="prdmon", password="prd-pw"),
    }
    yield systems
    for system in systems.values():
        system.stop()


def _entry(sid: str, twins, tmp_path: Path, user: str, password: str) -> dict:
    pw = tmp_path / f"{sid}.pw"
    pw.write_text(password + "\n")
    first = next(iter(twins[sid].urls().values()))
    return {
        "sid": sid,
        "sapcontrol": {
            "discover": [first],
            "hosts": {"*": "127.0.0.1"},
            "username": user,
            "password_file": str(pw),
            "timeout_s": 5,
        },
    }


def _write(tmp_path: Path, name: str, entries: list[dict]) -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"sids": entries}))
    return path


def _samples(port: int) -> list:
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=30).text
    return [s for fam in text_string_to_metric_families(text) for s in fam.samples]


def test_each_exporter_serves_only_its_own_sid(twins, tmp_path, monkeypatch) -> None:
    # A shell's variables must not reach a SID configured by file: were they read, both
    # exporters would read QAS with QAS's user.
    monkeypatch.setenv("WLMON_SAPCONTROL_DISCOVER", next(iter(twins["QAS"].urls().values())))
    monkeypatch.setenv("WLMON_SAPCONTROL_USERNAME", "qasmon")
    monkeypatch.setenv("WLMON_SAPCONTROL_PASSWORD", "qas-pw")
    servers = {}
    for sid, user, pw in (("QAS", "qasmon", "qas-pw"), ("PRD", "prdmon", "prd-pw")):
        path = _write(tmp_path, f"{sid}.yml", [_entry(sid, twins, tmp_path, user, pw)])
        servers[sid] = MonitorServer(load_monitor_file(path)).start()
    try:
        for sid, server in servers.items():
            samples = _samples(server.port)
            sids = {s.labels["sid"] for s in samples if "sid" in s.labels}
            assert sids == {sid}
            up = {s.labels["sap_instance"]: s.value for s in samples if s.name == "sap_up"}
            assert len(up) == 6 and set(up.values()) == {1.0}, up  # 4 dialog, ASCS, Java
            # Its own user answers the protected methods: the work-process table is read.
            assert any(s.name == "sap_work_processes" for s in samples)
            info = [s.labels for s in samples if s.name == "sap_system_info"]
            assert info == [{"sid": sid, "kind": "sapcontrol"}]
            names = {s.name for s in samples}
            # No model: no simulated family, no model port answering.
            assert not any(
                n.startswith(("sap_workload_", "sap_st05_", "sap_dbbuffer")) for n in names
            )
            assert httpx.get(f"http://127.0.0.1:{server.port}/control/faults").status_code == 404
    finally:
        for server in servers.values():
            server.stop()


def test_one_process_serves_two_sids_each_with_its_own_user(twins, tmp_path) -> None:
    path = _write(
        tmp_path,
        "both.yml",
        [
            _entry("QAS", twins, tmp_path, "qasmon", "qas-pw"),
            # PRD given QAS's password: PRD's protected methods are refused, QAS's are not.
            _entry("PRD", twins, tmp_path, "prdmon", "qas-pw"),
        ],
    )
    server = MonitorServer(load_monitor_file(path)).start()
    try:
        samples = _samples(server.port)
        refused = {
            s.labels["sid"]: s.value for s in samples if s.name == "sap_sapcontrol_auth_refused"
        }
        assert refused["QAS"] == 0.0 and refused["PRD"] == 1.0
        per_sid = {}
        for s in samples:
            if s.name == "sap_up":
                per_sid.setdefault(s.labels["sid"], []).append(s.value)
        assert {k: len(v) for k, v in per_sid.items()} == {"QAS": 6, "PRD": 6}
        # One family per name in the exposition (the text format allows a name once).
        text = httpx.get(f"http://127.0.0.1:{server.port}/metrics").text
        types = [ln for ln in text.splitlines() if ln.startswith("# TYPE sap_up ")]
        assert len(types) == 1
    finally:
        server.stop()


def _dead_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def test_sid_known_before_any_instance_answers(tmp_path) -> None:
    path = _write(
        tmp_path,
        "dead.yml",
        [
            {
                "sid": "DEV",
                "sapcontrol": {
                    "discover": [f"http://127.0.0.1:{_dead_port()}/"],
                    "timeout_s": 0.5,
                },
            }
        ],
    )
    server = MonitorServer(load_monitor_file(path)).start()
    try:
        samples = _samples(server.port)
        unlabelled = [s for s in samples if s.name.startswith("sap_") and "sid" not in s.labels]
        assert unlabelled == []
        assert {s.labels["sid"] for s in samples if s.name.startswith("sap_")} == {"DEV"}
        up = [s for s in samples if s.name == "sap_up"]
        assert up and all(s.value == 0.0 for s in up)
        disc = [s for s in samples if s.name == "sap_sapcontrol_discovery_success"]
        assert [(s.labels["sid"], s.value) for s in disc] == [("DEV", 0.0)]
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ({"sid": "prd", "sapcontrol": {"discover": ["http://h:50013/"]}}, "sids.0.sid"),
        ({"sid": "PRD", "sapcontrol": {}}, "sids.0.sapcontrol.discover"),
        (
            {"sid": "PRD", "sapcontrol": {"discover": ["http://h:50013/"], "password": "x"}},
            "sids.0.sapcontrol.password",
        ),
        (
            {"sid": "PRD", "sapcontrol": {"discover": ["http://u:secret@h:50013/"]}},
            "sids.0.sapcontrol.discover",
        ),
        (
            {
                "sid": "PRD",
                "sapcontrol": {"discover": ["http://h:50013/"], "password_file": "/nonexistent"},
            },
            "sids.0.sapcontrol.username",
        ),
        (
            {
                "sid": "PRD",
                "sapcontrol": {"discover": ["https://h:50014/"], "ca_file": "/nonexistent"},
            },
            "sids.0.sapcontrol.ca_file",
        ),
    ],
)
def test_a_refusal_names_the_field_and_no_secret(tmp_path, entry, field) -> None:
    path = _write(tmp_path, "bad.yml", [entry])
    with pytest.raises(MonitorFileError) as err:
        load_monitor_file(path)
    assert f"{path}: {field}" in str(err.value)
    assert "secret" not in str(err.value)


def test_cli_refuses_model_options_and_serves_without_model(twins, tmp_path) -> None:
    path = _write(tmp_path, "m.yml", [_entry("QAS", twins, tmp_path, "qasmon", "qas-pw")])
    bad = subprocess.run(
        [sys.executable, "-m", "wlmon", "exporter", "--monitor", str(path), "--fault", "x"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "--fault: a --monitor exporter runs no model" in bad.stderr
    port = _dead_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "wlmon", "exporter", "--monitor", str(path), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        for _ in range(120):
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        samples = _samples(port)
        assert not [s for s in samples if s.name == "sap_up" and "source" not in s.labels]
        assert {s.labels.get("sid") for s in samples if s.name == "sap_up"} == {"QAS"}
    finally:
        proc.terminate()
        proc.wait(timeout=20)


REPO = Path(__file__).resolve().parents[2]


def test_composes_monitor_service_runs_as_written(twins, tmp_path) -> None:
    """docker-compose's `monitor` service (profile monitor): its command, with the mounted
    folder's path and the listen address swapped for this machine's, serves the real SID
    of the monitor file in that folder; Prometheus looks for it on the port it listens on."""
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    svc = compose["services"]["monitor"]
    assert svc["profiles"] == ["monitor"]
    (volume,) = svc["volumes"]
    _, mounted, mode = volume.rsplit(":", 2)
    assert mode == "ro"
    command = list(svc["command"])
    monitor_file = command[command.index("--monitor") + 1]
    assert monitor_file.startswith(mounted + "/"), (monitor_file, mounted)
    port = int(command[command.index("--port") + 1])
    prometheus = yaml.safe_load(
        (REPO / "provisioning" / "prometheus" / "prometheus.yml").read_text()
    )
    (job,) = [j for j in prometheus["scrape_configs"] if j["job_name"] == "wlmon-exporter"]
    assert {"names": ["monitor"], "type": "A", "port": port} in job["dns_sd_configs"]

    folder = tmp_path / "etc-wlmon"
    folder.mkdir()
    _write(folder, Path(monitor_file).name, [_entry("QAS", twins, folder, "qasmon", "qas-pw")])
    local = _dead_port()
    argv = [
        {monitor_file: str(folder / Path(monitor_file).name), "0.0.0.0": "127.0.0.1"}.get(a, a)
        for a in command
    ]
    argv[argv.index("--port") + 1] = str(local)
    proc = subprocess.Popen(
        [sys.executable, "-m", "wlmon", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        for _ in range(120):
            try:
                if httpx.get(f"http://127.0.0.1:{local}/healthz").status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        samples = _samples(local)
        up = {s.labels.get("sid"): s.value for s in samples if s.name == "sap_up"}
        assert set(up) == {"QAS"} and max(up.values()) == 1, up
    finally:
        proc.terminate()
        proc.wait(timeout=20)
