"""The typed threshold numbers an operator tunes (seconds, ratios).

The type lives here, at the bottom of the import layers, so the model, the model's
sapstartsrv, the API and the builders can all take one as a parameter. Nothing here reads a
file: `alerts.thresholds.load_thresholds` reads alerts/thresholds.yml (the alerts package owns
it) and the edge (CLI, app factory, a test) hands the result down.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, PositiveFloat, model_validator

from exporters.vocabulary import Indicator


class Thresholds(BaseModel):
    """alerts/thresholds.yml, validated: every key known, every number positive."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # Seed 000 section 4.3.5.1 (workload monitor) and section 2 (SD benchmark bound).
    dispatcher_wait_seconds: PositiveFloat
    db_request_seconds: PositiveFloat
    enqueue_seconds: PositiveFloat
    roll_seconds: PositiveFloat
    dialog_response_seconds: PositiveFloat
    # The page levels (seconds): where each indicator's alert fires.
    dispatcher_wait_page_seconds: PositiveFloat
    db_request_page_seconds: PositiveFloat
    enqueue_page_seconds: PositiveFloat
    roll_page_seconds: PositiveFloat
    min_steps_per_second: PositiveFloat
    throughput_min_ratio: PositiveFloat
    sap_buffer_hit_ratio_min: PositiveFloat
    extended_memory_full_ratio: PositiveFloat
    db2_data_hit_ratio_min: PositiveFloat
    db2_index_hit_ratio_min: PositiveFloat
    db_host_cpu_busy_max: PositiveFloat
    db_disk_queue_max: PositiveFloat
    db_physical_reads_per_step_max: PositiveFloat

    # Short dumps a minute on one instance (CCMS Shortdumps Frequency) that page: a NOC
    # level, not the paper's; CCMS's own template colours its node from its thresholds.
    short_dumps_per_minute: PositiveFloat = 10.0
    # Red SM21 entries a minute on one instance, runtime errors (AB0) aside, that page.
    syslog_errors_per_minute: PositiveFloat = 5.0
    # A lock (SM12) held this long pages: a document left open, an update that never ran.
    lock_held_seconds: PositiveFloat = 3600.0
    # A dialog step running this long (SM50 Time) pages: half of rdisp/max_wprun_time's
    # 600 s default, so the NOC hears of it before the step ends in a TIME_OUT dump.
    long_running_dialog_step_seconds: PositiveFloat = 300.0
    # Busy share of an AS Java instance's application thread pool that pages (at 1 every
    # new request waits for a thread).
    java_thread_pool_busy_ratio: PositiveFloat = 0.95

    @model_validator(mode="after")
    def _page_above_warning(self) -> Thresholds:
        for warn, page in (
            ("dispatcher_wait_seconds", "dispatcher_wait_page_seconds"),
            ("db_request_seconds", "db_request_page_seconds"),
            ("enqueue_seconds", "enqueue_page_seconds"),
            ("roll_seconds", "roll_page_seconds"),
        ):
            if getattr(self, page) <= getattr(self, warn):
                raise ValueError(f"{page} must be above {warn} (the page level is the higher)")
        if self.throughput_min_ratio >= 1:
            raise ValueError("throughput_min_ratio must be below 1 (a share of the expected)")
        return self

    def seconds(self, indicator: Indicator) -> float:
        """The indicator's warning threshold in seconds."""
        return float(getattr(self, indicator.threshold_key))

    def page_seconds(self, indicator: Indicator) -> float | None:
        """The indicator's page level in seconds; None where it has none."""
        return None if indicator.page_key is None else float(getattr(self, indicator.page_key))

    def page_level(self, indicator: Indicator) -> float:
        """The page level of an indicator that has one (a rule paging on it)."""
        page = self.page_seconds(indicator)
        if page is None:
            raise ValueError(f"{indicator.component} has no page level")
        return page

    def db2_hit_ratio_min(self, page_type: str) -> float:
        """The DB2 pools' hit-ratio floor for `page_type` ("data" or "index")."""
        floors = {"data": self.db2_data_hit_ratio_min, "index": self.db2_index_hit_ratio_min}
        return float(floors[page_type])

    def mapping(self) -> dict[str, float]:
        """Key -> number, as thresholds.yml writes them (its tests compare with the file)."""
        return {k: float(v) for k, v in self.model_dump().items()}
