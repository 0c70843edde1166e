"""What the API answers, one model per document, so the OpenAPI document describes every
answer; and the Alertmanager payload it takes. Run plans are in api/runs/spec.py.

Answers refuse keys they do not declare (`extra="forbid"`): a key the report gains without
its model here fails tests/api/test_schemas.py instead of vanishing from the answer.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, WithJsonSchema, create_model

from api.runs.storage import RunKind, RunStatus
from landscape_model.terms import COMPONENT_BY_KEY, REPORT_ORDER

# Times as the store writes them: ISO 8601 in UTC (kept as text so answers are byte-stable).
Timestamp = Annotated[str, Field(json_schema_extra={"format": "date-time"})]
# A run row's times (api/runs/storage.py RunRow): aware datetimes, answered as the text the
# store has always written (isoformat of the UTC time: +00:00, microseconds when non-zero;
# pydantic's own form would write Z and change every answer).
RunTime = Annotated[
    datetime,
    PlainSerializer(lambda t: t.isoformat(), return_type=str),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --- errors ------------------------------------------------------------------------------


class Error(Answer):
    """A refusal; the message says what was wrong."""

    detail: str


class FieldError(BaseModel):
    """One field that failed validation, as FastAPI lists it."""

    model_config = ConfigDict(extra="allow")

    loc: list[str | int]
    msg: str
    type: str


class InvalidInput(Answer):
    """422: a message naming what is wrong, or FastAPI's list of the fields that failed."""

    detail: str | list[FieldError]


WRITE_REFUSALS = {
    401: "missing or wrong bearer token",
    503: "writes are disabled: WLMON_API_TOKEN is not set for the API",
}


def refusals(descriptions: dict[int, str], *, write: bool = False) -> dict[int | str, Any]:
    """The `responses` entries of a route's 4xx/5xx answers, each with its model."""
    merged = {**(WRITE_REFUSALS if write else {}), **descriptions}
    return {
        code: {"model": InvalidInput if code == 422 else Error, "description": text}
        for code, text in sorted(merged.items())
    }


# --- health ------------------------------------------------------------------------------


class Health(Answer):
    # degraded: the API answers but cannot do all it should (each reason says what).
    status: Literal["ok", "degraded"]
    version: str
    reasons: list[str] = []


# --- runs --------------------------------------------------------------------------------


class Deleted(Answer):
    """What DELETE removed."""

    id: str


class Run(Answer):
    # from_attributes: a report holds the store's RunRow, read here as it is.
    model_config = ConfigDict(extra="forbid", from_attributes=True)

    id: str
    kind: RunKind
    status: RunStatus
    scenario: str = Field(description="the scenario; the SID for external runs")
    label: str
    start: RunTime
    end: RunTime = Field(description="planned while running, actual once ended")
    ramp_up_s: float
    created_at: RunTime
    message: str = Field(description="why a run failed or ended early; empty when fine")
    dashboard_path: str | None = Field(
        default=None,
        description="runs of the monitored system: the stack's forensics dashboard (Perses) at "
        "the run's window",
    )
    grafana_path: str | None = Field(
        default=None,
        description="the same in a Grafana of your own that imported dashboards/grafana/",
    )


class SteadyState(Answer):
    start_s: float
    end_s: float
    duration_s: float


# Fields an ST03N export may hold beyond the recorded components (absent when it does not).
ST03_EXTRA_FIELDS: dict[str, Any] = {
    "wp_time_ms": (
        float | None,
        Field(
            default=None,
            description="'Ø Time in WPs': time in work processes (response less the "
            "dispatcher wait); never the response time",
        ),
    ),
    "roll_wait_ms": (float | None, Field(default=None, description="ST03N 'Ø Roll Wait Time'")),
    "roll_in_wait_ms": (
        float | None,
        Field(default=None, description="STAD 'Roll (i+w) time': roll-in and roll wait"),
    ),
    "load_ms": (float | None, Field(default=None, description="'Load time' alone")),
    "generation_ms": (float | None, Field(default=None, description="'Generating time' alone")),
    "memory_kb": (float | None, Field(default=None, description="'Memory used (kB)' per step")),
    "extended_memory_kb": (
        float | None,
        Field(default=None, description="'Ø Extended Memory (KB)' per step"),
    ),
    "transferred_kb": (
        float | None,
        Field(default=None, description="'Transferred kBytes' per step"),
    ),
    "frontend_net_ms": (
        float | None,
        Field(default=None, description="ST03N 'Ø Frontend Net Time' / GUI network time"),
    ),
    "db_procedure_ms": (float | None, Field(default=None, description="ST03N 'Ø DB Proc. Time'")),
    "rfc_ms": (float | None, Field(default=None, description="ST03N 'Ø RFC+CPIC Time'")),
    "db_time_per_request_ms": (
        float | None,
        Field(
            default=None,
            description="ST03N 'Ø Time/DB Req.': DB time per database request (not per step)",
        ),
    ),
    "db_requests": (int | None, Field(default=None, description="database requests")),
}
COMPONENT_FIELDS: dict[str, Any] = {
    f"{c}_ms": (
        float | None,
        Field(description=f"mean per step; null: not in the data. {COMPONENT_BY_KEY[c].help}"),
    )
    for c in REPORT_ORDER
}

# Per task type, the mean of every time component per step, in ms (`response_ms`, ...): the
# fields follow the vocabulary's components, in the order reports print them.
ST03Row = create_model(
    "ST03Row",
    __base__=Answer,
    __doc__="ST03 per task type over the steady state: steps and mean times per step.",
    task_type=(str, ...),
    as_exported=(
        str | None,
        Field(default=None, description="the task type as the export names it (BUF.SYNC)"),
    ),
    steps=(int, ...),
    **COMPONENT_FIELDS,
    **ST03_EXTRA_FIELDS,
)


class TransactionRow(Answer):
    task_type: str
    transaction: str
    steps: int
    response_ms: float | None


class PercentileRow(Answer):
    """Response-time percentiles of one task type, from its histogram."""

    task_type: str
    steps: int = Field(description="steps the histogram counted in the steady state")
    p50_s: float
    p90_s: float
    p95_s: float
    p99_s: float
    buckets: dict[str, list[float | None]] = Field(
        description="per percentile, the bounds of the bucket it lies in (upper null: +Inf)"
    )
    precision: str = Field(description='"p99 lies in 2–3 s": the precision in words')
    prometheus_steady_state_s: dict[str, float] | None = Field(
        default=None,
        description="runs read from Prometheus: its own histogram_quantile over the steady "
        "state, evaluated at its end (what a Grafana panel over that range shows)",
    )


class TransactionPercentileRow(PercentileRow):
    """Response-time percentiles of one transaction of one task type."""

    transaction: str


class Percentiles(Answer):
    by_task_type: list[PercentileRow]
    by_transaction: list[TransactionPercentileRow] = Field(
        description="per task type and transaction, from the histogram per transaction"
    )
    source: str
    missing: str = Field(description="one line when there is no histogram; empty otherwise")
    by_transaction_missing: str = Field(
        description="one line when there is no histogram per transaction; empty otherwise"
    )


TransactionProfileRow = create_model(
    "TransactionProfileRow",
    __base__=Answer,
    __doc__="ST03N's transaction profile: one transaction of one task type.",
    rank=(int, Field(description="1: the largest total response time")),
    task_type=(str, ...),
    transaction=(str, ...),
    steps=(int, ...),
    total_response_s=(float | None, Field(description="null: the file has no response time")),
    share_pct=(
        float | None,
        Field(description="share of the total response time of all rows (null: none)"),
    ),
    **COMPONENT_FIELDS,
    **ST03_EXTRA_FIELDS,
)

TimeProfileRow = create_model(
    "TimeProfileRow",
    __base__=Answer,
    __doc__="ST03N's time profile: one interval of one task type.",
    start_s=(float, ...),
    end_s=(float, ...),
    task_type=(str, ...),
    steps=(int, ...),
    **COMPONENT_FIELDS,
    **ST03_EXTRA_FIELDS,
)


class TimeProfile(Answer):
    interval_s: float
    rows: list[TimeProfileRow]  # type: ignore[valid-type]


class IndicatorPeak(Answer):
    """A whitepaper indicator's highest 5-minute mean of any instance in the steady state."""

    indicator: str
    rule: str
    threshold_ms: float
    peak_ms: float | None = Field(
        description="None when the run holds no full 5-minute window to judge"
    )


class OSCounterRow(Answer):
    """One OS counter of one host: average / minimum / maximum (seed 003 Tables 2-3)."""

    host: str
    key: str = Field(description="the counter's name in figures: os.HOST.KEY.avg")
    counter: str
    avg: float
    min: float
    max: float
    samples: int


class Breach(Answer):
    """A span in which a whitepaper threshold was passed, with the paper's diagnosis."""

    rule: str = Field(description="the alert whose threshold and diagnosis apply")
    indicator: str
    threshold_ms: float
    start_s: float
    end_s: float
    peak_ms: float
    summary: str
    diagnosis: str


class Statement(Answer):
    """An expensive SQL statement (ST05) over the steady state."""

    table: str
    operation: str
    sql: str
    executions: float
    records: float
    elapsed_s: float
    per_execution_ms: float


class BufferPool(Answer):
    bufferpool: str
    data_hit_ratio: float | None = Field(description="none when nothing was read")
    index_hit_ratio: float | None


class ResponseTimeLaw(Answer):
    """X = N / (R + Z): measured throughput against the law's."""

    measured_steps_per_s: float | None = Field(description="none when not measured")
    law_steps_per_s: float | None = Field(description="none when the users are unknown")
    residual_pct: float | None
    holds_within_1pct: bool | None


class SDCheck(Answer):
    """The SD benchmark's figures (seed 000 section 2)."""

    not_measured: str | None = Field(
        default=None, description="why throughput, SAPS and BAIT are not measured (no period)"
    )
    response_not_measured: str | None = Field(
        default=None, description="why the dialog response is not measured (not in the file)"
    )
    dialog_response_s: float | None
    dialog_response_below_2s: bool | None
    think_time_s: float | None = Field(
        description="the run's think time; null: unknown (an import), the SD verdict is "
        "then not measured unless `wlmon check --think-time` gives it"
    )
    users: int
    dialog_steps_per_hour: int | None
    saps: int | None
    line_items_per_hour: int | None
    line_items_vs_steps_over_3_pct: float | None
    response_time_law: ResponseTimeLaw


class BaitCheck(Answer):
    """The BAIT certification's measurement conditions."""

    not_measured: str | None = Field(
        default=None, description="why throughput, SAPS and BAIT are not measured (no period)"
    )
    measured_window_s: float | None
    longest_gap_free_s: float | None = Field(
        description="the longest stretch of the steady state without a gap in its data"
    )
    sixty_consecutive_minutes: bool | None
    avg_cpu_pct_by_host: dict[str, float]
    avg_available_mb_by_host: dict[str, float]
    avg_disk_queue_by_host: dict[str, float]
    network: str


class Benchmark(Answer):
    """Both checks, or neither when the run has no dialog steps."""

    sd: SDCheck | None = None
    bait: BaitCheck | None = None


class FiredAlert(Answer):
    alertname: str
    severity: str
    sap_instance: str
    starts_at: Timestamp
    summary: str


class Gap(Answer):
    kind: Literal["exporter_down", "no_data"] = Field(
        description="exporter_down: a scrape of the exporter failed; no_data: no sample arrived"
    )
    start: Timestamp
    end: Timestamp
    duration_s: float
    start_s: float | None = Field(
        default=None, description="seconds from the run's start, in the system's own time"
    )
    end_s: float | None = None


class ImportAudit(Answer):
    """How an imported file (ST03 export, PerfMon capture) was read: what a reader needs
    to trust its figures."""

    layout: str | None = Field(description="workload overview, transaction or time profile")
    file_format: str | None
    number_format: str | None
    period: dict[str, Any] | None = Field(
        description="start, end (the system's local time), seconds and where it came from; "
        "null: none, so throughput, SAPS and BAIT are not measured"
    )
    time_zone: str | None
    task_type_names: dict[str, str] | None
    columns: list[dict[str, str]] | None = Field(description="each heading and its field")
    columns_not_read: list[str] | None
    derived_fields: dict[str, str] | None = Field(
        default=None, description="fields not in the file, computed from two that are: how"
    )
    precision: dict[str, int] | None = Field(
        default=None, description="per field, the decimals the file shows its mean with"
    )
    total_row: dict[str, Any] | None = Field(description="the Total row checked against the rows")
    standard_sources: dict[str, str] | None = Field(
        description="PerfMon: how each standard row was derived (_Total, mean of 8 CPUs, ...)"
    )
    sha256: str | None = Field(default=None, description="SHA-256 of the file as uploaded")
    interval_s: float | None = Field(
        default=None, description="the sample interval (PerfMon: the median spacing)"
    )
    status_lines: int | None = Field(description="PerfMon: console status lines skipped")
    damaged_lines: list[int] | None = Field(description="PerfMon: lines of NUL bytes skipped")
    warnings: list[str] | None


class RunWindow(Answer):
    """The run's window in UTC and in the source's local time where it names its zone."""

    start_utc: Timestamp | None = Field(description="null: an ST03 export names no zone")
    end_utc: Timestamp | None
    zone: str | None = Field(description="the source's zone (IANA key) or what is known of it")
    start_local: str | None = None
    end_local: str | None = None


class FaultShown(Answer):
    """A fault the run injected: shaded and named on every time chart."""

    name: str
    start_s: float
    end_s: float = Field(description="the fault's end, or the run's if it lasted to the end")
    start: Timestamp
    end: Timestamp


class IoNetRow(Answer):
    """One I/O-wait or network counter of one host over the steady state, unrounded."""

    host: str
    key: str = Field(description="the counter's name in figures: os.HOST.KEY.avg|max|p95")
    counter: str
    unit: str
    mean: float
    p95: float = Field(description="linear between the two nearest samples")
    max: float
    samples: int


class OverTime(Answer):
    """Per sample interval (t_s: its end, seconds from the run's start); null: no data."""

    t_s: list[float]
    throughput_steps_per_s: list[float] | None = None
    dialog_p50_s: list[float | None] | None = None
    dialog_p95_s: list[float | None] | None = None
    dialog_p99_s: list[float | None] | None = None
    active_users: list[float] | None = Field(
        default=None, description="users logged on at each interval's end (simulated runs)"
    )


class BucketRow(Answer):
    lower_s: float
    upper_s: float | None = Field(description="null: the +Inf bucket")
    steps: int
    share_pct: float


class ApdexRow(Answer):
    task_type: str
    transaction: str | None
    steps: int
    satisfied: float
    tolerating: float
    frustrated: float
    apdex: float
    exact: bool = Field(description="T and 4 T are bucket bounds; else linear inside a bucket")


class Apdex(Answer):
    t_s: float = Field(description="T: WLMON_API_APDEX_T_S, default the SD bound / 4")
    frustrated_above_s: float
    rows: list[ApdexRow]
    missing: str


class SpreadRow(Answer):
    """A histogram keeps no single step: min and max are known to their bucket."""

    task_type: str
    transaction: str
    steps: int
    min_bucket_s: list[float | None]
    median_s: float | None
    max_bucket_s: list[float | None]


class TargetVerdict(Answer):
    """A transaction's target response (an NFR sheet) against the run."""

    transaction: str
    task_type: str | None = Field(description="the row judged (dialog when it has one)")
    statistic: Literal["mean", "p50", "p90", "p95", "p99"]
    target_s: float
    measured_s: float | None = Field(description="null: no steps of it in the run")
    passed: bool | None
    detail: str


class Report(Answer):
    """A run's report for its steady-state window (ramp-up excluded)."""

    warnings: list[str] = Field(
        default_factory=list,
        description="how the data was read that a reader must see first (the audit's "
        "warnings): damaged lines skipped, task type 'all', a derived response, ...",
    )
    run: Run
    steady_state: SteadyState
    st03: list[ST03Row]  # its fields come from the vocabulary
    transactions: list[TransactionRow]
    percentiles: Percentiles
    transaction_profile: list[TransactionProfileRow]  # type: ignore[valid-type]
    time_profile: TimeProfile
    indicators: list[IndicatorPeak]
    os_counters: list[OSCounterRow]
    breaches: list[Breach]
    top_sql: list[Statement]
    bufferpools: list[BufferPool]
    benchmark: Benchmark
    gaps: list[Gap] | None = Field(
        default=None,
        description="runs of the monitored system: where the window has no data, and why",
    )
    alerts_fired: list[FiredAlert] | None = Field(
        default=None,
        description="runs of the monitored system: the alerts Alertmanager sent in the window",
    )
    import_: ImportAudit | None = Field(
        default=None, alias="import", description="imported ST03 exports: how it was read"
    )
    not_measured: dict[str, str] = Field(
        default_factory=dict, description="figures the run does not measure, with why"
    )
    window: RunWindow | None = None
    faults: list[FaultShown] | None = Field(
        default=None, description="the faults the run injected (simulated and real-time runs)"
    )
    over_time: OverTime | None = None
    distribution: list[BucketRow] | None = Field(
        default=None, description="the steady state's dialog steps per response-time bucket"
    )
    apdex: Apdex | None = None
    transaction_spread: list[SpreadRow] | None = None
    io_wait: list[IoNetRow] | None = Field(
        default=None,
        description="disk latency, idle and queue, privileged and interrupt time; absent "
        "when the run's data has none",
    )
    network: list[IoNetRow] | None = Field(
        default=None, description="network interface bytes and queues; absent without them"
    )
    targets: list[TargetVerdict] | None = Field(
        default=None, description="STAD imports with --targets: per transaction its verdict"
    )


class Figure(Answer):
    figure: str
    base: float
    new: float
    delta_pct: float | None = Field(
        description="null: the base is 0 and the new value is not (no percentage; the verdict "
        "follows the direction)"
    )
    tolerance_pct: float
    verdict: Literal["same", "better", "worse"] = Field(description="same: within tolerance")


class OneSided(Answer):
    """A figure only one of two compared runs has."""

    figure: str
    value: float


class Comparison(Answer):
    base: str
    new: str
    figures: list[Figure]
    only_in_base: list[OneSided] = Field(
        default_factory=list, description="figures the base run has and the new one not"
    )
    only_in_new: list[OneSided] = Field(
        default_factory=list, description="figures the new run has and the base one not"
    )
    repeatable: bool
    criterion: str


class Criterion(Answer):
    """One pass/fail criterion of a check, with its value and bound."""

    name: str
    source: Literal["built-in", "sla", "baseline"]
    figure: str = Field(description="the report figure judged (figures of GET .../check)")
    value: float | None = Field(
        description="null: the run has no data for it (skipped), or a baseline tolerance on a "
        "figure that was 0 in the baseline (no percentage: failed when it moved)"
    )
    op: Literal["<", "<=", ">=", "==", "within"]
    bound: float
    unit: str
    status: Literal["passed", "failed", "skipped"]
    detail: str


class CheckCounts(Answer):
    passed: int
    failed: int
    skipped: int


class CheckResult(Answer):
    """Verdicts a pipeline can gate on: `passed` unless a criterion failed."""

    run: str
    baseline: str | None
    passed: bool
    message: str = Field(
        default="", description='"no criterion could be judged" when every one was skipped'
    )
    counts: CheckCounts
    criteria: list[Criterion]


class CheckRequest(BaseModel):
    """A check with an SLA file's text (YAML) and an optional baseline run."""

    model_config = ConfigDict(extra="forbid")

    sla: str = Field(default="", max_length=100_000, description="the SLA file's YAML text")
    baseline: str | None = None


# --- alerts ------------------------------------------------------------------------------


class AlertmanagerAlert(BaseModel):
    model_config = ConfigDict(extra="allow")

    status: Literal["firing", "resolved"]
    labels: dict[str, str]
    annotations: dict[str, str] = Field(default_factory=dict)
    startsAt: datetime
    endsAt: datetime | None = None
    generatorURL: str = ""
    fingerprint: str = ""


class AlertmanagerPayload(BaseModel):
    """Alertmanager webhook payload, version 4."""

    model_config = ConfigDict(extra="allow")

    version: str
    groupKey: str
    status: Literal["firing", "resolved"]
    receiver: str
    groupLabels: dict[str, str] = Field(default_factory=dict)
    commonLabels: dict[str, str] = Field(default_factory=dict)
    commonAnnotations: dict[str, str] = Field(default_factory=dict)
    externalURL: str = ""
    alerts: list[AlertmanagerAlert] = Field(min_length=1, max_length=1000)


class Notification(Answer):
    """One alert of a notification, as stored."""

    id: int
    received_at: Timestamp
    receiver: str
    group_key: str
    status: Literal["firing", "resolved"]
    alertname: str
    severity: str
    sid: str
    sap_instance: str
    fingerprint: str
    starts_at: Timestamp
    ends_at: Timestamp | None
    labels: dict[str, str]
    annotations: dict[str, str]
    forwarded_to_loki: bool
    generator_url: str = Field(
        default="", description="Prometheus' graph of the rule that fired (its generatorURL)"
    )
    dashboard_url: str = Field(
        default="",
        description="the alert's Perses dashboard at its time range and instance (empty for "
        "alerts about wlmon's own parts)",
    )


class WebhookResult(Answer):
    stored: int
    ids: list[int]
    forwarded_to_loki: int
    queued_for_loki: int = Field(
        default=0,
        description="notifications a background thread pushes to the log store after the answer "
        "(forwarded_to_loki stays 0: the call no longer waits for Loki)",
    )
