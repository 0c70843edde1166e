"""Birth-death and quasi-birth-death chains in front of a flow-equivalent server.

The closed chain of N users in front of a load-dependent server (a flow-equivalent server,
Lazowska et al. 1984, ch. 8), and the open chain of a Poisson stream in front of one. With a
holding time other than exponential, chains over (customers, phase) whose completions at full
concurrency are phase-type (phase_type.py), solved exactly by linear level reduction
(Latouche & Ramaswami 1999).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from landscape_model.phase_type import PhaseType, fit_phase_type


@dataclass(frozen=True)
class ChainResult:
    """Steady state of customers in front of a flow-equivalent server of K concurrent ones."""

    throughput: float
    mean_in_system: float
    mean_queue: float  # waiting for one of the K (a work process)
    busy: np.ndarray  # [k]: probability that k are being served, k = 0..K
    # Of an arriving customer: probability that it finds n in system (arrival theorem /
    # PASTA), or a function computing it: only the response histograms read it, once per
    # solve, and the open phase chain's tail spelt out level by level cost more than the
    # rest of the chain in every sweep of the fixed point (`arrival_distribution`).
    arrivals: np.ndarray | Callable[[], np.ndarray]
    overloaded: bool = False

    @functools.cached_property
    def arrival_distribution(self) -> np.ndarray:
        return self.arrivals() if callable(self.arrivals) else self.arrivals


def _busy(p: np.ndarray, k_max: int, tail: float = 0.0) -> np.ndarray:
    busy = np.zeros(k_max + 1)
    m = min(len(p), k_max + 1)
    busy[:m] = p[:m]
    busy[k_max] += p[k_max + 1 :].sum() + tail
    return busy


def closed_chain(users: int, think: float, rate: np.ndarray, scv: float = 1.0) -> ChainResult:
    """N users thinking for Z (exponential) in front of rates X(min(n, K)), rate[k], k = 0..K.
    scv: the holding time's squared coefficient of variation; 1 (exponential) is the
    birth-death chain, otherwise its completions are phase-type (`fit_phase_type`) and the
    chain over (users, phase) is solved by `_phase_chain`."""
    k_max = len(rate) - 1
    if users <= 0 or k_max <= 0 or rate[-1] <= 0:
        return ChainResult(0.0, 0.0, 0.0, _busy(np.ones(1), max(k_max, 0)), np.ones(1))
    n = np.arange(users + 1)
    mu = rate[np.minimum(n, k_max)]
    ph = fit_phase_type(scv)
    if think <= 0:
        p = np.zeros(users + 1)
        p[-1] = 1.0
    elif len(ph.alpha) > 1:
        # Levels beyond where the exponential chain's tail has fallen e^-_CUT below its
        # mode are left out (a phase-type holding time at most as variable holds them
        # tighter still): the level loop costs per level, a saturated class's users crowd
        # round N - X Z.
        steps = np.log(users - n[:-1]) - math.log(think) - np.log(mu[1:])
        logp = np.concatenate(([0.0], np.cumsum(steps)))
        top = int(np.nonzero(logp >= logp.max() - _CUT)[0][-1]) if scv <= 1.0 else users
        top = min(users, top + _CUT_MARGIN)
        p = np.zeros(users + 1)
        head = _phase_chain((users - n[:top]) / think, mu[: top + 1], ph, k_max)
        if head is None:  # rates beyond a double's range apart: pinned where logp is
            head = np.exp(logp[: top + 1] - logp.max())
        p[: top + 1] = head / head.sum()
        # Completions balance arrivals (the phase split within a level is not kept).
        x = float(np.dot((users - n) / think, p))
        arrivals = (users - n) * p
        return ChainResult(
            throughput=x,
            mean_in_system=float(np.dot(n, p)),
            mean_queue=float(np.dot(np.maximum(n - k_max, 0), p)),
            busy=_busy(p, k_max),
            arrivals=arrivals / arrivals.sum(),
        )
    else:
        steps = np.log(users - n[:-1]) - math.log(think) - np.log(mu[1:])
        logp = np.concatenate(([0.0], np.cumsum(steps)))
        p = np.exp(logp - logp.max())
        p /= p.sum()
    x = float(np.dot(mu, p))
    arrivals = (users - n) * p
    total = arrivals.sum()
    return ChainResult(
        throughput=x,
        mean_in_system=float(np.dot(n, p)),
        mean_queue=float(np.dot(np.maximum(n - k_max, 0), p)),
        busy=_busy(p, k_max),
        arrivals=arrivals / total if total > 0 else p,
    )


def open_chain(arrival_rate: float, rate: np.ndarray, scv: float = 1.0) -> ChainResult:
    """A Poisson stream in front of rates X(min(n, K)); overloaded if it reaches X(K).
    scv as in `closed_chain` (phase-type completions: `_open_phase_chain`)."""
    k_max = len(rate) - 1
    cap = float(rate[-1])
    if arrival_rate <= 0.0:
        p = np.zeros(k_max + 1)
        p[0] = 1.0
        return ChainResult(0.0, 0.0, 0.0, p, p)
    if arrival_rate >= cap:
        busy = np.zeros(k_max + 1)
        busy[-1] = 1.0
        return ChainResult(cap, math.inf, math.inf, busy, busy, overloaded=True)
    ph = fit_phase_type(scv)
    if len(ph.alpha) > 1:
        return _open_phase_chain(arrival_rate, rate, ph)
    n = np.arange(k_max + 1)
    logp = np.concatenate(([0.0], np.cumsum(math.log(arrival_rate) - np.log(rate[1:]))))
    p = np.exp(logp - logp.max())
    rho = arrival_rate / cap
    # States above K form a geometric tail p(K) rho^m.
    tail_mass = p[-1] * rho / (1.0 - rho)
    total = p.sum() + tail_mass
    p /= total
    tail_mass /= total
    queue = p[-1] * rho / (1.0 - rho) ** 2
    mean = float(np.dot(n, p)) + tail_mass * k_max + queue
    # Arrivals see the time average (PASTA); the tail is cut where it holds < 1e-9.
    length = min(100_000, max(1, math.ceil(math.log(1e-9) / math.log(rho)))) if rho > 0 else 1
    seen = np.concatenate((p, p[-1] * rho ** np.arange(1, length + 1)))
    return ChainResult(
        throughput=arrival_rate,
        mean_in_system=mean,
        mean_queue=queue,
        busy=_busy(p, k_max, tail_mass),
        arrivals=seen / seen.sum(),
    )


def bounded_chain(
    users: int, think: float, rate: np.ndarray, bound: float, scv: float = 1.0
) -> tuple[ChainResult, np.ndarray]:
    """`closed_chain` with the server slowed alike in every state (rate c x rate[k], c <= 1)
    until the throughput is at most `bound` (a class's share of a saturated station:
    `Solver._share_bound`); returns the chain and the scaled rates. The throughput grows
    with c, so h(y) = log X(e^y) - log bound has one root: the secant method from the first
    proportional step (c = bound / X) while the steps stay above the bound, a step twice as
    long where the secant stalls, then regula falsi on the bracket with the
    Anderson-Bjoerck weight (as `WhatIf.max_users`). About 4 chains where the proportional
    steps of `bounded_chain_by_scaling` took 19 near the SD benchmark's knee, and the root
    also where X hardly depends on c (a class held by its think time), where those steps
    stop after 50 short of it. Stops where the throughput is within 1e-9 of the bound."""
    chain = closed_chain(users, think, rate, scv)
    if chain.throughput <= bound * (1.0 + 1e-9):
        return chain, rate
    target = math.log(bound)
    hi, h_hi = 0.0, math.log(chain.throughput) - target  # log c, residual above the bound
    lo = h_lo = None  # below it, once found
    side = 0  # the end moved last: -1 low, 1 high
    y, scaled = -h_hi, rate
    for _ in range(100):
        scaled = rate * math.exp(y)
        chain = closed_chain(users, think, scaled, scv)
        h = math.log(chain.throughput) - target if chain.throughput > 0 else -math.inf
        if abs(h) <= 1e-9:
            break
        if lo is None:
            if h < 0:
                lo, h_lo = y, h
            else:
                # Secant through the last two points above the bound, at least twice the
                # last step down (X hardly moving with c: the secant crawls).
                secant = y - h * (y - hi) / (h - h_hi) if h != h_hi else -math.inf
                y, hi, h_hi = min(secant, y - 2.0 * (hi - y)), y, h
                continue
        elif h < 0:
            h_hi *= _kept_weight(h, h_lo) if side == -1 else 1.0
            lo, h_lo = y, h
        else:
            h_lo *= _kept_weight(h, h_hi) if side == 1 else 1.0
            hi, h_hi = y, h
        side = -1 if h < 0 else 1
        finite = math.isfinite(h_lo)
        y = lo + (hi - lo) * -h_lo / (h_hi - h_lo) if finite else 0.5 * (lo + hi)
    return chain, scaled


def _kept_weight(new: float, old: float) -> float:
    """Anderson & Bjoerck (1973): an end kept twice counts less by how much the moved end's
    residual shrank, or half (Illinois) where it did not shrink."""
    shrink = 1.0 - new / old if old else 0.0
    return shrink if 0.0 < shrink < 1.0 else 0.5


def bounded_chain_by_scaling(
    users: int, think: float, rate: np.ndarray, bound: float, scv: float = 1.0
) -> tuple[ChainResult, np.ndarray]:
    """`bounded_chain` by proportional steps c <- c x bound / X(c) (before issue 24 item 6:
    the reference bench/whatif.py measures against)."""
    chain = closed_chain(users, think, rate, scv)
    for _ in range(50):
        if chain.throughput <= bound * (1.0 + 1e-9):
            break
        rate = rate * (bound / chain.throughput)
        chain = closed_chain(users, think, rate, scv)
    return chain, rate


_CUT, _CUT_MARGIN = 60.0, 16
_TINY = 1e-150  # rates this far below the fastest: the phase chain is not asked


def _phase_chain(
    up: np.ndarray, speed: np.ndarray, ph: PhaseType, first: int = 1
) -> np.ndarray | None:
    """Level probabilities P(n), n = 0..L, of the quasi-birth-death chain of customers in
    front of a server whose completions are phase-type: arrivals at rate up[n] (n < L,
    the phase unchanged), the service clock running through ph at speed[n] (n >= 1; a
    completion starts the next one from alpha while customers remain) from level `first`
    (K: all work processes busy) up; below it one exponential phase, so that a class with
    no queue keeps the birth-death chain's (insensitive) distribution. Exact, by linear
    level reduction (Gaver, Jacobs & Latouche 1984; Latouche & Ramaswami 1999, ch. 10):
    censored on levels 0..n the chain's level-n block is W_n = A_n + up[n] (-W_{n+1})^-1
    D_{n+1}, and pi_{n+1} = up[n] pi_n (-W_{n+1})^-1. A completion's block D is speed t
    alpha (rank one) and from level n + 1 the chain comes down for certain, so
    (-W_{n+1})^-1 D_{n+1} = 1 alpha exactly (G = 1 alpha) and W_n = speed[n] T -
    up[n] (I - 1 alpha): no downward recursion (whose rounding grows geometrically where
    arrivals outpace completions), every level's block inverted in one call. Row vectors
    are rescaled as they go (logs kept): thousands of users."""
    levels = len(speed) - 1
    if levels == 0:
        return np.ones(1)
    # The distribution does not depend on the unit of time: rates in units of the fastest.
    unit = max(float(up.max()), float(speed.max()))
    up, speed = up / unit, speed / unit
    if speed[1:].min() < _TINY or up.min() < _TINY:
        return None  # a level no chain of doubles resolves (the caller's fallback)
    lam = np.append(up, 0.0)[1:]  # up[n] at level n = 1..L (none at the top)
    first = min(max(first, 1), levels)
    # Below `first` one phase: the birth-death chain's own ratios up[n-1] / speed[n].
    log_p = np.full(levels + 1, -np.inf)
    log_p[:first] = np.concatenate(
        ([0.0], np.cumsum(np.log(up[: first - 1]) - np.log(speed[1:first])))
    )
    inv = _censored_inverses(lam[first - 1 :], speed[first:], ph)
    totals = _level_totals(up[first - 1] * (ph.alpha @ inv[0]), inv)
    steps = np.log(totals)
    steps[1:] += np.log(up[first : first + len(totals) - 1])
    log_p[first : first + len(totals)] = log_p[first - 1] + np.cumsum(steps)
    p = np.exp(log_p - log_p.max())
    return p / p.sum()


def _level_totals(pi: np.ndarray, inv: np.ndarray) -> np.ndarray:
    """The levels' masses (each relative to the level below, before its arrival rate) of
    pi_{n+1} = pi_n inv[n + 1], pi rescaled to sum 1 at each level; stops at a level of no
    mass. Two phases (an SCV of 1/2 to 1 or above 1) in plain floats: the level loop is
    the chain's cost and numpy's per-call overhead is most of it at this size."""
    out = []
    if len(pi) == 2:
        a, b = float(pi[0]), float(pi[1])
        for m00, m01, m10, m11 in inv.reshape(len(inv), 4).tolist()[1:]:
            t = a + b
            if t <= 0.0:
                break
            out.append(t)
            a, b = a / t, b / t
            a, b = a * m00 + b * m10, a * m01 + b * m11
        else:
            if a + b > 0.0:
                out.append(a + b)
        return np.array(out)
    for n in range(len(inv)):
        if n:
            pi = pi @ inv[n]
        t = float(pi.sum())
        if t <= 0.0:
            break
        out.append(t)
        pi = pi / t
    return np.array(out)


def _censored_inverses(lam: np.ndarray, speed: np.ndarray, ph: PhaseType) -> np.ndarray:
    """(-W)^-1 of each level, W = speed T - lam (I - 1 alpha) (`_phase_chain`), without
    the cancellation of inverting it directly (where arrivals outpace completions by
    lam / speed, -W is near singular to the power of the phases). With A = lam I - speed T
    (a nonsingular M-matrix, its inverse nonnegative), Sherman-Morrison gives
    (A - lam 1 alpha)^-1 = A^-1 + lam A^-1 1 alpha A^-1 / (1 - lam alpha A^-1 1), and
    A 1 = lam 1 + speed t makes the denominator speed alpha A^-1 t: every term a sum of
    nonnegative ones."""
    r = len(ph.alpha)
    a_inv = np.linalg.inv(lam[:, None, None] * np.eye(r) - speed[:, None, None] * ph.t)
    row = ph.alpha @ a_inv  # [level, phase]: alpha A^-1
    col = a_inv.sum(axis=2)  # A^-1 1
    denom = speed * (row @ ph.exit)
    return a_inv + (lam / denom)[:, None, None] * col[:, :, None] * row[:, None, :]


def _open_phase_chain(arrival_rate: float, rate: np.ndarray, ph: PhaseType) -> ChainResult:
    """`open_chain` with phase-type completions. Above K the chain is the M/PH/1 queue at
    X(K): level independent, its levels' probabilities pi_{n+1} = pi_n R with Neuts's rate
    matrix, explicit because a completion's block is rank one (G = 1 alpha):
    R = lambda (lambda I - lambda 1 alpha - S)^-1, S = X(K) T (Latouche & Ramaswami 1999,
    sec. 6.4 and 8.2); (-W)^-1 of those levels is R / lambda. Below K one exponential
    phase (the birth-death ratios), level K entered from K - 1 in alpha, as in
    `_phase_chain`. The tail's mass and mean queue are its geometric sums;
    the arrivals' distribution (PASTA) is spelt out to where it holds < 1e-9."""
    k_max = len(rate) - 1
    lam, r = arrival_rate, len(ph.alpha)
    alpha, eye = ph.alpha, np.eye(r)
    inv = _censored_inverses(np.full(1, lam), rate[-1:], ph)[0]  # levels >= K alike
    rm = lam * inv  # Neuts's R of the levels above K
    # Levels below K: the birth-death chain's ratios; level K entered from K - 1 in alpha.
    head = np.concatenate(([1.0], np.cumprod(lam / rate[1:k_max])))
    pi = lam * head[-1] * (alpha @ inv)
    head = np.append(head, pi.sum())
    # Tail levels K + m, m >= 1: pi_K R^m.
    inv_i = np.linalg.inv(eye - rm)
    tail_mass = float(pi @ rm @ inv_i @ np.ones(r))
    queue = float(pi @ rm @ inv_i @ inv_i @ np.ones(r))
    total = head.sum() + tail_mass
    p = head / total
    tail_mass /= total
    queue /= total

    n = np.arange(k_max + 1)
    return ChainResult(
        throughput=arrival_rate,
        mean_in_system=float(np.dot(n, p)) + tail_mass * k_max + queue,
        mean_queue=queue,
        busy=_busy(p, k_max, tail_mass),
        # Computed when asked (the histograms), not in every sweep; a partial of a module
        # function, not a closure, so that the result pickles as it did when eager.
        arrivals=functools.partial(_open_arrivals, p, pi / total, rm),
    )


def _open_arrivals(p: np.ndarray, level_k: np.ndarray, rm: np.ndarray) -> np.ndarray:
    """`_open_phase_chain`'s arrival distribution (PASTA): the levels up to K, then the
    tail's masses pi_K R^m 1 spelt out to where they hold < 1e-9 of level K's."""
    out = np.concatenate((p, _tail_masses(level_k, rm, 1e-9 * max(p[-1], 1e-300))))
    return out / out.sum()


_TAIL_BLOCK = 256


def _tail_masses(v: np.ndarray, rm: np.ndarray, floor: float) -> np.ndarray:
    """Masses v R^m 1, m = 1, 2, ..., through the first below `floor` (at most 100,000, as
    the birth-death chain's tail), a block of _TAIL_BLOCK levels per array operation with
    R^1..R^B computed once (near rho = 1 the tail runs to the cap: one level at a time it
    took 0.3 s a chain). Where R diagonalises well (R = V diag(eta) V^-1, the usual case)
    the masses are sum_i (v V)_i (V^-1 1)_i eta_i^m, all levels in one array operation."""
    eta, vec = np.linalg.eig(rm)
    real = not np.iscomplexobj(eta) or not np.abs(eta.imag).any()
    if real and np.linalg.cond(vec) < 1e6 and np.abs(eta).max() < 1.0:
        eta, vec = np.real(eta), np.real(vec)
        coef = (v @ vec) * np.linalg.solve(vec, np.ones(len(v)))
        top = float(np.abs(eta).max())
        lead = float(np.abs(coef).sum())
        need = 100_000
        if top > 0.0 and lead > 0.0 and floor < lead:
            need = min(need, math.ceil(math.log(floor / lead) / math.log(top)) + 2)
        m = np.arange(1.0, max(need, 1) + 1.0)  # levels above K
        masses = np.zeros(len(m))
        for c, e in zip(coef, eta, strict=True):
            if c != 0.0 and e != 0.0:
                # Only while the term matters (a fast root underflows into denormals,
                # which cost a hundredfold).
                size = len(m)
                if abs(e) < 1.0 and floor > 0.0:
                    keep = math.log(floor * 1e-6 / abs(c)) / math.log(abs(e))
                    size = min(size, max(1, math.ceil(keep)))
                term = c * np.exp(m[:size] * math.log(abs(e)))  # |e|^m, m = 1, 2, ...
                if e < 0:
                    term[::2] = -term[::2]  # m = 1, 3, ...: odd powers of a negative root
                masses[:size] += term
        low = np.nonzero((masses < floor) | (masses <= 0.0))[0]
        return masses[: low[0] + 1] if low.size else masses
    powers = np.empty((_TAIL_BLOCK, *rm.shape))
    powers[0] = rm
    for k in range(1, _TAIL_BLOCK):
        powers[k] = powers[k - 1] @ rm
    out = []
    size = 0
    while size < 100_000:
        masses = (v @ powers).sum(axis=1)  # [level in block]
        low = np.nonzero((masses < floor) | (masses <= 0.0))[0]
        if low.size:
            out.append(masses[: low[0] + 1])
            break
        out.append(masses)
        size += _TAIL_BLOCK
        v = v @ powers[-1]
    return np.concatenate(out)[:100_000] if out else np.zeros(0)
