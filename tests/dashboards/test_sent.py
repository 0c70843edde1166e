"""The NOC's and the fleet's alert counts, evaluated by Prometheus itself (promtool's PromQL
unit tests) over ALERTS series: what Alertmanager's routing and inhibit rules in
provisioning/alertmanager/alertmanager.yml would send, counted as the messages it groups."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from dashboards import sent
from tests.promtool import promtool_path


def _alert(name: str, severity: str, sid: str = "BMK", **labels: str) -> dict:
    lab = {"alertname": name, "alertstate": "firing", "severity": severity, "sid": sid, **labels}
    body = ",".join(f'{k}="{v}"' for k, v in lab.items())
    return {"series": f"ALERTS{{{body}}}", "values": "1x10"}


# BMK: one database page on two instances (one message), the disp+work symptom the third
# inhibit rule mutes, a warning of the page's own alert on one instance (muted by the first
# rule), and a warning of another cause (sent). PRD: its exporter is down, so its instance
# alerts are muted (second rule) and only SAPExporterDown goes out. The watchdog: never.
SERIES = [
    _alert("SAPWatchdog", "info", sid=""),
    _alert("SAPDatabaseRequestTimeHigh", "critical", sap_instance="a", cause="database"),
    _alert("SAPDatabaseRequestTimeHigh", "critical", sap_instance="b", cause="database"),
    _alert("SAPProcessDegraded", "warning", sap_instance="a", process="disp+work"),
    _alert("SAPDatabaseRequestTimeHigh", "warning", sap_instance="a", cause="database"),
    _alert("SAPDialogThroughputLow", "warning", cause="throughput"),
    _alert("SAPExporterDown", "critical", sid="PRD"),
    _alert("SAPEnqueueTimeHigh", "critical", sid="PRD", sap_instance="c", cause="enqueue"),
]


def _check(tmp_path: Path, cases: list[tuple[str, list[tuple[str, float]]]]) -> None:
    tests = {
        "rule_files": [],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": SERIES,
                "promql_expr_test": [
                    {
                        "expr": expr,
                        "eval_time": "5m",
                        "exp_samples": [{"labels": lab, "value": v} for lab, v in samples],
                    }
                    for expr, samples in cases
                ],
            }
        ],
    }
    f = tmp_path / "sent_test.yml"
    f.write_text(yaml.safe_dump(tests, sort_keys=False))
    try:
        promtool = promtool_path()
    except FileNotFoundError as exc:
        pytest.fail(str(exc))
    run = subprocess.run(
        [promtool, "test", "rules", str(f)], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_counts_are_what_alertmanager_sends(tmp_path: Path) -> None:
    _check(
        tmp_path,
        [
            # BMK's database page (one message for two instances), PRD's SAPExporterDown.
            (sent.messages('severity="critical"'), [("{}", 2)]),
            # Only the throughput warning: the inhibited warnings and the watchdog are out.
            (sent.messages('severity!="critical"'), [("{}", 1)]),
            (sent.messages('severity="critical",sid=~"BMK"'), [("{}", 1)]),
            (sent.messages('severity="none"'), [("{}", 0)]),
            (
                "count by (sid) (" + sent.sendable('sid!=""') + ")",
                [('{sid="BMK"}', 3), ('{sid="PRD"}', 1)],
            ),
            # BMK: the database page and the throughput warning; PRD: its exporter down.
            (sent.messages_by_sid('sid!=""'), [('{sid="BMK"}', 2), ('{sid="PRD"}', 1)]),
        ],
    )


def test_the_rules_come_from_alertmanagers_file() -> None:
    """An inhibit rule or a watchdog route added there is in the queries, not copied."""
    doc = yaml.safe_load(sent.ALERTMANAGER_FILE.read_text())
    assert len(sent.inhibitions()) == len(doc["inhibit_rules"]) >= 1
    assert sent.unsent_routes() == ['alertname="SAPWatchdog"']
    expr = sent.sendable('severity="critical"')
    for _target, source, equal in sent.inhibitions():
        assert source in expr and (not equal or f"on({', '.join(equal)})" in expr)
