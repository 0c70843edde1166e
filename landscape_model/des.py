"""The discrete-event engine: every dialog step of every user, event by event.

The same closed network as the analytic solver (docs/model.md), on the same YAML, giving
the same `Snapshot`, so collectors, reports and runs take either engine
(`engines.make_simulation(engine="des" | "analytic")`). It is the reference the solver is
checked against (tests/model/test_des_grid.py).

Events. The loop is compiled (`des_loop`, numba) and runs on arrays; this module holds
them and refills what it uses up. One heap of `(time, code)` entries,
`code = entity * 8 + kind` (no objects per event), for what is scheduled: a user's think time ends
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
into a record array and are summed per tick, in the order they were made
(`des_loop.count_records`); per-call draws stay in their blocks (`des_draws`) and are
summed when a snapshot is taken. A tick's numbers depend
only on the seed and on what was switched when, so fast and real-time runs agree.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable
from typing import Any

import numpy as np

from landscape_model import des_loop
from landscape_model.config import Scenario
from landscape_model.des_draws import (
    BLOCK_STEPS,
    STREAM_SIZE,
    Block,
    class_stream,
    disk_stream,
    draw_block,
)
from landscape_model.des_network import Network, for_event_loop
from landscape_model.engine import ModelRun, Snapshot, Totals
from landscape_model.network import sap_buffers
from landscape_model.results import BUCKETS, OperatingPoint
from landscape_model.sqltext import statement_hash
from landscape_model.terms import COMPONENTS

INF = math.inf

_EDGES = np.array((*BUCKETS, np.inf))
# Cleaners may run this far (s) ahead of the pages dirtied, no more (token bucket depth).
CLEANER_BURST_S = 1.0
# The cleaners' share of the disks is averaged over this long (s), and capped: beyond it
# they cannot keep up and the agents write synchronously anyway.
CLEANER_AVERAGE_S = 1.0
MAX_CLEANER_SHARE = 0.9
# Starting room of the loop's arrays (each doubles when the loop asks for more; results do
# not depend on these, tests/model/test_des_engine.py shrinks them): events per user,
# instance and host; step slots (at least, and per user); step records.
START_HEAP_PER_ENTITY = 2
START_JOB_SLOTS, START_JOB_SLOTS_PER_USER = 1024, 2
START_RECORDS = 4096
# The state a snapshot carries (per-step means, rates, utilisations: what SM50, CCMS and the
# gauges read) is over this much simulated time before it, not the run so far: a fault
# removed after an hour must leave the state within a minute, as it leaves the system.
STATE_WINDOW_S = 60.0


class DiscreteEventSimulation(ModelRun):
    """The landscape model of one scenario, simulated step by step (same API as
    `engine.Simulation`: `step`, `run`, `snapshot`, `set_users`, `set_faults`)."""

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
            self._nets[key] = for_event_loop(self.compiled(faults))
        return self._nets[key]

    def _rng(self, *stream: int) -> np.random.Generator:
        return np.random.default_rng([self.seed, *stream])

    def _init_state(self) -> None:
        des_loop.compile_kernels()  # numba: imported when a DES run starts
        self._k = k = des_loop
        net = self.net
        n_inst, n_cls = net.n_instances, net.n_classes
        n_p, n_h, n_os = 2 * n_inst, len(net.station_cpus), len(net.host_names)
        self.n_tx = net.n_tx
        # Scalars the loop carries from call to call (positions, sizes) and its parameters.
        self.ia = np.zeros(k.N_I, dtype=np.int64)
        self.fa = np.zeros(k.N_F)
        # The event heap: (time, entity * 8 + kind)
        users = sum(lay.users for lay in net.layout)
        hcap = START_HEAP_PER_ENTITY * (users + n_p + n_os) + 8
        self.ht, self.hc = np.empty(hcap), np.empty(hcap, dtype=np.int64)
        # Users: their instance, whether still logged on; per instance its users.
        self.uinst = np.zeros(0, dtype=np.int64)
        self.ualive = np.zeros(0, dtype=np.int8)
        self.n_users = 0
        self.inst_users: list[list[int]] = [[] for _ in range(n_inst)]
        # Work-process pools (index instance * 2 + task type): configured, idle, the
        # roll-outs in progress (a heap of the times they end), the dispatcher queue (a
        # linked list through the step slots: head, tail, length), the pending wake-up.
        self.ptotal = np.zeros(n_p, dtype=np.int64)
        self.pidle = np.zeros(n_p, dtype=np.int64)
        self.proll = np.zeros((n_p, 1))
        self.prn = np.zeros(n_p, dtype=np.int64)
        self.qh = np.zeros(n_p, dtype=np.int64)
        self.qt = np.zeros(n_p, dtype=np.int64)
        self.qn = np.zeros(n_p, dtype=np.int64)
        self.pwake = np.full(n_p, INF)
        # CPU stations, one per host, processor sharing over its cores: virtual time (the
        # service each job present has received), when it was last brought up to date,
        # jobs present, cores, the jobs by the virtual time at which they finish (a heap
        # per station), the time of the next departure, and the CPU work done by the
        # bursts that have left (ABAP, DB); work in progress is added when a tick is
        # counted.
        self.sV, self.sT = np.zeros(n_h), np.zeros(n_h)
        self.sn = np.zeros(n_h, dtype=np.int64)
        self.scap = np.array(net.station_cpus, dtype=float)
        self.snext = np.full(n_h, INF)
        self.sdone, self.sdone_db = np.zeros(n_h), np.zeros(n_h)
        # Steps in flight: slots reused through a free list (and the stations' heaps,
        # which can hold every step at once).
        self._alloc_jobs(max(START_JOB_SLOTS, START_JOB_SLOTS_PER_USER * users))
        # FCFS stations booked by Lindley's / Kiefer-Wolfowitz's recursion: the time each
        # server is free.
        self.efree = np.zeros(net.enqueue_servers)
        self.lfree = np.zeros(len(net.lock_names))
        self.logfree = np.zeros(net.log_devices)
        self.dfree = np.zeros(net.disks)
        self._share_log_disks(net)
        # [data disk busy, residence of all data disk I/O, log device busy]
        self.disk_acc = np.zeros(3)
        # [page writes, synchronous page writes, background (cleaner) page writes]
        self.disk_ios = np.zeros(3, dtype=np.int64)
        # The share of the disks' time the cleaners' writes take (averaged over about a
        # second) and what it stretches the other I/Os by.
        self.cleaner_util, self.disk_stretch, self._cleaned = 0.0, 1.0, 0
        self.fa[k.F_TOKENS] = net.cleaner_pages_per_s * CLEANER_BURST_S
        # Random streams
        self._rng_tx = self._rng(1)
        self._rng_disk = self._rng(2)
        self._rng_misc = self._rng(3)
        self._rng_cls = [self._rng(4, c) for c in range(n_cls)]
        self._rng_page = self._rng(5)
        self.txs = class_stream(self._rng_tx, net.mix)
        self._new_disk_stream()
        self.pages = self._rng_page.exponential(1.0, STREAM_SIZE)
        self.B = np.zeros((n_cls, BLOCK_STEPS, des_loop.ROW_FIELDS))
        self.BL = np.zeros((n_cls, BLOCK_STEPS, max(1, len(net.lock_names))))
        self.bp = np.zeros(n_cls, dtype=np.int64)
        self.blocks: list[Block] = [None] * n_cls  # type: ignore[list-item]
        for c in range(n_cls):
            self._new_block(c)
        # Step records waiting to be counted (answer + GUI still ahead)
        self.rec = np.zeros((START_RECORDS, des_loop.REC_FIELDS))
        # What a tick adds up from them, flat by step class (instance, task, transaction)
        n_sc = n_inst * 2 * net.n_tx
        n_c, n_b = len(COMPONENTS), len(BUCKETS) + 1
        self._tick_counts = {
            "steps": np.zeros(n_sc, dtype=np.int64),
            "seconds": np.zeros(n_sc * n_c),
            "db_calls": np.zeros(n_sc),
            "buckets": np.zeros(n_sc * n_b, dtype=np.int64),
            "dialog": np.zeros(n_inst),
            "infile": np.zeros(n_inst),
            "db_time": np.zeros(2 * net.n_tx),
        }
        field = {
            "response": des_loop.REC_RESPONSE,
            "dispatcher_wait": des_loop.REC_WAIT,
            "load_gen": des_loop.REC_LOAD,
            "processing": des_loop.REC_PROCESSING,
            "cpu": des_loop.REC_CPU,
            "db_request": des_loop.REC_DB,
            "enqueue": des_loop.REC_ENQUEUE,
            "roll_in": -1,
            "roll_out": -1,
            "gui": -2,
        }
        self._comp_src = np.array([field[c] for c in COMPONENTS], dtype=np.int64)
        # OS counters per host, as the landscape lists its hosts (the CPU stations)
        self.page_ops = np.zeros(n_os, dtype=np.int64)
        self.roll_disk = np.zeros((3, n_os))  # roll-file reads, writes, busy seconds
        # Cumulative per-call counters [statement]
        n_st, n_p = len(net.compiled.statements), len(net.compiled.pools)
        self.cum = {name: np.zeros(n_st) for name in ("exec", "rows")}
        for name in ("data", "index", "data_phys", "index_phys", "written_data", "written_index"):
            self.cum[name] = np.zeros(n_p)
        self._zero_totals()
        self._counted_busy = {
            "sap": np.zeros(n_os),
            "total": np.zeros(n_os),
            "db": 0.0,
            "cs": 0.0,
            "station": np.zeros(len(net.station_cpus)),
        }
        self._counted_disk = 0.0
        self._set_params(net)
        self._apply_pools(net)
        self._add_users(net)
        misc = self._rng_misc.exponential(1.0, n_os)
        rate = net.scenario.landscape.os.page_ops_per_s
        if rate > 0:
            self._push(misc / rate, np.arange(n_os) * 8 + k.K_PAGE)

    def _alloc_jobs(self, cap: int) -> None:
        """Room for `cap` steps in flight (keeps the ones there are)."""
        have = getattr(self, "jarr", np.zeros(0)).size

        def grow(a: np.ndarray | None, shape: tuple, dtype: Any = float) -> np.ndarray:
            new = np.zeros(shape, dtype=dtype)
            if a is not None:
                new[tuple(slice(0, n) for n in a.shape)] = a
            return new

        for name in ("jarr", "jstart", "jproc", "jdb"):
            setattr(self, name, grow(getattr(self, name, None), (cap,)))
        for name in ("jcls", "jpool", "juser", "jnext", "jfree"):
            setattr(self, name, grow(getattr(self, name, None), (cap,), np.int64))
        self.jrow = grow(getattr(self, "jrow", None), (cap, des_loop.ROW_FIELDS))
        n_locks = max(1, len(self.net.lock_names))
        self.jlock = grow(getattr(self, "jlock", None), (cap, n_locks))
        n_h = self.sn.size
        self.sk = grow(getattr(self, "sk", None) if have else None, (n_h, cap))
        self.sj = grow(getattr(self, "sj", None) if have else None, (n_h, cap), np.int64)

    def _grow(self, name: str) -> None:
        a = getattr(self, name)
        new = np.zeros((2 * a.shape[0], *a.shape[1:]), dtype=a.dtype)
        new[: a.shape[0]] = a
        setattr(self, name, new)

    def _push(self, times: np.ndarray, codes: np.ndarray) -> None:
        """Put events on the heap (from Python, between calls of the loop)."""
        ia, k = self.ia, self._k
        need = int(ia[k.I_HN]) + times.size
        if need > self.ht.size:  # just enough: the loop doubles it when it needs more
            for name in ("ht", "hc"):
                a = getattr(self, name)
                setattr(self, name, np.concatenate((a, np.zeros(need - a.size, a.dtype))))
        ia[k.I_HN] = k.push_events(
            self.ht,
            self.hc,
            ia[k.I_HN],
            np.asarray(times, dtype=float),
            np.asarray(codes, dtype=np.int64),
        )

    def _new_block(self, c: int) -> None:
        block = draw_block(self._rng_cls[c], self.net, c, BLOCK_STEPS)
        self.blocks[c] = block
        self.B[c] = block.rows
        self.BL[c] = block.locks
        self.bp[c] = 0
        k = self._k
        self.ia[k.I_MAXIO] = max(self.ia[k.I_MAXIO], block.most_ios)

    def _new_disk_stream(self) -> None:
        size = max(STREAM_SIZE, 2 * int(self.ia[self._k.I_MAXIO]))
        self.dsel, self.dsvc, self.dsum = disk_stream(self._rng_disk, self.net.disks, size)
        self.ia[self._k.I_DP] = 0

    def _set_params(self, net: Network) -> None:
        """The configuration's parameters, as the loop reads them."""
        ia, fa, k = self.ia, self.fa, self._k
        ia[k.I_DB_STATION] = net.db_station
        ia[k.I_CS_STATION] = net.cs_station
        fa[k.F_MSG] = net.message_server_cpu_s_per_step
        ia[k.I_NTX] = net.n_tx
        fa[k.F_READ], fa[k.F_WRITE] = net.read_s, net.write_s
        fa[k.F_CCAP] = net.cleaner_pages_per_s
        fa[k.F_CDEPTH] = net.cleaner_pages_per_s * CLEANER_BURST_S
        fa[k.F_LINK], fa[k.F_ENQ_S] = net.link_rtt_s, net.enqueue_service_s
        fa[k.F_UROLL] = net.update_roll_s
        fa[k.F_PAGE_RATE] = net.scenario.landscape.os.page_ops_per_s
        self.ihost = np.array(net.instance_station, dtype=np.int64)  # each instance's CPU station
        self.rmem = np.array(net.roll_memory_s, dtype=float)
        self.rfile = np.array(net.roll_file_s, dtype=float)
        self.rshare = np.array(net.roll_file_share, dtype=float)
        # Per step class (instance, task type, transaction): its GUI time
        gui = np.array([c.gui_s for c in net.classes[: net.n_tx]], dtype=float)
        self.cgui = np.tile(np.concatenate((gui, np.zeros(net.n_tx))), net.n_instances)

    def _zero_totals(self) -> None:
        net = self.net
        cn = net.compiled
        self.totals = Totals.zeros(
            net.n_instances,
            net.n_tx,
            len(cn.statements),
            len(cn.pools),
            len(net.scenario.landscape.instance.buffers),
            net.n_app_hosts,
            len(self.page_ops),
            len(net.station_cpus),
        )
        # (totals, log busy s, enqueue booked s) at earlier snapshots: _state's window.
        self._history: deque[tuple[Totals, float, float]] = deque()

    def _apply_pools(self, net: Network) -> None:
        """Work processes as configured; a pool that grows serves its queue at once."""
        wps = np.array([(lay.dialog_wps, lay.update_wps) for lay in net.layout]).ravel()
        # A pool's roll-outs in progress never outnumber the most work processes it had.
        if wps.max(initial=0) + 1 > self.proll.shape[1]:
            roll = np.zeros((self.proll.shape[0], int(wps.max()) + 1))
            roll[:, : self.proll.shape[1]] = self.proll
            self.proll = roll
        delta = wps - self.ptotal
        self.ptotal[:] = wps
        self.pidle += delta
        wake = np.flatnonzero((delta > 0) & (self.qn > 0))
        if wake.size:
            self.pwake[wake] = self.now
            self._push(np.full(wake.size, self.now), wake * 8 + self._k.K_FREE)

    def _add_users(self, net: Network) -> None:
        """Log users on or off until every instance has its share of the scenario's users.
        New users start thinking; leaving users log off when their think time ends."""
        gui = float(np.dot(net.mix, [c.gui_s for c in net.classes[: net.n_tx]]))
        first = net.think_s + gui  # about a user's cycle when nothing queues
        for i, lay in enumerate(net.layout):
            alive = self.inst_users[i]
            while len(alive) > lay.users:
                self.ualive[alive.pop()] = 0
            missing = lay.users - len(alive)
            if missing <= 0:
                continue
            draws = self._rng_misc.exponential(first, missing) if first > 0 else np.zeros(missing)
            u0 = self.n_users
            self.n_users += missing
            while self.n_users > self.uinst.size:
                cap = max(2 * self.uinst.size, self.n_users)
                self.uinst = np.concatenate((self.uinst, np.zeros(cap - self.uinst.size, np.int64)))
                self.ualive = np.concatenate(
                    (self.ualive, np.zeros(cap - self.ualive.size, np.int8))
                )
            self.uinst[u0 : self.n_users] = i
            self.ualive[u0 : self.n_users] = 1
            alive.extend(range(u0, self.n_users))
            self._push(self.now + draws, np.arange(u0, self.n_users) * 8 + self._k.K_THINK)

    def _apply_stations(self, net: Network) -> None:
        """CPUs, enqueue work processes and devices as configured (servers added are free
        now; removed ones finish what they hold)."""
        now = self.now
        for s, cpus in enumerate(net.station_cpus):
            self._ps_update(s, now)
            self.scap[s] = cpus
            self._ps_schedule(s, now)

        def resize(have: np.ndarray, n: int) -> np.ndarray:
            return np.concatenate((have[:n], np.full(max(0, n - have.size), now)))

        if self.efree.size != net.enqueue_servers:
            self.efree = resize(np.sort(self.efree), net.enqueue_servers)
        self.dfree = resize(self.dfree, net.disks)
        self.logfree = resize(self.logfree, net.log_devices)
        self.lfree = resize(self.lfree, len(net.lock_names))
        self._share_log_disks(net)
        self._new_disk_stream()

    def _share_log_disks(self, net: Network) -> None:
        """A log on the data disks books its writes on the disks' own queues (one array),
        and its busy time counts as the disks' (the log accumulator is the disks' one)."""
        if net.log_on_data_disks:
            self.logfree = self.dfree
        self.log_acc = 0 if net.log_on_data_disks else 2
        self.ia[self._k.I_LOG_ACC] = self.log_acc
        # Write caches: a token bucket each (wb rows: data, log), in seconds of device time,
        # filled at the destage rate up to the cache's size; a write that finds its own
        # time there is acknowledged by the cache and destaged in the background (booked on
        # its device, nobody waits for it). One bucket (row 0) when the log is on the data
        # disks. A cache that was there keeps what it holds; a new one starts with room.
        k, ia, fa = self._k, self.ia, self.fa
        old, old_lb = getattr(self, "wb", None), int(ia[k.I_LB])
        wb = np.zeros((2, 3))
        for r, (cache, one) in enumerate(
            ((net.data_cache, net.write_s), (net.log_cache, net.log_write_s))
        ):
            depth = cache[2] * one if cache else 0.0
            was = old[old_lb if r else 0] if old is not None else None
            have = was[0] if was is not None and was[2] > 0 else depth
            wb[r] = (min(have, depth), self.now, one * cache[1] if cache else 0.0)
            ia[k.I_DCACHE + r] = cache is not None
            fa[k.F_DACK + r] = cache[0] if cache else 0.0
            fa[k.F_DDEPTH + r] = depth
        self.wb = wb
        ia[k.I_LB] = 0 if net.log_on_data_disks else 1

    def _ps_update(self, s: int, now: float) -> None:
        """Bring station s's virtual time and busy time up to now."""
        n, c, dt = self.sn[s], self.scap[s], now - self.sT[s]
        if dt > 0.0 and n:
            share = min(1.0, c / n)
            self.sV[s] += dt * share
        self.sT[s] = max(self.sT[s], now)

    def _ps_schedule(self, s: int, now: float) -> None:
        n, c = self.sn[s], self.scap[s]
        self.snext[s] = now + (self.sk[s, 0] - self.sV[s]) * max(1.0, n / c) if n else INF

    def _switch(self, net: Network) -> None:
        """Make `net` the active configuration at the current time."""
        old = self.net
        if net.n_instances != old.n_instances or net.host_names != old.host_names:
            raise ValueError("a fault or override may not change the instances or hosts")
        if net.station_host != old.station_host or net.instance_station != old.instance_station:
            raise ValueError("a fault or override may not change where tenants are pinned")
        if net.lock_names != old.lock_names:
            raise ValueError("a fault or override may not change the locks")
        if [s[:4] for s in net.compiled.statements] != [s[:4] for s in old.compiled.statements]:
            raise ValueError("a fault or override may not change the statements")
        self._count_calls()
        self.net = net
        self.scenario = net.scenario
        self._set_params(net)
        self._apply_pools(net)
        for c in range(net.n_classes):
            self._new_block(c)
        self._apply_stations(net)
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
    def _advance(self, t_end: float) -> None:
        """Process every event up to and including t_end (`des_loop.advance`, compiled),
        refilling the blocks and streams it uses up and growing its arrays as it asks."""
        k, ia, fa = self._k, self.ia, self.fa
        net = self.net
        # The cleaners' background writes take their share of every disk's time: the disk
        # serves reads and synchronous writes that much slower (1 / (1 - their share)).
        fa[k.F_RS] = net.read_s * self.disk_stretch
        fa[k.F_WS] = net.write_s * self.disk_stretch
        while True:
            status = k.advance(
                t_end, ia, fa, self.ht, self.hc, self.uinst, self.ualive,
                self.jarr, self.jstart, self.jproc, self.jdb, self.jcls, self.jpool,
                self.juser, self.jnext, self.jrow, self.jlock, self.jfree,
                self.ptotal, self.pidle, self.proll, self.prn, self.qh, self.qt, self.qn,
                self.pwake, self.sV, self.sT, self.sn, self.scap, self.sk, self.sj,
                self.snext, self.sdone, self.sdone_db, self.efree, self.lfree, self.logfree,
                self.dfree, self.disk_acc, self.disk_ios, self.wb, self.B, self.BL, self.bp,
                self.txs, self.dsel, self.dsvc, self.dsum, self.pages, self.page_ops, self.rec,
                self.ihost, self.rmem, self.rfile, self.rshare, self.cgui,
            )  # fmt: skip
            if status == k.DONE:
                return
            if status == k.NEED_ROWS:
                c = int(ia[k.I_NEED])
                self._count_block(c)
                self._new_block(c)
                ia[k.I_NEED] = -1
            elif status == k.NEED_DISK:
                self._new_disk_stream()
            elif status == k.NEED_TX:
                self.txs = class_stream(self._rng_tx, net.mix)
                ia[k.I_TP] = 0
            elif status == k.NEED_PAGE:
                self.pages = self._rng_page.exponential(1.0, STREAM_SIZE)
                ia[k.I_PGP] = 0
            elif status == k.GROW_JOBS:
                self._alloc_jobs(2 * self.jarr.size)
            elif status == k.GROW_HEAP:
                self._grow("ht")
                self._grow("hc")
            elif status == k.GROW_REC:
                self._grow("rec")
            else:  # pragma: no cover - a status the loop does not return
                raise RuntimeError(f"des_loop.advance returned {status}")

    # ------------------------------------------------------------------ counting
    def _count_block(self, c: int) -> None:
        """Add the per-call draws of the rows the loop has taken since the last count."""
        block = self.blocks[c]
        taken = int(self.bp[c])
        if taken <= block.counted:
            return
        sc = self.net.classes[block.cls]
        sel = sc.statements
        lo, hi = block.counted, taken
        cum = self.cum
        ex = block.executions[lo:hi].sum(axis=0)
        cum["exec"][sel] += ex
        cum["rows"][sel] += ex * self.net.compiled.st_rows[sel]
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
        for c in range(len(self.blocks)):
            self._count_block(c)

    def _count_steps(self, t: float) -> None:
        """Add the steps whose response ended by t (and the stations' busy time)."""
        self._add_steps(t)
        net, tot, k = self.net, self.totals, self._k
        # CPU and disk time is counted as it elapses (I/Os booked ahead are not yet).
        # Work done so far: the bursts that have left, and what the others have received.
        sap, db_work = self.sdone.copy(), self.sdone_db.copy()
        cs_work = np.zeros_like(sap)
        k.work_done(
            t, self.sV, self.sT, self.sn, self.scap, self.sk, self.sj, self.jrow, sap, db_work,
            cs_work,
        )  # fmt: skip
        db = float(db_work[net.db_station])
        # The central services' CPU where it is on a station (else _add_steps counts it).
        cs = float(cs_work.sum()) + float(self.fa[k.F_CS_DONE])
        station = sap + db_work + cs_work
        if net.cs_station >= 0:
            station[net.cs_station] += float(self.fa[k.F_CS_DONE])
        # Stations to hosts: a host's pinned core sets add up to its CPUs.
        n_os = len(net.host_names)
        sap = np.bincount(net.station_host, weights=sap, minlength=n_os)
        total = sap + np.bincount(net.station_host, weights=db_work + cs_work, minlength=n_os)
        if net.cs_station >= 0:
            total[net.station_host[net.cs_station]] += float(self.fa[k.F_CS_DONE])
        n_app = net.n_app_hosts
        counted = self._counted_busy
        tot.host_cpu_seconds += (sap - counted["sap"])[:n_app]
        tot.os_cpu_busy_seconds += total - counted["total"]
        tot.db_cpu_seconds += db - counted["db"]
        tot.cs_cpu_seconds += cs - counted["cs"]
        tot.cpu_station_busy_seconds += station - counted["station"]
        counted.update(sap=sap, total=total, db=db, cs=cs, station=station)
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
        ahead = float(np.maximum(self.dfree - t, 0.0).sum()) / self.disk_stretch
        disk_real = self.disk_acc[0] - ahead
        tot.disk_busy_seconds += disk_real - self._counted_disk
        self._counted_disk = disk_real
        tot.sim_time = t

    def _add_steps(self, t: float) -> None:
        """Add the steps whose response ended by t (the records are summed per tick, in
        the order they were made, so a tick's numbers do not depend on when snapshots
        are taken: fast and real-time runs agree)."""
        net, tot, k, c = self.net, self.totals, self._k, self._tick_counts
        n_rec = int(self.ia[k.I_NREC])
        if not n_rec:
            return
        for a in c.values():
            a.fill(0)
        self.ia[k.I_NREC] = k.count_records(
            t, self.rec, n_rec, self._comp_src, net.n_tx, net.update_roll_s, self.rmem,
            self.rfile, self.cgui, _EDGES, c["steps"], c["seconds"], c["db_calls"],
            c["buckets"], c["dialog"], c["infile"], c["db_time"],
        )  # fmt: skip
        if not c["steps"].any():
            return
        tot.steps += c["steps"].reshape(tot.steps.shape)
        tot.seconds += c["seconds"].reshape(tot.seconds.shape)
        tot.db_calls += c["db_calls"].reshape(tot.db_calls.shape)
        tot.bucket_counts += c["buckets"].reshape(tot.bucket_counts.shape)
        # Dialog steps per instance drive the SAP buffers, the message server, the roll file.
        per_inst = c["dialog"]
        tot.sap_buffer_requests += per_inst[:, None] * net.sap_requests_per_step
        tot.sap_buffer_hits += per_inst[:, None] * net.sap_hits_per_step
        tot.sap_buffer_swaps += per_inst[:, None] * net.sap_swaps_per_step
        if net.cs_station < 0:
            # Counted, not queued for (on a CPU station its bursts are counted as done).
            msg = per_inst.sum() * net.message_server_cpu_s_per_step
            tot.cs_cpu_seconds += msg
            tot.os_cpu_busy_seconds[net.cs_host] += msg
        if c["infile"].any():
            self._roll_file(c["infile"])
        # ST05: a step's DB request time is shared by its statements (see Network).
        tot.stmt_seconds += c["db_time"] @ net.statement_shares

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
            return self._snapshot(self.totals, self._state(*self._window()))

    def _window(self) -> tuple[Totals, float, float]:
        """The counts over the last STATE_WINDOW_S (from the newest earlier snapshot at least
        that old; the run so far while it is shorter), with the log's busy and the enqueue
        server's booked seconds over the same time."""
        tot, now = self.totals, self.totals.sim_time
        extra = (float(self.disk_acc[2]), float(self.fa[self._k.F_E_BOOKED]))
        h = self._history
        if not h or h[-1][0].sim_time < now:
            h.append((tot.copy(), *extra))
        while len(h) > 1 and h[1][0].sim_time <= now - STATE_WINDOW_S:
            h.popleft()
        base, log0, enq0 = h[0]
        if now - base.sim_time < STATE_WINDOW_S:
            return tot, *extra
        win = Totals(**{k: v - getattr(base, k) for k, v in vars(tot).items()})
        return win, extra[0] - log0, extra[1] - enq0

    def queue_lengths(self) -> dict[str, np.ndarray]:
        """Now: dispatcher queue and busy work processes per [instance, task type]."""
        with self._lock:
            return self._gauges()

    def _gauges(self) -> dict[str, np.ndarray]:
        n_i = self.net.n_instances
        t = self.now
        queue = self.qn.astype(float).reshape(n_i, 2)
        n_roll = self.prn
        live = np.arange(self.proll.shape[1]) < n_roll[:, None]
        rolling = (live & (self.proll > t)).sum(axis=1)
        idle = self.pidle + (n_roll - rolling)
        busy = self.ptotal - np.maximum(idle, 0)
        return {
            "dispatcher_queue": queue,
            "wp_busy": busy.reshape(n_i, 2).astype(float),
            "wp_total": np.array(self.ptotal, dtype=float).reshape(n_i, 2),
        }

    def _state(self, tot: Totals, log_busy_s: float, enqueue_booked_s: float) -> OperatingPoint:
        """The current state as the collectors read it: gauges now, rates and means over
        `tot`, the counts of the last STATE_WINDOW_S (`_window`)."""
        net = self.net
        cn = net.compiled
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
        rolls = cn.roll
        return OperatingPoint(
            instances=[lay.name for lay in net.layout],
            hosts=list(land.app_servers.hosts),
            transactions=list(cn.tx_names),
            statements=list(cn.statements),
            statement_sql=list(cn.statement_sql),
            statement_ids=[statement_hash(text) for text in cn.statement_sql],
            instance_host=np.array(net.instance_host),
            bufferpools=list(cn.pools),
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
            **sap_buffers(net.scenario.landscape, x_inst),
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
                else log_busy_s / (net.log_devices * span)
            ),
            enqueue_util=float(
                enqueue_booked_s / (land.central_services.enqueue_work_processes * span)
            ),
            # The central services' CPUs are their host's (an application server's when
            # they share one: `central_services.cpus` is then unset).
            cs_cpu_util=float(
                tot.cs_cpu_seconds / (land.host(land.central_services.host).cpus * span)
            ),
            db_calls_per_step=calls,
        )
