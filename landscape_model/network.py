"""A scenario compiled into the network both engines run: what each step asks of which station.

`compile_network` derives, once per (faulted) scenario, everything that does not depend on
the operating point: the instances and their users, the transaction mix, the statements and
their calls per step, the buffer pools' miss ratios, each call's DB CPU, the CPU stations
(placement.py), disks, log, enqueue server and locks with their servers and copies, every
(task type, transaction)'s demand per step at each of them, and each instance's roll area.
The analytic solver (solver.py) solves it; the discrete-event engine reshapes it into the
event loop's flat parameters (des_network.py) and simulates it. Neither derives a demand of
its own, so both engines run on one set of numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from landscape_model.config import Landscape, Scenario, StepDemand
from landscape_model.placement import Placement, place
from landscape_model.sqltext import sql_text
from landscape_model.terms import TASK_TYPES

DIALOG, UPDATE = 0, 1  # task type index, the order of TASK_TYPES


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
        (host, f"{host}_{apps.numbers[k]}") for host in apps.hosts for k in range(apps.instances)
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


@dataclass(frozen=True, eq=False)
class CompiledNetwork:
    """A scenario's stations and demands. Arrays indexed [task, transaction] hold per-step
    figures of the steps of that task type (DIALOG, UPDATE) and transaction; `st_*` arrays
    are per statement (per execution unless said otherwise)."""

    scenario: Scenario
    layout: list[InstanceLayout]
    tx_names: list[str]
    pools: list[str]  # buffer pools
    placement: Placement  # which CPU station each tenant runs on, its memory stretch
    cpu_stretch: np.ndarray  # [instance] ABAP CPU stretch of remote memory
    # ---- the mix
    mix: np.ndarray  # [tx] share of dialog steps
    upd_per_step: np.ndarray  # [tx] V1 updates per dialog step
    steps_per_mix: np.ndarray  # [task, tx] steps per dialog step of the mix
    updates_per_step: float  # V1 updates per dialog step of the mix
    weights: np.ndarray  # [task, tx] share of the task type's steps
    # ---- statements
    miss: np.ndarray  # [pool] miss ratio
    lock_names: list[str]
    statements: list[tuple[str, str, str, str]]  # (transaction, task type, table, op)
    statement_sql: list[str]
    st_tx: np.ndarray
    st_task: np.ndarray
    st_calls: np.ndarray  # executions per step
    st_rows: np.ndarray
    st_dreads: np.ndarray  # logical data page reads
    st_ireads: np.ndarray  # logical index page reads
    st_writes: np.ndarray  # pages dirtied
    st_dpool: np.ndarray
    st_ipool: np.ndarray
    st_lock: np.ndarray  # index into lock_names, -1 for none
    st_phys: np.ndarray  # physical reads
    st_cpu: np.ndarray  # DB CPU seconds
    st_page_writes: np.ndarray  # pages written
    # ---- per (task, transaction) step
    cpu_s: np.ndarray  # ABAP CPU
    enqueues: np.ndarray
    commits: np.ndarray
    gui: np.ndarray
    db_calls: np.ndarray
    db_cpu: np.ndarray
    phys: np.ndarray
    page_writes_step: np.ndarray
    log_demand: np.ndarray
    lock_demand: np.ndarray  # [lock, task, tx]
    rtt: np.ndarray  # DB round trips
    enq_demand: np.ndarray  # the enqueue work processes' service (on cs_station if any)
    enq_rtt: np.ndarray
    msg_cpu: np.ndarray  # the message server's CPU (dialog steps)
    writes_per_mix: float  # pages written per dialog step of the mix
    # ---- stations
    app_hosts: list[str]
    host_station: dict[str, int]  # host -> its first CPU station
    inst_cpu_station: list[int]
    db_cpu_station: int
    disk_station: int
    log_station: int
    enqueue_station: int
    # The CPU station the central services' CPU (enq_demand + msg_cpu) is served on, -1
    # on a host of their own (placement.py): then the enqueue requests queue at
    # enqueue_station and the message server's CPU is counted, not queued for.
    cs_cpu_station: int
    lock_stations: list[int]
    station_names: list[str]
    station_servers: np.ndarray
    station_copies: np.ndarray
    read_s: float  # a data disk's page read
    write_s: float  # a data disk's page write
    log_write_s: float  # a commit's log write
    log_shared: bool  # the log queues on the data disks
    # ---- roll area
    roll: list[dict[str, float]]  # [instance] `roll_area`
    update_roll_s: float  # an update work process's roll-in (or roll-out)

    @property
    def land(self) -> Landscape:
        return self.scenario.landscape

    def per_step(self, per_call: np.ndarray) -> np.ndarray:
        """A per-execution statement quantity summed per step of each (task, transaction)."""
        return _per_step(self.st_task, self.st_tx, self.st_calls, len(self.tx_names), per_call)


def _per_step(task, tx, calls, n_tx: int, per_call: np.ndarray) -> np.ndarray:
    out = np.zeros((2, n_tx))
    np.add.at(out, (task, tx), calls * per_call)
    return out


def compile_network(scenario: Scenario) -> CompiledNetwork:
    """The scenario's static demands and stations (nothing here depends on a solve)."""
    sc, land = scenario, scenario.landscape
    db = land.database
    layout = instance_layout(sc)
    tx_names = list(sc.transactions)
    pools = [p.name for p in db.bufferpools]
    pool_index = {n: i for i, n in enumerate(pools)}
    placement = place(land)
    n_tx = len(tx_names)
    cycle = sc.steps_per_cycle
    mix = np.array([sc.transactions[t].dialog_steps / cycle for t in tx_names])
    upd_per_step = np.array(
        [
            (1.0 / sc.transactions[t].dialog_steps) if sc.transactions[t].update else 0.0
            for t in tx_names
        ]
    )
    ws = np.array([p.working_set_pages for p in db.bufferpools], dtype=float)
    pages = np.array([p.pages for p in db.bufferpools], dtype=float)
    floor = np.array([p.miss_floor for p in db.bufferpools])
    # Miss ratio falls steeply as the pool covers more of the working set; skewed
    # access means the hottest pages are cached first (exponent > 1).
    uncovered = np.clip(1.0 - pages / ws, 0.0, 1.0)
    miss = floor + (1.0 - floor) * uncovered**db.hit_curve_exponent
    lock_names = [lk.name for lk in db.locks]
    statements: list[tuple[str, str, str, str]] = []
    statement_sql: list[str] = []
    rows = []
    for ti, t in enumerate(tx_names):
        tx = sc.transactions[t]
        for k, part in enumerate(TASK_TYPES):
            demand: StepDemand | None = tx.dialog if part == "dialog" else tx.update
            if demand is None:
                continue
            for st in demand.statements:
                table = land.tables[st.table]
                statements.append((t, part, st.table, st.op))
                statement_sql.append(sql_text(st.table, st.op, st.where))
                rows.append(
                    (
                        ti,
                        k,
                        st.calls,
                        st.rows,
                        st.data_reads,
                        st.index_reads,
                        st.page_writes,
                        pool_index[table.data_pool],
                        pool_index[table.index_pool],
                        lock_names.index(st.lock) if st.lock else -1,
                    )
                )
    arr = np.array(rows, dtype=float).reshape(-1, 10)
    st_tx = arr[:, 0].astype(int)
    st_task = arr[:, 1].astype(int)
    st_calls, st_rows = arr[:, 2], arr[:, 3]
    st_dreads, st_ireads, st_writes = arr[:, 4], arr[:, 5], arr[:, 6]
    st_dpool, st_ipool = arr[:, 7].astype(int), arr[:, 8].astype(int)
    st_lock = arr[:, 9].astype(int)
    st_phys = st_dreads * miss[st_dpool] + st_ireads * miss[st_ipool]
    st_cpu = (
        db.cpu_s_per_call
        + (st_dreads + st_ireads) * db.cpu_s_per_logical_read
        + st_phys * db.cpu_s_per_physical_read
    ) * placement.db_stretch

    def per_step(per_call: np.ndarray) -> np.ndarray:
        return _per_step(st_task, st_tx, st_calls, n_tx, per_call)

    # Steps of each (task_type, transaction) per dialog step of the mix.
    steps_per_mix = np.zeros((2, n_tx))
    steps_per_mix[DIALOG] = mix
    steps_per_mix[UPDATE] = mix * upd_per_step
    # Share of each transaction in a task type's steps.
    totals = steps_per_mix.sum(axis=1, keepdims=True)
    weights = np.divide(steps_per_mix, totals, out=np.zeros_like(steps_per_mix), where=totals > 0)
    st_exec_per_mix = st_calls * steps_per_mix[st_task, st_tx]
    cpu_s = np.zeros((2, n_tx))
    enqueues = np.zeros((2, n_tx))
    commits = np.zeros((2, n_tx))
    gui = np.zeros((2, n_tx))
    for ti, t in enumerate(tx_names):
        tx = sc.transactions[t]
        gui[DIALOG, ti] = tx.gui_s
        for k, demand in enumerate((tx.dialog, tx.update)):
            if demand is None:
                continue
            cpu_s[k, ti] = demand.cpu_s
            enqueues[k, ti] = demand.enqueues
            commits[k, ti] = demand.commits
    # DB calls per step: each statement's calls once (a per-execution quantity of 1).
    db_calls = per_step(np.ones_like(st_calls))
    # Pages a statement dirties are written later, by I/O cleaners or by the agent
    # itself; a share of them are index pages, which live in the table's index pool.
    # A page is dirtied many times before it is written (CHNGPGS_THRESH).
    dirtied = st_exec_per_mix * st_writes * db.pages_written_per_page_dirtied
    data_writes_per_mix = np.zeros(len(pools))
    index_writes_per_mix = np.zeros(len(pools))
    np.add.at(data_writes_per_mix, st_dpool, dirtied * (1.0 - db.index_share_of_page_writes))
    np.add.at(index_writes_per_mix, st_ipool, dirtied * db.index_share_of_page_writes)
    # Pages written per statement execution (when the cleaners cannot keep up, the
    # agent writes them itself, synchronously).
    st_page_writes = st_writes * db.pages_written_per_page_dirtied

    # The shared stations of the landscape. CPU stations: a host's cores, or each set of
    # cores tenants are pinned to.
    names = [st.name for st in placement.stations]
    servers = [st.cores for st in placement.stations]
    copies = [1] * len(placement.stations)
    disk_station = len(names)
    names.append("disks")
    servers.append(1)
    copies.append(db.disks.count)
    log_station = len(names)
    names.append("log")
    servers.append(1)
    copies.append(db.log.count)
    enqueue_station = len(names)
    names.append("enqueue")
    servers.append(land.central_services.enqueue_work_processes)
    copies.append(1)
    lock_stations = list(range(len(names), len(names) + len(db.locks)))
    names += [f"lock:{lk.name}" for lk in db.locks]
    servers += [1] * len(db.locks)
    copies += [1] * len(db.locks)
    dev = land.devices
    lock_demand = np.zeros((len(db.locks), 2, n_tx))
    for li, lk in enumerate(db.locks):
        lock_demand[li] = per_step((st_lock == li) * lk.hold_s)
    roll = land.instance.roll
    return CompiledNetwork(
        scenario=sc,
        layout=layout,
        tx_names=tx_names,
        pools=pools,
        placement=placement,
        cpu_stretch=np.array(placement.instance_stretch),
        mix=mix,
        upd_per_step=upd_per_step,
        steps_per_mix=steps_per_mix,
        updates_per_step=float(steps_per_mix[UPDATE].sum()),
        weights=weights,
        miss=miss,
        lock_names=lock_names,
        statements=statements,
        statement_sql=statement_sql,
        st_tx=st_tx,
        st_task=st_task,
        st_calls=st_calls,
        st_rows=st_rows,
        st_dreads=st_dreads,
        st_ireads=st_ireads,
        st_writes=st_writes,
        st_dpool=st_dpool,
        st_ipool=st_ipool,
        st_lock=st_lock,
        st_phys=st_phys,
        st_cpu=st_cpu,
        st_page_writes=st_page_writes,
        cpu_s=cpu_s,
        enqueues=enqueues,
        commits=commits,
        gui=gui,
        db_calls=db_calls,
        # Per (task, transaction): DB CPU, physical reads, log and lock demand per step.
        db_cpu=per_step(st_cpu),
        phys=per_step(st_phys),
        page_writes_step=per_step(st_page_writes),
        log_demand=commits * land.log_write_s,
        lock_demand=lock_demand,
        rtt=db_calls * db.call_rtt_s,
        enq_demand=enqueues * land.central_services.enqueue_service_s,
        enq_rtt=enqueues * land.central_services.link_rtt_s,
        msg_cpu=np.array([np.ones(n_tx), np.zeros(n_tx)])
        * land.central_services.message_server_cpu_s_per_step,
        writes_per_mix=float(data_writes_per_mix.sum() + index_writes_per_mix.sum()),
        app_hosts=list(land.app_servers.hosts),
        host_station={h.name: placement.host_stations(h.name)[0] for h in land.hosts},
        inst_cpu_station=list(placement.instance_station),
        db_cpu_station=placement.db_station,
        disk_station=disk_station,
        log_station=log_station,
        enqueue_station=enqueue_station,
        cs_cpu_station=-1 if placement.cs_station is None else placement.cs_station,
        lock_stations=lock_stations,
        station_names=names,
        station_servers=np.array(servers),
        station_copies=np.array(copies),
        read_s=dev[db.disks.kind].read_s,
        write_s=dev[db.disks.kind].write_s,
        log_write_s=land.log_write_s,
        # A log on the data disks queues there: its writes join the disks' demand.
        log_shared=db.log_on_data_disks,
        roll=[roll_area(land, lay.users) for lay in layout],
        # An update work process rolls in the update task's own small context.
        update_roll_s=roll.em_map_s + roll.user_roll_bytes / roll.copy_bytes_per_s,
    )


def roll_area(land: Landscape, users: int) -> dict[str, float]:
    """Roll area of one instance: what fits in extended memory, roll buffer, roll file."""
    roll = land.instance.roll
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


def sap_buffers(land: Landscape, x_inst: np.ndarray) -> dict:
    """SAP buffers (ST02) at [instance] dialog steps/s. Hits follow the same curve as the DB
    pools; a buffer too small for its working set displaces entries (a swap) for every miss
    that needs room."""
    bufs = land.instance.buffers
    n_inst = x_inst.size
    size = np.array([b.size_bytes for b in bufs], dtype=float)
    ws = np.array([b.working_set_bytes for b in bufs], dtype=float)
    floor = np.array([b.miss_floor for b in bufs])
    uncovered = np.clip(1.0 - size / ws, 0.0, 1.0) if bufs else np.zeros(0)
    miss = floor + (1.0 - floor) * uncovered**land.database.hit_curve_exponent
    req = np.outer(x_inst, [b.requests_per_step for b in bufs])
    return {
        "sap_buffers": [b.name for b in bufs],
        "sap_buffer_request_rate": req,
        "sap_buffer_hit_rate": req * (1.0 - miss),
        "sap_buffer_swap_rate": req * miss * (uncovered > 0),
        "sap_buffer_size": np.tile(size, (n_inst, 1)),
        "sap_buffer_used": np.tile(np.minimum(size, ws), (n_inst, 1)),
    }
