"""SUSE's sap_host_exporter (a third-party SAPControl client, pinned in
wlmon/stack/components.py) reads the model's sapstartsrv: over HTTP with a password, and
over the Unix socket by trusted connect. Its metrics must equal what the model itself says
(process states, the instance's colour, dispatcher queues, enqueue statistics), and its
log must hold no warning.

Lean: no stack. One frozen model (the simulation is not advanced, so every figure read
from it holds still between the exporter's scrape and the test's reading) and three
exporters on 127.0.0.1: the ASCS, a dialog instance with a stopped gateway, and the same
dialog instance on its socket.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from alerts.thresholds import load_thresholds
from exporters.sapcontrol.schema import STATE_COLOR_CODE
from exporters.sapstartsrv.landscape import ICM_QUEUE_MAX, QUEUE_MAX, ModelLandscape
from exporters.sapstartsrv.server import Credentials, SapStartSrvFleet
from landscape_model.engine import Simulation
from wlmon.stack.components import COMPONENTS

pytestmark = pytest.mark.integration

COMPONENT = COMPONENTS["sap_host_exporter"]
BINARY = COMPONENT.path("sap_host_exporter")
USER, PASSWORD = "bmkadm", "host-exporter-pw"
ASCS, DIALOG = "penguin1_ASCS01", "penguin2_D00"
STOPPED = "gwrd"  # stopped on DIALOG before the exporters start: one GRAY process

if not BINARY.is_file():
    pytest.skip(
        f"sap_host_exporter {COMPONENT.version} is not built (optional component): "
        "`wlmon stack install --only sap_host_exporter` builds it into "
        f"{COMPONENT.directory}",
        allow_module_level=True,
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class HostExporter:
    """One sap_host_exporter process watching one instance; its log kept in a file."""

    def __init__(self, tmp: Path, label: str, target: list[str], password: bool) -> None:
        self.port = _free_port()
        config = tmp / f"{label}.yaml"
        lines = ['address: "127.0.0.1"', f'port: "{self.port}"', 'log-level: "info"']
        if password:
            lines += [f'sap-control-user: "{USER}"', f'sap-control-password: "{PASSWORD}"']
        config.write_text("\n".join(lines) + "\n")
        self.log = tmp / f"{label}.log"
        with self.log.open("w") as out:
            self.proc = subprocess.Popen(
                [str(BINARY), "--config", str(config), *target],
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    def scrape(self, timeout_s: float = 20.0) -> dict[tuple[str, tuple], float]:
        """(name, sorted labels) -> value, once the exporter serves /metrics."""
        deadline = time.monotonic() + timeout_s
        while True:
            if self.proc.poll() is not None:
                pytest.fail(f"sap_host_exporter ended ({self.proc.returncode}): {self.text()}")
            try:
                r = httpx.get(f"http://127.0.0.1:{self.port}/metrics", timeout=10)
                if r.status_code == 200:
                    # By family name: the parser renames a counter's samples to
                    # `_total`, which sap_host_exporter's counters do not carry.
                    return {
                        (fam.name, tuple(sorted(s.labels.items()))): s.value
                        for fam in text_string_to_metric_families(r.text)
                        for s in fam.samples
                    }
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"sap_host_exporter never served /metrics: {self.text()}")
            time.sleep(0.2)

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


@pytest.fixture(scope="module")
def model() -> Iterator[SapStartSrvFleet]:
    sim = Simulation("sd-benchmark-2003", seed=7)
    sim.run(120)  # then frozen: nothing advances it
    land = ModelLandscape(sim.snapshot, lambda: sim.scenario, load_thresholds())
    # Not under pytest's private tmp dir: the socket must be reachable.
    uds = Path(tempfile.mkdtemp(prefix="wlmon-uds-"))
    uds.chmod(0o755)
    fleet = SapStartSrvFleet(land, credentials=Credentials(USER, PASSWORD), uds_dir=uds).start()
    fleet.landscape.stop_processes(DIALOG, {STOPPED})
    fleet.sim = sim  # type: ignore[attr-defined]
    yield fleet
    fleet.stop()
    shutil.rmtree(uds, ignore_errors=True)


@pytest.fixture(scope="module")
def exporters(model, tmp_path_factory) -> Iterator[dict[str, HostExporter]]:
    tmp = tmp_path_factory.mktemp("sap_host_exporter")
    url = {name: f"127.0.0.1:{model.ports()[name][0]}" for name in (ASCS, DIALOG)}
    socket_path = str(model.uds_path(model.landscape.instance(DIALOG)))
    running = {
        "ascs": HostExporter(tmp, "ascs", ["--sap-control-url", url[ASCS]], password=True),
        "dialog": HostExporter(tmp, "dialog", ["--sap-control-url", url[DIALOG]], password=True),
        # Trusted connect: the socket's owner needs no password (SAP note 927637).
        "socket": HostExporter(tmp, "socket", ["--sap-control-uds", socket_path], password=False),
    }
    yield running
    for exp in running.values():
        exp.stop()


def _values(scraped: dict, name: str) -> dict[tuple, float]:
    return {labels: v for (n, labels), v in scraped.items() if n == name}


def _label(labels: tuple, key: str) -> str:
    return dict(labels)[key]


def _expected_processes(model, name: str) -> dict[tuple[str, str, str], float]:
    """(name, pid, status text) -> STATE-COLOR code, from the model's own process list."""
    inst = model.landscape.instance(name)
    return {
        (p["name"], str(p["pid"]), p["textstatus"]): float(STATE_COLOR_CODE[p["dispstatus"]])
        for p in model.landscape.process_list(inst)
    }


@pytest.mark.parametrize(
    ("which", "name"), [("ascs", ASCS), ("dialog", DIALOG), ("socket", DIALOG)]
)
def test_process_states_and_the_instance_colour_are_the_models(
    model, exporters, which, name
) -> None:
    scraped = exporters[which].scrape()
    inst = model.landscape.instance(name)
    got = {
        (_label(k, "name"), _label(k, "pid"), _label(k, "status")): v
        for k, v in _values(scraped, "sap_start_service_processes").items()
    }
    assert got == _expected_processes(model, name)
    for k in _values(scraped, "sap_start_service_processes"):
        assert (_label(k, "SID"), _label(k, "instance_name")) == ("BMK", inst.instance_name)
        assert _label(k, "instance_number") == str(inst.nr)
    # The instance list: sap_host_exporter keeps its own instance's row.
    rows = model.landscape.system_instance_list(model.ports(), set())
    [row] = [r for r in rows if r["hostname"] == inst.host and r["instanceNr"] == inst.nr]
    [(labels, colour)] = _values(scraped, "sap_start_service_instances").items()
    assert colour == STATE_COLOR_CODE[row["dispstatus"]]
    assert _label(labels, "features") == row["features"]
    assert _label(labels, "start_priority") == str(row["startPriority"])
    if name == DIALOG:
        # The stopped gateway makes the started instance RED, its process GRAY.
        assert colour == STATE_COLOR_CODE["SAPControl-RED"]
        assert got[(STOPPED, "-1", "Stopped")] == STATE_COLOR_CODE["SAPControl-GRAY"]


@pytest.mark.parametrize("which", ["dialog", "socket"])
def test_dispatcher_queues_are_the_models(model, exporters, which) -> None:
    """Over the socket too: trusted connect gives the protected GetQueueStatistic without a
    password (issue 25: SUSE's socket mode lost its dispatcher metrics on the model)."""
    scraped = exporters[which].scrape()
    snap = model.sim.snapshot()
    i = snap.state.instances.index(DIALOG)
    steps = snap.totals.steps[i].sum(axis=1)  # per task type: DIA 0, UPD 1
    reads, writes, now, high, maxima = (
        {_label(k, "type"): v for k, v in _values(scraped, f"sap_dispatcher_queue_{f}").items()}
        for f in ("reads", "writes", "now", "high", "max")
    )
    # Reads are the steps the model's dispatcher handed to work processes.
    assert reads["ABAP/DIA"] == int(steps[0]) > 0
    assert reads["ABAP/UPD"] == int(steps[1]) > 0
    assert maxima["ABAP/DIA"] == QUEUE_MAX and maxima["ICM/Intern"] == ICM_QUEUE_MAX
    for q in ("ABAP/DIA", "ABAP/UPD"):
        # What was written and not yet read is in the queue: at most its peak.
        assert reads[q] <= writes[q] <= reads[q] + high[q]
        assert 0 <= now[q] <= high[q] <= maxima[q]


def test_enqueue_statistics_are_the_models(model, exporters) -> None:
    scraped = exporters["ascs"].scrape()
    snap = model.sim.snapshot()
    flat = {n: v for (n, _), v in scraped.items() if n.startswith("sap_enqueue_server_")}
    stat = model.landscape.enq_statistic()  # the frozen model's counters do not move
    assert flat["sap_enqueue_server_enqueue_requests"] == stat["enqueue-requests"] > 0
    # One DequeueAll per LUW: the model's update steps, counted here independently.
    assert flat["sap_enqueue_server_dequeue_all_requests"] == int(snap.totals.steps[:, 1].sum())
    assert flat["sap_enqueue_server_locks_max"] == stat["locks-max"]
    assert flat["sap_enqueue_server_replication_state"] == STATE_COLOR_CODE["SAPControl-GRAY"]
    assert 0 <= flat["sap_enqueue_server_locks_now"] <= flat["sap_enqueue_server_locks_high"]
    # An ASCS has no dispatcher: no queue series, and the dialog instance no enqueue ones.
    assert not any(n.startswith("sap_dispatcher_") for n, _ in scraped)
    assert not any(n.startswith("sap_enqueue_") for n, _ in exporters["dialog"].scrape())


def test_no_warning_in_its_logs(exporters) -> None:
    for which, exp in exporters.items():
        exp.scrape()  # at least one full collection before the log is read
        text = exp.text()
        assert "level=info" in text, text
        bad = [line for line in text.splitlines() if "level=warn" in line or "level=error" in line]
        assert bad == [], f"{which}: {bad}"
        assert "Dispatcher optional collector registered" in text or which == "ascs", text
        assert "Enqueue Server optional collector registered" in text or which != "ascs", text
