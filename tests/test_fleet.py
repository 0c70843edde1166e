"""The fleet profile without servers: its file, rendering, ports, CLI and compose profile."""

from __future__ import annotations

import itertools
import os
import subprocess
from pathlib import Path

import bcrypt
import pytest
import yaml
from typer.testing import CliRunner

from landscape_model.catalog import Catalog
from wlmon.cli import app
from wlmon.stack import fleet as fleet_module
from wlmon.stack.components import COMPONENTS, PERSES_VERSION
from wlmon.stack.fleet import (
    DEFAULT_FLEET_FILE,
    FleetError,
    FleetFile,
    FleetLayout,
    FleetPorts,
    FleetSid,
    FleetStack,
    add_sid,
    load_fleet,
)
from wlmon.stack.settings import REPO_DIR, StackSettings

SCENARIOS = Catalog().scenarios()
SECRETS = dict.fromkeys(
    ("api_token", "exporter_token", "alertmanager_password", "perses_password"), "s"
)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "fleet.yml"
    path.write_text(text)
    return path


def test_the_shipped_fleet_has_three_sids_on_three_landscapes() -> None:
    fleet = load_fleet(DEFAULT_FLEET_FILE, SCENARIOS)
    assert [s.sid for s in fleet.sids] == ["BMK", "TWO", "PRD"]
    # TWO runs below seed 004's max-users-at-< 2 s point, its scenario's own users.
    two = next(s for s in fleet.sids if s.sid == "TWO")
    assert two.users is not None and two.users < Catalog().scenario(two.scenario).users
    assert len({s.scenario for s in fleet.sids}) == 3
    assert fleet.prometheus_replicas == 2 and fleet.alertmanager_peers >= 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("sids:\n  - {sid: BMK, scenario: nope}\n", r"sids\.0\.scenario: unknown scenario 'nope'"),
        ("sids:\n  - {sid: bmk, scenario: sd-two-tier}\n", r"sids\.0\.sid: String should match"),
        (
            "sids:\n  - {sid: BMK, scenario: sd-two-tier}\n  - {sid: BMK, scenario: sd-two-tier}\n",
            r"sids\.1\.sid: BMK is listed twice",
        ),
        ("sids: []\n", r"sids: List should have at least 1 item"),
        ("sids:\n  - {sid: BMK, scenario: sd-two-tier, port: 1}\n", r"sids\.0\.port: Extra"),
        ("sids:\n  - {sid: BMK\n", r"line \d+, column \d+"),
        ("sids:\n  - {sid: BMK, scenario: sd-two-tier, users: 0}\n", r"sids\.0\.users: Input"),
        ("sids:\n  - {sid: BMK, scenario: sd-two-tier, users: many}\n", r"sids\.0\.users: Input"),
    ],
)
def test_a_bad_fleet_file_is_named_with_its_field(tmp_path, text, message) -> None:
    with pytest.raises(FleetError, match=message):
        load_fleet(_write(tmp_path, text), SCENARIOS)


def test_adding_a_sid_appends_one_line_and_keeps_the_comments(tmp_path) -> None:
    path = tmp_path / "mine.yml"
    add_sid(path, FleetSid(sid="QAS", scenario="sd-two-tier"), SCENARIOS)
    text = path.read_text()
    assert text.startswith(DEFAULT_FLEET_FILE.read_text())  # comments and entries kept
    assert text.endswith("  - {sid: QAS, scenario: sd-two-tier}\n")
    assert [s.sid for s in load_fleet(path, SCENARIOS).sids][-1] == "QAS"
    add_sid(path, FleetSid(sid="QA3", scenario="sd-two-tier", users=250), SCENARIOS)
    assert path.read_text().endswith("  - {sid: QA3, scenario: sd-two-tier, users: 250}\n")
    assert load_fleet(path, SCENARIOS).sids[-1].users == 250
    text = path.read_text()
    with pytest.raises(FleetError, match="QAS is already in the fleet"):
        add_sid(path, FleetSid(sid="QAS", scenario="sd-two-tier"), SCENARIOS)
    with pytest.raises(FleetError, match="unknown scenario 'x'"):
        add_sid(path, FleetSid(sid="QA2", scenario="x"), SCENARIOS)
    assert path.read_text() == text  # nothing stored lost or half-written


def test_fleet_add_on_the_command_line(tmp_path, monkeypatch) -> None:
    runner = CliRunner()
    monkeypatch.delenv("WLMON_FLEET_FILE", raising=False)
    refused = runner.invoke(app, ["fleet", "add", "QAS", "--scenario", "sd-two-tier"])
    assert refused.exit_code == 2 and "WLMON_FLEET_FILE" in refused.output
    monkeypatch.setenv("WLMON_FLEET_FILE", str(tmp_path / "f.yml"))
    ok = runner.invoke(app, ["fleet", "add", "QAS", "--landscape", "sd-two-tier"])
    assert ok.exit_code == 0, ok.output
    bad = runner.invoke(app, ["fleet", "add", "qa", "--scenario", "sd-two-tier"])
    assert bad.exit_code == 2 and "sid:" in bad.output
    few = runner.invoke(app, ["fleet", "add", "QA2", "--scenario", "sd-two-tier", "--users", "0"])
    assert few.exit_code == 2 and "users:" in few.output, few.output
    ok = runner.invoke(app, ["fleet", "add", "QA3", "--scenario", "sd-two-tier", "--users", "250"])
    assert ok.exit_code == 0, ok.output
    listed = runner.invoke(app, ["fleet", "list"])
    assert "QAS" in listed.output and "PRD" in listed.output
    assert "250" in listed.output and "400" in listed.output


# One per class of YAML-significant text: each must come back from the file as typed.
HOSTILE = [
    "a [b] c",
    "[b]",
    "a {b} c",
    "{b}",
    "key: value",
    "a # not a comment",
    "#first",
    "it's",
    "'single'",
    'say "hi"',
    "*star",
    "&anchor",
    "!tag",
    "%directive",
    "@at",
    "`tick",
    "a,users",  # in a flow mapping unquoted: description "a" and a key `users`
    "a, b: c}",
    "line one\nline two",
    "cr\r\nlf\ttab",
    "- dash",
    "? q",
    "|",
    "null",
    "yes",
    "0x1F",
    "é, 日本",
]


def _sid(i: int) -> str:
    return f"Q{i:02d}"


def test_fleet_add_stores_any_description_as_typed_and_fleet_list_reads_it(
    tmp_path, monkeypatch
) -> None:
    """Each description through the command line, into the file and back through
    `fleet list`; the file stays readable, its comments and earlier entries kept."""
    runner = CliRunner()
    path = tmp_path / "f.yml"
    monkeypatch.setenv("WLMON_FLEET_FILE", str(path))
    for i, text in enumerate(HOSTILE):
        args = ["fleet", "add", _sid(i), "--scenario", "sd-two-tier", "--description", text]
        added = runner.invoke(app, args)
        assert added.exit_code == 0, (text, added.output)
    raw = path.read_text(encoding="utf-8")
    assert raw.startswith(DEFAULT_FLEET_FILE.read_text())
    # Read by the YAML library alone, not by the code that wrote it.
    stored = {e["sid"]: e for e in yaml.safe_load(raw)["sids"]}
    for i, text in enumerate(HOSTILE):
        assert stored[_sid(i)] == {
            "sid": _sid(i),
            "scenario": "sd-two-tier",
            "description": text,
        }
    assert len(raw.splitlines()) == len(DEFAULT_FLEET_FILE.read_text().splitlines()) + len(
        HOSTILE
    )  # one line per entry, whatever its text
    listed = runner.invoke(app, ["fleet", "list"], env={"COLUMNS": "250"})
    assert listed.exit_code == 0, listed.output
    rows = {ln.split("│")[1].strip(): ln for ln in listed.output.splitlines() if "│" in ln}
    for i, text in enumerate(HOSTILE):
        if "\n" in text or "\r" in text or "\t" in text:
            continue  # a cell of two lines, or a tab rich expands: checked from the file
        cell = rows[_sid(i)].split("│")[4].strip()
        assert cell == text, (text, rows[_sid(i)])
    two_lines = rows[_sid(HOSTILE.index("line one\nline two"))]
    assert "line one" in two_lines and "line two" in listed.output


def test_an_entry_that_would_not_read_back_is_refused_and_nothing_is_written(
    tmp_path, monkeypatch
) -> None:
    """The old one-line writer (text unquoted in a flow mapping) stands in for any writer
    that loses text: the new file is read back before it replaces the old one."""
    path = tmp_path / "f.yml"
    add_sid(path, FleetSid(sid="QAS", scenario="sd-two-tier"), SCENARIOS)
    before = path.read_bytes()

    def unquoted(entry: FleetSid) -> str:
        given = f", description: {entry.description}" if entry.description else ""
        return f"{{sid: {entry.sid}, scenario: {entry.scenario}{given}}}"

    monkeypatch.setattr(fleet_module, "_entry_line", unquoted)
    for text in ("a [b] c", "a,users", "line one\nline two"):
        entry = FleetSid(sid="QA2", scenario="sd-two-tier", description=text)
        with pytest.raises(FleetError, match=r"f\.yml: --description: cannot be stored as given"):
            add_sid(path, entry, SCENARIOS)
        assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.yml"]  # no temp file left


def test_a_fleet_file_an_entry_cannot_be_appended_to_is_left_as_it_was(tmp_path) -> None:
    path = _write(tmp_path, "sids: [{sid: BMK, scenario: sd-two-tier}]\n")
    before = path.read_bytes()
    with pytest.raises(FleetError, match=r"fleet\.yml: an entry appended does not read back"):
        add_sid(path, FleetSid(sid="QAS", scenario="sd-two-tier", description="[x]"), SCENARIOS)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fleet.yml"]


@pytest.mark.parametrize("sid", ["QASX", "xQAS", "QAS: {x} # y", "Q[A]", "QAS\n"])
def test_a_sid_is_three_characters_exactly_as_the_exporter_takes_it(
    tmp_path, monkeypatch, sid
) -> None:
    """`wlmon exporter --sid` takes [A-Z][A-Z0-9]{2} whole; the fleet file the same."""
    monkeypatch.setenv("WLMON_FLEET_FILE", str(tmp_path / "f.yml"))
    refused = CliRunner().invoke(app, ["fleet", "add", sid, "--scenario", "sd-two-tier"])
    assert refused.exit_code == 2 and "sid: String should match" in refused.output
    assert not (tmp_path / "f.yml").exists()
    text = yaml.safe_dump({"sids": [{"sid": sid, "scenario": "sd-two-tier"}]})
    with pytest.raises(FleetError, match=r"sids\.0\.sid: String should match"):
        load_fleet(_write(tmp_path, text), SCENARIOS)


def test_a_fleet_file_named_tmp_is_never_its_own_temporary_file(tmp_path) -> None:
    """The temporary file is a new one beside the fleet file, never the file itself
    (`fleet.tmp` once was, and a refused entry deleted it)."""
    path = tmp_path / "fleet.tmp"
    add_sid(path, FleetSid(sid="QAS", scenario="sd-two-tier"), SCENARIOS)
    add_sid(path, FleetSid(sid="QA2", scenario="sd-two-tier", description="a [b] c"), SCENARIOS)
    assert load_fleet(path, SCENARIOS).sids[-1].description == "a [b] c"
    flow = _write(tmp_path, "sids: [{sid: BMK, scenario: sd-two-tier}]\n").rename(path)
    before = flow.read_bytes()
    with pytest.raises(FleetError):
        add_sid(path, FleetSid(sid="QA3", scenario="sd-two-tier"), SCENARIOS)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fleet.tmp"]


def test_ports_never_collide_for_the_largest_fleet_one_host_runs() -> None:
    fleet = FleetFile(
        sids=[FleetSid(sid=f"S{i:02d}", scenario="sd-two-tier") for i in range(100)],
        prometheus_replicas=8,
        alertmanager_peers=5,
    )
    ports = FleetPorts(19100).all(fleet)
    assert len(ports) == len(set(ports))


@pytest.fixture
def layout(tmp_path) -> FleetLayout:
    settings = StackSettings(state_dir=tmp_path, fleet_port_base=30000)
    layout = FleetLayout(settings, load_fleet(DEFAULT_FLEET_FILE), tmp_path / "fleet")
    layout.render("token", "am-pw", FleetStack(settings).perses_inputs())
    return layout


def _prom(layout: FleetLayout, replica: str) -> dict:
    return yaml.safe_load((layout.config / "prometheus" / f"prometheus-{replica}.yml").read_text())


def test_replicas_differ_only_in_their_replica_label_and_own_address(layout) -> None:
    a, b = _prom(layout, "A"), _prom(layout, "B")
    assert a["global"]["external_labels"]["replica"] == "A"
    assert b["global"]["external_labels"]["replica"] == "B"
    targets = {
        j["job_name"]: [t for sc in j["static_configs"] for t in sc["targets"]]
        for j in a["scrape_configs"]
    }
    assert targets["wlmon-exporter"] == [f"127.0.0.1:{30100 + k}" for k in range(3)]
    sids = [sc["labels"]["sid"] for sc in a["scrape_configs"][0]["static_configs"]]
    assert sids == ["BMK", "TWO", "PRD"]
    for doc in (a, b):  # what differs between them, blanked
        doc["global"]["external_labels"].pop("replica")
        for job in doc["scrape_configs"]:
            if job["job_name"] in ("prometheus", "thanos"):
                job.pop("static_configs")
    assert a == b
    # Each replica sends to every peer, without its replica label (one alert, not two).
    peers = a["alerting"]["alertmanagers"][0]["static_configs"][0]["targets"]
    assert peers == ["127.0.0.1:30040", "127.0.0.1:30042"]
    # Both log in to every peer, for alerts and for the scrape, with the fleet's password.
    password_file = layout.config / "prometheus" / "alertmanager-password"
    auth = {"username": "wlmon", "password_file": str(password_file)}
    (scrape,) = [j for j in a["scrape_configs"] if j["job_name"] == "alertmanager"]
    assert a["alerting"]["alertmanagers"][0]["basic_auth"] == auth == scrape["basic_auth"]
    assert password_file.read_text() == "am-pw"
    assert password_file.stat().st_mode & 0o777 == 0o600
    assert {"action": "labeldrop", "regex": "replica"} in a["alerting"]["alert_relabel_configs"]


def test_every_fleet_service_binds_loopback_and_peers_know_each_other(layout, tmp_path) -> None:
    services = layout.services(SECRETS, tmp_path)
    names = [s.name for s in services]
    assert names.count("query") == 1 and names.count("store") == 1
    assert {"exporter-bmk", "exporter-two", "exporter-prd", "sidecar-A", "sidecar-B"} <= set(names)
    for svc in services:
        for arg in svc.argv:
            if "address=" in arg or arg.startswith("--cluster.peer="):
                assert arg.split("=", 1)[1].startswith("127.0.0.1:"), (svc.name, arg)
        assert len({s.port for s in services}) == len(services)
    # The fleet file's users reach the exporter; a SID without users runs its scenario's.
    argv = {s.name: s.argv for s in services}
    assert argv["exporter-two"][argv["exporter-two"].index("--users") + 1] == "400"
    assert "--users" not in argv["exporter-bmk"]
    peers = {s.name: s for s in services if s.name.startswith("alertmanager-")}
    for name, svc in peers.items():
        joined = [a for a in svc.argv if a.startswith("--cluster.peer=")]
        assert len(joined) == len(peers) - 1, name
        # Every peer asks for basic auth, its /-/ready too: the health check logs in.
        assert f"--web.config.file={layout.config}/alertmanager/web.yml" in svc.argv
        assert svc.health_auth == ("wlmon", "s")
    web = yaml.safe_load((layout.config / "alertmanager" / "web.yml").read_text())
    assert bcrypt.checkpw(b"am-pw", web["basic_auth_users"]["wlmon"].encode())
    perses = next(s for s in services if s.name == "perses")
    assert f"127.0.0.1:{layout.ports.perses}" in perses.argv
    query = next(s for s in services if s.name == "query")
    endpoints = [a for a in query.argv if a.startswith("--endpoint=")]
    assert len(endpoints) == 3 and "--query.replica-label=replica" in query.argv
    # The bucket is the rendered filesystem one unless WLMON_FLEET_OBJSTORE_CONFIG says.
    bucket = yaml.safe_load((layout.config / "thanos" / "bucket.yml").read_text())
    assert bucket == {"type": "FILESYSTEM", "config": {"directory": str(layout.bucket)}}


def test_perses_reads_thanos_query(layout) -> None:
    ds = yaml.safe_load(
        (layout.config / "perses" / "provisioning" / "datasources.yaml").read_text()
    )
    prom = next(d for d in ds if d["metadata"]["name"] == "prometheus")
    assert prom["spec"]["default"]
    url = prom["spec"]["plugin"]["spec"]["proxy"]["spec"]["url"]
    assert url == f"http://127.0.0.1:{layout.ports.query_http}"


# ------------------------------------------------------------------ docker-compose
COMPOSE = yaml.safe_load((REPO_DIR / "docker-compose.yml").read_text())
FLEET_SERVICES = {
    n: s for n, s in COMPOSE["services"].items() if "fleet" in (s.get("profiles") or [])
}


def test_the_compose_fleet_profile_pins_the_versions_wlmon_builds() -> None:
    assert len(FLEET_SERVICES) >= 12
    versions = {
        "prom/prometheus": COMPONENTS["prometheus"].version,
        "prom/alertmanager": COMPONENTS["alertmanager"].version,
        "quay.io/thanos/thanos": COMPONENTS["thanos"].version,
        "persesdev/perses": PERSES_VERSION,
    }
    for name, svc in FLEET_SERVICES.items():
        repo, _, tag = svc["image"].rpartition(":")
        assert tag and tag != "latest", name
        if repo in versions:
            assert tag == f"v{versions[repo]}", name
        # A one-shot config job, and Perses' distroless image (no shell to check with).
        if name not in ("perses-fleet-config", "perses-fleet"):
            assert svc.get("healthcheck", {}).get("test"), name


def test_the_compose_fleet_runs_the_shipped_fleet_file() -> None:
    fleet = load_fleet(DEFAULT_FLEET_FILE)

    def option(command: list[str], name: str) -> str | None:
        return command[command.index(name) + 1] if name in command else None

    exporters = {
        option(svc["command"], "--sid"): (
            option(svc["command"], "--scenario"),
            option(svc["command"], "--users"),
        )
        for n, svc in FLEET_SERVICES.items()
        if n.startswith("exporter-")
    }
    assert exporters == {
        s.sid: (s.scenario, None if s.users is None else str(s.users)) for s in fleet.sids
    }
    prom = yaml.safe_load((REPO_DIR / "provisioning" / "fleet" / "prometheus.yml").read_text())
    job = next(j for j in prom["scrape_configs"] if j["job_name"] == "wlmon-exporter")
    scraped = {sc["labels"]["sid"]: sc["targets"] for sc in job["static_configs"]}
    assert scraped == {s.sid: [f"exporter-{s.sid.lower()}:9300"] for s in fleet.sids}
    replicas = [n for n in FLEET_SERVICES if n.startswith("prometheus-")]
    assert len(replicas) == fleet.prometheus_replicas
    labels = {FLEET_SERVICES[n]["environment"]["WLMON_REPLICA"] for n in replicas}
    assert len(labels) == len(replicas)
    peers = sorted(n for n in FLEET_SERVICES if n.startswith("alertmanager-"))
    for a, b in itertools.permutations(peers, 2):
        assert f"--cluster.peer={b}:9094" in FLEET_SERVICES[a]["command"], (a, b)


def test_compose_go_validates_the_fleet_profile_it_does_not_start(tmp_path) -> None:
    """Docker Compose v2's loader checks profiled services against the schema too: ours
    pass, and the same file with one wrong key in a fleet service is refused."""
    binary = COMPONENTS["composecheck"].path("composecheck")
    assert binary.is_file(), f"{binary} missing: run `wlmon stack install --only composecheck`"
    env = {
        **os.environ,
        **dict.fromkeys(("PERSES_ADMIN_PASSWORD", "WLMON_API_TOKEN", "WLMON_EXPORTER_TOKEN"), "t"),
        "WLMON_INFLUXDB_ADMIN_PASSWORD": "t",
        "WLMON_ALERTMANAGER_PASSWORD": "t",
        "WLMON_VICTORIALOGS_PASSWORD": "t",
        "PERSES_ENCRYPTION_KEY": "0123456789abcdef0123456789abcdef",
    }
    text = (REPO_DIR / "docker-compose.yml").read_text()
    broken = text.replace(
        "  thanos-store:\n    profiles: [fleet]\n",
        "  thanos-store:\n    profiles: [fleet]\n    retsart: always\n",
    )
    assert broken != text
    for name, body, ok in (("good.yml", text, True), ("bad.yml", broken, False)):
        path = REPO_DIR / f".fleet-check-{os.getpid()}-{name}"  # its binds are repo-relative
        path.write_text(body)
        try:
            result = subprocess.run(
                [str(binary), str(path)], env=env, capture_output=True, text=True, timeout=60
            )
        finally:
            path.unlink()
        assert (result.returncode == 0) == ok, result.stderr
    assert "services.thanos-store" in result.stderr and "retsart" in result.stderr


def test_an_unknown_profile_is_refused_and_the_fleet_status_is_its_own(
    tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("WLMON_STATE_DIR", str(tmp_path))
    runner = CliRunner()
    bad = runner.invoke(app, ["up", "--profile", "fleat"])
    assert bad.exit_code == 2 and "--profile: 'fleat' is not one of default, fleet" in bad.output
    status = runner.invoke(app, ["status", "--profile", "fleet", "--json"])
    assert status.exit_code == 0 and status.output.strip() == "[]"
    assert not (tmp_path / "run").exists()  # the single stack's records untouched
