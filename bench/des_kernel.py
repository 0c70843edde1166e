"""What a compiled event loop would buy: the DES's hot path in pure Python and in numba.

Issue 24 item 5 asks for the SD hour in <= 5 s on one core; the engine takes ~27 s of CPU
and a profile of it (bench/simulate.py --profile) puts two thirds of that in the event
loop's own bytecode and most of the rest in heapq: no single hot call to vectorise. This
bench measures the one remaining lever before it is built into des.py: the same hot path
(users think; a dialog work process of their instance takes the step; the ABAP burst on
the instance's host and the DB burst on the database host, both processor sharing over
their cores with a virtual clock; the physical reads booked on consecutive disks by
Lindley's recursion; the work process freed as the answer leaves), on the SD benchmark's
shape (5,790 users, 30 instances of 24 dialog work processes on 11 eight-core hosts, a
four-core database host, 56 disks), written twice with the same pre-drawn variates:

- Python: the loop as des.py writes it (heapq of (time, code) tuples, lists per station);
- numba: the same loop on arrays (binary heaps by hand), compiled by numba's LLVM JIT,
  which installs as wheels from PyPI (no C compiler or Rust toolchain on the machine).

Both give the same steps and response time (same algorithm, same draws: checked). Prints
CPU time per simulated step of each and their ratio, and numba's first-call cost (compile,
or load from its on-disk cache on later runs). This is the measurement that chose numba
before the engine's loop was ported (landscape_model/des_loop.py; docs/model.md "Speed").
Usage: python bench/des_kernel.py [--window 300]
"""

from __future__ import annotations

import argparse
import heapq
import time
from collections import deque

import numpy as np

USERS, INSTANCES, DIALOG_WPS = 5790, 30, 24
APP_HOSTS, APP_CORES, DB_CORES, DISKS = 11, 8, 4, 56
DB_HOST = APP_HOSTS  # station index of the database host
THINK_S, CPU_S, DB_S, READS, READ_S, ROLL_S, GUI_S = 10.0, 0.05, 0.005, 4.0, 0.005, 0.002, 0.3
INF = 1e300


def draws(seed: int, n: int) -> tuple[np.ndarray, ...]:
    r = np.random.default_rng(seed)
    return (
        r.exponential(THINK_S, n),
        r.exponential(CPU_S, n),
        r.exponential(DB_S, n),
        r.poisson(READS, n),
        r.exponential(READ_S, 8 * n),
        r.integers(0, DISKS, n),
    )


def python_loop(t_end: float, think, cpu, dbs, nrd, rsv, rdisk) -> tuple[int, float]:
    think, cpu, dbs, nrd, rsv, rdisk = (a.tolist() for a in (think, cpu, dbs, nrd, rsv, rdisk))
    push, pop = heapq.heappush, heapq.heappop
    heap = [(think[u], u) for u in range(USERS)]
    heapq.heapify(heap)
    heap.append((INF, -1))  # a sentinel: the heap never runs dry
    ip, rp = USERS, 0
    n_st = APP_HOSTS + 1
    sV, sT, sn = [0.0] * n_st, [0.0] * n_st, [0] * n_st
    scap = [APP_CORES] * APP_HOSTS + [DB_CORES]
    sL: list[list] = [[] for _ in range(n_st)]
    snext = [INF] * n_st
    idle = [DIALOG_WPS] * INSTANCES
    fifo: list[deque] = [deque() for _ in range(INSTANCES)]
    dfree = [0.0] * DISKS
    jarr = [0.0] * USERS
    steps, resp = 0, 0.0

    def ps_arrive(s: int, w: float, jc: int, now: float) -> None:
        n, c, dt = sn[s], scap[s], now - sT[s]
        if dt > 0:
            if n:
                sV[s] += dt if n <= c else dt * c / n
            sT[s] = now
        L = sL[s]
        push(L, (sV[s] + w, jc))
        n += 1
        sn[s] = n
        snext[s] = now + (L[0][0] - sV[s]) * (1.0 if n <= c else n / c)

    ts, smin = INF, 0
    while True:
        top = heap[0][0]
        if ts <= top:
            if ts > t_end:
                break
            now, s = ts, smin
            c, n, dt = scap[s], sn[s], now - sT[s]
            if dt > 0:
                sV[s] += dt if n <= c else dt * c / n
                sT[s] = now
            L = sL[s]
            jc = pop(L)[1]
            sn[s] -= 1
            u = jc >> 1
            if not jc & 1:
                ps_arrive(DB_HOST, dbs[ip], jc + 1, now)
                ip += 1
            else:
                dd, io = rdisk[ip], 0.0
                for _ in range(nrd[ip]):
                    f = dfree[dd]
                    if f < now:
                        f = now
                    f += rsv[rp]
                    rp += 1
                    dfree[dd] = f
                    io += f - now
                    dd = dd + 1 if dd + 1 < DISKS else 0
                done = now + io + ROLL_S + GUI_S
                steps += 1
                resp += done - jarr[u]
                push(heap, (done + think[ip], u))
                ip += 1
                i = u % INSTANCES
                if fifo[i]:
                    ps_arrive(i % APP_HOSTS, cpu[ip], fifo[i].popleft() * 2, now)
                    ip += 1
                else:
                    idle[i] += 1
            n = sn[s]
            snext[s] = now + (L[0][0] - sV[s]) * (1.0 if n <= c else n / c) if L else INF
            ts = min(snext)
            smin = snext.index(ts)
            continue
        if top > t_end:
            break
        now, u = pop(heap)
        jarr[u] = now
        i = u % INSTANCES
        if idle[i] > 0:
            idle[i] -= 1
            ps_arrive(i % APP_HOSTS, cpu[ip], u * 2, now)
            ip += 1
            ts = min(snext)
            smin = snext.index(ts)
        else:
            fifo[i].append(u)
    return steps, resp / steps


def numba_loop():
    """The same loop on arrays, compiled (None without numba)."""
    try:
        from numba import njit
    except ImportError:
        return None

    @njit(inline="always")
    def hpush(kt, kv, size, t, v):
        i = size
        while i > 0:
            p = (i - 1) >> 1
            if kt[p] <= t:
                break
            kt[i] = kt[p]
            kv[i] = kv[p]
            i = p
        kt[i] = t
        kv[i] = v
        return size + 1

    @njit(inline="always")
    def hpop(kt, kv, size):
        size -= 1
        t, v, i = kt[size], kv[size], 0
        while True:
            c = 2 * i + 1
            if c >= size:
                break
            if c + 1 < size and kt[c + 1] < kt[c]:
                c += 1
            if kt[c] >= t:
                break
            kt[i] = kt[c]
            kv[i] = kv[c]
            i = c
        kt[i] = t
        kv[i] = v
        return size

    @njit(inline="always")
    def ps_arrive(sV, sT, sn, scap, Lt, Lv, snext, s, w, jc, now):
        n, c, dt = sn[s], scap[s], now - sT[s]
        if dt > 0:
            if n:
                sV[s] += dt if n <= c else dt * c / n
            sT[s] = now
        n = hpush(Lt[s], Lv[s], n, sV[s] + w, jc)
        sn[s] = n
        snext[s] = now + (Lt[s, 0] - sV[s]) * (1.0 if n <= c else n / c)

    @njit
    def loop(t_end, think, cpu, dbs, nrd, rsv, rdisk):
        ht, hv, hn = np.empty(USERS), np.empty(USERS, np.int64), 0
        for u in range(USERS):
            hn = hpush(ht, hv, hn, think[u], u)
        ip, rp = USERS, 0
        n_st = APP_HOSTS + 1
        sV, sT, sn = np.zeros(n_st), np.zeros(n_st), np.zeros(n_st, np.int64)
        scap = np.full(n_st, float(APP_CORES))
        scap[DB_HOST] = DB_CORES
        Lt, Lv = np.empty((n_st, USERS)), np.empty((n_st, USERS), np.int64)
        snext = np.full(n_st, INF)
        idle = np.full(INSTANCES, DIALOG_WPS)
        # A ring buffer per instance (a user waits in at most one queue).
        fifo = np.empty((INSTANCES, USERS), np.int64)
        fh, fn = np.zeros(INSTANCES, np.int64), np.zeros(INSTANCES, np.int64)
        dfree, jarr = np.zeros(DISKS), np.zeros(USERS)
        steps, resp, ts, smin = 0, 0.0, INF, 0
        while True:
            top = ht[0] if hn else INF
            if ts <= top:
                if ts > t_end:
                    break
                now, s = ts, smin
                c, n, dt = scap[s], sn[s], now - sT[s]
                if dt > 0:
                    sV[s] += dt if n <= c else dt * c / n
                    sT[s] = now
                jc = Lv[s, 0]
                sn[s] = hpop(Lt[s], Lv[s], sn[s])
                u = jc >> 1
                if not jc & 1:
                    ps_arrive(sV, sT, sn, scap, Lt, Lv, snext, DB_HOST, dbs[ip], jc + 1, now)
                    ip += 1
                else:
                    dd, io = rdisk[ip], 0.0
                    for _ in range(nrd[ip]):
                        f = dfree[dd]
                        if f < now:
                            f = now
                        f += rsv[rp]
                        rp += 1
                        dfree[dd] = f
                        io += f - now
                        dd = dd + 1 if dd + 1 < DISKS else 0
                    done = now + io + ROLL_S + GUI_S
                    steps += 1
                    resp += done - jarr[u]
                    hn = hpush(ht, hv, hn, done + think[ip], u)
                    ip += 1
                    i = u % INSTANCES
                    if fn[i]:
                        v = fifo[i, fh[i]]
                        fh[i] = (fh[i] + 1) % USERS
                        fn[i] -= 1
                        a = i % APP_HOSTS
                        ps_arrive(sV, sT, sn, scap, Lt, Lv, snext, a, cpu[ip], v * 2, now)
                        ip += 1
                    else:
                        idle[i] += 1
                n = sn[s]
                snext[s] = now + (Lt[s, 0] - sV[s]) * (1.0 if n <= c else n / c) if n else INF
                smin = np.argmin(snext)
                ts = snext[smin]
                continue
            if top > t_end:
                break
            now, u = ht[0], hv[0]
            hn = hpop(ht, hv, hn)
            jarr[u] = now
            i = u % INSTANCES
            if idle[i] > 0:
                idle[i] -= 1
                a = i % APP_HOSTS
                ps_arrive(sV, sT, sn, scap, Lt, Lv, snext, a, cpu[ip], u * 2, now)
                ip += 1
                smin = np.argmin(snext)
                ts = snext[smin]
            else:
                fifo[i, (fh[i] + fn[i]) % USERS] = u
                fn[i] += 1
        return steps, resp / steps

    return loop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=float, default=300.0, help="simulated seconds")
    args = parser.parse_args()
    d = draws(1, int(3_000 * args.window))  # ~1,500 variates per simulated second suffice
    cpu = time.process_time()
    steps, resp = python_loop(args.window, *d)
    py = time.process_time() - cpu
    print(
        f"Python: {steps:,} steps, R {resp:.4f} s, {py:.2f} s CPU, {py / steps * 1e6:.2f} us/step"
    )
    loop = numba_loop()
    if loop is None:
        print("numba is not installed: pip install numba==0.68.1 for the compiled side")
        return
    cpu = time.process_time()
    loop(1.0, *d)
    first = time.process_time() - cpu
    cpu = time.process_time()
    n_steps, n_resp = loop(args.window, *d)
    nb = time.process_time() - cpu
    print(
        f"numba:  {n_steps:,} steps, R {n_resp:.4f} s, {nb:.3f} s CPU, "
        f"{nb / n_steps * 1e6:.2f} us/step (first call, the JIT compile: {first:.2f} s CPU)"
    )
    if n_steps != steps or abs(n_resp - resp) > 1e-9 * resp:
        raise SystemExit("the two loops disagree: the comparison is void")
    print(f"ratio (Python / numba, CPU per simulated step): {py / steps / (nb / n_steps):.1f}x")


if __name__ == "__main__":
    main()
