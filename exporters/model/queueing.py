"""Exact queueing results the solver is built from.

Finite-source (machine-repairman) M/M/c//N for a dispatcher in front of its work
processes, and M/M/c for shared servers (database CPUs, application-server CPUs,
enqueue work processes). Textbook formulas (Kleinrock vol. 1, ch. 3; Gross & Harris).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def erlang_c(servers: int, offered_load: float) -> float:
    """Probability that an arrival waits in M/M/c with offered load a = lambda/mu (Erlang)."""
    if offered_load <= 0.0:
        return 0.0
    if offered_load >= servers:
        return 1.0
    # Erlang B by its stable recursion, then C from B.
    b = 1.0
    for k in range(1, servers + 1):
        b = offered_load * b / (k + offered_load * b)
        if b < 1e-300:
            # Far below saturation no arrival ever waits; the rest of the loop only
            # multiplies zeros (and a 1000-CPU test case would spend seconds here).
            return 0.0
    rho = offered_load / servers
    return b / (1.0 - rho + rho * b)


def mmc_wait(servers: int, arrival_rate: float, service_time: float) -> float:
    """Mean queueing delay of M/M/c; infinite at or above saturation."""
    if arrival_rate <= 0.0 or service_time <= 0.0:
        return 0.0
    a = arrival_rate * service_time
    if a >= servers:
        return math.inf
    return erlang_c(servers, a) * service_time / (servers - a)


def mmc_stretch(servers: int, utilisation: float) -> float:
    """Residence time over service time of M/M/c at a per-server utilisation (>= 1)."""
    if utilisation <= 0.0:
        return 1.0
    utilisation = min(utilisation, MAX_UTILISATION)
    a = utilisation * servers
    return 1.0 + erlang_c(servers, a) / (servers - a)


# Above this a shared resource is treated as saturated; the closed loop keeps the
# solver away from it, this only guards the arithmetic.
MAX_UTILISATION = 0.995


@dataclass(frozen=True)
class FiniteSourceResult:
    """Steady state of M/M/c//N: N sources thinking for Z, c servers of mean time S."""

    throughput: float
    mean_wait: float
    mean_in_system: float
    busy_servers: float
    mean_queue: float
    # Distribution of the number in system seen by an arriving source (arrival theorem).
    arrival_distribution: np.ndarray


def finite_source(
    sources: int, servers: int, think_time: float, service_time: float
) -> FiniteSourceResult:
    """Exact M/M/c//N by its birth-death chain, in log space so N can be large."""
    if sources <= 0 or service_time <= 0.0:
        return FiniteSourceResult(0.0, 0.0, 0.0, 0.0, 0.0, np.zeros(1))
    if servers <= 0:
        raise ValueError("servers must be at least 1")
    k = np.arange(sources + 1, dtype=np.float64)
    # log p_k - log p_0 = sum_{j<k} log(birth_j) - log(death_{j+1})
    births = np.log(sources - k[:-1]) - math.log(think_time) if think_time > 0 else None
    if births is None:
        # No think time: every source is always at the station.
        p = np.zeros(sources + 1)
        p[-1] = 1.0
    else:
        deaths = np.log(np.minimum(k[1:], servers)) - math.log(service_time)
        logp = np.concatenate(([0.0], np.cumsum(births - deaths)))
        logp -= logp.max()
        p = np.exp(logp)
        p /= p.sum()
    busy = np.minimum(k, servers)
    throughput = float(np.dot(busy, p)) / service_time
    mean_in_system = float(np.dot(k, p))
    mean_queue = float(np.dot(np.maximum(k - servers, 0.0), p))
    mean_wait = mean_queue / throughput if throughput > 0 else 0.0
    arrivals = (sources - k) * p
    total = arrivals.sum()
    arrival_distribution = arrivals / total if total > 0 else arrivals
    return FiniteSourceResult(
        throughput=throughput,
        mean_wait=mean_wait,
        mean_in_system=mean_in_system,
        busy_servers=float(np.dot(busy, p)),
        mean_queue=mean_queue,
        arrival_distribution=arrival_distribution,
    )
