"""What a run is asked to be: the load plan (users, ramp-up, faults at offsets) shared by
fast runs (simulated now) and real-time runs (driven on the live exporter)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

# Ramp-up adds the users in ten equal levels, the way load drivers log users on in batches.
RAMP_STEPS = 10


class FaultWindow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    start_s: float = Field(ge=0, description="offset from the run's start")
    end_s: float | None = Field(default=None, gt=0, description="offset; none: until the end")


class RunPlan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scenario: str = "sd-benchmark-2003"
    users: int | None = Field(default=None, gt=0, description="default: the scenario's")
    duration_s: float = Field(gt=0, le=86400, description="simulated seconds, up to a day")
    ramp_up_s: float = Field(default=0.0, ge=0)
    resolution_s: float = Field(
        default=5.0, ge=1, le=3600, description="sample interval of the series"
    )
    faults: list[FaultWindow] = Field(default_factory=list)
    label: str = Field(default="", max_length=200)

    @model_validator(mode="after")
    def _windows_inside_the_run(self) -> RunPlan:
        if self.ramp_up_s >= self.duration_s:
            raise ValueError("ramp_up_s must be shorter than duration_s")
        for i, f in enumerate(self.faults):
            if f.start_s >= self.duration_s:
                raise ValueError(f"faults[{i}].start_s is after the end of the run")
            if f.end_s is not None and f.end_s <= f.start_s:
                raise ValueError(f"faults[{i}].end_s must be after start_s")
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

    seed: int = 1
    engine: Literal["des", "analytic"] = Field(
        default="analytic",
        description="des: every dialog step simulated (discrete events); analytic: the solver",
    )
    start: datetime = Field(default_factory=lambda: datetime.now(UTC))


class RealtimeRunRequest(RunPlan):
    """A real-time run on the live exporter: the API switches its users and faults at the
    offsets (simulated seconds; the exporter's speed turns them into wall time) and reads the
    window back from Prometheus when the run ends."""

    mode: Literal["realtime"]
    resolution_s: float = Field(
        default=60.0,
        ge=1,
        le=3600,
        description="simulated seconds per sample; at least three scrapes of wall time",
    )
