"""Fleet entries of real SIDs (`sapcontrol:`, issue 31 item 1): validated, each rendered into
its own exporter's file, and `wlmon fleet add --discover` refusing by field, byte-identical."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families
from typer.testing import CliRunner

from alerts.thresholds import load_thresholds
from landscape_model.catalog import Catalog
from tests.sapcontrol.twins import twin_system
from wlmon.cli import app
from wlmon.stack.fleet import FleetError, FleetLayout, FleetStack, load_fleet
from wlmon.stack.settings import StackSettings

SCENARIOS = Catalog().scenarios()
SECRETS = dict.fromkeys(
    ("api_token", "exporter_token", "alertmanager_password", "perses_password"), "s"
)


def _fleet(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "fleet.yml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("sids:\n  - {sid: PRD}\n", r"sids\.0: give either scenario"),
        (
            "sids:\n  - {sid: PRD, scenario: sd-two-tier, sapcontrol: {discover: [http://h:1/]}}\n",
            r"sids\.0: give either scenario",
        ),
        ("sids:\n  - {sid: PRD, sapcontrol: {}}\n", r"sids\.0\.sapcontrol\.discover: give"),
        (
            "sids:\n  - {sid: PRD, sapcontrol: {discover: [http://h:1/], password: x}}\n",
            r"sids\.0\.sapcontrol\.password: Extra",
        ),
        (
            "sids:\n  - {sid: PRD, sapcontrol: {discover: [http://h:1/], username: u,"
            " password_file: /nonexistent}}\n",
            r"sids\.0\.sapcontrol\.password_file: cannot read",
        ),
        (
            "sids:\n  - {sid: PRD, sapcontrol: {discover: [http://h:1/]}, users: 5}\n",
            r"sids\.0: .*users: only a twin",
        ),
    ],
)
def test_a_bad_real_entry_is_named_with_its_field(tmp_path, text, message) -> None:
    with pytest.raises(FleetError, match=message):
        load_fleet(_fleet(tmp_path, text), SCENARIOS)


def test_each_real_sid_gets_its_own_file_and_a_monitor_exporter(tmp_path) -> None:
    pw = tmp_path / "pw"
    pw.write_text("x")
    path = _fleet(
        tmp_path,
        "sids:\n"
        "  - {sid: BMK, scenario: sd-benchmark-2003}\n"
        f"  - {{sid: PRD, sapcontrol: {{discover: ['http://prd:50013/'], username: a,"
        f" password_file: {pw}}}}}\n"
        f"  - {{sid: QAS, sapcontrol: {{endpoints: ['http://qas:50013/'], username: b,"
        f" password_file: {pw}}}}}\n",
    )
    settings = StackSettings(state_dir=tmp_path, fleet_port_base=30000)
    layout = FleetLayout(settings, load_fleet(path, SCENARIOS), tmp_path / "fleet")
    layout.render("token", "am-pw", FleetStack(settings).perses_inputs())
    services = {s.name: s for s in layout.services(SECRETS, tmp_path)}
    assert "--scenario" in services["exporter-bmk"].argv
    for sid, user in (("prd", "a"), ("qas", "b")):
        argv = services[f"exporter-{sid}"].argv
        assert "--scenario" not in argv and "--monitor" in argv
        own = Path(argv[argv.index("--monitor") + 1])
        doc = yaml.safe_load(own.read_text())
        assert [e["sid"] for e in doc["sids"]] == [sid.upper()]
        assert doc["sids"][0]["sapcontrol"]["username"] == user
        assert own.stat().st_mode & 0o777 == 0o600
        assert "x" not in own.read_text().split()  # the password file's name, not its text


def test_fleet_add_discover_validates_and_leaves_the_file_byte_identical(
    tmp_path, monkeypatch
) -> None:
    runner = CliRunner()
    fleet = tmp_path / "f.yml"
    monkeypatch.setenv("WLMON_FLEET_FILE", str(fleet))
    pw = tmp_path / "prd.pw"
    pw.write_text("secret-pw\n")
    ok = runner.invoke(
        app,
        [
            *("fleet", "add", "ERP", "--discover", "https://prdascs:50114/", "--user", "wlmonmon"),
            *("--password-file", str(pw), "--host", "prdascs=10.0.0.11", "--prefer-https"),
        ],
    )
    assert ok.exit_code == 0, ok.output
    entry = load_fleet(fleet, SCENARIOS).sids[-1]
    assert entry.sid == "ERP" and entry.kind == "sapcontrol"
    assert entry.sapcontrol.hosts == {"prdascs": "10.0.0.11"} and entry.sapcontrol.prefer_https
    before = fleet.read_bytes()
    cases = [
        (["QAS", "--discover", "http://u:secret-pw@h:50013/"], "--discover: "),
        (["QAS", "--discover", "http://h:50013/", "--password-file", str(pw)], "--user: "),
        (
            ["QAS", "--discover", "http://h:50013/", "--user", "u", "--password-file", "/no"],
            "--password-file: ",
        ),
        (["QAS", "--discover", "https://h:50014/", "--ca-file", "/no/ca.pem"], "--ca-file: "),
        (["QAS", "--discover", "http://h:1/", "--scenario", "sd-two-tier"], "--scenario and"),
        (["QAS", "--discover", "http://h:1/", "--host", "h"], "--host: "),
        (["qas", "--discover", "http://h:1/"], "sid: "),
        (["ERP", "--discover", "http://h:1/"], "ERP is already in the fleet"),
        (["QAS"], "--scenario or --discover"),
        (["QAS", "--scenario", "sd-two-tier", "--user", "u"], "--user: only for a real"),
    ]
    for args, message in cases:
        out = runner.invoke(app, ["fleet", "add", *args])
        assert out.exit_code == 2, (args, out.output)
        assert message in out.output, (args, out.output)
        assert "secret-pw" not in out.output
        assert "Traceback" not in out.output
        assert fleet.read_bytes() == before
    listed = runner.invoke(app, ["fleet", "list"])
    assert "sapcontrol" in listed.output and "https://prdascs:50114/" in listed.output


def _free_port() -> int:
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def test_two_real_sids_each_read_only_by_their_own_fleet_exporter(tmp_path) -> None:
    """The fleet's exporter services as rendered, started as processes, with the shell's
    WLMON_SAPCONTROL_* pointing at QAS: each serves its own SID and nothing else."""
    thresholds = load_thresholds()
    twins = {
        "PRD": twin_system("PRD", thresholds, user="prdmon", password="prd-pw"),
        "QAS": twin_system("QAS", thresholds, user="qasmon", password="qas-pw"),
    }
    procs = []
    try:
        lines = ["sids:"]
        for sid, twin in twins.items():
            pw = tmp_path / f"{sid}.pw"
            pw.write_text(f"{sid.lower()}-pw")
            first = next(iter(twin.urls().values()))
            lines.append(
                f"  - {{sid: {sid}, sapcontrol: {{discover: ['{first}'],"
                f" hosts: {{'*': 127.0.0.1}}, username: {sid.lower()}mon,"
                f" password_file: {pw}, timeout_s: 5}}}}"
            )
        path = _fleet(tmp_path, "\n".join(lines) + "\n")
        settings = StackSettings(state_dir=tmp_path)
        layout = FleetLayout(settings, load_fleet(path, SCENARIOS), tmp_path / "fleet")
        layout._render_monitor_files()
        env = {
            **os.environ,
            "WLMON_SAPCONTROL_DISCOVER": next(iter(twins["QAS"].urls().values())),
            "WLMON_SAPCONTROL_USERNAME": "qasmon",
            "WLMON_SAPCONTROL_PASSWORD": "qas-pw",
        }
        ports = {}
        for svc in layout.services(SECRETS, tmp_path):
            if svc.name.startswith("exporter-"):
                argv = list(svc.argv)
                port = _free_port()
                argv[argv.index("--port") + 1] = str(port)
                ports[svc.name[-3:].upper()] = port
                procs.append(subprocess.Popen(argv, env=env, stderr=subprocess.DEVNULL))
        for sid, port in ports.items():
            deadline = time.monotonic() + 90
            while True:
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200:
                        break
                except httpx.HTTPError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.5)
            text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=30).text
            samples = [s for f in text_string_to_metric_families(text) for s in f.samples]
            assert {s.labels["sid"] for s in samples if "sid" in s.labels} == {sid}
            up = [s.value for s in samples if s.name == "sap_up"]
            # Every instance the SID's sapstartsrv lists (dialog, ASCS and, since the Java
            # instance, J10): one sap_up each, all read.
            assert len(up) == len(twins[sid].urls()) and set(up) == {1.0}
            refused = [s.value for s in samples if s.name == "sap_sapcontrol_auth_refused"]
            assert refused and set(refused) == {0.0}
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=20)
        for twin in twins.values():
            twin.stop()


def test_a_fleet_of_real_sids_only_begins_with_an_empty_sids_key(tmp_path, monkeypatch) -> None:
    fleet = tmp_path / "real.yml"
    fleet.write_text("prometheus_replicas: 2\nalertmanager_peers: 2\nsids:\n")
    monkeypatch.setenv("WLMON_FLEET_FILE", str(fleet))
    for sid in ("PRD", "QAS", "DEV"):
        out = CliRunner().invoke(app, ["fleet", "add", sid, "--discover", f"http://{sid}:50013/"])
        assert out.exit_code == 0, out.output
    sids = load_fleet(fleet, SCENARIOS).sids
    assert [(s.sid, s.kind) for s in sids] == [(s, "sapcontrol") for s in ("PRD", "QAS", "DEV")]


def test_an_exporter_group_serves_its_sids_from_one_process(tmp_path) -> None:
    path = _fleet(
        tmp_path,
        "sids:\n"
        "  - {sid: BMK, scenario: sd-benchmark-2003}\n"
        "  - {sid: DEV, sapcontrol: {discover: ['http://dev:50013/']}, exporter_group: small}\n"
        "  - {sid: PRD, sapcontrol: {discover: ['http://prd:50013/']}}\n"
        "  - {sid: SBX, sapcontrol: {discover: ['http://sbx:50013/']}, exporter_group: small}\n",
    )
    settings = StackSettings(state_dir=tmp_path, fleet_port_base=30000)
    layout = FleetLayout(settings, load_fleet(path, SCENARIOS), tmp_path / "fleet")
    layout.render("token", "am-pw", FleetStack(settings).perses_inputs())
    exporters = [s for s in layout.services(SECRETS, tmp_path) if s.name.startswith("exporter-")]
    assert [(s.name, s.port) for s in exporters] == [
        ("exporter-bmk", 30100),
        ("exporter-small", 30101),
        ("exporter-prd", 30102),
    ]
    small = exporters[1].argv[exporters[1].argv.index("--monitor") + 1]
    assert [e["sid"] for e in yaml.safe_load(Path(small).read_text())["sids"]] == ["DEV", "SBX"]
    prom = yaml.safe_load((layout.config / "prometheus" / "prometheus-A.yml").read_text())
    (job,) = [j for j in prom["scrape_configs"] if j["job_name"] == "wlmon-exporter"]
    assert job["static_configs"] == [
        {"targets": ["127.0.0.1:30100"], "labels": {"sid": "BMK"}},
        {"targets": ["127.0.0.1:30101"]},
        {"targets": ["127.0.0.1:30102"], "labels": {"sid": "PRD"}},
    ]
    with pytest.raises(FleetError, match=r"sids\.0: .*exporter_group: only real SIDs"):
        load_fleet(
            _fleet(tmp_path, "sids:\n  - {sid: BMK, scenario: sd-two-tier, exporter_group: a}\n"),
            SCENARIOS,
        )
