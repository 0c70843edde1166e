"""Writes the Grafana dashboards (dashboards/<folder>/<slug>.json), one module each.

`python -m dashboards.build` writes them; `--check` writes nothing and exits 1 when the
committed JSON differs from what it would write. Thresholds come from alerts/thresholds.yml
and the components and indicators from exporters/vocabulary.py, as for the alert rules.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Mapping
from pathlib import Path

from dashboards import dbbuffer, fleet, forensics, instances, noc, oscounters, st03, st05

HERE = Path(__file__).resolve().parent
MODULES = (noc, fleet, st03, st05, dbbuffer, oscounters, forensics, instances)
# Grafana folder (provisioning/grafana/dashboards) -> directory under dashboards/.
FOLDER_DIRS = {
    "NOC": "noc",
    "SAP": "sap",
    "Database": "database",
    "Hosts": "hosts",
    "Forensics": "forensics",
}


def build() -> dict[Path, dict]:
    """Every dashboard's path and JSON model."""
    out = {}
    for module in MODULES:
        d = module.dashboard()
        slug = d.uid.removeprefix("wlmon-")
        out[HERE / FOLDER_DIRS[d.folder] / f"{slug}.json"] = d.json()
    return out


def text(model: dict) -> str:
    return json.dumps(model, indent=2, sort_keys=True) + "\n"


def same(a: object, b: object) -> bool:
    """Equal in structure, floats within a relative 1e-9 (they may differ in their last digits)."""
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, int | float) and isinstance(b, int | float) and math.isclose(a, b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def stale(built: Mapping[Path, dict]) -> list[Path]:
    """Dashboards on disk that differ from `built`, are missing, or that nothing builds."""
    on_disk = set(HERE.glob("*/*.json"))
    differ = [
        p for p, m in built.items() if not p.is_file() or not same(json.loads(p.read_text()), m)
    ]
    return sorted(set(differ) | (on_disk - set(built)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dashboards.build", description=__doc__)
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    args = parser.parse_args(argv)
    built = build()
    if args.check:
        differ = stale(built)
        for path in differ:
            print(f"{path.relative_to(HERE.parent)} differs from dashboards/", file=sys.stderr)
        return 1 if differ else 0
    for path, model in built.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text(model))
        print("wrote", path.relative_to(HERE.parent), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
