"""The discrete-event engine: every dialog step of every user, event by event.

The same closed network as the analytic solver (docs/model.md), on the same YAML, giving
the same `Snapshot`, so collectors, reports and runs take either engine
(`make_simulation(engine="des" | "analytic")`). It is the reference the solver is
checked against (tests/model/test_des_grid.py).

Events. One heap of `(time, code)` tuples, `code = entity * 8 + kind` (no objects,
generators or closures per event), for what is scheduled: a user's think time ends
(THINK), a work process may be free (FREE), background paging (PAGE). Beside it every CPU
station keeps the time of its next departure (`snext`); the loop takes whichever comes
first, so a departure time that moves when jobs arrive or leave costs no heap entry.
A dialog step:

1. THINK: the step joins its instance's dispatcher queue (FIFO). If a dialog work process
   is free it starts at once: its ABAP CPU burst joins its host's CPUs.
2. CPU departure on the application host: the burst is done (processing time); the step's
   DB CPU burst joins the database host's CPUs at once.
3. CPU departure on the database host: the physical reads (buffer-pool misses drawn per
   DB call) and synchronous page writes are booked on the disks, lock holds on the locks,
   the commit's log write on a log device (or a data disk when the log shares them), the
   enqueue requests on the enqueue work processes, then the delays that hold nothing but
   the work process (roll-in, program load, network round trips). That fixes the answer
   time; the response ends after the GUI time, the user thinks again from there (a THINK
   on the heap), and a saving step sends its V1 update to the instance's update work
   processes, where it runs the same chain. The work process is busy until its roll-out
   is done: it is freed at a known time, so that costs no event either.

Three events per dialog step (one on the heap), two more per update: about 3.5 per step
of the SD mix. Pure delays carry no contention, so where they sit in the holding time only
shifts when the next station is reached; they are placed after the stations so that each
CPU station is entered at an event.

Stations. CPUs (one station per host, the database's included; two-tier: the same one)
are processor sharing over their cores, each of n jobs served at rate min(1, c/n), kept
by a virtual clock: a job leaves when the service every job present has received reaches
its burst. Processor sharing, not c-server FCFS: with one exponential burst length both
give the same queue-length process, but the steps are a mix (a VA05 DB burst of 23 ms, an
update's of 2 ms), and FCFS makes the short ones wait behind the long ones (update DB time
116 ms instead of 77 at the benchmark's 93 % DB CPU); processor sharing is what the
solver assumes and what a CPU scheduler does. Bursts are exponential, a DB burst around
the demand of the step's own DB calls. Disks, log devices, locks and the enqueue work
processes are FCFS with exponential service, booked at arrival by Lindley's
(Kiefer-Wolfowitz's) recursion. A step's page I/Os go to consecutive disks from a random
one and are booked together when its DB burst is done: the first exactly, the later ones
a few ms early (each still meets its disk's backlog, no disk sees two of them at once;
with more I/Os than disks, one on a disk holding the step's own adds its service only);
the log write, lock holds and enqueue requests after them likewise. I/O cleaners write
pages up to their capacity (a token bucket) in the background: their writes take their
share of the disks' time (averaged over a second), which stretches the other I/Os, as in
the solver; pages beyond their capacity the step writes itself and waits for. A write
cache in front of the data disks or the log (a token bucket in device seconds, filled at
its destage rate) acknowledges the writes it has room for in its `ack_s` and books them
on their device, where nobody waits for them; the others the step waits for as without
a cache.

Counting. A step is counted when its response ends (answer + GUI time). Per-step times go
into a flat array and are summed per tick with numpy; per-call draws stay in their
blocks (`des_draws`) and are summed when a snapshot is taken. A tick's numbers depend
only on the seed and on what was switched when, so fast and real-time runs agree.
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections import deque
from collections.abc import Iterable
from operator import length_hint
from typing import Any

import numpy as np

from exporters.model.config import Scenario
from exporters.model.des_draws import (
    BLOCK_STEPS,
    STREAM_SIZE,
    Block,
    class_stream,
    disk_stream,
    draw_block,
)
from exporters.model.des_network import Network, compile_network
from exporters.model.engine import ModelRun, Simulation, Snapshot, Totals
from exporters.model.solver import BUCKETS, OperatingPoint
from exporters.model.sqltext import statement_hash
from exporters.vocabulary import COMPONENTS

ENGINES = ("des", "analytic")

# Events on the heap: code = entity * 8 + kind.
K_THINK, K_FREE, K_PAGE, K_END_OF_TIME = 0, 1, 2, 7
INF = math.inf
# A job has finished its CPU burst when its station's virtual time is this close (s).
EPS = 1e-9

# Fields of a step record (one per completed step, summed per tick).
F_DONE, F_CLS, F_RESPONSE, F_CALLS, F_FILE = 0, 1, 2, 3, 4
F_WAIT, F_LOAD, F_PROCESSING, F_CPU, F_DB, F_ENQUEUE = 5, 6, 7, 8, 9, 10
N_FIELDS = 11
_EDGES = np.array((*BUCKETS, np.inf))
# Cleaners may run this far (s) ahead of the pages dirtied, no more (token bucket depth).
CLEANER_BURST_S = 1.0
# The cleaners' share of the disks is averaged over this long (s), and capped: beyond it
# they cannot keep up and the agents write synchronously anyway.
CLEANER_AVERAGE_S = 1.0
MAX_CLEANER_SHARE = 0.9


class DiscreteEventSimulation(ModelRun):
    """The landscape model of one scenario, simulated step by step (same API as
    `engine.Simulation`: `step`, `run`, `snapshot`, `set_users`, `set_faults`)."""

    engine = "des"

    def _start(self, faults: tuple[str, ...]) -> None:
        self.now = 0.0
        self._nets: dict[tuple, Network] = {}
        self.faults = tuple(dict.fromkeys(faults))
        self.net = self._resolve(self.faults)
        self.scenario: Scenario = self.net.scenario
        self._init_state()

    # ------------------------------------------------------------------ configuration
    def _resolve(self, faults: tuple[str, ...]) -> Network:
        key = (faults, repr(sorted(self.overrides.items())))
        if key not in self._nets:
            self._nets[key] = compile_network(self._scenario(faults))
        return self._nets[key]

    def _rng(self, *stream: int) -> np.random.Generator:
        return np.random.default_rng([self.seed, *stream])

    def _init_state(self) -> None:
        net = self.net
        n_inst, n_cls = net.n_instances, net.n_classes
        self.n_tx = net.n_tx
        self.heap: list[tuple[float, int]] = []
        # Users
        self.uinst: list[int] = []
        self.ualive: list[bool] = []
        self.inst_users: list[list[int]] = [[] for _ in range(n_inst)]
        # Steps in flight (slots reused through a free list)
        self.jarr: list[float] = []
        self.jstart: list[float] = []
        self.jcls: list[int] = []
        self.jpool: list[int] = []
        self.jrow: list[tuple] = []
        self.juser: list[int] = []
        self.jproc: list[float] = []
        self.jdb: list[float] = []
        self.jfree: list[int] = []
        # Work-process pools: index instance * 2 + task type
        self.ptotal = [0] * (2 * n_inst)
        self.pidle = [0] * (2 * n_inst)
        self.proll: list[list[float]] = [[] for _ in range(2 * n_inst)]
        self.pfifo: list[deque] = [deque() for _ in range(2 * n_inst)]
        self.pwake = [INF] * (2 * n_inst)
        # CPU stations, one per host, processor sharing over its cores: virtual time (the
        # service each job present has received), when it was last brought up to date,
        # jobs present, of which in their DB burst, cores, the jobs by the virtual time
        # at which they finish, the time of the next departure, busy core-seconds (all,
        # DB bursts).
        n_h = len(net.station_cpus)
        self.sV, self.sT = [0.0] * n_h, [0.0] * n_h
        self.sn = [0] * n_h
        self.scap = list(net.station_cpus)
        self.sL: list[list[tuple[float, int]]] = [[] for _ in range(n_h)]
        self.snext = [INF] * n_h
        # CPU work done by the bursts that have left (ABAP, DB); work in progress is added
        # when a tick is counted.
        self.sdone, self.sdone_db = [0.0] * n_h, [0.0] * n_h
        # FCFS stations booked by Lindley's / Kiefer-Wolfowitz's recursion: the time each
        # server is free (the enqueue work processes a heap of them).
        self.efree = [0.0] * net.enqueue_servers
        self.e_booked = [0.0]
        self.lfree = [0.0] * len(net.lock_names)
        self.logfree = [0.0] * net.log_devices
        self.dfree = [0.0] * net.disks
        self._share_log_disks(net)
        # [data disk busy, residence of all data disk I/O, log device busy]
        self.disk_acc = [0.0, 0.0, 0.0]
        # [page writes, synchronous page writes, background (cleaner) page writes]
        self.disk_ios = [0, 0, 0]
        # The share of the disks' time the cleaners' writes take (averaged over about a
        # second) and what it stretches the other I/Os by.
        self.cleaner_util, self.disk_stretch, self._cleaned = 0.0, 1.0, 0
        self.tokens = [net.cleaner_pages_per_s * CLEANER_BURST_S, 0.0]  # [tokens, last time]
        # Random streams
        self._rng_tx = self._rng(1)
        self._rng_disk = self._rng(2)
        self._rng_misc = self._rng(3)
        self._rng_cls = [self._rng(4, c) for c in range(n_cls)]
        self.txs = class_stream(self._rng_tx, net.mix)
        self.tp = 0
        self.dsel, self.dsvc, self.dsum = disk_stream(self._rng_disk, net.disks)
        self.dp = 0
        self.blocks: list[Block] = [draw_block(self._rng_cls[c], net, c) for c in range(n_cls)]
        self.bnext = [b.it.__next__ for b in self.blocks]
        # Step records waiting to be counted (answer + GUI still ahead)
        self.rec = array("d")
        # OS counters per host, as the landscape lists its hosts (the CPU stations)
        n_os = len(net.host_names)
        self.page_ops = [0] * n_os
        self.roll_disk = np.zeros((3, n_os))  # roll-file reads, writes, busy seconds
        # Cumulative per-call counters [statement]
        n_st, n_p = len(net.solver.statements), len(net.solver.pools)
        self.cum = {name: np.zeros(n_st) for name in ("exec", "rows")}
        for name in ("data", "index", "data_phys", "index_phys", "written_data", "written_index"):
            self.cum[name] = np.zeros(n_p)
        self._zero_totals()
        self._counted_busy = {"sap": np.zeros(n_os), "total": np.zeros(n_os), "db": 0.0}
        self._counted_disk = 0.0
        self._apply_pools(net)
        self._add_users(net)
        misc = self._rng_misc.exponential(1.0, n_os)
        rate = net.scenario.landscape.os.page_ops_per_s
        if rate > 0:
            for h in range(n_os):
                self.heap.append((float(misc[h]) / rate, h * 8 + K_PAGE))
        self.heap.append((INF, K_END_OF_TIME))
        heapq.heapify(self.heap)

    def _zero_totals(self) -> None:
        net = self.net
        sv = net.solver
        self.totals = Totals.zeros(
            net.n_instances,
            net.n_tx,
            len(sv.statements),
            len(sv.pools),
            len(net.scenario.landscape.instance.buffers),
            net.n_app_hosts,
            len(self.page_ops),
        )

    def _apply_pools(self, net: Network) -> None:
        """Work processes as configured; a pool that grows serves its queue at once."""
        for i, lay in enumerate(net.layout):
            for k, wps in enumerate((lay.dialog_wps, lay.update_wps)):
                p = 2 * i + k
                delta = wps - self.ptotal[p]
                self.ptotal[p] = wps
                self.pidle[p] += delta
                if delta > 0 and self.pfifo[p]:
                    self.pwake[p] = self.now
                    heapq.heappush(self.heap, (self.now, p * 8 + K_FREE))

    def _add_users(self, net: Network) -> None:
        """Log users on or off until every instance has its share of the scenario's users.
        New users start thinking; leaving users log off when their think time ends."""
        gui = float(np.dot(net.mix, [c.gui_s for c in net.classes[: net.n_tx]]))
        first = net.think_s + gui  # about a user's cycle when nothing queues
        for i, lay in enumerate(net.layout):
            alive = self.inst_users[i]
            while len(alive) > lay.users:
                self.ualive[alive.pop()] = False
            missing = lay.users - len(alive)
            if missing <= 0:
                continue
            draws = self._rng_misc.exponential(first, missing) if first > 0 else np.zeros(missing)
            for x in draws.tolist():
                u = len(self.uinst)
                self.uinst.append(i)
                self.ualive.append(True)
                alive.append(u)
                heapq.heappush(self.heap, (self.now + x, u * 8 + K_THINK))

    def _apply_stations(self, net: Network) -> None:
        """CPUs, enqueue work processes and devices as configured (servers added are free
        now; removed ones finish what they hold)."""
        now = self.now
        for s, cpus in enumerate(net.station_cpus):
            self._ps_update(s, now)
            self.scap[s] = cpus
            self._ps_schedule(s, now)
        if len(self.efree) != net.enqueue_servers:
            e = sorted(self.efree)[: net.enqueue_servers]
            self.efree = e + [now] * (net.enqueue_servers - len(e))
            heapq.heapify(self.efree)
        for name, n in (
            ("dfree", net.disks),
            ("logfree", net.log_devices),
            ("lfree", len(net.lock_names)),
        ):
            have = getattr(self, name)
            setattr(self, name, have[:n] + [now] * max(0, n - len(have)))
        self._share_log_disks(net)
        self.dsel, self.dsvc, self.dsum = disk_stream(self._rng_disk, net.disks)
        self.dp = 0

    def _share_log_disks(self, net: Network) -> None:
        """A log on the data disks books its writes on the disks' own queues (one list), and
        its busy time counts as the disks' (the log accumulator is the disks' one)."""
        if net.log_on_data_disks:
            self.logfree = self.dfree
        self.log_acc = 0 if net.log_on_data_disks else 2
        # Write caches: a token bucket each, in seconds of device time, filled at the
        # destage rate up to the cache's size; a write that finds its own time there is
        # acknowledged by the cache and destaged in the background (booked on its device,
        # nobody waits for it). One bucket when the log is on the data disks.
        old = getattr(self, "wbucket", None)
        self.wbucket = []
        for cache, one in ((net.data_cache, net.write_s), (net.log_cache, net.log_write_s)):
            depth = cache[2] * one if cache else 0.0
            was = old[len(self.wbucket)] if old else None
            have = was[0] if was and was[2] > 0 else depth  # a new cache starts empty
            self.wbucket.append([min(have, depth), self.now, one * cache[1] if cache else 0.0])
        if net.log_on_data_disks:
            self.wbucket[1] = self.wbucket[0]

    def _ps_update(self, s: int, now: float) -> None:
        """Bring station s's virtual time and busy time up to now."""
        n, c, dt = self.sn[s], self.scap[s], now - self.sT[s]
        if dt > 0.0 and n:
            share = min(1.0, c / n)
            self.sV[s] += dt * share
        self.sT[s] = max(self.sT[s], now)

    def _ps_schedule(self, s: int, now: float) -> None:
        L, n, c = self.sL[s], self.sn[s], self.scap[s]
        self.snext[s] = now + (L[0][0] - self.sV[s]) * max(1.0, n / c) if L else INF

    def _switch(self, net: Network) -> None:
        """Make `net` the active configuration at the current time."""
        old = self.net
        if net.n_instances != old.n_instances or net.host_names != old.host_names:
            raise ValueError("a fault or override may not change the instances or hosts")
        if net.station_host != old.station_host or net.instance_station != old.instance_station:
            raise ValueError("a fault or override may not change where tenants are pinned")
        if net.lock_names != old.lock_names:
            raise ValueError("a fault or override may not change the locks")
        if [s[:4] for s in net.solver.statements] != [s[:4] for s in old.solver.statements]:
            raise ValueError("a fault or override may not change the statements")
        self._count_calls()
        self.net = net
        self.scenario = net.scenario
        self._apply_pools(net)
        self._apply_stations(net)
        self.blocks = [draw_block(self._rng_cls[c], net, c) for c in range(net.n_classes)]
        self.bnext = [b.it.__next__ for b in self.blocks]
        self._add_users(net)

    def set_users(self, users: int) -> None:
        """Change the number of logged-on users (ramp-up, ramp-down) from now."""
        self._override_users(users)
        net = self._resolve(self.faults)
        with self._lock:
            self._switch(net)

    def set_faults(self, faults: Iterable[str]) -> None:
        """Switch the active faults from now; queues build or drain from here."""
        faults = tuple(dict.fromkeys(faults))
        net = self._resolve(faults)
        with self._lock:
            self._switch(net)
            self.faults = faults

    # ------------------------------------------------------------------ the event loop
    def _refill_block(self, c: int) -> tuple:
        self._count_block(self.blocks[c])
        block = draw_block(self._rng_cls[c], self.net, c, BLOCK_STEPS)
        self.blocks[c] = block
        self.bnext[c] = block.it.__next__
        return self.bnext[c]()

    def _advance(self, t_end: float) -> None:
        """Process every event up to and including t_end.

        Two sources of events: the heap (think times, work-process wake-ups, paging) and
        the CPU stations, each of which knows the time of its next departure (`snext`);
        the loop takes whichever comes first. A station's next departure moves whenever a
        job arrives or leaves, so it is kept out of the heap and costs no stale events.
        """
        net = self.net
        heap = self.heap
        pop, push, hpop, hpush, hrep = (
            heapq.heappop,
            heapq.heappush,
            heapq.heappop,
            heapq.heappush,
            heapq.heapreplace,
        )
        n_tx = self.n_tx
        uinst, ualive = self.uinst, self.ualive
        jarr, jstart, jcls, jpool, jrow = self.jarr, self.jstart, self.jcls, self.jpool, self.jrow
        juser, jproc, jdb, jfree = self.juser, self.jproc, self.jdb, self.jfree
        pidle, proll, pfifo, pwake = self.pidle, self.proll, self.pfifo, self.pwake
        sV, sT, sn, scap, sL, snext = self.sV, self.sT, self.sn, self.scap, self.sL, self.snext
        sdone, sdone_db = self.sdone, self.sdone_db
        d_st = net.db_station
        efree, e_booked = self.efree, self.e_booked
        lfree, logfree, log_acc = self.lfree, self.logfree, self.log_acc
        dfree, disk_acc, disk_ios, tokens = self.dfree, self.disk_acc, self.disk_ios, self.tokens
        page_ops = self.page_ops
        bnext = self.bnext
        rec_extend = self.rec.extend
        txs, tp = self.txs, self.tp
        dsel, dsvc, dsum, dp = self.dsel, self.dsvc, self.dsum, self.dp
        ihost = net.instance_station  # the CPU station each instance's bursts join
        rmem, rfile, rshare = net.roll_memory_s, net.roll_file_s, net.roll_file_share
        uroll = net.update_roll_s
        # Per step class (instance, task type, transaction): GUI time, its update's class
        cgui = [net.classes[c % n_tx].gui_s for c in range(net.n_instances * 2 * n_tx)]
        cupd = [n_tx + c % n_tx for c in range(net.n_instances * 2 * n_tx)]
        link_rtt, enq_s = net.link_rtt_s, net.enqueue_service_s
        read_s, write_s = net.read_s, net.write_s
        dcache, lcache = net.data_cache, net.log_cache
        dbucket, lbucket = self.wbucket
        ddepth = dcache[2] * write_s if dcache else 0.0
        ldepth = lcache[2] * net.log_write_s if lcache else 0.0
        # The cleaners' background writes take their share of every disk's time: the disk
        # serves reads and synchronous writes that much slower (1 / (1 - their share)).
        rs, ws = read_s * self.disk_stretch, write_s * self.disk_stretch
        ccap = net.cleaner_pages_per_s
        cdepth = ccap * CLEANER_BURST_S
        page_rate = net.scenario.landscape.os.page_ops_per_s
        misc = self._rng_misc
        n_disk_stream = len(dsel)
        n_disks = len(dfree)
        n_tx_stream = len(txs)
        eps, inf, k_think, k_free = EPS, INF, K_THINK, K_FREE

        def ps_arrive(s: int, jc: int, w: float, now: float) -> None:
            """Job jc (step * 2 + phase) brings w seconds of CPU work to station s."""
            n = sn[s]
            c = scap[s]
            dt = now - sT[s]
            if dt > 0.0:
                if n:
                    sV[s] += dt if n <= c else dt * c / n
                sT[s] = now
            L = sL[s]
            hpush(L, (sV[s] + w, jc))
            n += 1
            sn[s] = n
            snext[s] = now + (L[0][0] - sV[s]) * (1.0 if n <= c else n / c)

        def start(j: int, p: int, now: float) -> None:
            """Work process of pool p takes step j now: its CPU burst joins the host."""
            jstart[j] = now
            ps_arrive(ihost[p >> 1], j * 2, jrow[j][0], now)

        def arrive(j: int, p: int, now: float) -> None:
            """Step j joins the queue of work-process pool p now."""
            idle = pidle[p]
            roll = proll[p]
            while roll and roll[0] <= now:
                hpop(roll)
                idle += 1
            if idle > 0:
                pidle[p] = idle - 1
                start(j, p, now)
            else:
                pidle[p] = idle
                pfifo[p].append(j)
                if roll and roll[0] < pwake[p]:
                    pwake[p] = roll[0]
                    push(heap, (roll[0], p * 8 + K_FREE))

        def new_slot() -> int:
            for column in (jarr, jstart, jproc, jdb):
                column.append(0.0)
            for column in (jcls, jpool, juser):
                column.append(0)
            jrow.append(())
            return len(jarr) - 1

        ts = min(snext) if snext else INF
        smin = snext.index(ts) if snext else 0
        while True:
            top = heap[0][0]  # (a sentinel at infinity keeps the heap from running dry)
            if ts <= top:
                # ---------------------------------------- CPU station s: departures
                if ts > t_end:
                    break
                now = ts
                s = smin
                c = scap[s]
                n = sn[s]
                dt = now - sT[s]
                if dt > 0.0:
                    sV[s] += dt if n <= c else dt * c / n
                    sT[s] = now
                L = sL[s]
                while True:
                    jc = hpop(L)[1]
                    sn[s] -= 1
                    j = jc >> 1
                    if not jc & 1:
                        # ABAP burst done: the step's DB CPU burst joins the DB host.
                        row = jrow[j]
                        sdone[s] += row[0]
                        jproc[j] = now - jstart[j]
                        jdb[j] = now
                        # (inline ps_arrive at the DB host, the hot path)
                        dn = sn[d_st]
                        dc = scap[d_st]
                        dt = now - sT[d_st]
                        if dt > 0.0:
                            if dn:
                                sV[d_st] += dt if dn <= dc else dt * dc / dn
                            sT[d_st] = now
                        DL = sL[d_st]
                        hpush(DL, (sV[d_st] + row[3], jc + 1))
                        dn += 1
                        sn[d_st] = dn
                        snext[d_st] = now + (DL[0][0] - sV[d_st]) * (1.0 if dn <= dc else dn / dc)
                        if L and L[0][0] <= sV[s] + eps:
                            continue
                        break
                    # DB CPU burst done: physical reads and synchronous writes on the data
                    # disks, locks, the commit's log write, the enqueue requests (booked
                    # now, in this order, the step waiting for each in turn), then the
                    # delays that hold nothing but the work process.
                    row = jrow[j]
                    sdone_db[s] += row[3]
                    p = jpool[j]
                    n = row[4]
                    nw = row[5]
                    io = 0.0
                    touched = 0  # data disks this step's own I/Os occupy, from disk d0
                    if n or nw:
                        # A step's page I/Os go to consecutive disks from a random one, as
                        # a striped container spreads them: no disk sees two of them at
                        # once (they are booked together, though issued one after another).
                        if dp + n + nw > n_disk_stream:
                            self.dsel, self.dsvc, self.dsum = disk_stream(
                                self._rng_disk, n_disks, max(STREAM_SIZE, 2 * (n + nw))
                            )
                            dsel, dsvc, dsum, dp = self.dsel, self.dsvc, self.dsum, 0
                            n_disk_stream = len(dsel)
                        dd = d0 = dsel[dp]
                        touched = n
                        q = dp + n
                        x = dp
                        # More I/Os than disks: from the (n_disks+1)-th on, an I/O lands on
                        # a disk where this step's own earlier I/O is booked. It is issued
                        # after that one is done, which the step already waits for: it adds
                        # its own service only (not its wait counted again from now).
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
                        io -= n * now
                        disk_acc[0] += (dsum[q] - dsum[dp]) * read_s
                        dp = q
                        if nw:
                            # I/O cleaners write what their capacity allows (a token
                            # bucket), in the background; the step writes the rest itself
                            # and waits for it.
                            tk = tokens[0] + (now - tokens[1]) * ccap
                            if tk > cdepth:
                                tk = cdepth
                            tokens[1] = now
                            a = nw if tk >= nw else int(tk)
                            tokens[0] = tk - a
                            disk_ios[0] += nw
                            disk_ios[2] += a
                            c = 0  # synchronous writes the write cache acknowledges
                            if dcache:
                                tk = dbucket[0] + (now - dbucket[1]) * dbucket[2]
                                if tk > ddepth:
                                    tk = ddepth
                                dbucket[1] = now
                                tk -= a * write_s  # the cleaners' writes pass it too
                                if tk < 0.0:
                                    tk = 0.0
                                c = min(nw - a, int(tk / write_s))
                                dbucket[0] = tk - c * write_s
                                io += c * dcache[0]
                            if a < nw:
                                disk_ios[1] += nw - a
                                touched += nw - a
                                q = dp + nw - a
                                for x in range(dp, q):
                                    f = dfree[dd]
                                    if x - dp < c:
                                        # Cached: destaged in the background, unwaited.
                                        dfree[dd] = (f if f > now else now) + dsvc[x] * ws
                                    else:
                                        if x - dp + n >= n_disks:
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
                    if row[13]:
                        for li, hold in row[13]:
                            f = lfree[li]
                            e = (f if f > now else now) + hold
                            lfree[li] = e
                            io += e - now
                    lw = row[6]
                    if lw:
                        dd = row[12]
                        f = logfree[dd]
                        e = (f if f > now else now) + lw
                        logfree[dd] = e
                        cached = False
                        if lcache:
                            tk = lbucket[0] + (now - lbucket[1]) * lbucket[2]
                            if tk > ldepth:
                                tk = ldepth
                            lbucket[1] = now
                            cached = tk >= lw
                            lbucket[0] = tk - lw if cached else tk
                        if cached:
                            io += lcache[0]  # acknowledged; destaged in the background
                        elif log_acc == 0 and (dd - d0) % n_disks < touched:
                            # A log on the data disks, on a disk this step has just booked:
                            # the write is issued after its own I/O there, waits for it only.
                            io += lw
                        else:
                            io += e - now
                        disk_acc[log_acc] += lw
                    enq = 0.0
                    ne = row[7]
                    if ne:
                        if dp + ne > n_disk_stream:
                            self.dsel, self.dsvc, self.dsum = disk_stream(self._rng_disk, n_disks)
                            dsel, dsvc, dsum, dp = self.dsel, self.dsvc, self.dsum, 0
                            n_disk_stream = len(dsel)
                        q = dp + ne
                        for x in range(dp, q):
                            m = efree[0]
                            e = (m if m > now else now) + dsvc[x] * enq_s
                            hrep(efree, e)
                            enq += e - now
                        enq += ne * link_rtt
                        e_booked[0] += (dsum[q] - dsum[dp]) * enq_s
                        dp = q
                    cls = jcls[j]
                    if p & 1:
                        ri = uroll
                        infile = 0.0
                        gui = 0.0
                    else:
                        i = p >> 1
                        if row[9] < rshare[i]:
                            ri = rmem[i] + rfile[i]
                            infile = 1.0
                        else:
                            ri = rmem[i]
                            infile = 0.0
                        gui = cgui[cls]
                    db = row[2] + now - jdb[j] + io
                    t1 = now + io + enq + ri + row[1] + row[2]  # the answer leaves
                    done = t1 + gui  # the response ends
                    a0 = jarr[j]
                    rec_extend(
                        (
                            done,
                            cls,
                            done - a0,
                            row[8],
                            infile,
                            jstart[j] - a0,
                            row[1],
                            jproc[j],
                            row[0],
                            db,
                            enq,
                        )
                    )
                    if not p & 1:
                        push(heap, (done + row[11], juser[j] * 8 + k_think))
                    # The work process is busy until its roll-out is done.
                    f = t1 + ri
                    hpush(proll[p], f)
                    if pfifo[p] and f < pwake[p]:
                        pwake[p] = f
                        push(heap, (f, p * 8 + k_free))
                    jfree.append(j)
                    if row[10]:
                        # A saving step sends its V1 update request as it commits.
                        c = cupd[cls]
                        try:
                            urow = bnext[c]()
                        except StopIteration:
                            urow = self._refill_block(c)
                        k = jfree.pop() if jfree else new_slot()
                        jarr[k] = now
                        jrow[k] = urow
                        jpool[k] = p + 1
                        jcls[k] = cls + n_tx
                        arrive(k, p + 1, now)
                    if L and L[0][0] <= sV[s] + eps:
                        continue
                    break
                n = sn[s]
                c = scap[s]
                snext[s] = now + (L[0][0] - sV[s]) * (1.0 if n <= c else n / c) if L else inf
                ts = min(snext)
                smin = snext.index(ts)
                continue
            if top > t_end:
                break
            now, code = pop(heap)
            kind = code & 7
            if kind == k_think:
                # ---------------------------------------- a user's think time ends
                u = code >> 3
                if not ualive[u]:
                    continue
                i = uinst[u]
                t = txs[tp]
                tp += 1
                if tp == n_tx_stream:
                    self.txs = txs = class_stream(self._rng_tx, net.mix)
                    tp = 0
                try:
                    row = bnext[t]()
                except StopIteration:
                    row = self._refill_block(t)
                j = jfree.pop() if jfree else new_slot()
                p = i + i
                jarr[j] = now
                jrow[j] = row
                juser[j] = u
                jpool[j] = p
                jcls[j] = p * n_tx + t
                idle = pidle[p]
                roll = proll[p]
                while roll and roll[0] <= now:
                    hpop(roll)
                    idle += 1
                if idle > 0:
                    # A dialog work process takes the step: its ABAP burst joins the host.
                    pidle[p] = idle - 1
                    jstart[j] = now
                    s = ihost[i]
                    n = sn[s]
                    c = scap[s]
                    dt = now - sT[s]
                    if dt > 0.0:
                        if n:
                            sV[s] += dt if n <= c else dt * c / n
                        sT[s] = now
                    L = sL[s]
                    hpush(L, (sV[s] + row[0], j * 2))
                    n += 1
                    sn[s] = n
                    f = now + (L[0][0] - sV[s]) * (1.0 if n <= c else n / c)
                    snext[s] = f
                    if f < ts:
                        ts = f
                        smin = s
                    elif s == smin:
                        ts = min(snext)
                        smin = snext.index(ts)
                else:
                    pidle[p] = idle
                    pfifo[p].append(j)
                    if roll and roll[0] < pwake[p]:
                        pwake[p] = roll[0]
                        push(heap, (roll[0], p * 8 + K_FREE))
            elif kind == k_free:
                # ---------------------------------------- a work process may be free
                p = code >> 3
                if pwake[p] != now:
                    continue
                pwake[p] = INF
                idle = pidle[p]
                roll = proll[p]
                while roll and roll[0] <= now:
                    hpop(roll)
                    idle += 1
                fifo = pfifo[p]
                while idle > 0 and fifo:
                    idle -= 1
                    start(fifo.popleft(), p, now)
                pidle[p] = idle
                if fifo and roll:
                    pwake[p] = roll[0]
                    push(heap, (roll[0], p * 8 + K_FREE))
                ts = min(snext)
                smin = snext.index(ts)
            else:
                # ---------------------------------------- background paging of a host
                h = code >> 3
                page_ops[h] += 1
                push(heap, (now + float(misc.exponential(1.0)) / page_rate, code))
        self.tp, self.dp = tp, dp

    # ------------------------------------------------------------------ counting
    def _count_block(self, block: Block) -> None:
        """Add the per-call draws of the rows the loop has taken since the last count."""
        taken = len(block.rows) - length_hint(block.it)
        if taken <= block.counted:
            return
        sc = self.net.classes[block.cls]
        sel = sc.statements
        lo, hi = block.counted, taken
        cum = self.cum
        ex = block.executions[lo:hi].sum(axis=0)
        cum["exec"][sel] += ex
        cum["rows"][sel] += ex * self.net.solver.st_rows[sel]
        n_p = cum["data"].size
        dp, ip = sc.group_data_pool, sc.group_index_pool
        for name, pools, part in (
            ("data", dp, block.data_logical),
            ("index", ip, block.index_logical),
            ("data_phys", dp, block.data_physical),
            ("index_phys", ip, block.index_physical),
            ("written_data", dp, block.written),
            ("written_index", ip, block.written),
        ):
            cum[name] += np.bincount(pools, part[lo:hi].sum(axis=0), n_p)
        block.counted = taken

    def _count_calls(self) -> None:
        for block in self.blocks:
            self._count_block(block)

    def _count_steps(self, t: float) -> None:
        """Add the steps whose response ended by t (and the stations' busy time)."""
        net, tot = self.net, self.totals
        if self.rec:
            a = np.frombuffer(self.rec, dtype=float).reshape(-1, N_FIELDS)
            done = a[:, F_DONE] <= t
            if done.all():
                rows = a.copy()
                self.rec = array("d")
            else:
                rows = a[done]
                self.rec = array("d", a[~done].ravel().tobytes())
            if rows.size:
                self._add_steps(rows)
        # CPU and disk time is counted as it elapses (I/Os booked ahead are not yet).
        for st in range(len(self.scap)):
            self._ps_update(st, t)
        # Work done so far: the bursts that have left, and what the others have received.
        sap, db_work = np.array(self.sdone), np.array(self.sdone_db)
        for st, L in enumerate(self.sL):
            v = self.sV[st]
            for f, jc in L:
                phase = jc & 1
                got = v - f + self.jrow[jc >> 1][3 if phase else 0]
                if phase:
                    db_work[st] += got
                else:
                    sap[st] += got
        db = float(db_work[net.db_station])
        # Stations to hosts: a host's pinned core sets add up to its CPUs.
        n_os = len(net.host_names)
        sap = np.bincount(net.station_host, weights=sap, minlength=n_os)
        total = sap + np.bincount(net.station_host, weights=db_work, minlength=n_os)
        n_app = net.n_app_hosts
        counted = self._counted_busy
        tot.host_cpu_seconds += (sap - counted["sap"])[:n_app]
        tot.os_cpu_busy_seconds += total - counted["total"]
        tot.db_cpu_seconds += db - counted["db"]
        counted.update(sap=sap, total=total, db=db)
        # The cleaners: their writes of this tick keep the disks busy; their share of the
        # disks' time, averaged over about a second, stretches the next tick's I/Os.
        cleaned = self.disk_ios[2] - self._cleaned
        self._cleaned = self.disk_ios[2]
        work = cleaned * net.write_s
        self.disk_acc[0] += work
        self.disk_acc[1] += work
        span = t - tot.sim_time
        if span > 0:
            weight = 1.0 - math.exp(-span / CLEANER_AVERAGE_S)
            util = work / (net.disks * span)
            self.cleaner_util += weight * (util - self.cleaner_util)
            self.disk_stretch = 1.0 / (1.0 - min(self.cleaner_util, MAX_CLEANER_SHARE))
        ahead = sum(f - t for f in self.dfree if f > t) / self.disk_stretch
        disk_real = self.disk_acc[0] - ahead
        tot.disk_busy_seconds += disk_real - self._counted_disk
        self._counted_disk = disk_real
        tot.sim_time = t

    def _add_steps(self, rows: np.ndarray) -> None:
        net, tot = self.net, self.totals
        n_i, n_t = net.n_instances, net.n_tx
        n_cls = n_i * 2 * n_t
        n_c = len(COMPONENTS)
        cls = rows[:, F_CLS].astype(np.int64)
        tot.steps += np.bincount(cls, minlength=n_cls).reshape(n_i, 2, n_t)
        pool = cls // n_t
        inst = pool >> 1
        update = (pool & 1) == 1
        roll = np.where(
            update,
            net.update_roll_s,
            np.array(net.roll_memory_s)[inst] + rows[:, F_FILE] * np.array(net.roll_file_s)[inst],
        )
        gui = np.array([c.gui_s for c in net.classes])[cls % n_t] * ~update
        parts = {
            "response": rows[:, F_RESPONSE],
            "dispatcher_wait": rows[:, F_WAIT],
            "roll_in": roll,
            "roll_out": roll,
            "load_gen": rows[:, F_LOAD],
            "processing": rows[:, F_PROCESSING],
            "cpu": rows[:, F_CPU],
            "db_request": rows[:, F_DB],
            "enqueue": rows[:, F_ENQUEUE],
            "gui": gui,
        }
        where = (cls[:, None] * n_c + np.arange(n_c)).ravel()
        values = np.stack([parts[c] for c in COMPONENTS], axis=1).ravel()
        tot.seconds += np.bincount(where, weights=values, minlength=n_cls * n_c).reshape(
            tot.seconds.shape
        )
        tot.db_calls += np.bincount(cls, weights=rows[:, F_CALLS], minlength=n_cls).reshape(
            n_i, 2, n_t
        )
        n_b = len(BUCKETS) + 1
        bucket = np.searchsorted(_EDGES, rows[:, F_RESPONSE], side="left")
        tot.bucket_counts += np.bincount(cls * n_b + bucket, minlength=n_cls * n_b).reshape(
            tot.bucket_counts.shape
        )
        # Dialog steps per instance drive the SAP buffers, the message server, the roll file.
        dialog = ~update
        inst = inst[dialog]
        per_inst = np.bincount(inst, minlength=n_i).astype(float)
        tot.sap_buffer_requests += per_inst[:, None] * net.sap_requests_per_step
        tot.sap_buffer_hits += per_inst[:, None] * net.sap_hits_per_step
        tot.sap_buffer_swaps += per_inst[:, None] * net.sap_swaps_per_step
        msg = per_inst.sum() * net.message_server_cpu_s_per_step
        tot.cs_cpu_seconds += msg
        tot.os_cpu_busy_seconds[net.cs_host] += msg
        infile = np.bincount(inst, weights=rows[dialog, F_FILE], minlength=n_i)
        if infile.any():
            self._roll_file(infile)
        # ST05: a step's DB request time is shared by its statements (see Network).
        kcls = (pool & 1) * n_t + cls % n_t
        db_time = np.bincount(kcls, weights=rows[:, F_DB], minlength=2 * n_t)
        tot.stmt_seconds += db_time @ net.statement_shares

    def _roll_file(self, infile: np.ndarray) -> None:
        """Contexts rolled in from and out to the roll file: bytes, and the app server's disk."""
        net, tot = self.net, self.totals
        n_os = len(net.host_names)
        tot.roll_file_bytes += 2.0 * infile * np.array(net.roll_bytes)
        host_of = np.array(net.instance_host)
        roll_disk = self.roll_disk
        ios = np.bincount(host_of, weights=infile, minlength=n_os)
        roll_disk[0] += ios  # roll-ins read
        roll_disk[1] += ios  # roll-outs written
        roll_disk[2] += np.bincount(host_of, 2.0 * infile * np.array(net.roll_file_s), n_os)

    # ------------------------------------------------------------------ public API
    def step(self) -> None:
        """Advance one tick of dt simulated seconds."""
        with self._lock:
            t = (self.tick + 1) * self.dt
            self._advance(t)
            self.now = t
            self._count_steps(t)
            self.tick += 1

    def _fill_call_totals(self) -> None:
        """The per-call counters, from the integer counts of everything drawn so far."""
        self._count_calls()
        net, tot, cum = self.net, self.totals, self.cum
        tot.stmt_exec[:] = cum["exec"]
        tot.stmt_rows[:] = cum["rows"]
        tot.pool_data_logical[:] = cum["data"]
        tot.pool_index_logical[:] = cum["index"]
        tot.pool_data_physical[:] = cum["data_phys"]
        tot.pool_index_physical[:] = cum["index_phys"]
        share = net.index_share_of_page_writes
        tot.pool_data_writes[:] = cum["written_data"] * (1.0 - share)
        tot.pool_index_writes[:] = cum["written_index"] * share
        writes, sync, _ = self.disk_ios
        async_share = 1.0 - sync / writes if writes else 1.0
        tot.pool_async_data_writes[:] = tot.pool_data_writes * async_share
        tot.pool_async_index_writes[:] = tot.pool_index_writes * async_share
        tot.os_page_ops[:] = self.page_ops
        # Each host's disk: the roll file of its instances, and on the database host the
        # data disks (one LUN) too.
        db = net.station_host[net.db_station]
        tot.os_disk_reads[:] = self.roll_disk[0]
        tot.os_disk_writes[:] = self.roll_disk[1]
        tot.os_disk_queue_seconds[:] = self.roll_disk[2]
        tot.os_disk_reads[db] += cum["data_phys"].sum() + cum["index_phys"].sum()
        tot.os_disk_writes[db] += writes
        tot.os_disk_queue_seconds[db] += self.disk_acc[1]

    def snapshot(self) -> Snapshot:
        with self._lock:
            self._fill_call_totals()
            return self._snapshot(self.totals, self._state())

    def queue_lengths(self) -> dict[str, np.ndarray]:
        """Now: dispatcher queue and busy work processes per [instance, task type]."""
        with self._lock:
            return self._gauges()

    def _gauges(self) -> dict[str, np.ndarray]:
        n_i = self.net.n_instances
        t = self.now
        queue = np.array([len(q) for q in self.pfifo], dtype=float).reshape(n_i, 2)
        rolling = [sum(1 for f in r if f > t) for r in self.proll]
        due = [len(r) - k for r, k in zip(self.proll, rolling, strict=True)]
        idle = np.array(self.pidle) + np.array(due)
        busy = np.array(self.ptotal) - np.maximum(idle, 0)
        return {
            "dispatcher_queue": queue,
            "wp_busy": busy.reshape(n_i, 2).astype(float),
            "wp_total": np.array(self.ptotal, dtype=float).reshape(n_i, 2),
        }

    def _state(self) -> OperatingPoint:
        """The current state as the collectors read it: gauges now, rates and means over
        the run so far."""
        net, tot = self.net, self.totals
        sv = net.solver
        land = net.scenario.landscape
        span = tot.sim_time if tot.sim_time > 0 else 1.0
        steps = tot.steps
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.nan_to_num(tot.seconds / steps[..., None])
            buckets = np.nan_to_num(
                tot.bucket_counts / tot.bucket_counts.sum(axis=-1, keepdims=True)
            )
            calls = np.nan_to_num(tot.db_calls.sum(axis=0) / steps.sum(axis=0))
            stmt_time = np.nan_to_num(tot.stmt_seconds / tot.stmt_exec)
        x_inst = steps[:, 0].sum(axis=1) / span
        g = self._gauges()
        rolls = sv.roll
        return OperatingPoint(
            instances=[lay.name for lay in net.layout],
            hosts=list(land.app_servers.hosts),
            transactions=list(sv.tx_names),
            statements=list(sv.statements),
            statement_sql=list(sv.statement_sql),
            statement_ids=[statement_hash(text) for text in sv.statement_sql],
            instance_host=np.array(net.instance_host),
            bufferpools=list(sv.pools),
            step_rate=steps / span,
            means=means,
            bucket_probs=buckets,
            wp_total=g["wp_total"],
            wp_busy=g["wp_busy"],
            dispatcher_queue=g["dispatcher_queue"],
            roll_buffer_size=np.full(net.n_instances, float(land.instance.roll.roll_buffer_bytes)),
            roll_buffer_used=np.array([r["roll_used"] for r in rolls]),
            em_size=np.full(net.n_instances, float(land.instance.roll.extended_memory_bytes)),
            em_used=np.array([r["em_used"] for r in rolls]),
            roll_file_bytes_rate=tot.roll_file_bytes / span,
            **sv._sap_buffers(x_inst),
            stmt_exec_rate=tot.stmt_exec / span,
            stmt_rows_rate=tot.stmt_rows / span,
            stmt_time=stmt_time,
            pool_data_logical=tot.pool_data_logical / span,
            pool_data_physical=tot.pool_data_physical / span,
            pool_index_logical=tot.pool_index_logical / span,
            pool_index_physical=tot.pool_index_physical / span,
            pool_data_writes=tot.pool_data_writes / span,
            pool_async_data_writes=tot.pool_async_data_writes / span,
            pool_index_writes=tot.pool_index_writes / span,
            pool_async_index_writes=tot.pool_async_index_writes / span,
            host_cpu_util=tot.host_cpu_seconds / (land.app_servers.cpus * span),
            db_cpu_util=float(
                tot.db_cpu_seconds / (net.host_cpus[net.station_host[net.db_station]] * span)
            ),
            disk_util=float(tot.disk_busy_seconds / (land.database.disks.count * span)),
            log_util=float(
                tot.disk_busy_seconds / (land.database.disks.count * span)
                if net.log_on_data_disks
                else self.disk_acc[2] / (net.log_devices * span)
            ),
            enqueue_util=float(
                self.e_booked[0] / (land.central_services.enqueue_work_processes * span)
            ),
            # The central services' CPUs are their host's (an application server's when
            # they share one: `central_services.cpus` is then unset).
            cs_cpu_util=float(
                tot.cs_cpu_seconds / (land.host(land.central_services.host).cpus * span)
            ),
            db_calls_per_step=calls,
        )


def make_simulation(
    engine: str = "analytic", scenario: str = "sd-benchmark-2003", **options: Any
) -> Simulation | DiscreteEventSimulation:
    """The model of a scenario on the engine asked for: "des" (every step) or "analytic".
    `options`: those both engines take (`ModelRun`: faults, seed, dt, catalog, overrides,
    landscape, settings)."""
    if engine not in ENGINES:
        raise ValueError(f"engine: unknown engine {engine!r} (known: {', '.join(ENGINES)})")
    cls: type = DiscreteEventSimulation if engine == "des" else Simulation
    return cls(scenario, **options)
