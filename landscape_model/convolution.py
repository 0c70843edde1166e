"""Single-class closed product-form networks of load-dependent stations, solved exactly.

Convolution (Buzen 1973) in log space, so that populations of thousands neither overflow nor
underflow. Stations are pure delays or queues of m servers (processor sharing or FCFS with
exponential service, which share the product form), optionally several identical copies (a
disk array) and optionally a background population of other customers sharing them (Lazowska
et al., Quantitative System Performance, 1984, ch. 8 and 9).
"""

from __future__ import annotations

import functools
import math
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
