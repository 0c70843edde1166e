"""The operating point of a scenario: steady-state means of every ST03 component.

Method (documented in docs/model.md): a closed network solved per configuration.
Each instance's dispatcher and dialog work processes form a finite-source M/M/c//N
queue (its users think for Z plus their front-end time); the work-process holding time
is built from the shared resources it visits (host CPUs, database CPUs, disks, enqueue
server), each an M/M/c station whose load is the whole landscape's. The coupled system
is solved by nested bisection on throughput (landscape, then host), which converges
because every station's delay rises with its load.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from exporters.model.config import Scenario, StepDemand
from exporters.model.queueing import MAX_UTILISATION, finite_source, mmc_stretch, mmc_wait
from exporters.model.sqltext import sql_text, statement_hash
from exporters.vocabulary import COMPONENTS, RESPONSE_PARTS, TASK_TYPES


def bisect_decreasing(
    g: Callable[[float], float], lo: float, hi: float, rel_tol: float = 1e-7
) -> float:
    """Root of x -> g(x) - x where g is non-increasing (a unique fixed point)."""
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if g(mid) > mid:
            lo = mid
        else:
            hi = mid
        if hi - lo <= rel_tol * max(hi, 1e-12):
            break
    return 0.5 * (lo + hi)


@dataclass(frozen=True)
class InstanceLayout:
    name: str
    host: str
    users: int
    dialog_wps: int
    update_wps: int


def instance_layout(scenario: Scenario) -> list[InstanceLayout]:
    """Instances host by host, users spread evenly as logon groups would spread them."""
    land = scenario.landscape
    apps = land.app_servers
    names = [
        (host, f"{host}_{apps.instance_numbers[k]}")
        for host in apps.hosts
        for k in range(apps.instances_per_host)
    ]
    base, extra = divmod(scenario.users, len(names))
    unknown = set(land.instance_overrides) - {n for _, n in names}
    if unknown:
        raise ValueError(f"instance_overrides: unknown instance(s) {sorted(unknown)}")
    layout = []
    for idx, (host, name) in enumerate(names):
        over = land.instance_overrides.get(name, {})
        layout.append(
            InstanceLayout(
                name=name,
                host=host,
                users=base + (1 if idx < extra else 0),
                dialog_wps=int(
                    over.get("dialog_work_processes", land.instance.dialog_work_processes)
                ),
                update_wps=int(
                    over.get("update_work_processes", land.instance.update_work_processes)
                ),
            )
        )
    return layout


@dataclass
class OperatingPoint:
    """Steady-state rates and per-step means; arrays are indexed as documented per field."""

    instances: list[str]
    hosts: list[str]
    transactions: list[str]
    statements: list[tuple[str, str, str, str]]  # (transaction, task_type, table, op)
    statement_sql: list[str]  # the SQL text of each statement
    statement_ids: list[str]  # its hash, the id ST05 and Loki use (computed once here)
    instance_host: np.ndarray  # [instance] index of the instance's host in `hosts`
    bufferpools: list[str]
    # [instance, task_type, transaction]: steps per second
    step_rate: np.ndarray
    # [instance, task_type, transaction, component]: mean seconds per step
    means: np.ndarray
    # [instance, task_type]: response-time bucket probabilities over BUCKETS (+Inf last)
    bucket_probs: np.ndarray
    # [instance, task_type]
    wp_total: np.ndarray
    wp_busy: np.ndarray
    dispatcher_queue: np.ndarray
    # [instance]: roll area
    roll_buffer_size: np.ndarray
    roll_buffer_used: np.ndarray
    em_size: np.ndarray
    em_used: np.ndarray
    roll_file_bytes_rate: np.ndarray
    # SAP buffers (ST02), [buffer] names and [instance, buffer] rates and sizes
    sap_buffers: list[str]
    sap_buffer_request_rate: np.ndarray
    sap_buffer_hit_rate: np.ndarray
    sap_buffer_swap_rate: np.ndarray
    sap_buffer_size: np.ndarray
    sap_buffer_used: np.ndarray
    # [statement]: executions/s, rows/s, elapsed seconds per execution
    stmt_exec_rate: np.ndarray
    stmt_rows_rate: np.ndarray
    stmt_time: np.ndarray
    # [bufferpool]: per second
    pool_data_logical: np.ndarray
    pool_data_physical: np.ndarray
    pool_index_logical: np.ndarray
    pool_index_physical: np.ndarray
    pool_data_writes: np.ndarray
    pool_async_data_writes: np.ndarray
    pool_index_writes: np.ndarray
    pool_async_index_writes: np.ndarray
    # utilisations 0..1
    host_cpu_util: np.ndarray
    db_cpu_util: float
    disk_util: float
    enqueue_util: float
    cs_cpu_util: float
    db_calls_per_step: np.ndarray  # [task_type, transaction]

    def blend_toward(self, target: OperatingPoint, weight: float) -> OperatingPoint:
        """self moved a fraction `weight` of the way to target (queues settling)."""
        out = {}
        for name, value in vars(self).items():
            tv = getattr(target, name)
            if isinstance(value, float) or (
                isinstance(value, np.ndarray) and value.dtype.kind == "f"
            ):
                out[name] = value + (tv - value) * weight
            else:
                out[name] = tv
        return OperatingPoint(**out)


# Response-time histogram bucket upper bounds in seconds; ST03's own distribution
# (STAD "response time distribution") uses a similar ladder up to and past 2 s.
BUCKETS = (0.05, 0.1, 0.2, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0)


class Solver:
    """Computes the OperatingPoint of one (faulted) scenario."""

    def __init__(self, scenario: Scenario, histogram_samples: int = 20000, seed: int = 0) -> None:
        self.sc = scenario
        self.land = scenario.landscape
        self.layout = instance_layout(scenario)
        self.tx_names = list(scenario.transactions)
        self.pools = [p.name for p in self.land.database.bufferpools]
        self.pool_index = {n: i for i, n in enumerate(self.pools)}
        self.histogram_samples = histogram_samples
        self.seed = seed
        self._prepare()

    # ---------------------------------------------------------------- static demands
    def _prepare(self) -> None:
        sc, db = self.sc, self.land.database
        cycle = sc.steps_per_cycle
        n_tx = len(self.tx_names)
        # Dialog steps of transaction t per dialog step of the mix; updates per dialog step.
        self.mix = np.array([sc.transactions[t].dialog_steps / cycle for t in self.tx_names])
        self.upd_per_step = np.array(
            [
                (1.0 / sc.transactions[t].dialog_steps) if sc.transactions[t].update else 0.0
                for t in self.tx_names
            ]
        )
        ws = np.array([p.working_set_pages for p in db.bufferpools], dtype=float)
        pages = np.array([p.pages for p in db.bufferpools], dtype=float)
        floor = np.array([p.miss_floor for p in db.bufferpools])
        # Miss ratio falls steeply as the pool covers more of the working set; skewed
        # access means the hottest pages are cached first (exponent > 1).
        uncovered = np.clip(1.0 - pages / ws, 0.0, 1.0)
        self.miss = floor + (1.0 - floor) * uncovered**db.hit_curve_exponent
        self.statements: list[tuple[str, str, str, str]] = []
        self.statement_sql: list[str] = []
        rows = []
        for ti, t in enumerate(self.tx_names):
            tx = sc.transactions[t]
            for k, part in enumerate(TASK_TYPES):
                demand: StepDemand | None = tx.dialog if part == "dialog" else tx.update
                if demand is None:
                    continue
                for st in demand.statements:
                    table = self.land.tables[st.table]
                    self.statements.append((t, part, st.table, st.op))
                    self.statement_sql.append(sql_text(st.table, st.op, st.where))
                    rows.append(
                        (
                            ti,
                            k,
                            st.calls,
                            st.rows,
                            st.data_reads,
                            st.index_reads,
                            st.page_writes,
                            self.pool_index[table.data_pool],
                            self.pool_index[table.index_pool],
                        )
                    )
        arr = np.array(rows, dtype=float).reshape(-1, 9)
        self.st_tx = arr[:, 0].astype(int)
        self.st_task = arr[:, 1].astype(int)
        self.st_calls, self.st_rows = arr[:, 2], arr[:, 3]
        self.st_dreads, self.st_ireads, self.st_writes = arr[:, 4], arr[:, 5], arr[:, 6]
        self.st_dpool, self.st_ipool = arr[:, 7].astype(int), arr[:, 8].astype(int)
        self.st_phys = (
            self.st_dreads * self.miss[self.st_dpool] + self.st_ireads * self.miss[self.st_ipool]
        )
        self.st_cpu = (
            db.cpu_s_per_call
            + (self.st_dreads + self.st_ireads) * db.cpu_s_per_logical_read
            + self.st_phys * db.cpu_s_per_physical_read
        )
        # Steps of each (task_type, transaction) per dialog step of the mix.
        self.steps_per_mix = np.zeros((2, n_tx))
        self.steps_per_mix[0] = self.mix
        self.steps_per_mix[1] = self.mix * self.upd_per_step
        # Statement executions per dialog step of the mix.
        self.st_exec_per_mix = self.st_calls * self.steps_per_mix[self.st_task, self.st_tx]
        self.cpu_s = np.zeros((2, n_tx))
        self.enqueues = np.zeros((2, n_tx))
        self.commits = np.zeros((2, n_tx))
        self.gui = np.zeros((2, n_tx))
        for ti, t in enumerate(self.tx_names):
            tx = sc.transactions[t]
            self.gui[0, ti] = tx.gui_s
            for k, demand in enumerate((tx.dialog, tx.update)):
                if demand is None:
                    continue
                self.cpu_s[k, ti] = demand.cpu_s
                self.enqueues[k, ti] = demand.enqueues
                self.commits[k, ti] = demand.commits
        self.db_calls = np.zeros((2, n_tx))
        np.add.at(self.db_calls, (self.st_task, self.st_tx), self.st_calls)
        self.db_cpu_per_mix = float(np.dot(self.st_exec_per_mix, self.st_cpu))
        self.phys_per_mix = float(np.dot(self.st_exec_per_mix, self.st_phys))
        # Pages a statement dirties are written later, by I/O cleaners or by the agent
        # itself; a share of them are index pages, which live in the table's index pool.
        # A page is dirtied many times before it is written (CHNGPGS_THRESH).
        dirtied = self.st_exec_per_mix * self.st_writes * db.pages_written_per_page_dirtied
        self.data_writes_per_mix = np.zeros(len(self.pools))
        self.index_writes_per_mix = np.zeros(len(self.pools))
        np.add.at(
            self.data_writes_per_mix, self.st_dpool, dirtied * (1.0 - db.index_share_of_page_writes)
        )
        np.add.at(self.index_writes_per_mix, self.st_ipool, dirtied * db.index_share_of_page_writes)
        self.writes_per_mix_by_pool = self.data_writes_per_mix + self.index_writes_per_mix
        self.enq_per_mix = float((self.enqueues * self.steps_per_mix).sum())

    # ---------------------------------------------------------------- shared resources
    def _database(self, x_total: float) -> dict[str, float | np.ndarray]:
        db = self.land.database
        util_cpu = x_total * self.db_cpu_per_mix / db.cpus
        data_w = x_total * self.data_writes_per_mix
        index_w = x_total * self.index_writes_per_mix
        capacity = db.io_cleaners * db.io_cleaner_pages_per_s
        total_w = float(data_w.sum() + index_w.sum())
        # Cleaners write what they can keep up with; the rest is written synchronously by
        # the agent that needs the page (pool_data_writes > pool_async_data_writes).
        async_share = min(1.0, capacity / total_w) if total_w > 0 else 1.0
        sync_share = 1.0 - async_share
        io_rate = x_total * self.phys_per_mix + total_w
        util_disk = io_rate * db.disks.service_s / db.disks.count
        disk_time = (
            db.disks.service_s / (1.0 - min(util_disk, MAX_UTILISATION)) + db.disks.added_latency_s
        )
        # The CPUs are shared by many DB2 agents (processor sharing): a call's residence
        # stretches with its own demand. The queueing part is scaled by (1 + cv^2) / 2
        # (Allen-Cunneen) for the spread of call demands, cheap key lookups beside long
        # VA05 range scans.
        queueing = (mmc_stretch(db.cpus, util_cpu) - 1.0) * (1.0 + db.cpu_service_cv**2) / 2.0
        st_time = (
            db.call_rtt_s
            + self.st_cpu * (1.0 + queueing)
            + self.st_phys * disk_time
            + self.st_writes * sync_share * disk_time
        )
        return {
            "util_cpu": util_cpu,
            "util_disk": util_disk,
            "disk_time": disk_time,
            "cpu_queueing": queueing,
            "st_time": st_time,
            "data_writes": data_w,
            "async_data_writes": data_w * async_share,
            "index_writes": index_w,
            "async_index_writes": index_w * async_share,
        }

    def _db_time_per_step(self, st_time: np.ndarray) -> np.ndarray:
        per_step = np.zeros((2, len(self.tx_names)))
        np.add.at(per_step, (self.st_task, self.st_tx), self.st_calls * st_time)
        return per_step + self.commits * self.land.database.log_write_s

    def _enqueue_time(self, x_total: float) -> tuple[float, float]:
        cs = self.land.central_services
        rate = x_total * self.enq_per_mix
        util = rate * cs.enqueue_service_s / cs.enqueue_work_processes
        wait = mmc_wait(cs.enqueue_work_processes, rate, cs.enqueue_service_s)
        if not np.isfinite(wait):
            wait = cs.enqueue_service_s / (1.0 - MAX_UTILISATION)
        return cs.link_rtt_s + cs.enqueue_service_s + wait, util

    def _roll(self, users: int) -> dict[str, float]:
        """Roll area of one instance: what fits in extended memory, roll buffer, roll file."""
        roll = self.land.instance.roll
        em_need = users * roll.user_em_bytes
        em_missing = max(0.0, 1.0 - roll.extended_memory_bytes / em_need) if em_need else 0.0
        # A context that does not fit extended memory is copied through the roll area.
        roll_bytes = roll.user_roll_bytes + em_missing * roll.user_em_bytes
        roll_need = users * roll_bytes
        to_file = max(0.0, 1.0 - roll.roll_buffer_bytes / roll_need) if roll_need else 0.0
        copy = roll_bytes / roll.copy_bytes_per_s
        file_io = roll.roll_file_latency_s + roll_bytes / roll.roll_file_bytes_per_s
        t = roll.em_map_s + copy + to_file * file_io
        return {
            "roll_in": t,
            "roll_out": t,
            "to_file": to_file,
            "roll_bytes": roll_bytes,
            "em_used": min(em_need, roll.extended_memory_bytes),
            "roll_used": min(roll_need, roll.roll_buffer_bytes),
        }

    # ---------------------------------------------------------------- the closed loop
    def _host_solution(
        self, host_insts: list[int], roll: list[dict], db_times: np.ndarray, enq_req: float
    ):
        """Throughput of one host's instances given the landscape-wide delays."""
        land, sc = self.land, self.sc
        cpus = land.app_servers.cpus
        mix = self.mix
        gui_dialog = float(np.dot(mix, self.gui[0]))
        enq_dialog = self.enqueues[0] * enq_req
        cpu_upd_per_step = float(np.dot(mix * self.upd_per_step, self.cpu_s[1]))

        def per_instance(util: float) -> list[tuple]:
            stretch = mmc_stretch(cpus, util)
            res = []
            for i in host_insts:
                lay = self.layout[i]
                r = roll[i]
                base = r["roll_in"] + land.instance.load_gen_s + r["roll_out"]
                hold_t = base + self.cpu_s[0] * stretch + db_times[0] + enq_dialog
                hold = float(np.dot(mix, hold_t))
                think = sc.think_time_s + gui_dialog - r["roll_out"]
                fs = finite_source(lay.users, lay.dialog_wps, max(think, 1e-9), hold)
                res.append((fs, hold_t, stretch))
            return res

        def cpu_load(x_host: float) -> float:
            return x_host * (float(np.dot(mix, self.cpu_s[0])) + cpu_upd_per_step) / cpus

        def g(x_host: float) -> float:
            return sum(fs.throughput for fs, _, _ in per_instance(cpu_load(x_host)))

        upper = sum(self.layout[i].users for i in host_insts) / max(sc.think_time_s, 1e-3)
        # CPU saturation bounds the host as well.
        per_step_cpu = float(np.dot(mix, self.cpu_s[0])) + cpu_upd_per_step
        if per_step_cpu > 0:
            upper = min(upper, MAX_UTILISATION * cpus / per_step_cpu)
        x_host = bisect_decreasing(g, 0.0, upper)
        util = cpu_load(x_host)
        return per_instance(util), util

    def solve(self) -> OperatingPoint:
        sc, land = self.sc, self.land
        hosts = land.app_servers.hosts
        host_members = {h: [i for i, lay in enumerate(self.layout) if lay.host == h] for h in hosts}
        roll = [self._roll(lay.users) for lay in self.layout]

        def landscape(x_total: float):
            dbr = self._database(x_total)
            db_times = self._db_time_per_step(dbr["st_time"])
            enq_req, enq_util = self._enqueue_time(x_total)
            # Hosts configured alike behave alike: solve each kind once.
            solved: dict[tuple, tuple] = {}
            hosts_out = {}
            for h, members in host_members.items():
                key = tuple(
                    (self.layout[i].users, self.layout[i].dialog_wps, self.layout[i].update_wps)
                    for i in members
                )
                if key not in solved:
                    solved[key] = self._host_solution(members, roll, db_times, enq_req)
                hosts_out[h] = solved[key]
            return dbr, db_times, enq_req, enq_util, hosts_out

        def g(x_total: float) -> float:
            *_, hosts_out = landscape(x_total)
            return sum(fs.throughput for res, _ in hosts_out.values() for fs, _, _ in res)

        db = land.database
        upper = sc.users / max(sc.think_time_s, 1e-3)
        bounds = [
            db.cpus / self.db_cpu_per_mix if self.db_cpu_per_mix else np.inf,
            db.disks.count
            / (db.disks.service_s * (self.phys_per_mix + self.writes_per_mix_by_pool.sum()))
            if self.phys_per_mix
            else np.inf,
        ]
        if self.enq_per_mix:
            cs = land.central_services
            bounds.append(cs.enqueue_work_processes / (cs.enqueue_service_s * self.enq_per_mix))
        upper = min(upper, *(MAX_UTILISATION * b for b in bounds))
        x_total = bisect_decreasing(g, 0.0, upper)
        dbr, db_times, enq_req, enq_util, hosts_out = landscape(x_total)
        return self._assemble(x_total, dbr, db_times, enq_req, enq_util, hosts_out, roll)

    # ---------------------------------------------------------------- results
    def _assemble(
        self, x_total, dbr, db_times, enq_req, enq_util, hosts_out, roll
    ) -> OperatingPoint:
        land, sc = self.land, self.sc
        n_inst, n_tx = len(self.layout), len(self.tx_names)
        hosts = land.app_servers.hosts
        step_rate = np.zeros((n_inst, 2, n_tx))
        means = np.zeros((n_inst, 2, n_tx, len(COMPONENTS)))
        wp_total = np.zeros((n_inst, 2))
        wp_busy = np.zeros((n_inst, 2))
        dqueue = np.zeros((n_inst, 2))
        host_util = np.zeros(len(hosts))
        buckets = np.zeros((n_inst, 2, len(BUCKETS) + 1))
        rng = np.random.default_rng(self.seed)
        c = {name: k for k, name in enumerate(COMPONENTS)}
        cpu_upd_stretch = {}
        for hi, h in enumerate(hosts):
            res, util = hosts_out[h]
            host_util[hi] = util
            members = [i for i, lay in enumerate(self.layout) if lay.host == h]
            for (fs, hold_t, stretch), i in zip(res, members, strict=True):
                cpu_upd_stretch[i] = stretch
                lay, r = self.layout[i], roll[i]
                x_i = fs.throughput
                step_rate[i, 0] = x_i * self.mix
                m = means[i, 0]
                m[:, c["dispatcher_wait"]] = fs.mean_wait
                m[:, c["roll_in"]] = r["roll_in"]
                m[:, c["roll_out"]] = r["roll_out"]
                m[:, c["load_gen"]] = land.instance.load_gen_s
                m[:, c["cpu"]] = self.cpu_s[0]
                m[:, c["processing"]] = self.cpu_s[0] * stretch
                m[:, c["db_request"]] = db_times[0]
                m[:, c["enqueue"]] = self.enqueues[0] * enq_req
                m[:, c["gui"]] = self.gui[0]
                wp_total[i, 0] = lay.dialog_wps
                wp_busy[i, 0] = fs.busy_servers
                dqueue[i, 0] = fs.mean_queue
                hold = float(np.dot(self.mix, hold_t))
                buckets[i, 0] = self._dialog_buckets(fs, lay.dialog_wps, hold, m, rng)
                # V1 updates: an open M/M/c queue fed by this instance's dialog commits.
                u_rate = x_i * self.mix * self.upd_per_step
                step_rate[i, 1] = u_rate
                mu = means[i, 1]
                # An update work process rolls in the update task's own small context,
                # not the user's: the user's roll area does not reach it.
                u_roll = (
                    land.instance.roll.em_map_s
                    + land.instance.roll.user_roll_bytes / land.instance.roll.copy_bytes_per_s
                )
                u_hold_t = (
                    2 * u_roll
                    + land.instance.load_gen_s
                    + self.cpu_s[1] * stretch
                    + db_times[1]
                    + self.enqueues[1] * enq_req
                )
                total_u = u_rate.sum()
                u_hold = float(np.dot(u_rate, u_hold_t) / total_u) if total_u else 0.0
                u_wait = mmc_wait(lay.update_wps, total_u, u_hold)
                if not np.isfinite(u_wait):
                    u_wait = sc.relaxation_s  # backlog grows; report it as a long wait
                mu[:, c["dispatcher_wait"]] = u_wait
                mu[:, c["roll_in"]] = u_roll
                mu[:, c["roll_out"]] = u_roll
                mu[:, c["load_gen"]] = land.instance.load_gen_s
                mu[:, c["cpu"]] = self.cpu_s[1]
                mu[:, c["processing"]] = self.cpu_s[1] * stretch
                mu[:, c["db_request"]] = db_times[1]
                mu[:, c["enqueue"]] = self.enqueues[1] * enq_req
                mu[:, c["gui"]] = 0.0
                wp_total[i, 1] = lay.update_wps
                wp_busy[i, 1] = min(lay.update_wps, total_u * u_hold)
                a = total_u * u_hold
                dqueue[i, 1] = total_u * u_wait if a < lay.update_wps else total_u * sc.relaxation_s
                buckets[i, 1] = self._update_buckets(u_wait, u_hold, rng)
        parts = [c[p] for p in RESPONSE_PARTS]
        means[..., c["response"]] = means[..., parts].sum(axis=-1)
        # Statements: the executions per dialog step of the mix times landscape throughput.
        stmt_exec = x_total * self.st_exec_per_mix
        pool_n = len(self.pools)
        dl, dp, il, ip = (np.zeros(pool_n) for _ in range(4))
        np.add.at(dl, self.st_dpool, stmt_exec * self.st_dreads)
        np.add.at(dp, self.st_dpool, stmt_exec * self.st_dreads * self.miss[self.st_dpool])
        np.add.at(il, self.st_ipool, stmt_exec * self.st_ireads)
        np.add.at(ip, self.st_ipool, stmt_exec * self.st_ireads * self.miss[self.st_ipool])
        roll_cfg = land.instance.roll
        cs = land.central_services
        x_inst = step_rate[:, 0].sum(axis=1)
        return OperatingPoint(
            instances=[lay.name for lay in self.layout],
            hosts=list(hosts),
            transactions=list(self.tx_names),
            statements=list(self.statements),
            statement_sql=list(self.statement_sql),
            statement_ids=[statement_hash(text) for text in self.statement_sql],
            instance_host=np.array([hosts.index(lay.host) for lay in self.layout]),
            bufferpools=list(self.pools),
            step_rate=step_rate,
            means=means,
            bucket_probs=buckets,
            wp_total=wp_total,
            wp_busy=wp_busy,
            dispatcher_queue=dqueue,
            roll_buffer_size=np.full(n_inst, float(roll_cfg.roll_buffer_bytes)),
            roll_buffer_used=np.array([r["roll_used"] for r in roll]),
            em_size=np.full(n_inst, float(roll_cfg.extended_memory_bytes)),
            em_used=np.array([r["em_used"] for r in roll]),
            roll_file_bytes_rate=np.array(
                [
                    2.0 * x_inst[i] * roll[i]["to_file"] * roll[i]["roll_bytes"]
                    for i in range(n_inst)
                ]
            ),
            **self._sap_buffers(x_inst),
            stmt_exec_rate=stmt_exec,
            stmt_rows_rate=stmt_exec * self.st_rows,
            stmt_time=dbr["st_time"],
            pool_data_logical=dl,
            pool_data_physical=dp,
            pool_index_logical=il,
            pool_index_physical=ip,
            pool_data_writes=dbr["data_writes"],
            pool_async_data_writes=dbr["async_data_writes"],
            pool_index_writes=dbr["index_writes"],
            pool_async_index_writes=dbr["async_index_writes"],
            host_cpu_util=host_util,
            db_cpu_util=float(dbr["util_cpu"]),
            disk_util=float(dbr["util_disk"]),
            enqueue_util=float(enq_util),
            cs_cpu_util=float(min(1.0, x_total * cs.message_server_cpu_s_per_step / cs.cpus)),
            db_calls_per_step=self.db_calls.copy(),
        )

    def _sap_buffers(self, x_inst: np.ndarray) -> dict:
        """Hits follow the same curve as the DB pools; a buffer too small for its working
        set displaces entries (a swap) for every miss that needs room."""
        bufs = self.land.instance.buffers
        n_inst = x_inst.size
        size = np.array([b.size_bytes for b in bufs], dtype=float)
        ws = np.array([b.working_set_bytes for b in bufs], dtype=float)
        floor = np.array([b.miss_floor for b in bufs])
        uncovered = np.clip(1.0 - size / ws, 0.0, 1.0) if bufs else np.zeros(0)
        miss = floor + (1.0 - floor) * uncovered**self.land.database.hit_curve_exponent
        req = np.outer(x_inst, [b.requests_per_step for b in bufs])
        return {
            "sap_buffers": [b.name for b in bufs],
            "sap_buffer_request_rate": req,
            "sap_buffer_hit_rate": req * (1.0 - miss),
            "sap_buffer_swap_rate": req * miss * (uncovered > 0),
            "sap_buffer_size": np.tile(size, (n_inst, 1)),
            "sap_buffer_used": np.tile(np.minimum(size, ws), (n_inst, 1)),
        }

    def _dialog_buckets(self, fs, servers: int, hold: float, m: np.ndarray, rng) -> np.ndarray:
        """Response distribution: wait (from the arrival distribution) + service + GUI."""
        n = self.histogram_samples
        dist = fs.arrival_distribution
        if dist.size <= 1 or hold <= 0:
            return _bucketize(np.zeros(1))
        seen = rng.choice(dist.size, size=n, p=dist)
        ahead = np.maximum(seen - servers + 1, 0)
        # Waiting for `ahead` departures, each at rate servers/hold.
        wait = np.where(ahead > 0, rng.gamma(np.maximum(ahead, 1), hold / servers), 0.0)
        service = self._service_samples(float(np.dot(self.mix, self._rest(m))), n, rng)
        return _bucketize(wait + service)

    def _rest(self, m: np.ndarray) -> np.ndarray:
        c = {name: k for k, name in enumerate(COMPONENTS)}
        return sum(m[:, c[p]] for p in RESPONSE_PARTS if p != "dispatcher_wait")

    def _service_samples(self, mean: float, n: int, rng) -> np.ndarray:
        if mean <= 0:
            return np.zeros(n)
        shape = 1.0 / self.sc.histogram_cv**2
        return rng.gamma(shape, mean / shape, size=n)

    def _update_buckets(self, wait: float, hold: float, rng) -> np.ndarray:
        n = self.histogram_samples
        w = rng.exponential(wait, size=n) if wait > 0 else np.zeros(n)
        return _bucketize(w + self._service_samples(hold, n, rng))


def _bucketize(samples: np.ndarray) -> np.ndarray:
    edges = np.array((*BUCKETS, np.inf))
    idx = np.searchsorted(edges, samples, side="left")
    counts = np.bincount(idx, minlength=len(edges)).astype(float)
    return counts / max(samples.size, 1)
