"""The exporter's control state: what a `PUT /control/faults` may ask for, checked in full
before anything changes, and kept in a small JSON file so a restarted exporter carries on
with the plan it was given.

Fields (all optional; a missing one keeps its current value):
  scenario  a scenario of the catalog
  faults    a list of the catalog's fault names
  users     logged-on users, 1..max_users, or null for the scenario's own
  run_id    tags the run events; "" clears it
  lease_s   with a run id: seconds the run's plan holds unless renewed (a driver that
            stopped renewing is gone: the exporter then drops the run's faults and tag)
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

log = logging.getLogger(__name__)

RUN_ID_PATTERN = r"^[A-Za-z0-9_-]{0,64}$"
RUN_ID = re.compile(RUN_ID_PATTERN)
# A lease longer than an hour would leave a dead run's faults in place for that long.
MAX_LEASE_S = 3600.0
STATE_VERSION = 1


class ControlError(ValueError):
    """A control call that must be refused; the message names the field."""

    def __init__(self, message: str, **extra: object) -> None:
        super().__init__(message)
        self.extra = extra


@dataclass(frozen=True)
class ControlState:
    """What the exporter was told: the model's configuration and the run it serves."""

    scenario: str
    faults: tuple[str, ...] = ()
    users: int | None = None  # None: the scenario's own
    run_id: str = ""
    lease_until: float | None = None  # epoch seconds; None: no lease (held until cleared)

    def lease_expired(self, now: float) -> bool:
        return bool(self.run_id) and self.lease_until is not None and now >= self.lease_until

    def without_run(self) -> ControlState:
        """The state once a run is over: its faults, users and tag gone, the scenario kept."""
        return ControlState(scenario=self.scenario)

    def to_json(self) -> dict:
        return asdict(self) | {"faults": list(self.faults), "version": STATE_VERSION}


class ControlChange(BaseModel):
    """A `PUT /control/faults` body, the one model the exporter validates it with and the
    API's client (api/runs/realtime.py) builds it with. Every field is optional: one left
    out keeps its value (only the fields set are sent). What depends on the running model
    (known scenarios and faults, the users cap) is checked by `parse_change`."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    scenario: str | None = None
    faults: list[str] | None = None
    # None: the scenario's own number of users.
    users: int | None = Field(default=None, gt=0)
    # "" clears the run id.
    run_id: str | None = Field(default=None, pattern=RUN_ID_PATTERN)
    # With a run id: seconds the plan holds unless renewed; None: no lease.
    lease_s: float | None = Field(default=None, gt=0, le=MAX_LEASE_S)

    def body(self) -> dict:
        """The JSON body: the fields set, nothing else."""
        return self.model_dump(exclude_unset=True)


# The message of a field the model refuses, as the API's callers have always read it.
_FIELD_ERRORS = {
    "faults": "field 'faults' must be a list of names",
    "users": "field 'users' must be an integer from 1 to {max_users} (the model's cap) or null",
    "run_id": "field 'run_id' must be up to 64 letters, digits, '-' or '_'",
    "lease_s": f"field 'lease_s' must be a number of seconds in (0, {MAX_LEASE_S:g}]",
}


def _change(body: object, scenarios: list[str], max_users: int) -> ControlChange:
    if not isinstance(body, dict):
        raise ControlError("body must be a JSON object")
    try:
        change = ControlChange.model_validate(body)
    except ValidationError as exc:
        errors = exc.errors()
        unknown = sorted(str(e["loc"][0]) for e in errors if e["type"] == "extra_forbidden")
        if unknown:
            raise ControlError(f"unknown field(s): {', '.join(unknown)}") from None
        field = str(errors[0]["loc"][0])
        if field == "scenario":
            raise ControlError(
                f"unknown scenario {body['scenario']!r}", available=scenarios
            ) from None
        raise ControlError(_FIELD_ERRORS[field].format(max_users=max_users)) from None
    # null is a value only for users (the scenario's own) and lease_s (no lease).
    for field in ("faults", "run_id"):
        if field in change.model_fields_set and getattr(change, field) is None:
            raise ControlError(_FIELD_ERRORS[field].format(max_users=max_users))
    if "scenario" in change.model_fields_set and change.scenario is None:
        raise ControlError("unknown scenario None", available=scenarios)
    return change


def parse_change(
    body: object,
    current: ControlState,
    scenarios: list[str],
    faults: list[str],
    max_users: int,
    now: float,
) -> ControlState:
    """The state `body` asks for, or ControlError; nothing is changed here."""
    change = _change(body, scenarios, max_users)
    given = change.model_fields_set
    new = current
    if "faults" in given:
        unknown = [f for f in change.faults if f not in faults]
        if unknown:
            raise ControlError(f"unknown fault(s): {', '.join(unknown)}", available=sorted(faults))
        new = replace(new, faults=tuple(dict.fromkeys(change.faults)))
    if "users" in given:
        if change.users is not None and change.users > max_users:
            raise ControlError(_FIELD_ERRORS["users"].format(max_users=max_users))
        new = replace(new, users=change.users)
    if "scenario" in given:
        if change.scenario not in scenarios:
            raise ControlError(f"unknown scenario {change.scenario!r}", available=scenarios)
        new = replace(new, scenario=change.scenario)
    if "run_id" in given and change.run_id != current.run_id:
        new = replace(new, run_id=change.run_id, lease_until=None)
    if "lease_s" in given:
        lease = change.lease_s
        if lease is not None and not new.run_id:
            raise ControlError("field 'lease_s' needs a run_id: a lease belongs to a run")
        new = replace(new, lease_until=None if lease is None else now + float(lease))
    if not new.run_id:
        new = replace(new, lease_until=None)
    return new


class StateFile:
    """The control state on disk, replaced atomically (a crash leaves the old or the new
    file, never half of one)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def save(self, state: ControlState) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        with tmp.open("w") as fh:
            json.dump(state.to_json(), fh)
            fh.flush()
            os.fsync(fh.fileno())
        tmp.replace(self.path)

    def load(self, scenarios: list[str], faults: list[str], max_users: int) -> ControlState | None:
        """The saved state if it is still valid against the catalog; None (and a warning)
        when there is none or it cannot be used, so a bad file never stops the exporter."""
        if not self.path.is_file():
            return None
        try:
            raw = json.loads(self.path.read_text())
            scenario = raw["scenario"]
            if scenario not in scenarios:
                raise ControlError(f"unknown scenario {scenario!r}")
            base = ControlState(scenario=scenario)
            body = {k: raw[k] for k in ("faults", "users", "run_id") if k in raw}
            state = parse_change(body, base, scenarios, faults, max_users, time.time())
            lease = raw.get("lease_until")
            if state.run_id and isinstance(lease, int | float):
                state = replace(state, lease_until=float(lease))
            return state
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("ignoring the control state in %s: %s", self.path, exc)
            return None
