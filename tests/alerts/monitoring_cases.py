"""promtool cases of alerts/monitoring.rules.yml (the stack watching itself).

Each alert fires on its fault, stays silent while healthy and after a fault shorter than
its `for:`. Expected texts are written out here, not taken from alerts/monitoring.py, so a
changed rule text fails the test until the case is updated.
"""

from __future__ import annotations

from alerts.monitoring import SERVERS
from tests.alerts.cases import MINUTES, _annotations, _case

RULES = ["../../alerts/monitoring.rules.yml"]


def watchdog_tests() -> list[dict]:
    name = "SAPWatchdog"
    ann = _annotations(
        name,
        "The alerting pipeline is alive (this alert always fires).",
        "Prometheus wlmon evaluates its rules and reaches Alertmanager; the heartbeat receiver "
        "gets this alert every minute.",
        "A dead man's switch: it must always fire. The service at WLMON_WATCHDOG_URL pages when "
        "its heartbeats stop, which means Prometheus, Alertmanager or the path between them is "
        "down. Never silence it.",
    )
    fires = _case(
        f"{name} fires with no input at all",
        [],
        name,
        2,
        [{"exp_labels": {"severity": "info"}, "exp_annotations": ann}],
    )
    pending = _case(f"{name} is only pending before its for: has passed", [], name, 0, [])
    return [fires | {"external_labels": {"monitor": "wlmon"}}, pending]


def server_tests() -> list[dict]:
    out = []
    for s in SERVERS:
        up = f'up{{instance="127.0.0.1:9999",job="{s.job}"}}'
        labels = {"severity": s.severity, "instance": "127.0.0.1:9999", "job": s.job}
        what = s.name[0].upper() + s.name[1:]
        ann = _annotations(
            s.alert,
            f"{what} cannot be scraped.",
            f"Prometheus has not reached {s.name} at 127.0.0.1:9999 (job {s.job}) for 2 minutes.",
            f"{s.loses} Check `wlmon status` and the server's log in "
            f"<state>/logs/{s.job.removeprefix('wlmon-')}.log.",
        )
        out += [
            _case(
                f"{s.alert} fires when its target has been down for 3 minutes",
                [{"series": up, "values": f"1x5 0x{MINUTES}"}],
                s.alert,
                9,
                [{"exp_labels": labels, "exp_annotations": ann}],
            ),
            _case(
                f"{s.alert} stays silent while the target is up",
                [{"series": up, "values": f"1x{MINUTES}"}],
                s.alert,
                9,
                [],
            ),
            _case(
                f"{s.alert} stays silent after a one-minute restart",
                [{"series": up, "values": f"1x5 0 1x{MINUTES}"}],
                s.alert,
                8,
                [],
            ),
        ]
    return out


def pipeline_tests() -> list[dict]:
    prom = {"instance": "127.0.0.1:9090", "job": "prometheus"}
    am = {"instance": "127.0.0.1:9093", "job": "alertmanager"}
    rule_eval = "SAPPrometheusRuleEvaluationFailing"
    fails = (
        'prometheus_rule_evaluation_failures_total{instance="127.0.0.1:9090",job="prometheus",'
        'rule_group="/rules/workload.rules.yml;sap-workload"}'
    )
    rule_ann = _annotations(
        rule_eval,
        "Prometheus fails to evaluate rules.",
        "Rule group /rules/workload.rules.yml;sap-workload on 127.0.0.1:9090 failed 8 evaluations "
        "in the last 2 minutes.",
        "An alert whose rule fails to evaluate can never fire. Prometheus's log names the rule and "
        "the error (often a many-to-many match or a query timeout).",
    )
    not_sent = "SAPPrometheusAlertsNotSent"
    errors = (
        'prometheus_notifications_errors_total{alertmanager="http://127.0.0.1:9093/api/v2/alerts",'
        'instance="127.0.0.1:9090",job="prometheus"}'
    )
    dropped = 'prometheus_notifications_dropped_total{instance="127.0.0.1:9090",job="prometheus"}'

    def not_sent_ann(per_s: str) -> dict:
        return _annotations(
            not_sent,
            "Prometheus fails to send alerts to Alertmanager.",
            f"Prometheus 127.0.0.1:9090 loses {per_s} alerts/s on their way to Alertmanager.",
            "Firing alerts do not reach Alertmanager, so nobody is notified. Check that "
            "Alertmanager runs and listens where prometheus.yml's alerting section points.",
        )

    failing = "SAPAlertmanagerNotificationsFailing"
    failed = (
        'alertmanager_notifications_failed_total{instance="127.0.0.1:9093",job="alertmanager",'
        'integration="webhook",reason="clientError"}'
    )
    fail_ann = _annotations(
        failing,
        "Alertmanager fails to deliver notifications.",
        "Alertmanager 127.0.0.1:9093 fails 0.10 webhook notifications/s.",
        "People are not told about firing alerts through this integration. Alertmanager's log "
        "names the receiver and the error: the API down or refusing the token (webhook), the "
        "mail server unreachable or refusing (email).",
    )
    reload = "SAPMonitoringConfigReloadFailed"
    prom_ok = 'prometheus_config_last_reload_successful{instance="127.0.0.1:9090",job="prometheus"}'
    am_ok = (
        'alertmanager_config_last_reload_successful{instance="127.0.0.1:9093",job="alertmanager"}'
    )

    def reload_ann(target: dict) -> dict:
        return _annotations(
            reload,
            "Prometheus or Alertmanager runs on an old configuration.",
            f"The last configuration reload of {target['instance']} (job {target['job']}) failed.",
            "The server keeps its previous configuration, so changed rules, targets or routes are "
            "not in effect. Its log names the line; check the file with `promtool check config` "
            "or `amtool check-config`.",
        )

    storage = "SAPAPIStorageDegraded"
    api = {"instance": "127.0.0.1:8000", "job": "wlmon-api"}
    degraded = 'wlmon_api_storage_degraded{instance="127.0.0.1:8000",job="wlmon-api"}'
    storage_ann = _annotations(
        storage,
        "The wlmon API cannot store what it is sent.",
        "The API at 127.0.0.1:8000 reports its storage degraded: a write failed (disk full, the "
        "database's size cap, an I/O error) or its disk is nearly full. Its /healthz names the "
        "reason.",
        "Notifications and runs sent now are refused (507) and lost to the record; what was "
        "stored before is kept. Free space on the disk of the API's database, or raise "
        "WLMON_API_DB_MAX_BYTES; writes succeed again without a restart.",
    )
    return [
        _case(
            f"{storage} fires while the API's storage stays degraded",
            [{"series": degraded, "values": f"0x5 1x{MINUTES}"}],
            storage,
            9,
            [{"exp_labels": {"severity": "critical", **api}, "exp_annotations": storage_ann}],
        ),
        _case(
            f"{storage} stays silent while the API stores",
            [{"series": degraded, "values": f"0x{MINUTES}"}],
            storage,
            9,
            [],
        ),
        _case(
            f"{storage} stays silent after one degraded scrape",
            [{"series": degraded, "values": f"0x5 1 0x{MINUTES}"}],
            storage,
            8,
            [],
        ),
        _case(
            f"{rule_eval} fires while a group fails every evaluation",
            [{"series": fails, "values": f"0x5 0+4x{MINUTES}"}],
            rule_eval,
            12,
            [
                {
                    "exp_labels": {
                        "severity": "critical",
                        "rule_group": "/rules/workload.rules.yml;sap-workload",
                        **prom,
                    },
                    "exp_annotations": rule_ann,
                }
            ],
        ),
        _case(
            f"{rule_eval} stays silent while rules evaluate",
            [{"series": fails, "values": f"0x{MINUTES}"}],
            rule_eval,
            12,
            [],
        ),
        _case(
            f"{rule_eval} stays silent after one failed evaluation",
            [{"series": fails, "values": f"0x5 1x{MINUTES}"}],
            rule_eval,
            9,
            [],
        ),
        _case(
            f"{rule_eval} stays silent across a Prometheus restart resetting the counter",
            [{"series": fails, "values": f"7x5 0x{MINUTES}"}],
            rule_eval,
            9,
            [],
        ),
        _case(
            f"{not_sent} fires while sending to Alertmanager errs",
            [
                {"series": errors, "values": f"0x5 0+30x{MINUTES}"},
                {"series": dropped, "values": f"0x{MINUTES + 5}"},
            ],
            not_sent,
            12,
            [
                {
                    "exp_labels": {"severity": "critical", **prom},
                    "exp_annotations": not_sent_ann("0.50"),
                }
            ],
        ),
        _case(
            f"{not_sent} fires while the queue drops alerts",
            [
                {"series": errors, "values": f"0x{MINUTES + 5}"},
                {"series": dropped, "values": f"0x5 0+60x{MINUTES}"},
            ],
            not_sent,
            12,
            [
                {
                    "exp_labels": {"severity": "critical", **prom},
                    "exp_annotations": not_sent_ann("1.00"),
                }
            ],
        ),
        _case(
            f"{not_sent} stays silent while alerts are delivered",
            [
                {"series": errors, "values": f"0x{MINUTES + 5}"},
                {"series": dropped, "values": f"0x{MINUTES + 5}"},
            ],
            not_sent,
            12,
            [],
        ),
        _case(
            f"{not_sent} stays silent after errors during a one-minute Alertmanager restart",
            [
                {"series": errors, "values": f"0x5 3x{MINUTES}"},
                {"series": dropped, "values": f"0x{MINUTES + 5}"},
            ],
            not_sent,
            9,
            [],
        ),
        _case(
            f"{failing} fires while webhook notifications fail",
            [{"series": failed, "values": f"0x5 0+6x{MINUTES}"}],
            failing,
            12,
            [
                {
                    "exp_labels": {"severity": "critical", "integration": "webhook", **am},
                    "exp_annotations": fail_ann,
                }
            ],
        ),
        _case(
            f"{failing} stays silent while notifications are delivered",
            [{"series": failed, "values": f"0x{MINUTES}"}],
            failing,
            12,
            [],
        ),
        _case(
            f"{failing} stays silent after the retries of a one-minute API restart",
            [{"series": failed, "values": f"0x5 2x{MINUTES}"}],
            failing,
            9,
            [],
        ),
        _case(
            f"{reload} fires when Prometheus rejected its configuration",
            [
                {"series": prom_ok, "values": f"1x5 0x{MINUTES}"},
                {"series": am_ok, "values": f"1x{MINUTES}"},
            ],
            reload,
            12,
            [{"exp_labels": {"severity": "warning", **prom}, "exp_annotations": reload_ann(prom)}],
        ),
        _case(
            f"{reload} fires when Alertmanager rejected its configuration",
            [
                {"series": prom_ok, "values": f"1x{MINUTES}"},
                {"series": am_ok, "values": f"1x5 0x{MINUTES}"},
            ],
            reload,
            12,
            [{"exp_labels": {"severity": "warning", **am}, "exp_annotations": reload_ann(am)}],
        ),
        _case(
            f"{reload} stays silent while both reloads succeeded",
            [
                {"series": prom_ok, "values": f"1x{MINUTES}"},
                {"series": am_ok, "values": f"1x{MINUTES}"},
            ],
            reload,
            12,
            [],
        ),
        _case(
            f"{reload} stays silent when a bad file is fixed within minutes",
            [
                {"series": prom_ok, "values": f"1x5 0x2 1x{MINUTES}"},
                {"series": am_ok, "values": f"1x{MINUTES}"},
            ],
            reload,
            12,
            [],
        ),
    ]


def notification_tests() -> list[dict]:
    """When each receiver was last sent to, at 15 s samples (the group's own interval).
    Expected times are worked out here from the input: the counter first shows 1 at its
    10th sample (9 x 15 s = 135 s), 2 at its 19th (270 s)."""
    rule = "receiver:alertmanager_last_notification_timestamp_seconds"
    am = 'instance="127.0.0.1:9093",job="alertmanager"'
    sent = (
        f"alertmanager_notifications_total"
        f'{{{am},integration="webhook",receiver_name="oncall-critical"}}'
    )
    beat = (
        f'alertmanager_notifications_total{{{am},integration="webhook",receiver_name="watchdog"}}'
    )
    unnamed = f'alertmanager_notifications_total{{{am},integration="email"}}'
    row = f'{rule}{{integration="webhook",receiver_name="oncall-critical"}}'
    return [
        {
            "name": "the last send to each receiver, the heartbeat's and unnamed counters left out",
            "interval": "15s",
            "input_series": [
                {"series": sent, "values": "0x8 1x8 2x40"},
                {"series": beat, "values": "0+1x60"},
                {"series": unnamed, "values": "0+1x60"},
            ],
            "promql_expr_test": [
                {"expr": rule, "eval_time": "1m", "exp_samples": []},
                {"expr": rule, "eval_time": "4m", "exp_samples": [{"labels": row, "value": 135}]},
                # Nothing sent since 270 s: the value stays (the rule reads its own last one).
                {"expr": rule, "eval_time": "10m", "exp_samples": [{"labels": row, "value": 270}]},
            ],
        }
    ]


def suites() -> dict[str, list[dict]]:
    return {
        "SAPMonitoringWatchdog": watchdog_tests(),
        "SAPMonitoringServers": server_tests(),
        "SAPMonitoringPipeline": pipeline_tests(),
    }
