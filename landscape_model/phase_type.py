"""Phase-type holding times: a two-moment fit of a work process's holding time (Tijms 2003)."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

# A work process's holding time is a sum of stages (CPU burst, DB calls, reads, log writes),
# less variable than the exponential a birth-death chain assumes, so the chains (chains.py) take
# it as phase-type with the holding time's squared coefficient of variation (SCV) and solve
# the chain over (customers, phase) exactly. SCV = 1 is the exponential: the birth-death
# chain itself, solved by the same code as before.
SCV_MIN = 0.05  # below this (more than 20 phases) the holding time counts as this regular
SCV_MAX = 20.0
_EXPONENTIAL = 1e-9  # |SCV - 1| within this: the exponential


@dataclass(frozen=True)
class PhaseType:
    """A unit-mean phase-type distribution: start vector alpha, sub-generator T."""

    alpha: np.ndarray  # [phase]
    t: np.ndarray  # [phase, phase]

    @property
    def exit(self) -> np.ndarray:
        return -self.t.sum(axis=1)


@functools.lru_cache(maxsize=256)
def fit_phase_type(scv: float) -> PhaseType:
    """The unit-mean phase-type distribution with the given SCV (two-moment fit, Tijms,
    A First Course in Stochastic Models, 2003, sec. 2.4 / Appendix B): below 1, a mixture
    of Erlang(r-1) and Erlang(r) with a common rate, r = ceil(1 / SCV), the Erlang(r-1)
    with probability p = (r SCV - sqrt(r (1 + SCV) - r^2 SCV)) / (1 + SCV); above 1, a
    two-phase hyperexponential with balanced means. SCV = 1: one exponential phase.
    Cached, so its arrays are read-only (as `_log_factorials`'): a caller writing into
    them would change every later chain of the same SCV."""
    c2 = min(max(float(scv), SCV_MIN), SCV_MAX)
    if abs(c2 - 1.0) <= _EXPONENTIAL:
        return _read_only(np.ones(1), -np.ones((1, 1)))
    if c2 < 1.0:
        r = math.ceil(1.0 / c2 - 1e-12)
        p = (r * c2 - math.sqrt(r * (1.0 + c2) - r * r * c2)) / (1.0 + c2)
        mu = r - p  # unit mean: (p (r - 1) + (1 - p) r) / mu = 1
        alpha = np.zeros(r)
        alpha[0], alpha[1] = 1.0 - p, p  # Erlang(r-1): start one phase in
        t = np.diag(np.full(r, -mu)) + np.diag(np.full(r - 1, mu), 1)
        return _read_only(alpha, t)
    p1 = 0.5 * (1.0 + math.sqrt((c2 - 1.0) / (c2 + 1.0)))
    return _read_only(np.array([p1, 1.0 - p1]), np.diag([-2.0 * p1, -2.0 * (1.0 - p1)]))


def _read_only(alpha: np.ndarray, t: np.ndarray) -> PhaseType:
    alpha.flags.writeable = t.flags.writeable = False
    return PhaseType(alpha, t)
