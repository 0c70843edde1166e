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

log = logging.getLogger(__name__)

RUN_ID = re.compile(r"^[A-Za-z0-9_-]{0,64}$")
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


def parse_change(
    body: object,
    current: ControlState,
    scenarios: list[str],
    faults: list[str],
    max_users: int,
    now: float,
) -> ControlState:
    """The state `body` asks for, or ControlError; nothing is changed here."""
    if not isinstance(body, dict):
        raise ControlError("body must be a JSON object")
    unknown_fields = sorted(set(body) - {"scenario", "faults", "users", "run_id", "lease_s"})
    if unknown_fields:
        raise ControlError(f"unknown field(s): {', '.join(unknown_fields)}")
    new = current
    if "faults" in body:
        wanted = body["faults"]
        if not isinstance(wanted, list) or not all(isinstance(f, str) for f in wanted):
            raise ControlError("field 'faults' must be a list of names")
        unknown = [f for f in wanted if f not in faults]
        if unknown:
            raise ControlError(f"unknown fault(s): {', '.join(unknown)}", available=sorted(faults))
        new = replace(new, faults=tuple(dict.fromkeys(wanted)))
    if "users" in body:
        users = body["users"]
        if users is not None and (
            isinstance(users, bool) or not isinstance(users, int) or not 0 < users <= max_users
        ):
            raise ControlError(
                f"field 'users' must be an integer from 1 to {max_users} (the model's cap) or null"
            )
        new = replace(new, users=users)
    if "scenario" in body:
        scenario = body["scenario"]
        if not isinstance(scenario, str) or scenario not in scenarios:
            raise ControlError(f"unknown scenario {scenario!r}", available=scenarios)
        new = replace(new, scenario=scenario)
    if "run_id" in body:
        run_id = body["run_id"]
        if not isinstance(run_id, str) or not RUN_ID.match(run_id):
            raise ControlError("field 'run_id' must be up to 64 letters, digits, '-' or '_'")
        if run_id != current.run_id:
            new = replace(new, run_id=run_id, lease_until=None)
    if "lease_s" in body:
        lease = body["lease_s"]
        if lease is not None and (
            isinstance(lease, bool)
            or not isinstance(lease, int | float)
            or not 0 < lease <= MAX_LEASE_S
        ):
            raise ControlError(
                f"field 'lease_s' must be a number of seconds in (0, {MAX_LEASE_S:g}]"
            )
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
