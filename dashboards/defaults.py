"""What the dashboards share: the template variables, selectors, query and threshold helpers."""

from __future__ import annotations

from alerts.settings import MonitoringConfig
from dashboards.model import Lang, Query, Thresholds, Variable, steps
from exporters.vocabulary import DIALOG_RESPONSE_MEAN, Indicator, per_step_mean

# The template variables every dashboard has: SID, instance, task type, from the ST03 steps.
SID_MATCHER = "sap_workload_steps_total"
VARIABLES = (
    Variable("sid", "SID", matcher=SID_MATCHER),
    Variable("sap_instance", "instance", matcher='sap_workload_steps_total{sid=~"$sid"}'),
    Variable("task_type", "task type", matcher='sap_workload_steps_total{sid=~"$sid"}'),
)


def variables(*hidden: str, base: tuple[Variable, ...] = VARIABLES) -> tuple[Variable, ...]:
    """The shared variables, those no panel of the dashboard reads hidden (kept: links pass
    them on)."""
    return tuple(
        Variable(v.name, v.label, v.matcher, v.flux, v.description, v.name in hidden) for v in base
    )


SEL = 'sid=~"$sid",sap_instance=~"$sap_instance"'
SEL_TT = SEL + ',task_type=~"$task_type"'
DIALOG = SEL + ',task_type="dialog"'
# Steps/s per instance as recorded from either source (the model or sapcontrol); max by
# instance keeps one where both read the same instance.
STEPS = "sap_instance_task_type:sap_workload_steps:rate5m"
# The buffers the paper lets run below the hit-ratio floor (seed 000, 4.3.1 guideline 1).
EXCEPTED_BUFFERS = 'buffer!~"program|single_record|export_import"'


def prom(expr: str, legend: str = "", instant: bool = False, table: bool = False) -> Query:
    return Query(expr, Lang.PROMQL, legend, instant, table)


def logs(expr: str, logql: str) -> Query:
    """A log query in LogsQL (VictoriaLogs), and in LogQL for a user's Loki."""
    return Query(expr, Lang.LOGSQL, logql=logql)


def flux(query: str, legend: str = "", table: bool = False) -> Query:
    return Query(query, Lang.FLUX, legend, table=table)


def traffic(limit: float, lines: bool = False) -> Thresholds:
    """Green below the whitepaper threshold, red at or above it."""
    return steps((None, "green"), (limit, "red"), lines=lines)


def floor(limit: float) -> Thresholds:
    """Red below a hit-ratio floor, green at or above it."""
    return steps((None, "red"), (limit, "green"))


def limit_line(limit: float) -> Thresholds:
    """One dashed red line at the limit on a time series, nothing else coloured: the
    series keep their own colours, and no healthy stretch is shaded as an alarm."""
    return steps((None, "transparent"), (limit, "red"), lines=True)


def ms(component: str, sel: str = SEL_TT, by: str = "") -> str:
    """Mean milliseconds per step of one ST03 time component over the selection, summed
    `by` these labels (none: the whole selection)."""
    agg = f"sum by ({by}) " if by else "sum"
    return (
        f"1000 * {agg}(rate(sap_workload_{component}_seconds_total{{{sel}}}[5m]))"
        f" / {agg}(rate(sap_workload_steps_total{{{sel}}}[5m]))"
    )


# One quantity, one definition, one colour scale (issue 37): every panel that shows one of
# the whitepaper indicators (the NOC light and table, the fleet row, ST03's per-instance
# lines) reads the series its alert pages on, the recorded one-minute mean per dialog step
# (alerts/recording.rules.yml, per_step_mean(..., "1m")), and colours it by the same two
# levels of alerts/thresholds.yml: orange from the paper's threshold (the warning level),
# red from the page level. `max by` drops the `source` label, so a reading from sapcontrol
# and one from the model are one series per instance, never two values for one question.
INDICATOR_WINDOW = "1m"


def indicator_ms(i: Indicator, sel: str = DIALOG, by: str = "sid, sap_instance") -> str:
    """Milliseconds per dialog step of indicator `i`, as its alert reads it, `max by` the
    labels named (none: the worst over the selection)."""
    agg = f"max by ({by}) " if by else "max"
    return f"1000 * {agg}({per_step_mean(i.component, INDICATOR_WINDOW)}{{{sel}}})"


def dialog_response_s(sel: str = 'sid=~"$sid"', by: str = "sid") -> str:
    """The SID's average dialog response (recorded; the alert's series), in seconds."""
    agg = f"max by ({by}) " if by else "max"
    return f"{agg}({DIALOG_RESPONSE_MEAN}{{{sel}}})"


def warning_ms(config: MonitoringConfig, i: Indicator) -> float:
    return config.thresholds.seconds(i) * 1000


def page_ms(config: MonitoringConfig, i: Indicator) -> float | None:
    """Where the indicator's alert pages (alerts/thresholds.yml `*_page_seconds`), in ms."""
    page = config.thresholds.page_seconds(i)
    return None if page is None else page * 1000


def levels(config: MonitoringConfig, i: Indicator, lines: bool = False) -> Thresholds:
    """Green below the warning level, orange from it, red from the page level (an indicator
    without a page level, dialog response: red from its bound). As lines on a time series:
    a dashed orange line at the warning level and a red one at the page level, the series
    keeping their own colours."""
    warn = warning_ms(config, i)
    page = page_ms(config, i)
    first = "transparent" if lines else "green"
    if page is None:
        return steps((None, first), (warn, "red"), lines=lines)
    return steps((None, first), (warn, "orange"), (page, "red"), lines=lines)
