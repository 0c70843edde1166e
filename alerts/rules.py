"""What every rule file is made of: recording rules, alerts in house style, the YAML text."""

from __future__ import annotations

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
) -> dict:
    """An alert in house style; its runbook_url is added when the file is written.
    `keep_firing_for`: how long it stays firing after its expression stops holding
    (Prometheus 2.42+), so a value hovering around its level does not flap."""
    rule = {"alert": name, "expr": expr, "for": for_}
    if keep_firing_for is not None:
        rule["keep_firing_for"] = keep_firing_for
    return {
        **rule,
        "labels": {"severity": severity, **(labels or {})},
        "annotations": {"summary": summary, "description": description, "diagnosis": diagnosis},
    }


@dataclass(frozen=True)
class RuleFile:
    """One alerts/<name>.rules.yml: a comment saying why, then the rule groups."""

    name: str
    why: str
    groups: list[dict]

    def text(self, runbook_base: str) -> str:
        groups = [
            {**g, "rules": [_linked(r, runbook_base) for r in g["rules"]]} for g in self.groups
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
