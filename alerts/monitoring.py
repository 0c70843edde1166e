"""monitoring.rules.yml: the stack watching itself (meta-monitoring).

A monitor that dies silently is worse than none: the NOC reads quiet as healthy. So a
watchdog always fires (its heartbeats stopping is the page, sent by a service outside this
stack), every server of the stack has a down alert on its scrape, and the two ways alerts
get lost inside a running stack (rules failing to evaluate, notifications failing to send)
have their own alerts.
"""

from __future__ import annotations

from dataclasses import dataclass

from alerts.rules import RuleFile, alert, record
from alerts.settings import MonitoringConfig

WHY = """
The stack watching itself: a watchdog that always fires (its absence is the page, at the
heartbeat receiver of provisioning/alertmanager/alertmanager.yml), each server's scrape
being down, rules failing to evaluate, alerts or notifications failing to be delivered.
"""

# Scrape targets are labelled by their job (provisioning/prometheus/prometheus.yml).
TARGET = "{{ $labels.instance }} (job {{ $labels.job }})"


@dataclass(frozen=True)
class Server:
    """One server of the stack: its alert, its scrape job and what losing it costs."""

    alert: str
    job: str
    name: str
    severity: str
    loses: str


SERVERS = (
    Server(
        "SAPPrometheusDown",
        "prometheus",
        "Prometheus",
        "critical",
        "Prometheus cannot scrape its own metrics, so its health is unknown; if it stops "
        "altogether nothing evaluates and only the watchdog's missing heartbeat tells.",
    ),
    Server(
        "SAPAlertmanagerDown",
        "alertmanager",
        "Alertmanager",
        "critical",
        "Alerts are evaluated but nobody is notified: this alert itself may only reach "
        "people through the watchdog's missing heartbeat.",
    ),
    Server(
        "SAPAPIDown",
        "wlmon-api",
        "the wlmon API",
        "critical",
        "Alertmanager's webhook fails, so notifications are neither stored nor forwarded to "
        "the log store, and runs cannot be started or reported.",
    ),
    Server(
        "SAPLogStoreDown",
        "victorialogs",
        "VictoriaLogs (the log store)",
        "warning",
        "SQL trace lines and run events are buffered by their senders and are lost once the "
        "buffers fill; notifications wait in the API's database.",
    ),
    Server(
        "SAPInfluxDBDown",
        "influxdb",
        "InfluxDB",
        "warning",
        "Telegraf's host counters and the exporter's points are buffered and are lost once "
        "the buffers fill.",
    ),
    Server(
        "SAPTelegrafDown",
        "telegraf",
        "Telegraf",
        "warning",
        "No operating-system counters (CPU, memory, paging, disk) reach InfluxDB.",
    ),
    Server(
        "SAPPersesDown",
        "perses",
        "Perses",
        "warning",
        "Dashboards are unavailable; alerting does not depend on Perses.",
    ),
)


def watchdog() -> dict:
    return alert(
        "SAPWatchdog",
        "vector(1)",
        # Not instantly: a Prometheus restarting in a loop should not look alive.
        for_="1m",
        severity="info",
        summary="The alerting pipeline is alive (this alert always fires).",
        description="Prometheus {{ $externalLabels.monitor }} evaluates its rules and reaches "
        "Alertmanager; the heartbeat receiver gets this alert every minute.",
        diagnosis="A dead man's switch: it must always fire. The service at WLMON_WATCHDOG_URL "
        "pages when its heartbeats stop, which means Prometheus, Alertmanager or the path "
        "between them is down. Never silence it.",
    )


def server_down(s: Server) -> dict:
    return alert(
        s.alert,
        f'up{{job="{s.job}"}} == 0',
        for_="2m",
        severity=s.severity,
        summary=f"{s.name[0].upper()}{s.name[1:]} cannot be scraped.",
        description=f"Prometheus has not reached {s.name} at {TARGET} for 2 minutes.",
        diagnosis=f"{s.loses} Check `wlmon status` and the server's log in "
        f"<state>/logs/{s.job.removeprefix('wlmon-')}.log.",
    )


def pipeline_alerts() -> list[dict]:
    """The ways alerts are lost while every server answers its scrape."""
    return [
        alert(
            "SAPPrometheusRuleEvaluationFailing",
            # 2-minute window, 3 minutes long: one failed evaluation (a query timeout)
            # does not page, a group that keeps failing does.
            "sum by (instance, job, rule_group) "
            "(increase(prometheus_rule_evaluation_failures_total[2m])) > 0",
            for_="3m",
            severity="critical",
            summary="Prometheus fails to evaluate rules.",
            description="Rule group {{ $labels.rule_group }} on {{ $labels.instance }} failed "
            '{{ printf "%.0f" $value }} evaluations in the last 2 minutes.',
            diagnosis="An alert whose rule fails to evaluate can never fire. Prometheus's log "
            "names the rule and the error (often a many-to-many match or a query timeout).",
        ),
        alert(
            "SAPPrometheusAlertsNotSent",
            "sum by (instance, job) (rate(prometheus_notifications_errors_total[2m])) > 0\n"
            "or sum by (instance, job) (rate(prometheus_notifications_dropped_total[2m])) > 0\n",
            for_="3m",
            severity="critical",
            summary="Prometheus fails to send alerts to Alertmanager.",
            description="Prometheus {{ $labels.instance }} loses "
            '{{ printf "%.2f" $value }} alerts/s on their way to Alertmanager.',
            diagnosis="Firing alerts do not reach Alertmanager, so nobody is notified. Check "
            "that Alertmanager runs and listens where prometheus.yml's alerting section points.",
        ),
        alert(
            "SAPAlertmanagerNotificationsFailing",
            "sum by (instance, job, integration) "
            # Alertmanager retries a failed send: a receiver back within a minute or two
            # (the API restarting) does not page.
            "(rate(alertmanager_notifications_failed_total[2m])) > 0",
            for_="3m",
            severity="critical",
            summary="Alertmanager fails to deliver notifications.",
            description="Alertmanager {{ $labels.instance }} fails "
            '{{ printf "%.2f" $value }} {{ $labels.integration }} notifications/s.',
            diagnosis="People are not told about firing alerts through this integration. "
            "Alertmanager's log names the receiver and the error: the API down or refusing the "
            "token (webhook), the mail server unreachable or refusing (email).",
        ),
        alert(
            "SAPAPIStorageDegraded",
            "max by (instance, job) (wlmon_api_storage_degraded) == 1",
            for_="1m",
            severity="critical",
            summary="The wlmon API cannot store what it is sent.",
            description="The API at {{ $labels.instance }} reports its storage degraded: a "
            "write failed (disk full, the database's size cap, an I/O error) or its disk is "
            "nearly full. Its /healthz names the reason.",
            diagnosis="Notifications and runs sent now are refused (507) and lost to the "
            "record; what was stored before is kept. Free space on the disk of the API's "
            "database, or raise WLMON_API_DB_MAX_BYTES; writes succeed again without a restart.",
        ),
        alert(
            "SAPMonitoringConfigReloadFailed",
            "max by (instance, job) (prometheus_config_last_reload_successful) == 0\n"
            "or max by (instance, job) (alertmanager_config_last_reload_successful) == 0\n",
            for_="5m",
            severity="warning",
            summary="Prometheus or Alertmanager runs on an old configuration.",
            description="The last configuration reload of {{ $labels.instance }} "
            "(job {{ $labels.job }}) failed.",
            diagnosis="The server keeps its previous configuration, so changed rules, targets "
            "or routes are not in effect. Its log names the line; check the file with "
            "`promtool check config` or `amtool check-config`.",
        ),
    ]


# The NOC's "last notification": when Alertmanager last sent to each receiver. Its counter
# (per receiver_name with --enable-feature=receiver-name-in-metrics) rose in the window
# (t - EVERY, t] exactly when it differs from its value EVERY ago; evaluated every EVERY,
# those windows tile the time line, so each send is seen once, and timestamp() gives the
# window's latest scrape: late by at most EVERY (exact where the scrape interval is EVERY,
# compose's and the default 15 s). The `or` keeps the last value while
# nothing is sent. The heartbeat receiver (provisioning/alertmanager/alertmanager.yml's
# watchdog) is nobody's news and left out.
LAST_NOTIFICATION = "receiver:alertmanager_last_notification_timestamp_seconds"
NOTIFICATION_EVERY = "15s"
HEARTBEAT_RECEIVER = "watchdog"


def last_notification() -> dict:
    named = f'receiver_name!="",receiver_name!="{HEARTBEAT_RECEIVER}"'
    sent = f"alertmanager_notifications_total{{{named}}}"
    rose = f"({sent} - {sent} offset {NOTIFICATION_EVERY} > 0)"
    return {
        "name": "wlmon-notifications",
        # Fixed, not the stack's evaluation interval: the offset above must equal it.
        "interval": NOTIFICATION_EVERY,
        "rules": [
            record(
                LAST_NOTIFICATION,
                f"max by (receiver_name, integration) (timestamp({sent}) and {rose})"
                f" or last_over_time({LAST_NOTIFICATION}[7d])",
            )
        ],
    }


def rule_file(config: MonitoringConfig) -> RuleFile:
    del config  # nothing here is tuned by thresholds.yml
    rules = [watchdog(), *(server_down(s) for s in SERVERS), *pipeline_alerts()]
    return RuleFile(
        "monitoring.rules.yml",
        WHY,
        [{"name": "wlmon-monitoring", "rules": rules}, last_notification()],
    )
