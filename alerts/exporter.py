"""exporter.rules.yml: the monitoring itself, because no data is not good news."""

from __future__ import annotations

from collections.abc import Mapping

from alerts.rules import RuleFile, alert

WHY = "The monitoring itself: no data is not good news."


def rule_file(limits: Mapping[str, float]) -> RuleFile:
    # `up` has no labels from the exporter: its sid is the scrape target's label
    # (provisioning/prometheus/prometheus.yml), so a run's report can list the outage.
    down = alert(
        "SAPExporterDown",
        'up{job="wlmon-exporter"} == 0',
        for_="2m",
        severity="critical",
        summary="The wlmon exporter cannot be scraped.",
        description="Prometheus cannot scrape the exporter of {{ $labels.sid }} at "
        "{{ $labels.instance }} (job {{ $labels.job }}); no SAP workload data arrives.",
        diagnosis="Without the exporter every SAP alert is blind. Check that the exporter runs "
        "(wlmon status) and listens where Prometheus looks.",
    )
    failing = alert(
        "SAPExporterCollectorFailing",
        "sap_scrape_collector_success == 0 or on(instance, job) (sap_up == 0)",
        severity="warning",
        summary="A wlmon collector fails its scrapes.",
        description="Collector {{ $labels.collector }} on {{ $labels.instance }} has failed "
        "every scrape for 5 minutes.",
        diagnosis="Part of the SAP statistics is missing, so alerts built on it cannot fire. The "
        "exporter's log names the error.",
    )
    return RuleFile(
        "exporter.rules.yml", WHY, [{"name": "wlmon-exporter", "rules": [down, failing]}]
    )
