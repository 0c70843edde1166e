"""Reads alerts/thresholds.yml, the numbers an operator tunes: the alerts package owns the
file, everyone else gets a typed `Thresholds` handed down from the edge (CLI, app factory,
rule and dashboard builders, tests)."""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import ValidationError

from exporters.thresholds import Thresholds

THRESHOLDS_FILE = Path(__file__).resolve().parent / "thresholds.yml"


class ThresholdsError(ValueError):
    """thresholds.yml is unreadable or wrong; the message names the file and the key."""


def load_thresholds(path: Path = THRESHOLDS_FILE) -> Thresholds:
    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ThresholdsError(f"{path}: {exc}") from exc
    if not isinstance(doc, dict):
        raise ThresholdsError(f"{path}: expected a mapping of key: number")
    try:
        return Thresholds.model_validate(doc)
    except ValidationError as exc:
        # A check across keys (page above warning) has no location: its message names them.
        where = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
            if e["loc"]
            else e["msg"].removeprefix("Value error, ")
            for e in exc.errors()
        )
        raise ThresholdsError(f"{path}: {where}") from exc
