"""Hosts named by what they run (issue 21): the landscape gives each host its role, the
oscounters collector exports it as sap_host_info, and the OS counters dashboard joins it
into every legend. The join is evaluated by promtool, on series shaped as Prometheus holds
them (the exporter's copy and Telegraf's), not read back from the query text."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import yaml

from landscape_model.catalog import DATA_DIR, read_landscape
from landscape_model.config import Landscape
from tests.promtool import promtool_path

REPO = Path(__file__).resolve().parents[2]


def _landscape(name: str) -> Landscape:
    return Landscape.model_validate(read_landscape(DATA_DIR / "landscapes" / f"{name}.yml"))


def test_each_host_of_the_sd_benchmark_says_what_it_runs() -> None:
    land = _landscape("sd-benchmark-2003")
    roles = {h.name: land.host_role(h.name) for h in land.hosts}
    assert roles[land.database.host] == "database"
    assert roles[land.central_services.host] == "central_services"
    assert {r for h, r in roles.items() if h in land.app_servers.hosts} == {"application"}
    assert len(roles) == 12


def test_a_two_tier_host_runs_all_three() -> None:
    land = _landscape("sd-two-tier")
    (host,) = land.hosts
    assert land.host_role(host.name) == "database+central_services+application"


def _panel_expr(title: str) -> str:
    doc = json.loads((REPO / "dashboards" / "grafana" / "hosts" / "os.json").read_text())
    (panel,) = [p for p in doc["panels"] if p["title"] == title]
    (target,) = panel["targets"]
    assert target["legendFormat"] == "{{name}}"
    return target["expr"].replace("$sid", "BMK")


def test_the_os_dashboard_names_each_host_by_its_role(tmp_path) -> None:
    """Two copies of sap_host_info (exporter and Telegraf) still give one line per host, also
    right after a failed scrape; a host the landscape does not describe keeps its bare name
    instead of vanishing."""
    info = 'sap_host_info{{sid="BMK",host="walrus",role="database",job="{job}"}}'
    mem = 'windows_memory_available_bytes{{sid="BMK",host="{host}",job="wlmon-exporter"}}'
    case = {
        "rule_files": [],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [
                    # A failed scrape at minute 4 marks the exporter's series stale.
                    {"series": info.format(job="wlmon-exporter"), "values": "1 1 1 1 stale 1"},
                    {"series": info.format(job="telegraf"), "values": "1 1 1 1 stale 1"},
                    {"series": mem.format(host="walrus"), "values": "100x5"},
                    {"series": mem.format(host="realbox"), "values": "7x5"},
                ],
                "promql_expr_test": [
                    {
                        "expr": _panel_expr("Available memory (Memory\\Available MBytes)"),
                        "eval_time": "4m",
                        "exp_samples": [
                            {"labels": '{host="walrus",name="database: walrus"}', "value": 100},
                            {"labels": '{host="realbox",name="realbox"}', "value": 7},
                        ],
                    }
                ],
            }
        ],
    }
    path = tmp_path / "roles.test.yml"
    path.write_text(yaml.safe_dump(case))
    result = subprocess.run(
        [promtool_path(), "test", "rules", str(path)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr
