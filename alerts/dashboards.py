"""Which Perses dashboard shows the evidence of each alert, and the link that opens it at the
alert's time range and instance.

One table, read three ways: the runbook page (a link per alert), the API's stored
notification and log line (api/services/alerts.py), and Alertmanager's notification
templates, which cannot import Python: `alertmanager_template` writes the same table as a Go
template (provisioning/alertmanager/wlmon.tmpl calls it; wlmon/stack/render.py writes it
beside the config). tests/test_receivers.py compares the two against each other.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from urllib.parse import urlencode

# Every dashboard lives in this Perses project (wlmon/stack/perses.py).
PROJECT = "wlmon"
# The time range opened: from this long before the alert started to this long after it
# ended (resolved) or to the notification's time (firing): the minutes that led to it.
MARGIN = timedelta(minutes=15)

# Alert name -> dashboard. Alerts about wlmon's own parts (alerts/monitoring.py) have no
# dashboard: their evidence is Prometheus' own (the notification's source link).
DASHBOARDS: dict[str, str] = {
    # ST03's view: the five indicators, the response bound, the roll area behind them.
    **dict.fromkeys(
        (
            "SAPDispatcherWaitTimeHigh",
            "SAPDatabaseRequestTimeHigh",
            "SAPEnqueueTimeHigh",
            "SAPRollInTimeHigh",
            "SAPRollOutTimeHigh",
            "SAPDialogResponseTimeHigh",
            "SAPRollFileInUse",
            "SAPExtendedMemoryFull",
        ),
        "st03",
    ),
    **dict.fromkeys(
        ("SAPDialogThroughputLow", "SAPExporterDown", "SAPExporterCollectorFailing"), "noc"
    ),
    **dict.fromkeys(
        (
            "SAPDB2BufferPoolHitRatioLow",
            "SAPDB2IOCleanersBehind",
            "SAPDatabasePhysicalReadsHigh",
            "SAPBufferHitRatioLow",
            "SAPBufferSwaps",
        ),
        "dbbuffer",
    ),
    **dict.fromkeys(("SAPDatabaseHostCPUBusy", "SAPDatabaseDiskQueueHigh"), "os"),
    **dict.fromkeys(
        (
            "SAPStartSrvUnreachable",
            "SAPInstanceStopped",
            "SAPProcessNotRunning",
            "SAPProcessDegraded",
            "SAPControlUserRefused",
            "SAPControlMethodFailing",
            "SAPControlDiscoveryFailing",
            "SAPInstanceFailedOver",
            # What CCMS, SM21, SM12 and the HA checks say (alerts/sapcontrol.py).
            "SAPShortDumpStorm",
            "SAPUpdateErrors",
            "SAPUpdateHang",
            "SAPBackgroundJobsAborted",
            "SAPSpoolErrors",
            "SAPSyslogErrors",
            "SAPLockHeldLong",
            "SAPLongRunningDialogStep",
            "SAPJavaThreadPoolExhausted",
            "SAPKernelPatchMismatch",
            "SAPHACheckFailed",
            "SAPEnqueueReplicationLost",
            "SAPHAFailoverDisabled",
        ),
        "instances",
    ),
}

# The dashboard variables an alert's labels set (every dashboard has both).
VARIABLES = ("sid", "sap_instance")


def dashboard_path(name: str) -> str:
    return f"/projects/{PROJECT}/dashboards/{name}"


def _ms(t: datetime) -> int:
    return int(t.timestamp()) * 1000 + t.microsecond // 1000


def dashboard_url(
    base: str,
    labels: dict[str, str],
    starts_at: datetime,
    ends_at: datetime | None,
    now: datetime,
) -> str | None:
    """The alert's dashboard from MARGIN before it started to MARGIN after it ended (or to
    `now` while it fires), its SID and instance selected; None for an alert without one.
    `ends_at` None means still firing. Perses reads start/end as epoch milliseconds."""
    name = DASHBOARDS.get(labels.get("alertname", ""))
    if name is None:
        return None
    end = ends_at + MARGIN if ends_at is not None else now
    query = {"start": _ms(starts_at - MARGIN), "end": _ms(end)}
    query |= {f"var-{v}": labels[v] for v in VARIABLES if labels.get(v)}
    return f"{base.rstrip('/')}{dashboard_path(name)}?{urlencode(query)}"


def alertmanager_template(base: str) -> str:
    """The table as Alertmanager templates: `wlmon.dashboard_url` of one alert (empty for an
    alert without a dashboard), the same URL as dashboard_url. The time arithmetic uses
    time.Time's own methods (Add takes nanoseconds), since Alertmanager's templates have
    no arithmetic."""
    margin_ns = int(MARGIN.total_seconds()) * 10**9
    by_dashboard: dict[str, list[str]] = {}
    for alert, name in DASHBOARDS.items():
        by_dashboard.setdefault(name, []).append(alert)
    branches = []
    for name, alerts in by_dashboard.items():
        names = " ".join(f'"{a}"' for a in alerts)
        keyword = "if" if not branches else "else if"
        branches.append(
            f"{{{{ {keyword} eq .Labels.alertname {names} }}}}"
            f'{{{{ template "wlmon.perses_link" (dict "Dashboard" "{name}" "Alert" .) }}}}'
        )
    variables = "".join(
        f"{{{{ if .Alert.Labels.{v} }}}}"
        f"&var-{v}={{{{ .Alert.Labels.{v} | urlquery }}}}{{{{ end }}}}"
        for v in VARIABLES
    )
    return (
        "{{/* Written by wlmon (alerts/dashboards.py): the dashboard of each alert. */}}\n"
        f'{{{{ define "wlmon.perses_url" }}}}{base.rstrip("/")}{{{{ end }}}}\n'
        '{{ define "wlmon.perses_link" }}{{ template "wlmon.perses_url" }}'
        f"/projects/{PROJECT}/dashboards/{{{{ .Dashboard }}}}"
        f"?start={{{{ (.Alert.StartsAt.Add -{margin_ns}).UnixMilli }}}}"
        '&end={{ if eq .Alert.Status "resolved" }}'
        f"{{{{ (.Alert.EndsAt.Add {margin_ns}).UnixMilli }}}}"
        "{{ else }}{{ (now).UnixMilli }}{{ end }}"
        f"{variables}{{{{ end }}}}\n"
        '{{ define "wlmon.dashboard_url" }}' + "".join(branches) + "{{ end }}{{ end }}\n"
        '{{ define "wlmon.dashboard_line" }}{{ if eq .Labels.alertname '
        + " ".join(f'"{a}"' for a in DASHBOARDS)
        + ' }}Dashboard: {{ template "wlmon.dashboard_url" . }}'
        "{{ else }}Dashboard: none (an alert about wlmon's own parts: see Prometheus)"
        "{{ end }}{{ end }}\n"
    )
