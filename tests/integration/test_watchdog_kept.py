"""The dead man's switch kept and reloaded (issue 38 item 4), on a real Alertmanager and
Prometheus of their own (own state, free ports):

- `wlmon up` with no watchdog target, then the target kept with `config set` and `up` again
  from a shell without it: the running Alertmanager is reloaded and beats to it;
- `up` checks the loaded configuration against the rendered one and fails loudly when they
  differ;
- the beats arrive at the configured interval and stop within 4 evaluations plus one
  interval after Prometheus dies (the figure is printed).
"""

from __future__ import annotations

import itertools
import os
import time

import psutil
import pytest

from tests.integration.helpers import Heartbeats, eventually
from wlmon.stack import stored
from wlmon.stack.runtime import Stack, StackError
from wlmon.stack.settings import StackSettings, free_port_environment

INTERVAL_S = 6
SCRAPE_S = 2


@pytest.fixture
def small_stack(tmp_path, monkeypatch):
    for name in list(os.environ):
        if name.upper().startswith("WLMON_"):
            monkeypatch.delenv(name)
    env = free_port_environment() | {
        "WLMON_STATE_DIR": str(tmp_path / "state"),
        "WLMON_SCRAPE_INTERVAL": f"{SCRAPE_S}s",
        "WLMON_RULES_TIME_SCALE": "0.1",
        "WLMON_WATCHDOG_INTERVAL": f"{INTERVAL_S}s",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    stacks: list[Stack] = []

    def make() -> Stack:
        stack = Stack(StackSettings())
        stacks.append(stack)
        return stack

    yield make, tmp_path / "state"
    if stacks:
        stacks[-1].down()


def test_a_kept_watchdog_reaches_the_running_alertmanager_and_beats_on_time(
    small_stack,
) -> None:
    make, state = small_stack
    only = ["alertmanager", "prometheus"]
    events: list[str] = []
    first = make()
    first.up(only=only, on_event=events.append)
    assert "the running Alertmanager and Prometheus hold the rendered configuration" in events
    receiver = Heartbeats()
    try:
        # Kept in the state; the shell of the next `up` does not have it.
        # A secret (its URL carries the check's token): kept as its own file, as `wlmon
        # config set watchdog_url` keeps it.
        stored.write_secret(state, "watchdog_url", receiver.url)
        assert "WLMON_WATCHDOG_URL" not in os.environ
        events.clear()
        second = make()
        t0 = time.time()
        second.up(only=only, on_event=events.append)
        assert "alertmanager: configuration changed, reloading (POST /-/reload)" in events
        assert not any(e.startswith("prometheus: configuration changed") for e in events)
        beats = eventually(lambda: len(receiver.since(t0)) >= 5 and receiver.since(t0), 120, 1)
        gaps = [b[0] - a[0] for a, b in itertools.pairwise(beats)]
        print(f"\nwatchdog every {INTERVAL_S} s: gaps {', '.join(f'{g:.1f}' for g in gaps)} s")
        # Before: a repeat only every other flush (2 x the interval).
        assert all(INTERVAL_S * 0.5 <= g <= INTERVAL_S * 1.5 for g in gaps[1:]), gaps

        # What runs is checked against what was rendered: a file changed behind its back
        # (as a failed reload leaves it) is a loud error.
        rendered = second.config_dir / "alertmanager" / "alertmanager.yml"
        rendered.write_text(
            rendered.read_text().replace("repeat_interval: 4h", "repeat_interval: 3h")
        )
        with pytest.raises(StackError, match="alertmanager: runs another configuration"):
            second.verify({"alertmanager"})
        make().up(only=only)  # renders it back; unchanged from what runs: no reload

        (prom,) = [r for r in second.recorded() if r.name == "prometheus"]
        killed = time.time()
        psutil.Process(prom.pid).kill()
        # The alert is valid 4 x max(evaluation, resend delay) = 4 x 2 s after its last send.
        time.sleep(4 * SCRAPE_S + 3 * INTERVAL_S)
        after = [b[0] - killed for b in receiver.since(killed)]
        shown = ", ".join(f"+{a:.1f}" for a in after)
        print(f"watchdog beats after the kill -9 of Prometheus at {shown} s")
        last = max(after, default=0.0)
        assert last <= 4 * SCRAPE_S + INTERVAL_S + 2, after
        quiet = time.time()
        time.sleep(2 * INTERVAL_S)
        assert receiver.since(quiet) == []
    finally:
        receiver.stop()
