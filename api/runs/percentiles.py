"""Percentiles of response time from a histogram's bucket counts, as Prometheus's
`histogram_quantile` computes them: linear interpolation inside the bucket that holds the
rank, the first bucket starting at 0, and a rank in the +Inf bucket answered with the
highest finite bound. A histogram only knows which bucket a step fell in, so every value
comes with the bucket's bounds: the precision is the bucket's width, said out loud."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

QUANTILES: dict[str, float] = {"p50": 0.5, "p90": 0.9, "p95": 0.95, "p99": 0.99}


@dataclass(frozen=True)
class Quantile:
    value: float  # seconds
    lower: float  # the bounds of the bucket the rank falls in
    upper: float  # math.inf: above the highest finite bound, `value` is only a floor


def parse_bound(le: str) -> float:
    return math.inf if le == "+Inf" else float(le)


def quantile(q: float, bounds: list[float], counts: np.ndarray) -> Quantile | None:
    """The q-quantile of non-cumulative `counts` per bucket with upper `bounds` (the last
    +Inf); None for an empty histogram."""
    if len(bounds) != len(counts) or len(bounds) < 2 or not math.isinf(bounds[-1]):
        raise ValueError("a histogram needs its upper bounds, the last one +Inf")
    cumulative = np.cumsum(np.asarray(counts, dtype=float))
    total = float(cumulative[-1])
    if total <= 0:
        return None
    rank = q * total
    b = int(np.searchsorted(cumulative, rank, side="left"))
    b = min(b, len(bounds) - 1)
    if b == len(bounds) - 1:
        return Quantile(bounds[-2], bounds[-2], math.inf)
    lower = bounds[b - 1] if b > 0 else 0.0
    upper = bounds[b]
    below = float(cumulative[b - 1]) if b > 0 else 0.0
    inside = float(cumulative[b]) - below
    value = lower + (upper - lower) * ((rank - below) / inside if inside else 1.0)
    return Quantile(value, lower, upper)


def precision(name: str, q: Quantile) -> str:
    """ "p99 lies in 2–3 s": how far the histogram lets the value be trusted."""
    if math.isinf(q.upper):
        return (
            f"{name} lies above {q.lower:g} s, the highest bucket bound: {q.lower:g} s is a floor"
        )
    return f"{name} lies in {q.lower:g}–{q.upper:g} s"
