"""The exporter process as the stack runs it for a real landscape: the model's collectors off,
the model served as sapstartsrv, the sapcontrol collector reading it over HTTP."""

from __future__ import annotations

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from alerts.thresholds import load_thresholds
from exporters.config import load_config
from exporters.sapstartsrv.server import free_port_block
from exporters.server import ExporterServer
from landscape_model.engine import Simulation


@pytest.fixture
def server(monkeypatch):
    base = free_port_block(32)
    for name in ("ST03", "ST05", "DBBUFFER", "SAPBUFFER", "OSCOUNTERS"):
        monkeypatch.setenv(f"WLMON_EXPORTER_COLLECTOR_{name}", "false")
    env = {
        "WLMON_EXPORTER_COLLECTOR_SAPCONTROL": "true",
        "WLMON_SAPSTARTSRV_ENABLED": "true",
        "WLMON_SAPSTARTSRV_BASE_PORT": str(base),
        "WLMON_SAPSTARTSRV_PASSWORD": "pw",
        "WLMON_SAPCONTROL_USERNAME": "bmkadm",
        "WLMON_SAPCONTROL_PASSWORD": "pw",
        "WLMON_SAPCONTROL_HOSTS": '{"*": "127.0.0.1"}',
        "WLMON_SAPCONTROL_TIMEOUT_S": "5",
    }
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    srv = ExporterServer(
        Simulation("sd-benchmark-2003", seed=2),
        port=0,
        speed=20.0,
        config=load_config(),
        thresholds=load_thresholds(),
    )
    srv.start()
    yield srv, base
    srv.stop()


def test_sap_series_come_only_through_sapcontrol(server) -> None:
    srv, base = server
    r = httpx.get(f"http://127.0.0.1:{srv.port}/metrics", timeout=30)
    assert r.status_code == 200
    up, names = {}, set()
    for fam in text_string_to_metric_families(r.text):
        for s in fam.samples:
            names.add(s.name)
            if s.name == "sap_up" and s.labels.get("source") == "sapcontrol":
                up[s.labels["sap_instance"]] = s.value
    assert len(up) == 32 and set(up.values()) == {1.0}  # 30 dialog, the ASCS, the Java one
    assert "penguin2_D00" in up and "penguin1_ASCS01" in up
    assert "sap_workload_steps_total" not in names
    assert {"sap_work_processes", "sap_enqueue_requests_total"} <= names
    # The model's first instance listens where the stack expects it: base port, 5NN13 style.
    wsdl = httpx.get(f"http://127.0.0.1:{base}/?wsdl", timeout=10)
    assert wsdl.status_code == 200 and b"SAPControlPortType" in wsdl.content
