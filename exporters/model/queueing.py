"""Exact results the solver is built from.

- A single-class closed product-form network of load-dependent stations, solved exactly by
  convolution (Buzen) in log space so that populations of thousands neither overflow nor
  underflow. Stations are pure delays or queues of m servers (processor sharing or FCFS with
  exponential service, which share the product form), optionally several identical copies
  (a disk array) and optionally a background population of other customers sharing them.
- Birth-death chains: the closed chain of N users in front of a load-dependent server (a
  flow-equivalent server), and the open chain of a Poisson stream in front of one; with a
  holding time other than exponential, quasi-birth-death chains over (customers, phase)
  whose completions at full concurrency are phase-type (two-moment fit, Tijms 2003),
  solved exactly by linear level reduction (Latouche & Ramaswami 1999).

Textbook results: Buzen (1973); Lazowska et al., Quantitative System Performance (1984),
ch. 8 (load-dependent stations, flow-equivalent servers) and ch. 9 (memory constraints).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Station:
    """One station as one class sees it.

    demand: the class's mean service demand per step over all copies (seconds).
    servers: per copy (0 for a pure delay). copies: identical stations visited evenly.
    background: mean number of other classes' customers at the station, over all copies,
    taken as always present.
    stream_load, stream_cap: other classes taken as an open Poisson stream instead: their
    offered load (busy-server equivalents, X x demand, over all copies) and the most of
    them that can be present (their work processes). The class then meets a random number
    of them, as in a mixed product-form network (Lazowska et al. 1984, ch. 7), not a fixed
    mean: a stream that is mostly absent slows the class less than its mean would.
    shadow_away, shadow_along: work tied to the class's own customers instead of an
    independent stream (an update, born as its dialog step leaves the CPU for the disks,
    runs here while its step is away and, if it lasts, after the step is back): with n of
    k own customers here, shadow_away x (k - n) + shadow_along x n such jobs are present
    (one copy only). It follows the customers: when they crowd the station it is mostly
    with them, when they are away it is not in their way.
    """

    demand: float
    servers: int = 1
    copies: int = 1
    background: float = 0.0
    stream_load: float = 0.0
    stream_cap: int = 0
    shadow_away: float = 0.0
    shadow_along: float = 0.0


@functools.lru_cache(maxsize=64)
def _log_factorials(n: int) -> np.ndarray:
    """log k!, k = 0..n (cached: a solve asks for the same few lengths thousands of times;
    read-only so that no caller can change the cached copy)."""
    out = np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, n + 1, dtype=float)))))
    out.flags.writeable = False
    return out


def log_station_function(st: Station, k_max: int) -> np.ndarray:
    """log f(n), n = 0..k_max: the station's factor in the product form at n own customers
    (with a shadow: for a population of exactly k_max)."""
    n = np.arange(k_max + 1, dtype=float)
    out = np.full(k_max + 1, -np.inf)
    out[0] = 0.0
    if st.demand <= 0.0:
        return out
    if st.servers <= 0:  # delay: D^n / n!
        return n * math.log(st.demand) - _log_factorials(k_max)
    if st.shadow_away > 0.0 or st.shadow_along > 0.0:
        return _log_shadowed_function(st, k_max)
    d = st.demand / st.copies
    b = st.background / st.copies
    if st.stream_load > 0.0 and st.stream_cap > 0:
        one = _log_mixed_function(
            d, b, st.stream_load / st.copies, st.stream_cap, st.servers, k_max
        )
        return _log_power(one, st.copies)
    j = n[1:]
    if st.servers == 1:
        # Processor sharing with b others present: rate n / ((n + b) d), so
        # f(n) = d^n (b+1)_n / n!; r such copies convolve to d^n (r(b+1))_n / n!.
        a = st.copies * (b + 1.0)
        out[1:] = np.cumsum(math.log(d) + np.log((a + j - 1.0) / j))
        return out
    # m servers shared with b others: rate (n / d) min(1, m / (n + b)).
    one = np.concatenate(
        ([0.0], np.cumsum(math.log(d) + np.log(np.maximum(1.0, (j + b) / st.servers)) - np.log(j)))
    )
    return _log_power(one, st.copies)


def _streamed(st: Station) -> bool:
    """Whether `log_station_function` takes the station as `_log_mixed_function`."""
    return (
        st.demand > 0.0
        and st.servers > 0
        and not _shadowed(st)
        and st.stream_load > 0.0
        and st.stream_cap > 0
    )


def log_station_functions(stations: list[Station], k_max: int) -> list[np.ndarray]:
    """`log_station_function` of each station, the stream sums of those shared with a
    stream (`_log_mixed_function`) in one array operation where their caps agree (the
    solver's: every station meets the same update work processes): four calls of a dozen
    numpy operations each per class network were a sixth of a sweep. The same numbers:
    each row of the joint table is computed as in its own call."""
    streamed = [s for s, st in enumerate(stations) if _streamed(st)]
    caps = {min(stations[s].stream_cap, STREAM_COUNT_LIMIT) for s in streamed}
    if len(streamed) < 2 or len(caps) > 1:
        return [log_station_function(st, k_max) for st in stations]
    size = k_max + 1
    n = np.arange(size)
    per = np.array([stations[s].copies for s in streamed], dtype=float)
    b = np.array([stations[s].background for s in streamed]) / per
    a = np.array([stations[s].stream_load for s in streamed]) / per
    m = np.array([stations[s].servers for s in streamed], dtype=float)
    sums = _log_stream_sums(
        (n[None, :] + b[:, None]).ravel(), np.repeat(a, size), np.repeat(m, size), caps.pop()
    )
    if sums is None:  # one overflowed: each on its own (log space where it must)
        return [log_station_function(st, k_max) for st in stations]
    sums = sums.reshape(len(streamed), size)
    out = []
    for s, st in enumerate(stations):
        if s in streamed:
            row = streamed.index(s)
            d = st.demand / st.copies
            one = _log_mixed_from_sums(d, float(b[row]), st.servers, k_max, sums[row])
            out.append(_log_power(one, st.copies))
        else:
            out.append(log_station_function(st, k_max))
    return out


def _log_power(one: np.ndarray, copies: int) -> np.ndarray:
    """log of the copies-fold convolution of exp(one) (identical copies of a station), by
    repeated squaring: about 2 log2(copies) convolutions instead of copies - 1 (a disk
    array of 56 took 55 per class and sweep). Two entries (one customer, an update class
    with one work process): the r-fold convolution is (e^{r a0}, r e^{(r-1) a0} e^{a1})
    outright."""
    if len(one) == 2 and copies > 1:
        return np.array([copies * one[0], math.log(copies) + (copies - 1) * one[0] + one[1]])
    out = None
    power = one
    while copies:
        if copies & 1:
            out = power if out is None else log_convolve(out, power)
        copies >>= 1
        if copies:
            power = log_convolve(power, power)
    return out


# The stream's count is summed up to this many present at most: a stream below the station's
# capacity has long lost all weight there (its count falls off geometrically), and one above
# it is cut there, so that a landscape of many instances cannot ask for a huge table.
STREAM_COUNT_LIMIT = 2_000


def _log_mixed_function(d: float, b: float, a: float, cap: int, m: int, k_max: int) -> np.ndarray:
    """log f(n) of one copy of m servers (processor sharing; with b fixed others present, a
    total of t explicit customers is served at rate t min(1, m / (t + b))) shared with an
    open class of offered load a, at most cap of it present. The station's product-form
    factor for n own and u stream customers is C(n + u, n) d^n a^u Phi(n + u), Phi the
    product of 1 / rate; summed over u and divided by the stream's own sum: with
    Phi(n + u) = Phi(n) prod_{v <= u} 1 / rate(n + v) that is d^n Phi(n) S(n + b) / S(b)
    (`_log_stream_sums`), or the [n, u] table summed in log space where S overflows."""
    cap = min(cap, STREAM_COUNT_LIMIT)
    sums = _log_stream_sums(np.arange(k_max + 1) + b, a, m, cap)
    if sums is None:
        return _log_mixed_by_logs(d, b, a, cap, m, k_max)
    return _log_mixed_from_sums(d, b, m, k_max, sums)


def _log_mixed_from_sums(d: float, b: float, m: int, k_max: int, sums: np.ndarray) -> np.ndarray:
    """`_log_mixed_function` from its stream sums log S(n + b), n = 0..k_max."""
    t = np.arange(1, k_max + 1, dtype=float)
    log_phi = np.concatenate(([0.0], np.cumsum(-np.log(t * np.minimum(1.0, m / (t + b))))))
    return np.arange(k_max + 1) * math.log(d) + log_phi + (sums - sums[0])


def _log_mixed_by_logs(d: float, b: float, a: float, cap: int, m: int, k_max: int) -> np.ndarray:
    """`_log_mixed_function` by the [n, u] table of log C(n + u, n) + u log a + log Phi(n +
    u), summed row by row in log space (before issue 24 item 6; now where the linear sums
    overflow)."""
    t = np.arange(1, k_max + cap + 1, dtype=float)
    log_phi = np.concatenate(([0.0], np.cumsum(-np.log(t * np.minimum(1.0, m / (t + b))))))
    at, binomial, u = _mixed_terms(k_max, cap)
    terms = binomial + u * math.log(a) + log_phi[at]
    alone = terms[0]
    norm = float(np.max(alone) + np.log(np.exp(alone - np.max(alone)).sum()))
    return np.arange(k_max + 1) * math.log(d) + _logsumexp_rows(terms) - norm


@functools.lru_cache(maxsize=32)
def _mixed_terms(k_max: int, cap: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For `_log_mixed_by_logs`: n + u, log C(n + u, n) and u of its [n, u] table, which
    depend on the sizes only (cached, read-only)."""
    n = np.arange(k_max + 1)[:, None]
    u = np.arange(cap + 1)[None, :]
    lf = _log_factorials(k_max + cap)
    out = (n + u, lf[n + u] - lf[n] - lf[u], u)
    for x in out:
        x.flags.writeable = False
    return out


def _log_stream_sums(
    base: np.ndarray, a: float | np.ndarray, m: int | np.ndarray, cap: int
) -> np.ndarray | None:
    """log S(base) for each entry, S(c) = sum_{u=0..cap} prod_{v=1..u} (a / v) max(1,
    (c + v) / m): an open stream of load a, at most cap present, over c customers already
    at m processor-sharing servers (the u-th stream customer's term of the mixed product
    form over the (u-1)-th's, C(n+u, n) / C(n+u-1, n) a / rate(n + u), rate(t) = t min(1,
    m / (t + extra)), c = n + extra). Summed in linear space: every term is positive and
    the ratio falls with v (a / v and a (c + v) / (v m) both fall), so the terms rise to
    one peak and fall, those lost to underflow lie past the peak below 1e-308 of a sum of
    at least 1 (term 0): exact to rounding (a product of u ratios: u roundings, where the
    log-space sums it replaced rounded sums of logs as large as the terms' exponents), and
    a few array operations where the log-space table's were most of a class's network
    (`_log_shadowed_table`). None where a sum passes 1e300 (a stream far above its
    servers with a large cap): the callers then sum in log space as before. a and m may
    be given per entry (`log_station_functions`: several stations' rows at once; each
    row's numbers are those of its own call)."""
    v = np.arange(1.0, cap + 1.0)
    if isinstance(a, np.ndarray):
        a, m = a[:, None], m[:, None]
    ratio = (a / v) * np.maximum(1.0, (base[:, None] + v) / m)
    with np.errstate(over="ignore"):
        total = 1.0 + np.cumprod(ratio, axis=1).sum(axis=1)
    return np.log(total) if np.all(total < 1e300) else None


def _log_shadowed_function(st: Station, k: int, shares: np.ndarray | None = None) -> np.ndarray:
    """log f(n), n = 0..k, of one copy of m servers shared with b fixed others, an open
    stream (load a, at most cap present) and the own customers' shadows, p of each of the
    k - n away and q of each of the n here. The own customers' rate with j present is
    (j / d) times their mean share of a server over the shadows (`_shadowed_share`); the
    stream's customers on top of n own meet the shadows' mean of that state."""
    d, b, m = st.demand, st.background, st.servers
    p, q = st.shadow_away, st.shadow_along
    cap = min(st.stream_cap, STREAM_COUNT_LIMIT) if st.stream_load > 0.0 else 0
    n = np.arange(k + 1, dtype=float)
    j = n[1:]
    if shares is None:
        share = _shadowed_shares(k, b, m, p, q)
    else:  # from `shadowed_share_table`: j own here, k - j away
        share = shares[np.arange(1, k + 1), k - np.arange(1, k + 1)]
    own = np.concatenate(([0.0], np.cumsum(-np.log(j * share))))
    if cap == 0:
        return n * math.log(d) + own
    t = np.arange(1, k + cap + 1, dtype=float)
    # -log rate of the t-th customer present over n own, row n (stream part only used).
    extra = b + p * (k - n[:, None]) + q * n[:, None]
    per_t = -np.log(t[None, :] * np.minimum(1.0, m / (t[None, :] + extra)))
    cum = np.concatenate((np.zeros((k + 1, 1)), np.cumsum(per_t, axis=1)), axis=1)
    lf = _log_factorials(k + cap)
    ni = np.arange(k + 1)[:, None]
    u = np.arange(cap + 1)[None, :]
    stream = cum[ni, ni + u] - cum[ni, ni]
    terms = lf[ni + u] - lf[ni] - lf[u] + u * math.log(st.stream_load) + stream
    # Divided, row by row, by the stream's own sum among the same shadows: what the stream
    # does to the own customers, not how the shadows slow the stream.
    alone = _logsumexp_rows(u * math.log(st.stream_load) + cum[:, : cap + 1])
    return n * math.log(d) + own + _logsumexp_rows(terms) - alone


def _shadowed_share(j: int, b: float, m: int, p: float, q: float, k: int) -> float:
    """Mean share of a server each of j own customers gets, min(1, m / (j + b + S + A)),
    over the shadows present: S ~ Binomial(k - j, p) of the customers away (at most one
    each), A ~ Poisson(q j) beside the ones here. They come and go, so they slow the own
    customers by their distribution, not as their mean always present."""
    if q == 0.0 and k + b <= m:
        return 1.0  # never more present than servers
    s = np.arange(k - j + 1)
    lf = _log_factorials(k - j)
    away = np.exp(lf[-1] - lf - lf[::-1]) * (p**s * (1.0 - p) ** (k - j - s))
    lam = q * j
    top = int(lam + 10.0 * math.sqrt(lam) + 20.0)
    a = np.arange(top + 1)
    along = np.exp(a * math.log(lam) - _log_factorials(top) - lam) if lam > 0 else (a == 0) * 1.0
    pmf = np.convolve(away, along)
    present = j + b + np.arange(pmf.size)
    return float(pmf @ np.minimum(1.0, m / present))


def shadowed_share_table(k_max: int, b: float, m: int, p: float, q: float) -> np.ndarray:
    """share[j, r]: `_shadowed_share` of j own customers present with r away, for every
    j, r <= k_max at once. The shadows of the r away are Binomial(r, p) whatever the
    population, so h[j, t] = E over the Poisson(q j) beside the j of min(1, m / (j + b + t
    + A)) is computed once and share = h B^T, B[r, s] = P(Binomial(r, p) = s)."""
    size = k_max + 1
    if q == 0.0 and k_max + b <= m:
        return np.ones((size, size))
    j = np.arange(size)
    lf = _log_factorials(k_max)
    r, sh = j[:, None], j[None, :]
    valid = sh <= r
    log_choose = np.where(valid, lf[r] - lf[sh] - lf[np.maximum(r - sh, 0)], 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        binom = np.where(
            valid, np.exp(log_choose) * p**sh * (1.0 - p) ** np.maximum(r - sh, 0), 0.0
        )
    lam = q * j
    top = int(lam[-1] + 10.0 * math.sqrt(lam[-1]) + 20.0)
    a = np.arange(top + 1)
    if q > 0.0:
        with np.errstate(divide="ignore", invalid="ignore"):
            along = np.exp(
                a[None, :] * np.log(lam)[:, None] - _log_factorials(top)[None, :] - lam[:, None]
            )
        along[0] = a == 0
    else:
        along = np.broadcast_to((a == 0) * 1.0, (size, top + 1))
    present = np.maximum(j[:, None, None] + b + j[None, :, None] + a[None, None, :], 1e-300)
    h = np.einsum("ja,jta->jt", along, np.minimum(1.0, m / present))
    return h @ binom.T


def _shadowed_shares(k: int, b: float, m: int, p: float, q: float) -> np.ndarray:
    """`_shadowed_share` for every j = 1..k at once (one array operation instead of k
    calls: the solver asks for it at every population of every class in every sweep)."""
    if k <= 0:
        return np.zeros(0)
    if q == 0.0 and k + b <= m:
        return np.ones(k)
    j = np.arange(1, k + 1)
    s = np.arange(k)  # shadows of the ones away: at most k - j <= k - 1
    lf = _log_factorials(k)
    away_n = (k - j)[:, None]
    valid = s[None, :] <= away_n
    log_choose = np.where(valid, lf[away_n] - lf[s[None, :]] - lf[np.maximum(away_n - s, 0)], 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        away = np.where(
            valid,
            np.exp(log_choose) * p ** s[None, :] * (1.0 - p) ** np.maximum(away_n - s, 0),
            0.0,
        )
    lam = q * j
    top = int(lam[-1] + 10.0 * math.sqrt(lam[-1]) + 20.0)
    a = np.arange(top + 1)
    if q > 0.0:
        along = np.exp(
            a[None, :] * np.log(lam)[:, None] - _log_factorials(top)[None, :] - lam[:, None]
        )
    else:
        along = np.broadcast_to((a == 0) * 1.0, (k, top + 1))
    present = j[:, None, None] + b + s[None, :, None] + a[None, None, :]
    served = np.minimum(1.0, m / present)
    return np.einsum("js,ja,jsa->j", away, along, served)


@functools.lru_cache(maxsize=64)
def _pairs(k_max: int) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (n, k - n) of a truncated convolution, -1 where n > k (cached, read-only)."""
    k = np.arange(k_max + 1)
    other = k[:, None] - k[None, :]
    index, valid = np.where(other >= 0, other, -1), other >= 0
    index.flags.writeable = valid.flags.writeable = False
    return index, valid


def _logsumexp_rows(v: np.ndarray) -> np.ndarray:
    """log sum exp of each row; -inf for a row of -inf (its sum is 0: no rows picked out)."""
    m = v.max(axis=1)
    top = np.where(m > -np.inf, m, 0.0)
    total = np.exp(v - top[:, None]).sum(axis=1)
    return top + np.log(total, out=np.full(len(total), -np.inf), where=total > 0.0)


# A convolution's bins computed in linear space are kept where they reach this (scaled to
# its inputs' largest terms, 1): the terms lost to underflow there are below 1e-308 each,
# at most a few thousand of them, so below 1e-24 of the bin.
_LINEAR_FLOOR = 1e-280


def log_convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """log of the convolution of exp(a) and exp(b), truncated to len(a). In linear space,
    each input scaled to its largest term (np.convolve: the numpy calls of the log-space
    sum over a [K, K] table were most of a class's network at tens of work processes); the
    terms are all positive, so the sums are exact to rounding unless underflow took
    their weight: any bin below _LINEAR_FLOOR (or an input with no weight) is summed
    in log space instead (`_log_convolve_logs`), the same terms."""
    ma, mb = a.max(), b.max()
    if ma > -np.inf and mb > -np.inf:
        out = np.convolve(np.exp(a - ma), np.exp(b - mb))[: len(a)]  # underflow: silent
        if out.min() >= _LINEAR_FLOOR:
            return np.log(out) + (ma + mb)
    return _log_convolve_logs(a, b)


def _log_convolve_logs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`log_convolve` summed in log space: bins of no weight are -inf."""
    other, valid = _pairs(len(a) - 1)
    v = np.where(valid, a[None, :] + b[other], -np.inf)
    return _logsumexp_rows(v)


@dataclass(frozen=True)
class NetworkResult:
    """A single-class closed network at every population k = 0..K."""

    throughput: np.ndarray  # [k]
    queue: np.ndarray  # [station, k]: mean customers at the station (all copies)


def _shadowed(st: Station) -> bool:
    return st.shadow_away > 0.0 or st.shadow_along > 0.0


def closed_network(stations: list[Station], k_max: int) -> NetworkResult:
    """Exact throughput and queue lengths of a product-form network for k = 0..k_max. A
    station with a shadow has a factor that depends on the population too: then each
    population is its own network (its factors are still local, so still product form).
    With one such station (the solver's case: the instance's own host) the others are
    convolved once for every population (`_one_shadowed`); `closed_network_by_population`
    solves each population from scratch, the reference the fast path is tested against."""
    shadowed = [s for s, st in enumerate(stations) if _shadowed(st)]
    if not shadowed:
        return _closed_network(log_station_functions(stations, k_max), k_max)
    if len(shadowed) == 1:
        return _one_shadowed(stations, shadowed[0], k_max)
    return closed_network_by_population(stations, k_max)


def _one_shadowed(stations: list[Station], sh: int, k_max: int) -> NetworkResult:
    """Population k's network is the shadowed station's factor f_k convolved with F, the
    convolution of all the others, which does not depend on k:
      G_k(n) = sum_j f_k(j) F(n - j),  X(k) = G_k(k - 1) / G_k(k),
      queue_s(k) = sum_j f_k(j) H_s(k - j) / G_k(k),  H_s = (n f_s) * F_without_s,
    so F, each F_without_s and H_s are convolved once, and each population costs dot
    products of length k (exact: the same sums as `closed_network_by_population`)."""
    fixed = log_station_functions([st for s, st in enumerate(stations) if s != sh], k_max)
    idx = [s for s in range(len(stations)) if s != sh]
    unit = np.full(k_max + 1, -np.inf)
    unit[0] = 0.0
    prefix = [unit]
    for lf in fixed:
        prefix.append(log_convolve(prefix[-1], lf))
    suffix = [unit]
    for lf in reversed(fixed):
        suffix.append(log_convolve(suffix[-1], lf))
    suffix.reverse()
    log_f_all = prefix[-1]
    n = np.arange(k_max + 1, dtype=float)
    with np.errstate(divide="ignore"):
        log_n = np.log(n)
    # H_s(0) = 0 (n f_s(n) at n = 0): convolved from n = 1, where every bin has weight
    # (`log_convolve` in linear space), and shifted up by one.
    log_h = np.full((len(fixed), k_max + 1), -np.inf)
    for s, lf in enumerate(fixed):
        rest = log_convolve(prefix[s], suffix[s + 1])
        log_h[s, 1:] = log_convolve(log_n[1:] + lf[1:], rest[:-1])
    throughput = np.zeros(k_max + 1)
    queue = np.zeros((len(stations), k_max + 1))
    st = stations[sh]
    shares = shadowed_share_table(k_max, st.background, st.servers, st.shadow_away, st.shadow_along)
    f = _log_shadowed_table(st, k_max, shares)  # [k, j]: f_k(j), -inf beyond j = k
    k = np.arange(k_max + 1)
    rev = k[:, None] - k[None, :]  # k - j
    valid = rev >= 0
    rev = np.where(valid, rev, 0)
    with_f = np.where(valid, f + log_f_all[rev], -np.inf)
    log_g = _logsumexp_rows(with_f)
    prev = np.where(valid & (rev >= 1), f + log_f_all[np.maximum(rev - 1, 0)], -np.inf)
    throughput[1:] = np.exp(_logsumexp_rows(prev)[1:] - log_g[1:])
    queue[sh, 1:] = np.exp(_logsumexp_rows(with_f + log_n[None, :])[1:] - log_g[1:])
    for row, s in enumerate(idx):
        terms = np.where(valid, f + log_h[row][rev], -np.inf)
        queue[s, 1:] = np.exp(_logsumexp_rows(terms)[1:] - log_g[1:])
    return NetworkResult(throughput=throughput, queue=queue)


# Cells held at once when the shadowed factors of every population are computed together
# (8 MB of floats: each pair (population, own customers) twice, by the stream's count); a
# larger network goes population by population.
_TABLE_CELLS = 1_000_000


def _log_shadowed_table(st: Station, k_max: int, shares: np.ndarray) -> np.ndarray:
    """[k, n]: log f_k(n) of the shadowed station for every population k = 0..k_max (row k
    as `_log_shadowed_function(st, k)`, -inf for n > k), all populations in one array
    operation where that fits in _TABLE_CELLS."""
    size = k_max + 1
    out = np.full((size, size), -np.inf)
    out[:, 0] = 0.0
    if st.demand <= 0.0 or st.servers <= 0:
        for k in range(1, size):
            out[k, : k + 1] = log_station_function(st, k)
        return out
    cap = min(st.stream_cap, STREAM_COUNT_LIMIT) if st.stream_load > 0.0 else 0
    if cap > 0 and size * (size + 1) * cap > _TABLE_CELLS:
        for k in range(1, size):
            out[k, : k + 1] = _log_shadowed_function(st, k, shares)
        return out
    k = np.arange(size)[:, None]
    n = np.arange(size)[None, :]
    here = n <= k
    share = np.where(here & (n >= 1), shares[n, np.maximum(k - n, 0)], 1.0)
    own = np.cumsum(np.where(n >= 1, -np.log(np.maximum(n, 1) * share), 0.0), axis=1)
    body = n * math.log(st.demand) + own
    if cap > 0:
        # Only the cells n <= k are asked for: a pair (k, n) meets extra = b + p (k - n)
        # + q n fixed others, the stream's sum over the n own is S(n + extra) and alone
        # S(extra) (`_log_stream_sums`, both in one call).
        pk, pn = _lower_pairs(k_max)
        extra = st.background + st.shadow_away * (pk - pn) + st.shadow_along * pn
        sums = _log_stream_sums(
            np.concatenate((pn + extra, extra)), st.stream_load, st.servers, cap
        )
        if sums is None:  # overflowed: each population's factor in log space
            for k in range(1, size):
                out[k, : k + 1] = _log_shadowed_function(st, k, shares)
            return out
        body[pk, pn] += sums[: len(pk)] - sums[len(pk) :]
    return np.where(here, body, -np.inf)


@functools.lru_cache(maxsize=16)
def _lower_pairs(k_max: int) -> tuple[np.ndarray, np.ndarray]:
    """For `_log_shadowed_table`: the pairs (k, n), n <= k (cached, read-only)."""
    out = np.tril_indices(k_max + 1)
    for a in out:
        a.flags.writeable = False
    return out


def closed_network_by_population(stations: list[Station], k_max: int) -> NetworkResult:
    """Every population k solved as its own network (the reference path)."""
    fixed = [log_station_function(st, k_max) for st in stations]
    throughput = np.zeros(k_max + 1)
    queue = np.zeros((len(stations), k_max + 1))
    for k in range(1, k_max + 1):
        logs = [
            log_station_function(st, k)
            if st.shadow_away > 0.0 or st.shadow_along > 0.0
            else lf[: k + 1]
            for st, lf in zip(stations, fixed, strict=True)
        ]
        net = _closed_network(logs, k)
        throughput[k], queue[:, k] = net.throughput[k], net.queue[:, k]
    return NetworkResult(throughput=throughput, queue=queue)


def _closed_network(logs: list[np.ndarray], k_max: int) -> NetworkResult:
    if k_max == 1:
        return _one_customer(logs)
    unit = np.full(k_max + 1, -np.inf)
    unit[0] = 0.0
    prefix = [unit]
    for lf in logs:
        prefix.append(log_convolve(prefix[-1], lf))
    suffix = [unit]
    for lf in reversed(logs):
        suffix.append(log_convolve(suffix[-1], lf))
    suffix.reverse()  # suffix[s] = stations s.. ; suffix[len] = unit
    log_g = prefix[-1]
    throughput = np.zeros(k_max + 1)
    throughput[1:] = np.exp(log_g[:-1] - log_g[1:])
    queue = np.zeros((len(logs), k_max + 1))
    other, valid = _pairs(k_max)
    n = np.arange(k_max + 1, dtype=float)
    for s, lf in enumerate(logs):
        rest = log_convolve(prefix[s], suffix[s + 1])
        # P(n at s | k) = f_s(n) G_-s(k - n) / G(k)
        w = np.where(valid, lf[None, :] + rest[other] - log_g[:, None], -np.inf)
        queue[s] = np.exp(w) @ n
    return NetworkResult(throughput=throughput, queue=queue)


def _one_customer(logs: list[np.ndarray]) -> NetworkResult:
    """One customer (an update class with one work process): G(1) = sum of f_s(1), so
    X(1) = 1 / G(1) and it is at station s with probability f_s(1) / G(1); the same sums as
    the convolutions, without them (a third of an update class's network)."""
    ones = np.array([lf[1] for lf in logs])
    top = ones.max()
    log_g = top + math.log(np.exp(ones - top).sum()) if top > -np.inf else -np.inf
    throughput = np.zeros(2)
    queue = np.zeros((len(logs), 2))
    if log_g > -np.inf:
        throughput[1] = math.exp(-log_g)
        queue[:, 1] = np.exp(ones - log_g)
    return NetworkResult(throughput=throughput, queue=queue)


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


# ------------------------------------------------------------------ phase-type holding times
_CUT, _CUT_MARGIN = 60.0, 16
_TINY = 1e-150  # rates this far below the fastest: the phase chain is not asked
# A work process's holding time is a sum of stages (CPU burst, DB calls, reads, log writes),
# less variable than the exponential a birth-death chain assumes, so the chains below take
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
