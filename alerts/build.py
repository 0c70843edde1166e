"""Writes alerts/*.rules.yml from exporters/vocabulary.py and alerts/thresholds.yml.

`python -m alerts.build` writes the files; `--check` writes nothing and exits 1 when the
committed files differ from what it would write. The runbook links point at
WLMON_RUNBOOK_BASE_URL (default: the API's GET /runbooks on 127.0.0.1:8000).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path

from alerts import database, exporter, monitoring, recording, sapbuffer, sapcontrol, workload
from alerts.settings import MonitoringConfig, load_monitoring_config

HERE = Path(__file__).resolve().parent
MODULES = (recording, workload, database, sapbuffer, exporter, sapcontrol, monitoring)


def build(config: MonitoringConfig) -> dict[Path, str]:
    """Every rule file's path and text."""
    files = [m.rule_file(config) for m in MODULES]
    return {HERE / f.name: f.text(config.runbook_base_url) for f in files}


def stale(built: Mapping[Path, str]) -> list[Path]:
    """Rule files on disk that differ from `built`, are missing, or that nothing builds."""
    on_disk = set(HERE.glob("*.rules.yml"))
    differ = [p for p, text in built.items() if not p.is_file() or p.read_text() != text]
    return sorted(set(differ) | (on_disk - set(built)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m alerts.build", description=__doc__)
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    args = parser.parse_args(argv)
    built = build(load_monitoring_config())  # the edge: thresholds.yml and the environment
    if args.check:
        differ = stale(built)
        for path in differ:
            print(f"{path.relative_to(HERE.parent)} differs from alerts/build.py", file=sys.stderr)
        return 1 if differ else 0
    for path, text in built.items():
        path.write_text(text)
        print("wrote", path.relative_to(HERE.parent), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
