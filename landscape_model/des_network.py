"""The scenario compiled for the discrete-event engine: flat parameters, no model logic.

Every number comes from the scenario's `CompiledNetwork` (network.py), the one the analytic
solver solves: mix, statements, buffer-pool miss ratios, per-call DB CPU, stations and the
roll area of each instance, so both engines run on one set of parameters. This module only
reshapes them for the event loop: per step class (task type x transaction) the statements
it issues, per instance its host, users, work processes and roll times, per host its CPUs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from landscape_model.config import Scenario
from landscape_model.network import CompiledNetwork, InstanceLayout, sap_buffers
from landscape_model.terms import TASK_TYPES


@dataclass(frozen=True)
class StepClass:
    """What one step of (task type, transaction) asks of the landscape (`Network.classes`
    holds them at task * n_tx + transaction)."""

    statements: np.ndarray  # indices into the compiled network's statement list
    calls: np.ndarray  # executions per step (mean), per statement
    data_reads: np.ndarray  # logical data page reads per execution
    index_reads: np.ndarray  # logical index page reads per execution
    written_pages: np.ndarray  # pages written per execution (dirtied x written/dirtied)
    # Statements grouped by their (data pool, index pool): misses are drawn per group.
    group: np.ndarray  # [statement] its group
    group_data_pool: np.ndarray  # [group]
    group_index_pool: np.ndarray
    group_data_miss: np.ndarray
    group_index_miss: np.ndarray
    # Per lock the class's statements take: the lock (index into `Network.lock_names`),
    # the executions that take it, the hold time.
    locks: list[tuple[int, np.ndarray, float]]
    cpu_s: float  # ABAP CPU per step on the application server
    enqueues: float  # enqueue requests per step (mean)
    commits: float  # commits per step (mean)
    gui_s: float  # front-end time per step (dialog only)
    update_share: float  # V1 updates a dialog step of this class sends (mean)


@dataclass(frozen=True)
class Network:
    """The landscape as the event loop sees it."""

    compiled: CompiledNetwork  # the stations and demands both engines share, and its scenario
    layout: list[InstanceLayout]
    classes: list[StepClass]  # indexed task * n_tx + tx
    n_tx: int
    mix: np.ndarray  # [tx] share of dialog steps
    think_s: float
    # Every host once (the landscape's `hosts`: application servers, then central services
    # and database unless they run on an application server) and its CPUs.
    host_names: list[str]
    host_cpus: list[int]
    n_app_hosts: int
    instance_host: list[int]  # [instance] index into host_names
    # CPU stations (`placement.place`): a host's cores, or a set of cores tenants are
    # pinned to; processor sharing over station_cpus[s] cores of host station_host[s].
    station_cpus: list[int]
    station_host: list[int]  # [station] index into host_names
    instance_station: list[int]  # [instance] its CPU station
    db_station: int  # the CPU station that runs the database
    cs_host: int  # index into host_names of the central services host
    # The CPU station the central services' CPU runs on when it is pinned (placement.py),
    # -1: not on a station (enqueue work processes booked of their own).
    cs_station: int
    # Roll area per instance: the memory part of a roll-in (or roll-out), the roll-file
    # part, the share of contexts that go through the roll file, the bytes rolled.
    roll_memory_s: list[float]
    roll_file_s: list[float]
    roll_file_share: list[float]
    roll_bytes: list[float]
    update_roll_s: float  # an update work process rolls the update task's own context
    load_gen_s: float
    # Database
    call_rtt_s: float
    cpu_s_per_call: float
    cpu_s_per_logical_read: float
    cpu_s_per_physical_read: float
    disks: int  # data disks
    read_s: float  # a page read occupies a data disk
    write_s: float  # a page write occupies a data disk
    log_devices: int  # the data disks when the log shares them
    log_write_s: float  # a commit's log write occupies a log device (`Landscape.log_write_s`)
    log_on_data_disks: bool
    # Write caches (`Landscape.write_cache`): (ack_s, writes/s destaged, writes held) in
    # front of the data disks' and the log's writes, or None; one cache when the log is on
    # the data disks.
    data_cache: tuple[float, float, float] | None
    log_cache: tuple[float, float, float] | None
    lock_names: list[str]
    cleaner_pages_per_s: float
    index_share_of_page_writes: float
    # Central services
    enqueue_servers: int
    enqueue_service_s: float
    link_rtt_s: float
    message_server_cpu_s_per_step: float
    # What a dialog step of an instance does to its SAP buffers: [instance, buffer]
    sap_requests_per_step: np.ndarray
    sap_hits_per_step: np.ndarray
    sap_swaps_per_step: np.ndarray
    # [step class, statement]: the share of a class's DB request time each statement takes,
    # in proportion to what it costs on its own (round trip, DB CPU, physical reads).
    statement_shares: np.ndarray

    @property
    def scenario(self) -> Scenario:
        """The scenario compiled: the compiled network's, the one source of it."""
        return self.compiled.scenario

    @property
    def n_instances(self) -> int:
        return len(self.layout)

    @property
    def n_classes(self) -> int:
        return len(self.classes)


def for_event_loop(net: CompiledNetwork) -> Network:
    """The compiled network's parameters, reshaped for the event loop."""
    scenario = net.scenario
    land = scenario.landscape
    pl = net.placement
    # The event loop draws a step's ABAP CPU per step class, shared by every instance; an
    # instance's memory stretch is therefore taken where all instances share one.
    if len(set(pl.instance_stretch)) > 1:
        raise ValueError(
            "instance_affinity: the discrete-event engine needs every instance's memory "
            "locality alike (remote shares "
            + ", ".join(f"{r:.2f}" for r in pl.instance_remote)
            + "); use --engine analytic or pin the instances alike"
        )
    abap_stretch = pl.instance_stretch[0] if pl.instance_stretch else 1.0
    db = land.database
    layout = net.layout
    n_tx = len(net.tx_names)
    dirtied_written = db.pages_written_per_page_dirtied
    holds = [lk.hold_s for lk in db.locks]
    classes = []
    for k in range(len(TASK_TYPES)):
        for t, name in enumerate(net.tx_names):
            tx = scenario.transactions[name]
            demand = tx.dialog if k == 0 else tx.update
            sel = np.flatnonzero((net.st_task == k) & (net.st_tx == t))
            pairs = sorted({(int(net.st_dpool[s]), int(net.st_ipool[s])) for s in sel})
            dpools = np.array([d for d, _ in pairs], dtype=np.int64)
            ipools = np.array([i for _, i in pairs], dtype=np.int64)
            classes.append(
                StepClass(
                    statements=sel,
                    calls=net.st_calls[sel].copy(),
                    data_reads=net.st_dreads[sel].copy(),
                    index_reads=net.st_ireads[sel].copy(),
                    written_pages=net.st_writes[sel] * dirtied_written,
                    group=np.array(
                        [pairs.index((int(net.st_dpool[s]), int(net.st_ipool[s]))) for s in sel],
                        dtype=np.int64,
                    ),
                    group_data_pool=dpools,
                    group_index_pool=ipools,
                    group_data_miss=net.miss[dpools],
                    group_index_miss=net.miss[ipools],
                    locks=[
                        (li, np.flatnonzero(net.st_lock[sel] == li), hold)
                        for li, hold in enumerate(holds)
                        if (net.st_lock[sel] == li).any()
                    ],
                    cpu_s=demand.cpu_s * abap_stretch if demand else 0.0,
                    enqueues=demand.enqueues if demand else 0.0,
                    commits=demand.commits if demand else 0.0,
                    gui_s=tx.gui_s if k == 0 else 0.0,
                    update_share=float(net.upd_per_step[t]) if k == 0 else 0.0,
                )
            )
    # Two-tier: the database runs on an application server and shares its CPUs.
    hosts = [h.name for h in land.hosts]
    cpus = [h.cpus for h in land.hosts]
    devices = land.devices
    roll = land.instance.roll
    rolls = net.roll
    sap = sap_buffers(land, np.ones(len(layout)))
    own = net.st_calls * (db.call_rtt_s + net.st_cpu + net.st_phys * devices[db.disks.kind].read_s)
    shares = np.zeros((len(classes), len(net.statements)))
    for c, step_class in enumerate(classes):
        total = own[step_class.statements].sum()
        if total > 0:
            shares[c, step_class.statements] = own[step_class.statements] / total
    return Network(
        compiled=net,
        layout=layout,
        classes=classes,
        n_tx=n_tx,
        mix=net.mix.copy(),
        think_s=scenario.think_time_s,
        host_names=hosts,
        host_cpus=cpus,
        n_app_hosts=len(land.app_servers.hosts),
        instance_host=[hosts.index(lay.host) for lay in layout],
        station_cpus=[st.cores for st in pl.stations],
        station_host=[hosts.index(st.host) for st in pl.stations],
        instance_station=list(pl.instance_station),
        db_station=pl.db_station,
        cs_host=hosts.index(land.central_services.host),
        cs_station=net.cs_cpu_station,
        roll_memory_s=[roll.em_map_s + r["roll_bytes"] / roll.copy_bytes_per_s for r in rolls],
        roll_file_s=[
            roll.roll_file_latency_s + r["roll_bytes"] / roll.roll_file_bytes_per_s for r in rolls
        ],
        roll_file_share=[float(r["to_file"]) for r in rolls],
        roll_bytes=[float(r["roll_bytes"]) for r in rolls],
        update_roll_s=net.update_roll_s,
        load_gen_s=land.instance.load_gen_s,
        call_rtt_s=db.call_rtt_s,
        # The database's memory stretch (1 unless its memory is partly remote).
        cpu_s_per_call=db.cpu_s_per_call * pl.db_stretch,
        cpu_s_per_logical_read=db.cpu_s_per_logical_read * pl.db_stretch,
        cpu_s_per_physical_read=db.cpu_s_per_physical_read * pl.db_stretch,
        disks=db.disks.count,
        read_s=devices[db.disks.kind].read_s,
        write_s=devices[db.disks.kind].write_s,
        log_devices=db.disks.count if db.log_on_data_disks else db.log.count,
        log_write_s=land.log_write_s,
        log_on_data_disks=db.log_on_data_disks,
        data_cache=land.write_cache("data"),
        log_cache=land.write_cache("log"),
        lock_names=[lk.name for lk in db.locks],
        cleaner_pages_per_s=db.io_cleaners * db.io_cleaner_pages_per_s,
        index_share_of_page_writes=db.index_share_of_page_writes,
        enqueue_servers=land.central_services.enqueue_work_processes,
        enqueue_service_s=land.central_services.enqueue_service_s,
        link_rtt_s=land.central_services.link_rtt_s,
        message_server_cpu_s_per_step=land.central_services.message_server_cpu_s_per_step,
        sap_requests_per_step=sap["sap_buffer_request_rate"],
        sap_hits_per_step=sap["sap_buffer_hit_rate"],
        sap_swaps_per_step=sap["sap_buffer_swap_rate"],
        statement_shares=shares,
    )
