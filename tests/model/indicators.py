"""The whitepaper indicators of a model run's ST03 summary, against the thresholds: how the
model's tests judge a run (only tests judge a summary this way, so it lives with them)."""

from __future__ import annotations

from exporters.thresholds import Thresholds
from exporters.vocabulary import INDICATORS_BY_THRESHOLD

# Named as the model's tests and tables know them: "roll" for roll-in and roll-out.
INDICATOR_GROUPS = {
    key.removesuffix("_seconds"): group for key, group in INDICATORS_BY_THRESHOLD.items()
}


def indicator_values(summary_rows: list[dict]) -> dict[str, float]:
    """The whitepaper indicators of dialog steps (ms), one per threshold, the worst of a group."""
    dialog = next(r for r in summary_rows if r["task_type"] == "dialog")
    return {
        name: max(dialog[f"{i.component}_ms"] for i in group)
        for name, group in INDICATOR_GROUPS.items()
    }


def thresholds_ms(thresholds: Thresholds) -> dict[str, float]:
    """The whitepaper thresholds (seed 000 section 4.3.5.1) in ms, keyed as indicator_values
    keys its values; `thresholds` comes from the edge (alerts.thresholds reads the file)."""
    return {name: 1000 * thresholds.seconds(group[0]) for name, group in INDICATOR_GROUPS.items()}
