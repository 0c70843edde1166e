"""What a run is asked to be: the load plan (users, ramp-up, faults at offsets) shared by
fast runs (simulated now) and real-time runs (driven on the live exporter), and the window of
a real system (external runs)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from exporters.config import DEFAULT_MAX_USERS
from landscape_model.engines import RUN_ENGINE, EngineName

# Ramp-up adds the users in ten equal levels, the way load drivers log users on in batches.
RAMP_STEPS = 10
# The exporter's cap (why it is what it is: exporters/config.py), for fast runs too: one
# bound, so a plan the API accepts is one the live exporter holds. A live exporter may be
# configured lower (WLMON_EXPORTER_MAX_USERS); a real-time run is checked against its own.
MAX_USERS = DEFAULT_MAX_USERS
MAX_DURATION_S = 86_400.0
MAX_FAULT_WINDOWS = 50
# Prometheus refuses a range query of more than 11 000 points per series.
MAX_WINDOW_POINTS = 11_000
# Times a run may be placed at: Unix time (the series' timestamps) up to the end of the
# century; year 1 or 9999 break the arithmetic of windows and Grafana links.
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(2100, 1, 1, tzinfo=UTC)
# An SAP system ID: three characters, a letter first; it
# reaches PromQL label matchers, so nothing else gets through.
SID_PATTERN = r"^[A-Z][A-Z0-9]{2}$"
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$"


def _in_range(when: datetime) -> datetime:
    """Naive times are UTC; the time must lie in [EARLIEST, LATEST)."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    if not EARLIEST <= when < LATEST:
        raise ValueError(
            f"must lie between {EARLIEST.date().isoformat()} and {LATEST.date().isoformat()}"
        )
    return when


# JSON numbers only (no "1000" strings, no true for 1), finite.
Seconds = Annotated[float, Field(strict=True, allow_inf_nan=False)]
Moment = Annotated[datetime, AfterValidator(_in_range)]


class FaultWindow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=NAME_PATTERN, description="a fault of the model's catalog")
    start_s: Seconds = Field(ge=0, le=MAX_DURATION_S, description="offset from the run's start")
    end_s: Seconds | None = Field(
        default=None, gt=0, le=MAX_DURATION_S, description="offset; none: until the end"
    )


class RunPlan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scenario: str = Field(default="sd-benchmark-2003", pattern=NAME_PATTERN)
    users: int | None = Field(
        default=None, strict=True, gt=0, le=MAX_USERS, description="default: the scenario's"
    )
    duration_s: Seconds = Field(
        gt=0, le=MAX_DURATION_S, description="simulated seconds, up to a day"
    )
    ramp_up_s: Seconds = Field(default=0.0, ge=0, le=MAX_DURATION_S)
    resolution_s: Seconds = Field(
        default=5.0, ge=1, le=3600, description="sample interval of the series"
    )
    faults: list[FaultWindow] = Field(default_factory=list, max_length=MAX_FAULT_WINDOWS)
    label: str = Field(default="", max_length=200)

    @model_validator(mode="after")
    def _windows_inside_the_run(self) -> RunPlan:
        if self.ramp_up_s >= self.duration_s:
            raise ValueError("ramp_up_s must be shorter than duration_s")
        if self.resolution_s > self.duration_s:
            raise ValueError("resolution_s must not be longer than duration_s")
        for i, f in enumerate(self.faults):
            if f.start_s >= self.duration_s:
                raise ValueError(f"faults[{i}].start_s is after the end of the run")
            if f.end_s is not None and f.end_s <= f.start_s:
                raise ValueError(f"faults[{i}].end_s must be after start_s")
            if f.end_s is not None and f.end_s > self.duration_s:
                raise ValueError(
                    f"faults[{i}].end_s is after the end of the run; leave it out for "
                    "'until the end'"
                )
        return self

    def users_at(self, t: float, full_users: int) -> int:
        if self.ramp_up_s == 0 or t >= self.ramp_up_s:
            return full_users
        level = min(RAMP_STEPS, 1 + int(t * RAMP_STEPS // self.ramp_up_s))
        return max(1, round(full_users * level / RAMP_STEPS))

    def faults_at(self, t: float) -> tuple[str, ...]:
        return tuple(
            f.name for f in self.faults if f.start_s <= t and (f.end_s is None or t < f.end_s)
        )

    def change_points(self) -> list[float]:
        """Offsets at which the users or the faults change, from 0, in order."""
        points = {0.0}
        points |= {k * self.ramp_up_s / RAMP_STEPS for k in range(1, RAMP_STEPS + 1)}
        for f in self.faults:
            points.add(f.start_s)
            if f.end_s is not None:
                points.add(f.end_s)
        return sorted(p for p in points if p < self.duration_s)


class RunSpec(RunPlan):
    """A fast run: the model simulated from `start` without waiting."""

    # The model's generator takes seeds of 0 to 2**32 - 1.
    seed: int = Field(default=1, strict=True, ge=0, le=2**32 - 1)
    engine: EngineName = Field(
        default=RUN_ENGINE,
        description="des: every dialog step simulated (discrete events); analytic: the solver",
    )
    start: Moment = Field(default_factory=lambda: datetime.now(UTC))


class FastRunRequest(RunSpec):
    """POST /runs without a mode: a fast run."""

    mode: Literal["fast"] = "fast"


class RealtimeRunRequest(RunPlan):
    """A real-time run on the live exporter: the API switches its users and faults at the
    offsets (simulated seconds; the exporter's speed turns them into wall time) and reads the
    window back from Prometheus when the run ends."""

    mode: Literal["realtime"]
    resolution_s: Seconds = Field(
        default=60.0,
        ge=1,
        le=3600,
        description="simulated seconds per sample; at least three scrapes of wall time",
    )


class ExternalRunRequest(BaseModel):
    """A window of a real system monitored by this stack; its series are read from
    Prometheus when it is registered, so the report does not depend on retention."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["external"]
    sid: str = Field(default="BMK", pattern=SID_PATTERN, description="SAP system ID, e.g. BMK")
    start: Moment
    end: Moment
    # Shorter than the window, which Prometheus answers in at most MAX_WINDOW_POINTS steps
    # of at most an hour: a bound in the schema too, so no number reaches arithmetic unchecked.
    ramp_up_s: Seconds = Field(default=0.0, ge=0, le=MAX_WINDOW_POINTS * 3600)
    resolution_s: Seconds | None = Field(
        default=None,
        ge=1,
        le=3600,
        description="seconds per sample, at least three scrape intervals of the sid's targets "
        "(increase() needs two samples per step); default: three scrape intervals",
    )
    users: int | None = Field(
        default=None, strict=True, gt=0, le=MAX_USERS, description="for the response-time law"
    )
    think_time_s: Seconds | None = Field(default=None, ge=0, le=3600)
    label: str = Field(default="", max_length=200)

    @model_validator(mode="after")
    def _a_window_prometheus_can_answer(self) -> ExternalRunRequest:
        span = (self.end - self.start).total_seconds()
        if span <= 0:
            raise ValueError("end must be after start")
        if self.ramp_up_s >= span:
            raise ValueError("ramp_up_s must be shorter than the window")
        if self.resolution_s is not None and (error := too_many_points(span, self.resolution_s)):
            raise ValueError(error)
        return self


def too_many_points(span_s: float, resolution_s: float) -> str:
    """Why a window of `span_s` at `resolution_s` is more than Prometheus answers; '' when
    it is not."""
    if span_s / resolution_s <= MAX_WINDOW_POINTS:
        return ""
    return (
        f"the window holds {span_s / resolution_s:.0f} steps of resolution_s; "
        f"Prometheus answers at most {MAX_WINDOW_POINTS}: raise resolution_s to "
        f"{span_s / MAX_WINDOW_POINTS:.0f} or more"
    )
