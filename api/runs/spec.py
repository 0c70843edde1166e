"""What a run is asked to be."""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field, model_validator


class FaultWindow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    start_s: float = Field(ge=0, description="offset from the run's start")
    end_s: float | None = Field(default=None, gt=0, description="offset; none: until the end")


class RunSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scenario: str = "sd-benchmark-2003"
    users: int | None = Field(default=None, gt=0, description="default: the scenario's")
    duration_s: float = Field(gt=0, le=86400, description="fast mode simulates up to a day")
    ramp_up_s: float = Field(default=0.0, ge=0)
    resolution_s: float = Field(
        default=5.0, ge=1, le=3600, description="sample interval of the series"
    )
    seed: int = 1
    faults: list[FaultWindow] = Field(default_factory=list)
    start: datetime = Field(default_factory=lambda: datetime.now(UTC))
    label: str = ""

    @model_validator(mode="after")
    def _windows_inside_the_run(self) -> RunSpec:
        if self.ramp_up_s >= self.duration_s:
            raise ValueError("ramp_up_s must be shorter than duration_s")
        for i, f in enumerate(self.faults):
            if f.start_s >= self.duration_s:
                raise ValueError(f"faults[{i}].start_s is after the end of the run")
            if f.end_s is not None and f.end_s <= f.start_s:
                raise ValueError(f"faults[{i}].end_s must be after start_s")
        return self
