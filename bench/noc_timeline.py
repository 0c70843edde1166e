"""The arithmetic of bench/noc.py's timeline: typed events in, per-fault seconds out.

No I/O here, so a unit test can hand it event lists whose answers it computes itself
(tests/bench/test_noc_timeline.py). bench/noc.py records the events (polls of Prometheus,
the API's stored notifications grouped into webhook posts, injection and removal) and
writes them to --json as they are.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import BaseModel, Field, TypeAdapter


class Injected(BaseModel):
    kind: Literal["injected"] = "injected"
    t: float  # epoch seconds, as every event's t
    fault: str


class Removed(BaseModel):
    kind: Literal["removed"] = "removed"
    t: float
    fault: str


class Poll(BaseModel):
    """One 5 s poll: each page indicator's worst 1-minute mean (seconds, None = no series)
    and the Prometheus alert states seen per `cause` label."""

    kind: Literal["poll"] = "poll"
    t: float
    means: dict[str, float | None]
    states: dict[str, list[str]]


class AlertRef(BaseModel):
    name: str
    cause: str | None
    status: Literal["firing", "resolved"]
    instance: str | None = None


class Message(BaseModel):
    """One webhook post: the rows the API stored for one receiver, group and arrival."""

    kind: Literal["message"] = "message"
    t: float
    receiver: str
    group_key: str
    alerts: list[AlertRef]

    @property
    def firing(self) -> list[AlertRef]:
        return [a for a in self.alerts if a.status == "firing"]


class End(BaseModel):
    kind: Literal["end"] = "end"
    t: float


Event = Annotated[Injected | Removed | Poll | Message | End, Field(discriminator="kind")]
EVENTS = TypeAdapter(list[Event])


class FaultSpec(BaseModel):
    fault: str
    cause: str  # the `cause` label its alerts carry
    indicator: str  # key into Poll.means
    page_s: float  # the indicator's page level, seconds


class FaultTimeline(BaseModel):
    """Seconds from injection (crossing .. first_notification) or from removal (the rest);
    None = did not happen in the fault's window."""

    fault: str
    fault_s: float | None  # injection -> removal, as run
    crossing: float | None
    pending: float | None
    firing: float | None
    first_notification: float | None
    resolved: float | None  # removal -> the last resolved message of the cause
    messages: dict[str, int]  # per receiver, the whole window
    after_removal: int  # messages of any kind at or after removal
    firing_after_removal: list[str]  # "+139 s noc-warning: 30 SAPX" per such message
    other_causes: list[str]
    peak_mean_s: float | None  # the indicator's worst 1-minute mean before removal


def _window(events: Sequence[Event], fault: str) -> tuple[float, float | None, float, list]:
    """The fault's injection, removal and window end (next injection, End or last event)."""
    ordered = sorted(events, key=lambda e: e.t)
    start = next((e.t for e in ordered if isinstance(e, Injected) and e.fault == fault), None)
    if start is None:
        raise ValueError(f"no injection of {fault!r} among the events")
    end = next(
        (e.t for e in ordered if e.t > start and isinstance(e, Injected | End)),
        ordered[-1].t + 1e-9,
    )
    inside = [e for e in ordered if start <= e.t < end]
    removed = next((e.t for e in inside if isinstance(e, Removed) and e.fault == fault), None)
    return start, removed, end, inside


def fault_timeline(events: Sequence[Event], spec: FaultSpec) -> FaultTimeline:
    start, removed, _end, inside = _window(events, spec.fault)

    def during(e) -> bool:  # before removal (the whole window when never removed)
        return removed is None or e.t < removed

    polls = [e for e in inside if isinstance(e, Poll) and during(e)]
    msgs = [e for e in inside if isinstance(e, Message)]

    def first(ts) -> float | None:
        return next((t - start for t in ts), None)

    means = [p.means.get(spec.indicator) for p in polls]
    crossing = first(
        p.t for p, m in zip(polls, means, strict=True) if m is not None and m > spec.page_s
    )
    pending = first(p.t for p in polls if p.states.get(spec.cause))
    firing = first(p.t for p in polls if "firing" in p.states.get(spec.cause, []))
    first_msg = first(
        m.t for m in msgs if during(m) and any(a.cause == spec.cause for a in m.firing)
    )
    late = [m for m in msgs if removed is not None and m.t >= removed]
    resolved = [
        m.t - removed
        for m in late
        if any(a.cause == spec.cause for a in m.alerts)
        and not any(a.cause == spec.cause for a in m.firing)
    ]
    firing_late = [_late(m, removed, msgs) for m in late if m.firing]
    causes = {a.cause or a.name for m in msgs for a in m.alerts} - {spec.cause}
    peak = max((m for m in means if m is not None), default=None)
    return FaultTimeline(
        fault=spec.fault,
        fault_s=None if removed is None else removed - start,
        crossing=crossing,
        pending=pending,
        firing=firing,
        first_notification=first_msg,
        resolved=max(resolved) if resolved else None,
        messages=dict(sorted(Counter(m.receiver for m in msgs).items())),
        after_removal=len(late),
        firing_after_removal=firing_late,
        other_causes=sorted(causes),
        peak_mean_s=peak,
    )


def _late(m: Message, removed: float, msgs: Sequence[Message]) -> str:
    """'+85 s oncall-critical: 7 SAPX firing (0 new), 23 resolved': "new" counts the alerts
    (name, instance) whose last earlier message to that receiver in the window did not say
    firing (never sent, or resolved since), so news after the fix stands apart from a group
    update that still lists stragglers."""
    last: dict[tuple, str] = {}
    for e in sorted(msgs, key=lambda e: e.t):
        if e.receiver == m.receiver and e.t < m.t:
            last.update({(a.name, a.instance): a.status for a in e.alerts})
    new = sum(1 for a in m.firing if last.get((a.name, a.instance)) != "firing")
    names = ", ".join(sorted({a.name for a in m.firing}))
    text = f"+{m.t - removed:.0f} s {m.receiver}: {len(m.firing)} {names} firing ({new} new)"
    resolved = len(m.alerts) - len(m.firing)
    return text + (f", {resolved} resolved" if resolved else "")


class Healthy(BaseModel):
    """A healthy stretch (no fault injected): what it sent and where the indicators sat."""

    seconds: float
    messages: int
    sap_messages: int  # messages holding an alert with one of the faults' causes
    alertnames: list[str]
    worst_means: dict[str, float | None]


def healthy_stretch(events: Sequence[Event], t0: float, t1: float, causes: set[str]) -> Healthy:
    inside = [e for e in events if t0 <= e.t < t1]
    msgs = [e for e in inside if isinstance(e, Message)]
    polls = [e for e in inside if isinstance(e, Poll)]
    keys = sorted({k for p in polls for k in p.means})
    worst = {
        k: max((v for p in polls if (v := p.means.get(k)) is not None), default=None) for k in keys
    }
    return Healthy(
        seconds=t1 - t0,
        messages=len(msgs),
        sap_messages=sum(1 for m in msgs if any(a.cause in causes for a in m.alerts)),
        alertnames=sorted({a.name for m in msgs for a in m.alerts}),
        worst_means=worst,
    )
