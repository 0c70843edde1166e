"""What every rule file is made of: recording rules, alerts in house style, the YAML text."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import yaml

from alerts.settings import runbook_url

# Go templates Prometheus fills in when an alert fires.
INSTANCE = "{{ $labels.sap_instance }} ({{ $labels.sid }})"
SID = "{{ $labels.sid }}"


def value(fmt: str) -> str:
    """The alert's value as a description prints it (`fmt` a printf format such as %.1f)."""
    return f'{{{{ printf "{fmt}" $value }}}}'


def number(x: float) -> str:
    """A threshold as PromQL and people read it: 0.05 * 1000 is 50, not 50.00000000000001."""
    return f"{round(x, 9):.9g}"


def record(name: str, expr: str) -> dict:
    return {"record": name, "expr": expr}


def alert(
    name: str,
    expr: str,
    *,
    severity: str,
    summary: str,
    description: str,
    diagnosis: str,
    for_: str = "5m",
    labels: dict[str, str] | None = None,
    keep_firing_for: str | None = None,
    held_value: str | None = None,
) -> dict:
    """An alert in house style; its runbook_url is added when the file is written.
    `keep_firing_for`: how long it stays firing after its expression stops holding
    (Prometheus 2.42+), so a value hovering around its level does not flap.
    `held_value`: the value `expr` compares (its series, the alert's labels); given, the
    alert resolves together with the other alerts of its cause and severity in its rule
    group (resolve_together), and prints this value while it is held."""
    rule = {"alert": name, "expr": expr, "for": for_}
    if keep_firing_for is not None:
        rule["keep_firing_for"] = keep_firing_for
    rule = {
        **rule,
        "labels": {"severity": severity, **(labels or {})},
        "annotations": {"summary": summary, "description": description, "diagnosis": diagnosis},
    }
    if held_value is not None:
        rule[_HELD] = held_value
    return rule


# The key an alert's held value travels under until resolve_together writes it into expr.
_HELD = "_held_value"
# Alertmanager groups a cause's alerts by these (provisioning/alertmanager/alertmanager.yml:
# the severity's route, then cause and sid); the rules resolve such a group's alerts together.
_GROUP_LABELS = ("cause", "severity")


def resolve_together(rules: list[dict]) -> list[dict]:
    """Rules of one rule group, each alert given a `held_value` made to resolve with its
    peers: the alerts of the same cause and severity, which Alertmanager sends as one
    message per SID.

    Why: each instance's mean falls under its level at its own evaluation after a fault is
    removed, so with one alert per instance the instances resolved up to two evaluations
    apart, and a group flush between them sent the group's update with status "firing"
    (most instances resolved, a few held by keep_firing_for) after the fix (issue 37).
    Alertmanager cannot send only the final "all resolved": with send_resolved a partial
    resolution is an update, without it no resolved message is sent at all. So an alert
    that fires stays firing (`or` branch, its own series and value) while any firing alert
    of its cause and severity still meets its own condition on the SID; when the last such
    condition fails, every held alert leaves the expression at the same evaluation, and
    keep_firing_for (one value per such set, checked here) ends them at the same
    evaluation too. Only firing alerts are held and hold (ALERTS): a pending instance never
    fires through a peer, and a slow peer that never fired (the DB host's 5-minute CPU)
    holds nobody. The raw conditions decide, so peers cannot hold each other up once the
    cause is gone. The rules of one group share an
    evaluation timestamp, which is what makes the end simultaneous: a set must not span
    rule groups."""
    peers: dict[tuple[str, ...], list[dict]] = defaultdict(list)
    for rule in rules:
        if _HELD in rule:
            peers[tuple(rule["labels"].get(k, "") for k in _GROUP_LABELS)].append(rule)
    for key, members in peers.items():
        keeps = {m.get("keep_firing_for") for m in members}
        if len(keeps) != 1:
            names = ", ".join(m["alert"] for m in members)
            raise ValueError(f"{names} ({key}) resolve together but keep firing for {keeps}")
    out = []
    for rule in rules:
        if _HELD not in rule:
            out.append(rule)
            continue
        key = tuple(rule["labels"].get(k, "") for k in _GROUP_LABELS)
        anywhere = "\n    or ".join(
            f"group by (sid) (\n      (\n{_indent(m['expr'], 8)}      )\n"
            f"      and {_firing(m)}\n    )"
            for m in peers[key]
        )
        expr = (
            f"(\n{_indent(rule['expr'], 2)})\nor\n(\n"
            f"  {rule[_HELD]}\n"
            f"  and {_firing(rule)}\n"
            f"  and on(sid) (\n    {anywhere}\n  )\n)\n"
        )
        out.append({k: (expr if k == "expr" else v) for k, v in rule.items() if k != _HELD})
    return out


def _firing(rule: dict) -> str:
    """`and` this: the series of the rule's own alerts that fire (ALERTS carries the
    series' labels plus these)."""
    ignoring = ", ".join(["alertname", "alertstate", *sorted(rule["labels"])])
    return f'ignoring({ignoring}) ALERTS{{alertname="{rule["alert"]}", alertstate="firing"}}'


def _indent(text: str, n: int) -> str:
    return "".join(" " * n + line + "\n" for line in text.strip().splitlines())


@dataclass(frozen=True)
class RuleFile:
    """One alerts/<name>.rules.yml: a comment saying why, then the rule groups."""

    name: str
    why: str
    groups: list[dict]

    def text(self, runbook_base: str) -> str:
        groups = [
            {**g, "rules": [_linked(r, runbook_base) for r in resolve_together(g["rules"])]}
            for g in self.groups
        ]
        header = "\n".join(
            f"# {line}".rstrip()
            for line in (
                "Written by `python -m alerts.build` from alerts/*.py, exporters/vocabulary.py",
                "and alerts/thresholds.yml: change those and run it again, not this file.",
                "",
                *self.why.strip().splitlines(),
            )
        )
        body = yaml.dump({"groups": groups}, Dumper=_Dumper, sort_keys=False, width=1000)
        return f"{header}\n{body}"


def _linked(rule: dict, base: str) -> dict:
    if "alert" not in rule:
        return rule
    annotations = {**rule["annotations"], "runbook_url": runbook_url(base, rule["alert"])}
    return {**rule, "annotations": annotations}


class _Dumper(yaml.SafeDumper):
    """Lists indented under their key and multi-line expressions as literal blocks."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _str(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _str)
