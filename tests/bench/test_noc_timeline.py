"""bench/noc_timeline.py's arithmetic on hand-built event lists (bench/noc.py's timeline).

Each case builds its events from a few chosen instants and computes the expected seconds
from those instants itself (the first 5 s poll at or after a ramp, a message's offset from
the removal), so a wrong window, an off-by-one poll or a message counted in the wrong fault
fails here.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "bench" / "noc_timeline.py"
_SPEC = importlib.util.spec_from_file_location("noc_timeline", _PATH)
nt = importlib.util.module_from_spec(_SPEC)
sys.modules["noc_timeline"] = nt
_SPEC.loader.exec_module(nt)

PAGE = 0.6  # page level, seconds
IND = "SAPDatabaseRequestTimeHigh"
SPEC = nt.FaultSpec(fault="db-bottleneck", cause="database", indicator=IND, page_s=PAGE)


def polls(t0: float, t1: float, mean_at, states_at) -> list:
    """A poll every 5 s in [t0, t1)."""
    out, t = [], t0
    while t < t1:
        out.append(nt.Poll(t=t, means={IND: mean_at(t)}, states=states_at(t)))
        t += 5.0
    return out


def msg(t: float, receiver: str, *alerts: tuple[str, str | None, str]) -> object:
    """The i-th alert of a message is on instance penguin{i+2}_D00."""
    refs = [
        nt.AlertRef(name=n, cause=c, status=s, instance=f"penguin{i + 2}_D00")
        for i, (n, c, s) in enumerate(alerts)
    ]
    return nt.Message(t=t, receiver=receiver, group_key=f"{{}}:{receiver}", alerts=refs)


def test_a_fault_that_pages_and_resolves():
    inj, removed, end = 1000.0, 1510.0, 1840.0
    ramp, pend_at, fire_at = 1033.0, 1036.0, 1068.0  # mean over page, pending, firing
    events = [nt.Injected(t=inj, fault="db-bottleneck")]
    events += polls(
        990.0,
        end,
        lambda t: 0.9 if ramp <= t < removed + 60 else 0.39,
        lambda t: (
            {"database": ["firing"]}
            if fire_at <= t < removed + 100
            else {"database": ["pending"]}
            if pend_at <= t < fire_at
            else {}
        ),
    )
    c = ("SAPDatabaseRequestTimeHigh", "database", "firing")
    r = ("SAPDatabaseRequestTimeHigh", "database", "resolved")
    events += [
        msg(inj + 81, "oncall-critical", c),
        msg(inj + 111, "oncall-critical", c, c),
        msg(inj + 95, "noc-warning", ("SAPDatabaseDiskQueueHigh", "database", "firing")),
        nt.Removed(t=removed, fault="db-bottleneck"),
        msg(removed + 110, "oncall-critical", r, r),
        msg(removed + 125, "noc-warning", ("SAPDatabaseDiskQueueHigh", "database", "resolved")),
        nt.End(t=end),
    ]
    tl = nt.fault_timeline(events, SPEC)
    poll_times = [990.0 + 5 * k for k in range(int((end - 990) / 5))]
    first_poll = lambda at: min(t for t in poll_times if t >= at) - inj  # noqa: E731
    assert tl.fault_s == pytest.approx(removed - inj)
    assert tl.crossing == pytest.approx(first_poll(ramp))  # 1035 -> 35
    assert tl.pending == pytest.approx(first_poll(pend_at))
    assert tl.firing == pytest.approx(first_poll(fire_at))
    assert tl.first_notification == pytest.approx(81)
    assert tl.resolved == pytest.approx(125)  # the cause's last resolved message
    assert tl.messages == {"noc-warning": 2, "oncall-critical": 3}
    assert tl.after_removal == 2
    assert tl.firing_after_removal == []
    assert tl.other_causes == []
    assert tl.peak_mean_s == pytest.approx(0.9)


def test_firing_after_removal_is_listed_and_is_not_the_first_notification():
    inj, removed = 0.0, 510.0
    w = ("SAPDialogResponseTimeHigh", "dialog-response", "firing")
    events = [
        nt.Injected(t=inj, fault="db-bottleneck"),
        nt.Removed(t=removed, fault="db-bottleneck"),
        # the page's own cause sends only after the fix, then resolves
        msg(
            removed + 139,
            "noc-warning",
            *[("SAPDatabaseRequestTimeHigh", "database", "firing")] * 30,
        ),
        msg(removed + 154, "noc-warning", w),
        msg(removed + 300, "noc-warning", ("SAPDatabaseRequestTimeHigh", "database", "resolved")),
        nt.End(t=removed + 330),
    ]
    tl = nt.fault_timeline(events, SPEC)
    assert tl.first_notification is None
    assert tl.firing_after_removal == [
        "+139 s noc-warning: 30 SAPDatabaseRequestTimeHigh firing (30 new)",
        "+154 s noc-warning: 1 SAPDialogResponseTimeHigh firing (1 new)",
    ]
    assert tl.after_removal == 3
    assert tl.resolved == pytest.approx(300)
    assert tl.other_causes == ["dialog-response"]


def test_an_update_after_removal_that_lists_stragglers_is_told_from_news():
    """Paged on 30 instances; 85 s after the fix one message resolves 23 and still holds 7
    firing (sent before); 5 s later two of the resolved fire again (news)."""
    inj, removed = 0.0, 510.0
    c = ("SAPDatabaseRequestTimeHigh", "database", "firing")
    r = ("SAPDatabaseRequestTimeHigh", "database", "resolved")
    events = [
        nt.Injected(t=inj, fault="db-bottleneck"),
        msg(inj + 84, "oncall-critical", *[c] * 30),
        nt.Removed(t=removed, fault="db-bottleneck"),
        msg(removed + 85, "oncall-critical", *[c] * 7, *[r] * 23),
        # penguin2..10 firing: 2..8 still were, 9 and 10 had been resolved at +85 s
        msg(removed + 90, "oncall-critical", *[c] * 9),
        nt.End(t=removed + 330),
    ]
    tl = nt.fault_timeline(events, SPEC)
    assert tl.first_notification == pytest.approx(84)
    assert tl.firing_after_removal == [
        "+85 s oncall-critical: 7 SAPDatabaseRequestTimeHigh firing (0 new), 23 resolved",
        f"+90 s oncall-critical: 9 SAPDatabaseRequestTimeHigh firing ({9 - 7} new)",
    ]
    assert tl.resolved is None  # no message resolved the whole cause


def test_a_fault_that_never_pages():
    inj, removed, end = 5000.0, 5510.0, 5840.0
    events = [
        nt.Injected(t=inj, fault="db-bottleneck"),
        nt.Removed(t=removed, fault="db-bottleneck"),
    ]
    events += polls(inj, end, lambda t: 0.59, lambda t: {})  # just under the page level
    events.append(nt.End(t=end))
    tl = nt.fault_timeline(events, SPEC)
    assert (tl.crossing, tl.pending, tl.firing, tl.first_notification, tl.resolved) == (None,) * 5
    assert tl.messages == {}
    assert tl.after_removal == 0
    assert tl.peak_mean_s == pytest.approx(0.59)


def test_each_fault_counts_only_its_own_window_and_no_state_after_removal():
    """Messages before the injection or after the next one belong to other faults, and a
    crossing seen only after the removal is not the fault's."""
    c = ("SAPDatabaseRequestTimeHigh", "database", "firing")
    events = [
        msg(50.0, "oncall-critical", c),  # before: the previous fault's
        nt.Injected(t=100.0, fault="db-bottleneck"),
        nt.Removed(t=200.0, fault="db-bottleneck"),
        nt.Poll(t=205.0, means={IND: 0.9}, states={"database": ["firing"]}),
        nt.Injected(t=300.0, fault="slow-enqueue-link"),
        msg(310.0, "oncall-critical", c),
    ]
    tl = nt.fault_timeline(events, SPEC)
    assert (tl.crossing, tl.pending, tl.firing, tl.first_notification) == (None,) * 4
    assert tl.messages == {}
    assert tl.peak_mean_s is None
    with pytest.raises(ValueError, match="too-few-work-processes"):
        nt.fault_timeline(events, SPEC.model_copy(update={"fault": "too-few-work-processes"}))


def test_healthy_stretch_and_the_json_round_trip():
    events = polls(0.0, 300.0, lambda t: 0.30 + t / 1000, lambda t: {})
    events.append(msg(120.0, "noc-warning", ("SAPPersesDown", None, "firing")))
    events.append(msg(130.0, "oncall-critical", ("SAPEnqueueTimeHigh", "enqueue", "firing")))
    h = nt.healthy_stretch(events, 0.0, 300.0, {"enqueue", "database"})
    assert h.seconds == pytest.approx(300)
    assert (h.messages, h.sap_messages) == (2, 1)
    assert h.alertnames == ["SAPEnqueueTimeHigh", "SAPPersesDown"]
    assert h.worst_means[IND] == pytest.approx(0.30 + 295 / 1000)
    back = nt.EVENTS.validate_json(nt.EVENTS.dump_json(events))
    assert back == events
    assert [type(e).__name__ for e in back][-2:] == ["Message", "Message"]
