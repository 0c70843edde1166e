"""The discrete-event engine's event loop, compiled (numba, LLVM) on arrays.

`des.py` holds the state of a run in numpy arrays (`LoopState`) and calls `advance`,
which processes events until the tick's end or until it needs something only Python
provides: the next block of pre-drawn variates of a step class, a fresh disk, class or
paging stream, or more room for steps in flight, events or step records. It then returns
a status; des.py refills or grows what was asked and calls again. Every check is made
before an event is taken, so a return never splits an event and a run gives the same
numbers whatever the sizes of the blocks and buffers (for a given seed).

Why numba: the loop is branchy scalar code over heaps and queues (nothing to vectorise)
and Cython on the untyped loop gained nothing; numba compiles it to machine code from
this Python source, installs as wheels (no compiler on the machine), and caches the
machine code on disk (`cache=True`: the `__pycache__` beside this file, which a fresh
clone creates on its first run). Importing numba takes about a second, so
this module is plain Python until `compile_kernels()` (called when a discrete-event run
starts, not when the CLI loads) replaces its functions by numba's compiled ones.

The algorithm is the one des.py's docstring describes; here it is only written on
arrays: binary heaps by hand (the event heap of (time, code), each CPU station's jobs
by the virtual time they finish, each work-process pool's roll-outs), dispatcher queues
as linked lists through the step slots, a step's row of variates copied into its slot.
"""

from __future__ import annotations

import math
import threading

import numpy as np

# Events on the heap: code = entity * 8 + kind.
K_THINK, K_FREE, K_PAGE = 0, 1, 2
# What advance() returns.
DONE, NEED_ROWS, NEED_DISK, NEED_TX, NEED_PAGE, GROW_JOBS, GROW_HEAP, GROW_REC = range(8)
# Integer scalars (array ia): stream positions, sizes, what to refill.
I_TP, I_DP, I_PGP, I_HN, I_NREC, I_NFREE, I_JN, I_NEED, I_MAXIO = range(9)
I_DB_STATION, I_NTX, I_LOG_ACC = 9, 10, 11
# Write caches: whether the data disks' / the log's writes have one (I_DCACHE + 1), and the
# row of the log's token bucket in wb (0 when the log is on the data disks: their cache).
I_DCACHE, I_LCACHE, I_LB = 12, 13, 14
# The central services' CPU station (-1: their CPU is not on a station; enqueue requests
# are booked on the enqueue work processes instead).
I_CS_STATION = 15
N_I = 16
# Float scalars and parameters (array fa).
F_TOKENS, F_TOKENS_T, F_E_BOOKED = 0, 1, 2
F_RS, F_WS, F_READ, F_WRITE, F_CCAP, F_CDEPTH, F_LINK, F_ENQ_S = 3, 4, 5, 6, 7, 8, 9, 10
F_UROLL, F_PAGE_RATE = 11, 12
# Write caches (data, log): the time a cached write waits (ack_s), the bucket's depth in
# seconds of device time.
F_DACK, F_LACK, F_DDEPTH, F_LDEPTH = 13, 14, 15, 16
# CPU work of the central-services bursts that have left their station (s); the message
# server's CPU per dialog step (s), its share of such a burst.
F_CS_DONE, F_MSG = 17, 18
N_F = 19
# Columns of a step's row of variates (drawn by des_draws, copied into its slot: jrow).
R_CPU = 0  # ABAP CPU burst on the instance's host (s)
R_LOAD = 1  # program load + generation (s)
R_RTT = 2  # network round trips of the step's DB calls (s)
R_DB = 3  # DB CPU burst on the database host (s)
R_PHYS = 4  # physical page reads (buffer-pool misses)
R_WRITES = 5  # pages written
R_LOG = 6  # the commits' synchronous log writes: time on a log device (s), 0: no commit
R_ENQ = 7  # enqueue requests
R_CALLS = 8  # DB calls
R_U = 9  # uniform: does the context go through the roll file
R_UPDATE = 10  # does this dialog step send a V1 update
R_THINK = 11  # the user's think time after this step (s)
R_LOG_DEVICE = 12  # which log device
R_CS = 13  # central-services CPU burst (enqueue service + message server), 0: none (s)
ROW_FIELDS = 14
# The hold times of the locks a step's statements take are a matrix of their own
# (des_draws.Block.locks, copied into jlock).
# Fields of a step record (rec: one per completed step, summed per tick by count_records;
# des.py maps ST03's components to them).
REC_DONE = 0  # when its response ends (s)
REC_CLS = 1  # its step class: work-process pool * n_tx + transaction
REC_RESPONSE = 2  # response time (s)
REC_CALLS = 3  # DB calls
REC_FILE = 4  # 1.0 when its context went through the roll file
REC_WAIT = 5  # dispatcher wait (s)
REC_LOAD = 6  # load + generation (s)
REC_PROCESSING = 7  # ABAP processing: CPU burst and its wait for the CPUs (s)
REC_CPU = 8  # ABAP CPU (s)
REC_DB = 9  # DB request time (s)
REC_ENQUEUE = 10  # enqueue time (s)
REC_FIELDS = 11
EPS = 1e-9
INF = np.inf


def push_event(ht, hc, n, t, code):
    """Push (t, code) on the event heap of n entries; returns the new size."""
    i = n
    while i > 0:
        up = (i - 1) >> 1
        if t < ht[up] or (t == ht[up] and code < hc[up]):
            ht[i] = ht[up]
            hc[i] = hc[up]
            i = up
        else:
            break
    ht[i] = t
    hc[i] = code
    return n + 1


def pop_event(ht, hc, n):
    """Remove the heap's root (read it first); returns the new size."""
    n -= 1
    t = ht[n]
    code = hc[n]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and (ht[c + 1] < ht[c] or (ht[c + 1] == ht[c] and hc[c + 1] < hc[c])):
            c += 1
        if ht[c] < t or (ht[c] == t and hc[c] < code):
            ht[i] = ht[c]
            hc[i] = hc[c]
            i = c
        else:
            break
    ht[i] = t
    hc[i] = code
    return n


def push_events(ht, hc, n, times, codes):
    for x in range(times.size):
        n = push_event(ht, hc, n, times[x], codes[x])
    return n


def _fpush(h, n, t):
    i = n
    while i > 0:
        up = (i - 1) >> 1
        if t < h[up]:
            h[i] = h[up]
            i = up
        else:
            break
    h[i] = t


def _fpop(h, n):
    n -= 1
    t = h[n]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and h[c + 1] < h[c]:
            c += 1
        if h[c] < t:
            h[i] = h[c]
            i = c
        else:
            break
    h[i] = t


def _ps_arrive(s, jc, w, now, sV, sT, sn, scap, sk, sj, snext):
    """Job jc (step * 4 + phase: 0 ABAP, 1 DB, 2 central services) brings w seconds of CPU
    work to station s (processor sharing: the jobs by the virtual time they finish)."""
    n = sn[s]
    c = scap[s]
    dt = now - sT[s]
    if dt > 0.0:
        if n:
            sV[s] += dt if n <= c else dt * c / n
        sT[s] = now
    push_event(sk[s], sj[s], n, sV[s] + w, jc)
    n += 1
    sn[s] = n
    snext[s] = now + (sk[s, 0] - sV[s]) * (1.0 if n <= c else n / c)


def _reclaim(p, now, proll, prn, pidle):
    """Work processes of pool p whose roll-out is done by now are idle again."""
    idle = pidle[p]
    r = prn[p]
    h = proll[p]
    while r > 0 and h[0] <= now:
        _fpop(h, r)
        r -= 1
        idle += 1
    prn[p] = r
    return idle


def advance(
    t_end,
    ia,  # integer scalars (I_*)
    fa,  # float scalars and parameters (F_*)
    ht,
    hc,
    uinst,
    ualive,
    jarr,
    jstart,
    jproc,
    jdb,
    jcls,
    jpool,
    juser,
    jnext,
    jrow,
    jlock,
    jfree,
    ptotal,
    pidle,
    proll,
    prn,
    qh,
    qt,
    qn,
    pwake,
    sV,
    sT,
    sn,
    scap,
    sk,
    sj,
    snext,
    sdone,
    sdone_db,
    efree,
    lfree,
    logfree,
    dfree,
    disk_acc,
    disk_ios,
    wb,  # write caches' token buckets [data, log] x [seconds held, when, fill rate]
    B,
    BL,
    bp,
    txs,
    dsel,
    dsvc,
    dsum,
    pages,
    page_ops,
    rec,
    ihost,
    rmem,
    rfile,
    rshare,
    cgui,
):
    """Process every event up to and including t_end, or until something must be
    refilled or grown (the status says what; ia[I_NEED] the class whose block ran out)."""
    tp, dp, pgp, hn = ia[I_TP], ia[I_DP], ia[I_PGP], ia[I_HN]
    nrec, nfree, jn = ia[I_NREC], ia[I_NFREE], ia[I_JN]
    maxio, d_st, n_tx, log_acc = ia[I_MAXIO], ia[I_DB_STATION], ia[I_NTX], ia[I_LOG_ACC]
    tokens, tokens_t, e_booked = fa[F_TOKENS], fa[F_TOKENS_T], fa[F_E_BOOKED]
    rs, ws, read_s, write_s = fa[F_RS], fa[F_WS], fa[F_READ], fa[F_WRITE]
    ccap, cdepth, link_rtt, enq_s = fa[F_CCAP], fa[F_CDEPTH], fa[F_LINK], fa[F_ENQ_S]
    uroll, page_rate = fa[F_UROLL], fa[F_PAGE_RATE]
    dcache, lcache, lb = ia[I_DCACHE], ia[I_LCACHE], ia[I_LB]
    dack, lack, ddepth, ldepth = fa[F_DACK], fa[F_LACK], fa[F_DDEPTH], fa[F_LDEPTH]
    cs_st, msg_s, cs_done = ia[I_CS_STATION], fa[F_MSG], fa[F_CS_DONE]
    n_st = snext.size
    n_disks = dfree.size
    n_locks = BL.shape[2]
    bsize = B.shape[1]
    jcap = jarr.size
    need = -1
    status = DONE
    while True:
        # ------------------------------------------------ what the next event may take
        if need >= 0:
            status = NEED_ROWS
            break
        if dp + maxio > dsel.size:
            status = NEED_DISK
            break
        if tp >= txs.size:
            status = NEED_TX
            break
        if pgp >= pages.size:
            status = NEED_PAGE
            break
        if nfree + jcap - jn < 2:
            status = GROW_JOBS
            break
        if hn + 4 > ht.size:
            status = GROW_HEAP
            break
        if nrec + 1 > rec.shape[0]:
            status = GROW_REC
            break
        ts = INF
        s = 0
        for x in range(n_st):
            if snext[x] < ts:
                ts = snext[x]
                s = x
        top = ht[0] if hn > 0 else INF
        if ts <= top:
            # ------------------------------------------------ CPU station s: a departure
            if ts > t_end:
                break
            now = ts
            c = scap[s]
            n = sn[s]
            dt = now - sT[s]
            if dt > 0.0:
                sV[s] += dt if n <= c else dt * c / n
                sT[s] = now
            jc = sj[s, 0]
            pop_event(sk[s], sj[s], n)
            sn[s] = n - 1
            j = jc >> 2
            phase = jc & 3
            if phase != 1:
                if phase == 0:
                    sdone[s] += jrow[j, R_CPU]
                    jproc[j] = now - jstart[j]
                else:
                    cs_done += jrow[j, R_CS]
                if phase == 0 and cs_st >= 0 and jrow[j, R_CS] > 0.0:
                    # ABAP burst done: the central services' burst (its enqueue requests,
                    # the message server) joins their CPU station first.
                    _ps_arrive(
                        cs_st, j * 4 + 2, jrow[j, R_CS], now, sV, sT, sn, scap, sk, sj, snext
                    )
                else:
                    # ABAP (or central services) burst done: the DB CPU burst joins the DB's.
                    jdb[j] = now
                    _ps_arrive(d_st, j * 4 + 1, jrow[j, R_DB], now, sV, sT, sn, scap, sk, sj, snext)
            else:
                # DB CPU burst done: physical reads and synchronous writes on the data
                # disks, locks, the commit's log write, the enqueue requests (booked now,
                # in this order, the step waiting for each in turn), then the delays that
                # hold nothing but the work process.
                sdone_db[s] += jrow[j, R_DB]
                p = jpool[j]
                nr = int(jrow[j, R_PHYS])
                nw = int(jrow[j, R_WRITES])
                io = 0.0
                touched = 0  # data disks this step's own I/Os occupy, from disk d0
                d0 = 0
                if nr or nw:
                    # Consecutive disks from a random one, as a striped container spreads
                    # them: no disk sees two of them at once.
                    dd = d0 = dsel[dp]
                    touched = nr
                    q = dp + nr
                    x = dp
                    # More I/Os than disks: from the (n_disks+1)-th on, an I/O lands on a
                    # disk where this step's own earlier I/O is booked. It is issued after
                    # that one is done, which the step already waits for: it adds its own
                    # service only (not its wait counted again from now).
                    own = dp + n_disks
                    while x < q:
                        end = dd + q - x
                        if end > n_disks:
                            end = n_disks
                        for d in range(dd, end):
                            f = dfree[d]
                            if x >= own:
                                io += now - f
                            elif f < now:
                                f = now
                            f += dsvc[x] * rs
                            x += 1
                            dfree[d] = f
                            io += f
                        dd = end if end < n_disks else 0
                    io -= nr * now
                    disk_acc[0] += (dsum[q] - dsum[dp]) * read_s
                    dp = q
                    if nw:
                        # I/O cleaners write what their capacity allows (a token bucket),
                        # in the background; the step writes the rest itself and waits.
                        tk = tokens + (now - tokens_t) * ccap
                        if tk > cdepth:
                            tk = cdepth
                        tokens_t = now
                        a = nw if tk >= nw else int(tk)
                        tokens = tk - a
                        disk_ios[0] += nw
                        disk_ios[2] += a
                        cw = 0  # synchronous writes the write cache acknowledges
                        if dcache:
                            tk = wb[0, 0] + (now - wb[0, 1]) * wb[0, 2]
                            if tk > ddepth:
                                tk = ddepth
                            wb[0, 1] = now
                            tk -= a * write_s  # the cleaners' writes pass it too
                            if tk < 0.0:
                                tk = 0.0
                            cw = int(tk / write_s)
                            if cw > nw - a:
                                cw = nw - a
                            wb[0, 0] = tk - cw * write_s
                            io += cw * dack
                        if a < nw:
                            disk_ios[1] += nw - a
                            touched += nw - a
                            q = dp + nw - a
                            for x in range(dp, q):
                                f = dfree[dd]
                                if x - dp < cw:
                                    # Cached: destaged in the background, unwaited.
                                    dfree[dd] = (f if f > now else now) + dsvc[x] * ws
                                else:
                                    if x - dp + nr >= n_disks:
                                        io += now - f  # on this step's own I/O (above)
                                    elif f < now:
                                        f = now
                                    f += dsvc[x] * ws
                                    dfree[dd] = f
                                    io += f - now
                                dd += 1
                                if dd == n_disks:
                                    dd = 0
                            disk_acc[0] += (dsum[q] - dsum[dp]) * write_s
                            dp = q
                    disk_acc[1] += io
                for li in range(n_locks):
                    hold = jlock[j, li]
                    if hold >= 0.0:
                        f = lfree[li]
                        e = (f if f > now else now) + hold
                        lfree[li] = e
                        io += e - now
                lw = jrow[j, R_LOG]
                if lw:
                    dd = int(jrow[j, R_LOG_DEVICE])
                    f = logfree[dd]
                    e = (f if f > now else now) + lw
                    logfree[dd] = e
                    cached = False
                    if lcache:
                        tk = wb[lb, 0] + (now - wb[lb, 1]) * wb[lb, 2]
                        if tk > ldepth:
                            tk = ldepth
                        wb[lb, 1] = now
                        cached = tk >= lw
                        wb[lb, 0] = tk - lw if cached else tk
                    if cached:
                        io += lack  # acknowledged; destaged in the background
                    elif log_acc == 0 and (dd - d0) % n_disks < touched:
                        # A log on the data disks, on a disk this step has just booked:
                        # the write is issued after its own I/O there, waits for it only.
                        io += lw
                    else:
                        io += e - now
                    disk_acc[log_acc] += lw
                enq = 0.0  # the step's enqueue time
                ahead = 0.0  # the part of it still to come (the rest has passed)
                cs_proc = 0.0  # the message server's part of the central-services burst
                ne = int(jrow[j, R_ENQ])
                if cs_st >= 0:
                    # Their burst's residence (ABAP done to DB burst start), shared between
                    # enqueue time and processing as its demand is.
                    res = jdb[j] - jstart[j] - jproc[j]
                    m_s = 0.0 if p & 1 else msg_s
                    e_s = ne * enq_s
                    if e_s + m_s > 0.0:
                        enq = res * e_s / (e_s + m_s)
                        cs_proc = res - enq
                    ahead = ne * link_rtt
                    enq += ahead
                    e_booked += e_s
                elif ne:
                    q = dp + ne
                    for x in range(dp, q):
                        m = 0
                        for y in range(1, efree.size):
                            if efree[y] < efree[m]:
                                m = y
                        f = efree[m]
                        e = (f if f > now else now) + dsvc[x] * enq_s
                        efree[m] = e
                        enq += e - now
                    enq += ne * link_rtt
                    e_booked += (dsum[q] - dsum[dp]) * enq_s
                    dp = q
                    ahead = enq
                cls = jcls[j]
                if p & 1:
                    ri = uroll
                    infile = 0.0
                    gui = 0.0
                else:
                    i = p >> 1
                    if jrow[j, R_U] < rshare[i]:
                        ri = rmem[i] + rfile[i]
                        infile = 1.0
                    else:
                        ri = rmem[i]
                        infile = 0.0
                    gui = cgui[cls]
                load = jrow[j, R_LOAD]
                rtt = jrow[j, R_RTT]
                db = rtt + now - jdb[j] + io
                t1 = now + io + ahead + ri + load + rtt  # the answer leaves
                done = t1 + gui  # the response ends
                a0 = jarr[j]
                r = rec[nrec]
                r[REC_DONE] = done
                r[REC_CLS] = cls
                r[REC_RESPONSE] = done - a0
                r[REC_CALLS] = jrow[j, R_CALLS]
                r[REC_FILE] = infile
                r[REC_WAIT] = jstart[j] - a0
                r[REC_LOAD] = load
                r[REC_PROCESSING] = jproc[j] + cs_proc
                r[REC_CPU] = jrow[j, R_CPU]
                r[REC_DB] = db
                r[REC_ENQUEUE] = enq
                nrec += 1
                if not p & 1:
                    hn = push_event(ht, hc, hn, done + jrow[j, R_THINK], juser[j] * 8 + K_THINK)
                # The work process is busy until its roll-out is done.
                f = t1 + ri
                _fpush(proll[p], prn[p], f)
                prn[p] += 1
                if qn[p] and f < pwake[p]:
                    pwake[p] = f
                    hn = push_event(ht, hc, hn, f, p * 8 + K_FREE)
                sends = jrow[j, R_UPDATE] != 0.0
                jfree[nfree] = j
                nfree += 1
                if sends:
                    # A saving step sends its V1 update request as it commits.
                    uc = n_tx + cls % n_tx
                    b = bp[uc]
                    bp[uc] = b + 1
                    if b + 1 == bsize:
                        need = uc
                    if nfree:
                        nfree -= 1
                        k = jfree[nfree]
                    else:
                        k = jn
                        jn += 1
                    jarr[k] = now
                    jrow[k] = B[uc, b]
                    jlock[k] = BL[uc, b]
                    up = p + 1
                    jpool[k] = up
                    jcls[k] = cls + n_tx
                    idle = _reclaim(up, now, proll, prn, pidle)
                    if idle > 0:
                        pidle[up] = idle - 1
                        jstart[k] = now
                        _ps_arrive(
                            ihost[up >> 1],
                            k * 4,
                            jrow[k, R_CPU],
                            now,
                            sV,
                            sT,
                            sn,
                            scap,
                            sk,
                            sj,
                            snext,
                        )
                    else:
                        pidle[up] = idle
                        _enqueue(k, up, qh, qt, qn, jnext)
                        if prn[up] and proll[up, 0] < pwake[up]:
                            pwake[up] = proll[up, 0]
                            hn = push_event(ht, hc, hn, proll[up, 0], up * 8 + K_FREE)
            n = sn[s]
            if n:
                if sk[s, 0] <= sV[s] + EPS:
                    snext[s] = now  # another job is done at the same moment
                else:
                    snext[s] = now + (sk[s, 0] - sV[s]) * (1.0 if n <= c else n / c)
            else:
                snext[s] = INF
            continue
        if top > t_end:
            break
        now = ht[0]
        code = hc[0]
        hn = pop_event(ht, hc, hn)
        kind = code & 7
        if kind == K_THINK:
            # ------------------------------------------------ a user's think time ends
            u = code >> 3
            if not ualive[u]:
                continue
            i = uinst[u]
            t = txs[tp]
            tp += 1
            b = bp[t]
            bp[t] = b + 1
            if b + 1 == bsize:
                need = t
            if nfree:
                nfree -= 1
                j = jfree[nfree]
            else:
                j = jn
                jn += 1
            p = i + i
            jarr[j] = now
            jrow[j] = B[t, b]
            jlock[j] = BL[t, b]
            juser[j] = u
            jpool[j] = p
            jcls[j] = p * n_tx + t
            idle = _reclaim(p, now, proll, prn, pidle)
            if idle > 0:
                # A dialog work process takes the step: its ABAP burst joins the host.
                pidle[p] = idle - 1
                jstart[j] = now
                _ps_arrive(ihost[i], j * 4, jrow[j, R_CPU], now, sV, sT, sn, scap, sk, sj, snext)
            else:
                pidle[p] = idle
                _enqueue(j, p, qh, qt, qn, jnext)
                if prn[p] and proll[p, 0] < pwake[p]:
                    pwake[p] = proll[p, 0]
                    hn = push_event(ht, hc, hn, proll[p, 0], p * 8 + K_FREE)
        elif kind == K_FREE:
            # ------------------------------------------------ a work process may be free
            p = code >> 3
            if pwake[p] != now:
                continue
            pwake[p] = INF
            idle = _reclaim(p, now, proll, prn, pidle)
            while idle > 0 and qn[p]:
                idle -= 1
                j = qh[p]
                qh[p] = jnext[j]
                qn[p] -= 1
                jstart[j] = now
                _ps_arrive(
                    ihost[p >> 1], j * 4, jrow[j, R_CPU], now, sV, sT, sn, scap, sk, sj, snext
                )
            pidle[p] = idle
            if qn[p] and prn[p]:
                pwake[p] = proll[p, 0]
                hn = push_event(ht, hc, hn, proll[p, 0], p * 8 + K_FREE)
        else:
            # ------------------------------------------------ background paging of a host
            h = code >> 3
            page_ops[h] += 1
            hn = push_event(ht, hc, hn, now + pages[pgp] / page_rate, code)
            pgp += 1
    ia[I_TP], ia[I_DP], ia[I_PGP], ia[I_HN] = tp, dp, pgp, hn
    ia[I_NREC], ia[I_NFREE], ia[I_JN], ia[I_NEED] = nrec, nfree, jn, need
    fa[F_TOKENS], fa[F_TOKENS_T], fa[F_E_BOOKED] = tokens, tokens_t, e_booked
    fa[F_CS_DONE] = cs_done
    return status


def _enqueue(j, p, qh, qt, qn, jnext):
    """Step j joins the tail of pool p's dispatcher queue (FIFO)."""
    jnext[j] = -1
    if qn[p]:
        jnext[qt[p]] = j
    else:
        qh[p] = j
    qt[p] = j
    qn[p] += 1


def work_done(t, sV, sT, sn, scap, sk, sj, jrow, sap, db, cs):
    """Bring every CPU station up to t and add the service the jobs present have received
    so far to `sap` (ABAP bursts), `db` (DB bursts) and `cs` (central services), per
    station."""
    for s in range(sn.size):
        n = sn[s]
        dt = t - sT[s]
        if dt > 0.0 and n:
            sV[s] += dt * min(1.0, scap[s] / n)
        if t > sT[s]:
            sT[s] = t
        v = sV[s]
        for x in range(n):
            jc = sj[s, x]
            phase = jc & 3
            if phase == 1:
                db[s] += v - sk[s, x] + jrow[jc >> 2, R_DB]
            elif phase == 2:
                cs[s] += v - sk[s, x] + jrow[jc >> 2, R_CS]
            else:
                sap[s] += v - sk[s, x] + jrow[jc >> 2, R_CPU]


def binomial(n, p, u, out):
    """Binomial(n, p) draws by inversion of the uniforms u (same shapes, flattened):
    exact, and about eight times faster than numpy's generator for the small n·p of
    buffer-pool misses per step; entries with n·p > 30 are left to the caller (-1)."""
    for x in range(n.size):
        m = n[x]
        q = p[x]
        if m <= 0 or q <= 0.0:
            out[x] = 0
            continue
        if q >= 1.0:
            out[x] = m
            continue
        if m * q > 30.0:
            out[x] = -1
            continue
        f = math.exp(m * math.log1p(-q))
        r = q / (1.0 - q)
        k = 0
        cdf = f
        v = u[x]
        while v > cdf and k < m:
            f *= r * (m - k) / (k + 1)
            k += 1
            cdf += f
        out[x] = k


def poisson(lam, u, out):
    """Poisson(lam) draws by inversion of the uniforms u; entries with lam > 30 are left
    to the caller (-1)."""
    for x in range(lam.size):
        m = lam[x]
        if m <= 0.0:
            out[x] = 0
            continue
        if m > 30.0:
            out[x] = -1
            continue
        f = math.exp(-m)
        k = 0
        cdf = f
        v = u[x]
        while v > cdf and k < 200:
            k += 1
            f *= m / k
            cdf += f
        out[x] = k


def count_records(
    t, rec, nrec, comp_src, n_tx, uroll, rmem, rfile, cgui, edges, steps, seconds,
    db_calls, buckets, dialog_inst, infile_inst, db_time,
):  # fmt: skip
    """Add the step records whose response ended by t to a tick's counters (flat, by
    step class; zeroed by the caller) and keep the others, in order; returns how many
    are kept. comp_src[c]: the record field of component c, -1 the roll time, -2 GUI."""
    n_c = comp_src.size
    n_b = edges.size
    keep = 0
    for x in range(nrec):
        if rec[x, REC_DONE] > t:
            if keep != x:
                rec[keep] = rec[x]
            keep += 1
            continue
        cls = int(rec[x, REC_CLS])
        pool = cls // n_tx
        inst = pool >> 1
        upd = pool & 1
        infile = rec[x, REC_FILE]
        roll = uroll if upd else rmem[inst] + infile * rfile[inst]
        steps[cls] += 1
        for c in range(n_c):
            src = comp_src[c]
            if src >= 0:
                v = rec[x, src]
            elif src == -1:
                v = roll
            else:
                v = cgui[cls]
            seconds[cls * n_c + c] += v
        db_calls[cls] += rec[x, REC_CALLS]
        # The histogram bucket: the first edge at or above the response time.
        response = rec[x, REC_RESPONSE]
        b = 0
        while b < n_b - 1 and edges[b] < response:
            b += 1
        buckets[cls * n_b + b] += 1
        if not upd:
            dialog_inst[inst] += 1
            infile_inst[inst] += infile
        db_time[upd * n_tx + cls % n_tx] += rec[x, REC_DB]
    return keep


_JITTED = (
    "push_event",
    "pop_event",
    "push_events",
    "_fpush",
    "_fpop",
    "_ps_arrive",
    "_reclaim",
    "_enqueue",
    "advance",
    "work_done",
    "count_records",
    "binomial",
    "poisson",
)
_compiled = threading.Lock()
_ready = False


def compile_kernels() -> None:
    """Replace this module's loop functions by numba's compiled ones, once per process.
    numba resolves the functions a compiled one calls when it first runs, so they are
    replaced first; each is compiled at its first call, or loaded from numba's cache."""
    global _ready
    with _compiled:
        if _ready:
            return
        import numba

        space = globals()
        for name in _JITTED:
            space[name] = numba.njit(cache=True, nogil=True)(space[name])
        _ready = True
