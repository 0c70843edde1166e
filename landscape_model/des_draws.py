"""Pre-drawn random blocks for the discrete-event engine.

The event loop never calls a random generator: it takes the next row of a block drawn
here with numpy, a few thousand steps at a time (a matrix, one row per step). A row
holds everything one step will need (its CPU burst, its DB calls with their buffer-pool
hits and physical reads, its page writes, commits, enqueue requests, the user's next
think time, ...); the per-call draws stay in the block as matrices, so the ST05 and
buffer-pool counters are the sums of the rows the loop has taken, added up in batches.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from landscape_model import des_loop
from landscape_model.des_loop import (
    R_CALLS,
    R_CPU,
    R_CS,
    R_DB,
    R_ENQ,
    R_LOAD,
    R_LOG,
    R_LOG_DEVICE,
    R_PHYS,
    R_RTT,
    R_THINK,
    R_U,
    R_UPDATE,
    R_WRITES,
    ROW_FIELDS,
)
from landscape_model.des_network import Network, StepClass

BLOCK_STEPS = 4096
STREAM_SIZE = 1 << 16


def _counts(rng: np.random.Generator, mean: np.ndarray, size: int) -> np.ndarray:
    """How many times per step: the integer part always, the fraction as a coin toss
    (a step with `calls: 1` makes exactly one call; `calls: 0.4`, one in 2.5 steps)."""
    mean = np.asarray(mean, dtype=float)
    whole = np.floor(mean)
    shape = (size, *mean.shape)
    return (whole + (rng.random(shape) < (mean - whole))).astype(np.int64)


def _binomial(rng: np.random.Generator, n: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Binomial(n, p), p broadcast over the rows of n: by inversion of uniforms
    (`des_loop.binomial`, compiled), numpy's generator where n·p is large."""
    n = np.ascontiguousarray(n, dtype=np.int64)
    p = np.ascontiguousarray(np.broadcast_to(p, n.shape), dtype=float)
    out = np.empty(n.shape, dtype=np.int64)
    des_loop.binomial(n.reshape(-1), p.reshape(-1), rng.random(n.size), out.reshape(-1))
    hard = out < 0
    if hard.any():
        out[hard] = rng.binomial(n[hard], p[hard])
    return out


def _poisson(rng: np.random.Generator, lam: np.ndarray) -> np.ndarray:
    """Poisson(lam): by inversion of uniforms (`des_loop.poisson`, compiled), numpy's
    generator where lam is large."""
    lam = np.ascontiguousarray(lam, dtype=float)
    out = np.empty(lam.shape, dtype=np.int64)
    des_loop.poisson(lam.reshape(-1), rng.random(lam.size), out.reshape(-1))
    hard = out < 0
    if hard.any():
        out[hard] = rng.poisson(lam[hard])
    return out


@dataclass
class Block:
    """A block of steps of one class: the loop's rows and the per-call draws behind them."""

    cls: int
    rows: np.ndarray  # [step, R_* field]
    locks: np.ndarray  # [step, lock]: hold time (s), -1 where the step takes no such lock
    executions: np.ndarray  # [step, statement]
    # [step, group of statements sharing a data and an index pool]
    data_logical: np.ndarray
    index_logical: np.ndarray
    data_physical: np.ndarray
    index_physical: np.ndarray
    written: np.ndarray
    counted: int = 0  # rows already added to the counters

    @property
    def most_ios(self) -> int:
        """The most disk-stream draws one step of the block takes (reads, writes, enqueues)."""
        ios = self.rows[:, R_PHYS] + self.rows[:, R_WRITES] + self.rows[:, R_ENQ]
        return int(ios.max()) if ios.size else 0


def draw_block(rng: np.random.Generator, net: Network, cls: int, size: int = BLOCK_STEPS) -> Block:
    sc: StepClass = net.classes[cls]
    n_st, n_gr = sc.statements.size, sc.group_data_pool.size
    ex = _counts(rng, sc.calls, size) if n_st else np.zeros((size, 0), dtype=np.int64)
    member = np.zeros((n_st, n_gr))
    member[np.arange(n_st), sc.group] = 1.0
    # Logical reads of a step per group; each is a buffer-pool miss with the pool's ratio.
    d_log = np.rint(ex * sc.data_reads) @ member
    i_log = np.rint(ex * sc.index_reads) @ member
    d_phys = _binomial(rng, d_log, sc.group_data_miss)
    i_phys = _binomial(rng, i_log, sc.group_index_miss)
    written = _poisson(rng, (ex * sc.written_pages) @ member)
    phys = (d_phys.sum(axis=1) + i_phys.sum(axis=1)).astype(np.int64)
    calls = ex.sum(axis=1)
    demand = (
        calls * net.cpu_s_per_call
        + (d_log.sum(axis=1) + i_log.sum(axis=1)) * net.cpu_s_per_logical_read
        + phys * net.cpu_s_per_physical_read
    )
    rows = np.empty((size, ROW_FIELDS))
    rows[:, R_DB] = demand * rng.exponential(1.0, size)
    rows[:, R_CPU] = rng.exponential(sc.cpu_s, size) if sc.cpu_s > 0 else 0.0
    rows[:, R_LOAD] = rng.exponential(net.load_gen_s, size) if net.load_gen_s > 0 else 0.0
    commits = _counts(rng, sc.commits, size)
    rows[:, R_LOG] = rng.gamma(np.maximum(commits, 1), net.log_write_s) * (commits > 0)
    rows[:, R_LOG_DEVICE] = rng.integers(0, net.log_devices, size)
    locks = np.full((size, max(1, len(net.lock_names))), -1.0)
    for li, which, hold in sc.locks:
        taken = ex[:, which].sum(axis=1)
        held = rng.gamma(np.maximum(taken, 1), hold)
        locks[:, li] = np.where(taken > 0, held, -1.0)
    rows[:, R_ENQ] = _counts(rng, sc.enqueues, size)
    rows[:, R_U] = rng.random(size)
    rows[:, R_UPDATE] = rng.random(size) < sc.update_share
    rows[:, R_THINK] = rng.exponential(net.think_s, size) if net.think_s > 0 else 0.0
    rows[:, R_RTT] = calls * net.call_rtt_s
    rows[:, R_PHYS] = phys
    rows[:, R_WRITES] = written.sum(axis=1)
    rows[:, R_CALLS] = calls
    rows[:, R_CS] = 0.0
    if net.cs_station >= 0:
        # The central services' CPU on their station: the step's enqueue requests and,
        # for a dialog step, the message server's share (drawn last: the other draws are
        # those of a landscape without it).
        msg = net.message_server_cpu_s_per_step if cls < net.n_tx else 0.0
        cs = rows[:, R_ENQ] * net.enqueue_service_s + msg
        rows[:, R_CS] = cs * rng.exponential(1.0, size)
    return Block(cls, rows, locks, ex, d_log, i_log, d_phys, i_phys, written)


def class_stream(rng: np.random.Generator, mix: np.ndarray, size: int = STREAM_SIZE) -> np.ndarray:
    """Which transaction each next dialog step is, drawn from the mix (by inversion: a
    tenth of the time of `Generator.choice` with weights)."""
    cdf = np.cumsum(mix)
    picks = np.searchsorted(cdf / cdf[-1], rng.random(size), side="right")
    return np.minimum(picks, mix.size - 1).astype(np.int64)


def disk_stream(
    rng: np.random.Generator, disks: int, size: int = STREAM_SIZE
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The disk each next page I/O goes to (uniformly, as a striped LUN spreads it) and
    the time it occupies the disk in units of the device's mean (exponential); enqueue
    requests take their service times from the same stream. Also the running sum of the
    times, so the loop adds the busy time of a step's I/Os in one subtraction."""
    unit = rng.exponential(1.0, size)
    running = np.concatenate(([0.0], np.cumsum(unit)))  # busy time of a run of I/Os
    return rng.integers(0, disks, size).astype(np.int64), unit, running
