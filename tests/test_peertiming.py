"""The Alertmanager peers' timeout against the grid they flush on (wlmon/stack/peertiming.py).

The grids and waits here are worked out by hand from the timers, not by the module."""

from __future__ import annotations

import pytest
import yaml

from wlmon.stack.fleet import FleetStack
from wlmon.stack.peertiming import check_peer_timeout, grid_seconds
from wlmon.stack.runtime import StackError
from wlmon.stack.settings import REPO_DIR, StackSettings

# The stack's defaults: evaluation 15s, group wait 30s / interval 5m, the cause routes'
# 15s / 30s, the watchdog's 1m: a 15 s grid.
DEFAULTS = {"eval": "15s", "gw": "30s", "gi": "5m", "cgw": "15s", "cgi": "30s", "dog": "1m"}
# test_fleet_thanos before the fix: evaluation 2s, group wait 1s, interval 5s: a 1 s grid.
FLAKY = {"eval": "2s", "gw": "1s", "gi": "5s", "cgw": "1s", "cgi": "5s", "dog": "1m"}


def test_the_grid_is_the_largest_step_every_timer_is_made_of() -> None:
    assert grid_seconds(DEFAULTS) == 15
    assert grid_seconds(FLAKY) == 1
    assert grid_seconds({"eval": "2s", "gw": "0s", "gi": "6s"}) == 2  # 0s adds no step
    assert grid_seconds({"eval": "1500ms", "gi": "1m"}) == 1.5


@pytest.mark.parametrize(
    ("timeout", "timers", "peers"),
    [
        ("15s", DEFAULTS, 2),  # Alertmanager's own default: on the 15 s grid
        ("30s", DEFAULTS, 2),
        ("3s", FLAKY, 2),  # the flaky test's: on its 1 s grid
        ("7.5s", DEFAULTS, 3),  # peer 3 waits 15 s: on the grid
    ],
)
def test_a_peer_timeout_on_the_grid_is_refused_naming_the_setting(timeout, timers, peers):
    with pytest.raises(ValueError, match=f"^WLMON_FLEET_AM_PEER_TIMEOUT={timeout}: peer"):
        check_peer_timeout(timeout, timers, peers)


@pytest.mark.parametrize(
    ("timeout", "timers", "peers"),
    [
        ("22.5s", DEFAULTS, 2),
        ("7.5s", DEFAULTS, 2),
        ("3.5s", FLAKY, 2),
        ("3s", {"eval": "2s", "gw": "2s", "gi": "6s"}, 2),  # test_fleet_thanos now
        ("5s", DEFAULTS, 3),  # peers wait 5 s and 10 s: 5 s off the grid each
        ("15s", DEFAULTS, 1),  # one peer waits for no one
    ],
)
def test_a_peer_timeout_half_way_between_grid_points_is_taken(timeout, timers, peers):
    check_peer_timeout(timeout, timers, peers)


def test_the_refusal_suggests_timeouts_half_way(tmp_path) -> None:
    with pytest.raises(ValueError, match=r"use e\.g\. 7\.5s or 22\.5s$"):
        check_peer_timeout("15s", DEFAULTS, 2)
    with pytest.raises(ValueError, match=r"use e\.g\. 2\.5s or 3\.5s$"):
        check_peer_timeout("3s", FLAKY, 2)


def test_a_timer_that_is_not_a_duration_is_named() -> None:
    with pytest.raises(ValueError, match=r"^WLMON_FLEET_AM_PEER_TIMEOUT=soon: not a duration"):
        check_peer_timeout("soon", DEFAULTS, 2)
    with pytest.raises(ValueError, match=r"^gi=5 min: not a duration"):
        check_peer_timeout("22.5s", {**DEFAULTS, "gi": "5 min"}, 2)


def test_the_fleet_is_not_rendered_with_a_peer_timeout_on_the_grid(tmp_path, monkeypatch):
    monkeypatch.setenv("WLMON_API_TOKEN", "token")
    ok = FleetStack(StackSettings(state_dir=tmp_path / "ok"))
    ok.layout().check_peer_timeout()  # the defaults: 22.5 s on the 15 s grid
    bad = FleetStack(StackSettings(state_dir=tmp_path / "bad", fleet_am_peer_timeout="15s"))
    with pytest.raises(StackError, match="WLMON_FLEET_AM_PEER_TIMEOUT=15s"):
        bad.render()
    assert not (tmp_path / "bad" / "fleet" / "config" / "alertmanager").exists()


def test_the_compose_fleet_peers_wait_off_the_grid() -> None:
    """docker-compose's fleet runs the same timers (scrape 15s, the Alertmanager template's
    defaults) and sets its peers' timeout itself; wlmon's check does not run there."""
    compose = yaml.safe_load((REPO_DIR / "docker-compose.yml").read_text())
    settings = StackSettings()
    timers = {
        "eval": settings.scrape_interval,
        "gw": settings.am_group_wait,
        "gi": settings.am_group_interval,
        "cgw": settings.am_cause_group_wait,
        "cgi": settings.am_cause_group_interval,
        "dog": settings.watchdog_interval,
    }
    peers = [
        s for name, s in compose["services"].items() if name.removeprefix("alertmanager-").isdigit()
    ]
    assert len(peers) == 2
    for service in peers:
        (timeout,) = [
            a.split("=", 1)[1]
            for a in service["command"]
            if a.startswith("--cluster.peer-timeout=")
        ]
        check_peer_timeout(timeout, timers, len(peers))


def test_each_route_is_checked_on_its_own_grid_and_the_watchdog_not_at_all(tmp_path):
    """The fleet tests' timers (evaluation 2 s, groups 2 s / 6 s, peer timeout 3 s: a 2 s
    grid, 1 s off) inside the integration session, which sets the watchdog to 5 s: the
    watchdog's heartbeats (sent by both peers, one more beat) do not pull the grid down to
    1 s, where 3 s would be refused. A route of its own on a 1 s grid still is."""
    timers = {
        "scrape_interval": "2s",
        "am_group_wait": "2s",
        "am_group_interval": "6s",
        "am_cause_group_wait": "2s",
        "am_cause_group_interval": "10s",
        "fleet_am_peer_timeout": "3s",
    }
    ok = FleetStack(StackSettings(state_dir=tmp_path / "ok", watchdog_interval="5s", **timers))
    ok.layout().check_peer_timeout()
    cause = {**timers, "am_cause_group_wait": "1s", "am_cause_group_interval": "5s"}
    bad = FleetStack(StackSettings(state_dir=tmp_path / "bad", **cause))
    with pytest.raises(ValueError, match="WLMON_AM_CAUSE_GROUP_WAIT=1s"):
        bad.layout().check_peer_timeout()
