"""exporter.rules.yml: the monitoring itself, because no data is not good news."""

from __future__ import annotations

from alerts.rules import RuleFile, alert
from alerts.settings import MonitoringConfig

WHY = "The monitoring itself: no data is not good news."


def rule_file(config: MonitoringConfig) -> RuleFile:
    # `up` has no labels from the exporter: its sid is the scrape target's label
    # (provisioning/prometheus/prometheus.yml), so a run's report can list the outage. A
    # target serving several SIDs (a monitor file or fleet exporter group of real SIDs) has
    # no such label: the SIDs it served, from its own sap_system_info over the last day,
    # give one alert per SID it blinds; a target never seen serving any keeps the bare `up`.
    served = (
        'group by (job, instance, sid) (last_over_time(sap_system_info{job="wlmon-exporter"}[1d]))'
    )
    target_down = 'up{job="wlmon-exporter"} == 0'
    down = alert(
        "SAPExporterDown",
        f"({served} * on(job, instance) group_left() ({target_down}))"
        f" or on(job, instance) ({target_down})",
        for_="2m",
        severity="critical",
        summary="The wlmon exporter cannot be scraped.",
        description="Prometheus cannot scrape the exporter {{ if $labels.sid }}of "
        "{{ $labels.sid }} {{ end }}at {{ $labels.instance }} (job {{ $labels.job }}); no SAP "
        "workload data arrives.",
        diagnosis="Without the exporter every SAP alert is blind. Check that the exporter runs "
        "(wlmon status) and listens where Prometheus looks.",
    )
    # An unreachable sapstartsrv (sap_up{source="sapcontrol"} 0) is SAPStartSrvUnreachable's,
    # a critical alert of its own: scoped out here, so one cause pages once. Scoped in the
    # rule, not inhibited in Alertmanager: the two share only `sid`, so an inhibition would
    # also hide a failing st03 of that SID, and Prometheus' ALERTS, Grafana and the API's
    # alert history would still show both.
    failing = alert(
        "SAPExporterCollectorFailing",
        "sap_scrape_collector_success == 0"
        ' or on(instance, job) (sap_up{source!="sapcontrol"} == 0)',
        severity="warning",
        summary="A wlmon collector fails its scrapes.",
        # The sap_up branch has no `collector` label: say what failed instead of a blank.
        description="{{ if $labels.collector }}Collector {{ $labels.collector }} on "
        "{{ $labels.instance }} has failed every scrape for 5 minutes.{{ else }}The exporter "
        "on {{ $labels.instance }} has not read the monitored system {{ $labels.sid }} for 5 "
        "minutes.{{ end }}",
        diagnosis="Part of the SAP statistics is missing, so alerts built on it cannot fire. The "
        "exporter's log names the error.",
    )
    return RuleFile(
        "exporter.rules.yml", WHY, [{"name": "wlmon-exporter", "rules": [down, failing]}]
    )
