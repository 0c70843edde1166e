"""Writes every dashboard twice from one definition (dashboards.model, one module each):
the Perses resources wlmon's server reads (dashboards/perses/<name>.json) and Grafana
exports for a user's own Grafana (dashboards/grafana/<folder>/<slug>.json).

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

from alerts.settings import MonitoringConfig, load_monitoring_config
from dashboards import (
    dbbuffer,
    fleet,
    forensics,
    grafana,
    instances,
    noc,
    oscounters,
    perses,
    st03,
    st05,
)
from dashboards.model import Dashboard, ModelError

HERE = Path(__file__).resolve().parent
MODULES = (noc, fleet, st03, st05, dbbuffer, oscounters, forensics, instances)
# Folder -> directory under dashboards/grafana/ (a Grafana folder per directory).
FOLDER_DIRS = {
    "NOC": "noc",
    "SAP": "sap",
    "Database": "database",
    "Hosts": "hosts",
    "Forensics": "forensics",
}
OUTPUTS = ("perses/*.json", "grafana/*/*.json")


def dashboards(config: MonitoringConfig) -> list[Dashboard]:
    """Every dashboard's definition, checked: titles unique, links to dashboards that
    exist, variables that exist."""
    out = [m.dashboard(config) for m in MODULES]
    uids = {d.uid for d in out}
    for d in out:
        d.check()
        names = {v.name for v in d.variables}
        for p in d.panels:
            links = [*p.links, *(c.link for c in p.columns if c.link)]
            for lk in links:
                if lk.dashboard and lk.dashboard not in uids:
                    raise ModelError(f"{d.uid}: {p.title!r} links to {lk.dashboard}, no such")
                unknown = set(lk.pass_vars) - names
                if unknown:
                    raise ModelError(f"{d.uid}: {p.title!r} passes on {sorted(unknown)}")
    return out


def build(config: MonitoringConfig) -> dict[Path, dict]:
    """Every output file's path and JSON."""
    out: dict[Path, dict] = {}
    for d in dashboards(config):
        out[HERE / "perses" / f"{d.name}.json"] = perses.dashboard(d)
        out[HERE / "grafana" / FOLDER_DIRS[d.folder] / f"{d.name}.json"] = grafana.dashboard(d)
    return out


def text(model: dict) -> str:
    return json.dumps(model, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


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
    on_disk = {p for pattern in OUTPUTS for p in HERE.glob(pattern)}
    differ = [
        p for p, m in built.items() if not p.is_file() or not same(json.loads(p.read_text()), m)
    ]
    return sorted(set(differ) | (on_disk - set(built)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dashboards.build", description=__doc__)
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    parser.add_argument(
        "--grafana-loki",
        type=Path,
        metavar="DIR",
        help="also write Grafana exports whose logs read Loki (LogQL) into DIR/<folder>/",
    )
    args = parser.parse_args(argv)
    config = load_monitoring_config()  # the edge: thresholds.yml and the environment
    try:
        built = build(config)
    except ModelError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.grafana_loki:
        for d in dashboards(config):
            path = args.grafana_loki / FOLDER_DIRS[d.folder] / f"{d.name}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text(grafana.dashboard(d, logs_in_loki=True)))
            print("wrote", path, file=sys.stderr)
    if args.check:
        differ = stale(built)
        for path in differ:
            print(f"{path.relative_to(HERE.parent)} differs from dashboards/", file=sys.stderr)
        return 1 if differ else 0
    for path in stale(built):
        if path not in built:
            path.unlink()  # a dashboard no module builds any more
    for path, model in built.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text(model))
        print("wrote", path.relative_to(HERE.parent), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
