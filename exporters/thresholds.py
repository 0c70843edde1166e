"""The typed threshold numbers an operator tunes (seconds, ratios).

The type lives here, at the bottom of the import layers, so the model, the model's
sapstartsrv, the API and the builders can all take one as a parameter. Nothing here reads a
file: `alerts.thresholds.load_thresholds` reads alerts/thresholds.yml (the alerts package owns
it) and the edge (CLI, app factory, a test) hands the result down.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, PositiveFloat

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
    min_steps_per_second: PositiveFloat
    sap_buffer_hit_ratio_min: PositiveFloat
    extended_memory_full_ratio: PositiveFloat
    db2_data_hit_ratio_min: PositiveFloat
    db2_index_hit_ratio_min: PositiveFloat
    # Short dumps a minute on one instance (CCMS Shortdumps Frequency) that page: a NOC
    # level, not the paper's; CCMS's own template colours its node from its thresholds.
    short_dumps_per_minute: PositiveFloat = 10.0
    # Red SM21 entries a minute on one instance, runtime errors (AB0) aside, that page.
    syslog_errors_per_minute: PositiveFloat = 5.0
    # A lock (SM12) held this long pages: a document left open, an update that never ran.
    lock_held_seconds: PositiveFloat = 3600.0

    def seconds(self, indicator: Indicator) -> float:
        """The indicator's warning threshold in seconds."""
        return float(getattr(self, indicator.threshold_key))

    def mapping(self) -> dict[str, float]:
        """Key -> number, as the rule builders index them."""
        return {k: float(v) for k, v in self.model_dump().items()}
