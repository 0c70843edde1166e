"""Alert counts as Alertmanager sends them: firing alerts minus those its routing keeps from
people (the watchdog's heartbeat route) and those its inhibit rules mute, counted as the
messages it groups them into (one per cause and SID, else per alert name and SID).

Read from provisioning/alertmanager/alertmanager.yml at build time, not copied: an inhibit
rule or watchdog route changed there changes these queries. Silences are not seen (they live
in Alertmanager, not in Prometheus); alerts/ suppresses symptoms in the rules (`unless`), so
those never reach ALERTS as firing at all.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import yaml

from dashboards.model import Format, Kind, Legend, ModelError, Panel, Query, Unit

ALERTMANAGER_FILE = (
    Path(__file__).resolve().parent.parent / "provisioning" / "alertmanager" / "alertmanager.yml"
)
# A matcher as Alertmanager writes it, which PromQL reads the same: name, op, quoted value.
MATCHER = re.compile(r'^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"\s*$')
WATCHDOG_RECEIVER = "watchdog"


def _selector(matchers: list[str], where: str) -> str:
    out = []
    for m in matchers:
        if not MATCHER.match(m):
            raise ModelError(f'{ALERTMANAGER_FILE}: {where}: matcher {m!r} not name op "value"')
        out.append(m.strip())
    return ",".join(out)


@lru_cache
def _config(path: Path = ALERTMANAGER_FILE) -> dict:
    doc = yaml.safe_load(path.read_text())
    if not isinstance(doc, dict) or "route" not in doc:
        raise ModelError(f"{path}: no route")
    return doc


def unsent_routes(path: Path = ALERTMANAGER_FILE) -> list[str]:
    """Selectors of the top-level routes to the heartbeat receiver (nobody reads it)."""
    routes = _config(path)["route"].get("routes", [])
    return [
        _selector(r.get("matchers", []), f"route to {r['receiver']}")
        for r in routes
        if r.get("receiver") == WATCHDOG_RECEIVER
    ]


def inhibitions(path: Path = ALERTMANAGER_FILE) -> list[tuple[str, str, list[str]]]:
    """(target selector, source selector, equal labels) per inhibit rule."""
    out = []
    for n, r in enumerate(_config(path).get("inhibit_rules", [])):
        where = f"inhibit_rules[{n}]"
        out.append(
            (
                _selector(r.get("target_matchers", []), where),
                _selector(r.get("source_matchers", []), where),
                list(r.get("equal", [])),
            )
        )
    return out


def sendable(sel: str, path: Path = ALERTMANAGER_FILE) -> str:
    """Firing alerts matching `sel` that Alertmanager would send to a person."""
    base = f'ALERTS{{alertstate="firing",{sel}}}' if sel else 'ALERTS{alertstate="firing"}'
    expr = base
    for route in unsent_routes(path):
        expr = f"({expr} unless ALERTS{{{route}}})"
    for target, source, equal in inhibitions(path):
        on = f"on({', '.join(equal)}) " if equal else "on() "
        muted = f'({base}{{{target}}} and {on}ALERTS{{alertstate="firing",{source}}})'
        # A selector on a selector is not PromQL: merge the braces.
        muted = muted.replace(f"}}{{{target}}}", f",{target}}}")
        expr = f"({expr} unless {muted})"
    return expr


def _grouped(sel: str, path: Path) -> str:
    return (
        f'label_replace(label_replace({sendable(sel, path)}, "group", "$1", "alertname", "(.+)"),'
        ' "group", "$1", "cause", "(.+)")'
    )


def alert_lives(sel: str = 'sid=~"$sid"', width: int = 24) -> Panel:
    """ "Since when": one band per message group (cause, else alert name) over the time it
    was out, stacked, so each alert's life is a shaded stretch from its start to its end.
    Perses (0.54, these plugins) draws no annotations, and StatusHistoryChart is not among
    the plugins wlmon's UI is built with: this is a stacked area of 1 per group alive."""
    return Panel(
        Kind.TIMESERIES,
        "Alert lives: since when (one band per cause or alert, per SID)",
        "Each band is one notification group out to a person (watchdog and inhibited "
        "alerts left out, as the alert counts), from when it fired to when it resolved; "
        "its height is 1, bands stack. Hover for the cause and SID.",
        [
            Query(
                f"max by (sid, group) ({_grouped(sel, ALERTMANAGER_FILE)})",
                legend="{{group}} {{sid}}",
            )
        ],
        width=width,
        height=6,
        # No fixed decimals: the axis ticks of one band (0.2, 0.4, ...) would all print 0 or 1.
        format=Format(Unit.NONE),
        stacked=True,
        fill=0.7,
        min=0,
        legend=Legend(table=False, values=()),
    )


def messages_by_sid(sel: str, path: Path = ALERTMANAGER_FILE) -> str:
    """The same count per SID (no row for a SID with none out)."""
    return f"count by (sid) (count by (sid, group) ({_grouped(sel, path)}))"


def messages(sel: str, path: Path = ALERTMANAGER_FILE) -> str:
    """How many notifications those alerts make: one per (cause, sid), an alert without a
    cause one per (alertname, sid), as the routes group them; 0 when none fire."""
    return f"count(count by (sid, group) ({_grouped(sel, path)})) or vector(0)"
