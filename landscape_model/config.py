"""Typed configuration of a landscape, its workload and the faults that overlay it.

Everything the model computes comes from these YAML documents; no scenario or fault is
a code path. A fault is a partial document deep-merged over the scenario.
"""

from __future__ import annotations

from functools import cached_property
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

# Upper bounds of the counts that size the engines' arrays (users, work processes, CPUs,
# disks, ...): far above any SAP landscape (the largest SD benchmark results have tens of
# thousands of users, an instance at most a few hundred work processes), low enough that a
# typo such as users=100000000000000 is an error naming the field, not a MemoryError.
MAX_USERS = 10_000_000
MAX_WORK_PROCESSES = 1_000
# CPUs size nothing but the instances of a per-cpu host; tests use 100,000 for "never
# queues", so the bound on CPUs is loose and the instances are bounded of their own.
MAX_CPUS = 1_000_000
MAX_INSTANCES_PER_HOST = 1_000
MAX_DEVICES = 10_000
MAX_HOSTS = 1_000


# Floats the engines divide by, square and exponentiate: a magnitude outside these (1e-300
# bytes/s of roll copy made a step's variance overflow, issue 34 item 5) is a typo, not a
# landscape. Zero stays allowed where a field allows it. Tests write 1e18 bytes/s for a copy
# that takes no time; squares and ratios of values within these stay far from overflow.
MIN_MAGNITUDE = 1e-12
MAX_MAGNITUDE = 1e20


def _annotation_has(annotation: Any, kind: type) -> bool:
    """Whether a field's annotation admits `kind` anywhere (Optional, unions, lists...)."""
    if annotation is kind:
        return True
    return any(_annotation_has(a, kind) for a in get_args(annotation))


class Strict(BaseModel):
    # allow_inf_nan: inf and nan are no value of any field (think_time_s=inf gave X = 0).
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_number(cls, value: Any, info: ValidationInfo) -> Any:
        """A number field takes numbers only: a YAML true was taken as 1 CPU."""
        annotation = cls.model_fields[info.field_name].annotation
        if isinstance(value, bool) and not _annotation_has(annotation, bool):
            raise ValueError(f"expected a number, not {str(value).lower()}")
        return value

    @field_validator("*", mode="after")
    @classmethod
    def _sane_magnitude(cls, value: Any) -> Any:
        """A float of a magnitude the engines compute with (after conversion: YAML reads
        1e-300, without a dot, as a string that pydantic then converts)."""
        if (
            isinstance(value, float)
            and value != 0.0
            and not MIN_MAGNITUDE <= abs(value) <= MAX_MAGNITUDE
        ):
            raise ValueError(
                f"{value:g} is outside the magnitudes the model computes with "
                f"({MIN_MAGNITUDE:g} .. {MAX_MAGNITUDE:g})"
            )
        return value


class Affinity(Strict):
    """Cores a tenant (an instance, the database) may run on: by core number or by socket
    (seed 004: "Affinity was set in the SAP instance profiles so that each instance ran on
    its own processor. The database ran on the same CPU as the central instance")."""

    cores: list[Annotated[int, Field(ge=0)]] | None = Field(
        default=None, min_length=1, description="core numbers, 0 .. the host's cpus - 1"
    )
    sockets: list[Annotated[int, Field(ge=0)]] | None = Field(
        default=None, min_length=1, description="every core of these sockets"
    )

    @model_validator(mode="after")
    def _one_way(self) -> Affinity:
        if (self.cores is None) == (self.sockets is None):
            raise ValueError("give either cores or sockets")
        for what, ids in (("cores", self.cores), ("sockets", self.sockets)):
            if ids is not None and len(set(ids)) != len(ids):
                raise ValueError(f"{what}: a number is listed twice")
        return self


# Where a tenant's memory sits. local: on the sockets of the cores it runs on (a NUMA-aware
# OS allocates on the node of the thread that first touches a page). interleave: evenly
# over every socket of the host, wherever it runs (SQL Server 2005's buffer pool: "one
# SQL Server memory node for each physical NUMA node ... [they] divide the memory evenly",
# and a buffer pool run on a subset of the nodes "will not automatically be limited to the
# memory on those nodes": Microsoft, "Growing and Shrinking the Buffer Pool Under NUMA").
MemoryPlacement = Literal["local", "interleave"]


class Hardware(Strict):
    """A host's processor and memory topology beside its core count (`cpus`)."""

    sockets: int = Field(default=1, gt=0, description="processor sockets (NUMA nodes)")
    remote_memory_latency_ratio: float = Field(
        default=1.0,
        ge=1.0,
        description="latency of a memory access to another socket's node / local",
    )
    memory_stall_share: float = Field(
        default=0.0,
        ge=0.0,
        lt=1.0,
        description="share of a busy CPU second spent waiting for main memory (local latency)",
    )


class AppServers(Strict):
    hosts: list[str] = Field(min_length=1, max_length=MAX_HOSTS)
    cpus: int = Field(gt=0, le=MAX_CPUS)
    memory_bytes: int = Field(gt=0)
    instances_per_host: (
        Annotated[int, Field(gt=0, le=MAX_INSTANCES_PER_HOST)] | Literal["per-cpu"]
    ) = Field(description="SAP instances on each host; per-cpu: one per CPU (seed 004)")
    instance_numbers: list[str] = Field(
        default_factory=list, description="e.g. D00, D01, D02; default D00, D01, ..."
    )
    affinity: Literal["none", "per-core"] = Field(
        default="none",
        description="per-core: the k-th instance of a host runs on core k only (seed 004); "
        "instance_affinity pins single instances",
    )

    @property
    def instances(self) -> int:
        return self.cpus if self.instances_per_host == "per-cpu" else self.instances_per_host

    @property
    def numbers(self) -> list[str]:
        return self.instance_numbers or [f"D{k:02d}" for k in range(self.instances)]

    @model_validator(mode="after")
    def _numbers_cover_instances(self) -> AppServers:
        if self.instances > MAX_INSTANCES_PER_HOST:
            raise ValueError(
                f"instances_per_host: per-cpu on {self.cpus} CPUs gives {self.instances} "
                f"instances per host, at most {MAX_INSTANCES_PER_HOST}"
            )
        if self.instance_numbers and len(self.instance_numbers) < self.instances:
            raise ValueError("instance_numbers must name every instance of a host")
        if len(set(self.hosts)) != len(self.hosts):
            raise ValueError("hosts: a host is listed twice")
        return self


class RollArea(Strict):
    """rdisp/ROLL_SHM (roll buffer), em/initial_size_MB (extended memory), the roll file."""

    roll_buffer_bytes: int = Field(gt=0)
    extended_memory_bytes: int = Field(gt=0)
    copy_bytes_per_s: float = Field(gt=0, description="memory copy rate for roll-in/out")
    em_map_s: float = Field(ge=0, description="time to map a context kept in extended memory")
    roll_file_latency_s: float = Field(ge=0)
    roll_file_bytes_per_s: float = Field(gt=0)
    user_roll_bytes: int = Field(
        gt=0, description="roll area part of a user context, always copied"
    )
    user_em_bytes: int = Field(gt=0, description="extended-memory part of a user context, mapped")


class SAPBuffer(Strict):
    """One SAP buffer of an instance (ST02): its size, what the load needs, how often it is read."""

    name: str
    size_bytes: int = Field(gt=0)
    working_set_bytes: int = Field(gt=0)
    requests_per_step: float = Field(ge=0, description="buffer accesses per dialog step")
    miss_floor: float = Field(
        ge=0, le=1, description="misses no size avoids (first loads, invalidations)"
    )


class Instance(Strict):
    memory: MemoryPlacement = "local"
    base_memory_bytes: int = Field(
        ge=0, description="memory of an instance beside roll area and EM"
    )
    dialog_work_processes: int = Field(gt=0, le=MAX_WORK_PROCESSES)
    update_work_processes: int = Field(gt=0, le=MAX_WORK_PROCESSES)
    roll: RollArea
    load_gen_s: float = Field(ge=0, description="mean program load + generation time per step")
    buffers: list[SAPBuffer] = Field(default_factory=list)


class CentralServices(Strict):
    host: str
    cpus: int | None = Field(
        default=None, gt=0, le=MAX_CPUS, description="only on a host of its own"
    )
    memory_bytes: int | None = Field(default=None, gt=0, description="only on a host of its own")
    enqueue_work_processes: int = Field(gt=0, le=MAX_WORK_PROCESSES)
    enqueue_service_s: float = Field(gt=0)
    link_rtt_s: float = Field(ge=0, description="round trip from an instance to the enqueue server")
    message_server_cpu_s_per_step: float = Field(ge=0)
    affinity: Affinity | None = Field(
        default=None,
        description="cores the enqueue work process and message server run on; default: the "
        "central instance's (the first instance of this host) when that instance is pinned",
    )


class BufferPool(Strict):
    """One DB2 buffer pool (seed 000 Table 4) and the working set its tables touch."""

    name: str
    page_kb: int = Field(gt=0)
    pages: int = Field(gt=0)
    working_set_pages: int = Field(gt=0)
    miss_floor: float = Field(ge=0, le=1, description="misses no pool size avoids (first touch)")


DeviceKind = Literal["hdd", "ssd"]
# The share of its devices' time a write cache's destaging may take (`Landscape.write_cache`).
MAX_DESTAGE_SHARE = 0.9


class Device(Strict):
    """What one I/O occupies a device of a kind (seed 002: HDD milliseconds, SSD microseconds)."""

    read_s: float = Field(gt=0, description="one random page read")
    write_s: float = Field(gt=0, description="one random page write")
    log_write_s: float = Field(
        gt=0, description="one synchronous log write (commit) where seq_write_s is absent"
    )
    seq_write_s: float | None = Field(
        default=None,
        gt=0,
        description="one sequential write: a commit's log append on a log device of its own "
        "(no seek); absent: log_write_s, as before",
    )


class WriteCache(Strict):
    """A storage server's non-volatile write cache (NVS): a write is acknowledged once it is
    in the cache and reaches its device later (destaged, in the background). Only while the
    destage keeps up: past its rate, writes find the cache full and wait for the device."""

    ack_s: float = Field(gt=0, description="a write acknowledged from the cache")
    destage_writes_per_s: float = Field(
        gt=0, description="writes the server moves to its devices per second (back-end bandwidth)"
    )
    writes: int = Field(gt=0, description="writes the cache holds (NVS bytes / write size)")


class Disks(Strict):
    kind: DeviceKind
    count: int = Field(gt=0, le=MAX_DEVICES)
    write_cache: WriteCache | None = Field(
        default=None, description="the storage server's write cache in front of these devices"
    )


class Lock(Strict):
    """A lock or latch that serializes the statements naming it (one holder at a time)."""

    name: str
    hold_s: float = Field(gt=0, description="time a holder keeps it")


class Database(Strict):
    host: str
    cpus: int | None = Field(
        default=None, gt=0, le=MAX_CPUS, description="only on a host of its own"
    )
    memory_bytes: int | None = Field(default=None, gt=0, description="only on a host of its own")
    affinity: Affinity | None = Field(default=None, description="cores it runs on; none: all")
    memory: MemoryPlacement = "local"
    other_memory_bytes: int = Field(ge=0, description="DB2 heaps and OS beside the buffer pools")
    call_rtt_s: float = Field(ge=0, description="network round trip of one DB call")
    cpu_s_per_call: float = Field(ge=0)
    cpu_s_per_logical_read: float = Field(ge=0)
    cpu_s_per_physical_read: float = Field(ge=0)
    hit_curve_exponent: float = Field(gt=0)
    bufferpools: list[BufferPool] = Field(min_length=1)
    disks: Disks = Field(description="data disks: physical reads and synchronous page writes")
    log: Disks = Field(description="log devices: one synchronous log write per commit")
    log_on_data_disks: bool = Field(
        default=False,
        description="the log shares the data disks (database.log.count is then unused): each "
        "log write is a random write queued with the data I/Os",
    )
    locks: list[Lock] = Field(default_factory=list)
    io_cleaners: int = Field(ge=0, le=MAX_WORK_PROCESSES)
    io_cleaner_pages_per_s: float = Field(gt=0)
    pages_written_per_page_dirtied: float = Field(gt=0, le=1)
    index_share_of_page_writes: float = Field(
        ge=0, le=1, description="written pages that are index pages"
    )

    @model_validator(mode="after")
    def _unique_names(self) -> Database:
        for what, names in (
            ("bufferpools", [p.name for p in self.bufferpools]),
            ("locks", [lk.name for lk in self.locks]),
        ):
            if len(set(names)) != len(names):
                raise ValueError(f"{what}: a name is used twice")
        return self


class Table(Strict):
    data_pool: str
    index_pool: str


class OperatingSystem(Strict):
    """What the simulated hosts' OS counters show beside the SAP load."""

    base_memory_bytes: int = Field(ge=0)
    page_ops_per_s: float = Field(ge=0, description="background paging (Memory\\Pages/sec)")
    system_cpu_share: float = Field(ge=0, le=1, description="share of busy CPU spent in the kernel")


class Host(Strict):
    name: str
    cpus: int
    memory_bytes: int


class AbapErrors(Strict):
    """ABAP errors the twin's sapstartsrv reports (CCMS, the dispatcher's update queue): the
    model's steps never fail, so these figures are laid over them. A healthy system has
    none; the short-dump-storm and update-hang faults set them."""

    short_dumps_per_step: float = Field(
        default=0.0, ge=0, le=1, description="share of dialog steps ending in a short dump (ST22)"
    )
    update_error_share: float = Field(
        default=0.0, ge=0, le=1, description="share of V1 update requests ending in error (SM13)"
    )
    update_hang: bool = Field(
        default=False,
        description="the update work processes take no request: V1 requests queue in ABAP/UPD",
    )
    lock_held: bool = Field(
        default=False,
        description="one user's lock on a sales document is never released (SM12)",
    )
    long_running_step_s: float = Field(
        default=0.0,
        ge=0,
        description="a dialog step on the first ABAP instance that never ends: SM50's Time "
        "of its work process when the fault begins (seconds, growing with the wall clock "
        "after); 0 = none",
    )


class AscsFailover(Strict):
    """The ASCS moves to the other cluster node (the ascs-failover fault), timed from when
    the twin's sapstartsrv first sees the fault: the enqueue server is stopped for
    `outage_s`, then the instance answers from `to_host`, and the ERS replication stays
    lost (EnqGetStatistic replication-state RED) for `replication_lost_s` more."""

    to_host: str = Field(min_length=1, description="the cluster node the ASCS moves to")
    outage_s: float = Field(default=20.0, gt=0, description="seconds the enqueue server is down")
    replication_lost_s: float = Field(
        default=90.0, ge=0, description="seconds after the move until the ERS replicates again"
    )


class JavaInstance(Strict):
    """An AS Java instance beside the ABAP system (as MII runs on): the twin's sapstartsrv
    lists it with features J2EE|IGS and answers its J2EE methods. It takes no dialog load
    of the model; its application thread pool is full while `thread_pool_exhausted` (the
    java-thread-pool-exhausted fault)."""

    host: str = Field(min_length=1)
    instance_name: str = Field(default="J10", pattern=r"^J[0-9]{2}$")
    server_nodes: int = Field(default=2, gt=0, le=16, description="server processes jstart runs")
    application_threads: int = Field(
        default=40, gt=0, description="each server node's application thread pool size"
    )
    system_threads: int = Field(default=10, gt=0, description="each node's system threads")
    busy_share: float = Field(
        default=0.2, ge=0, le=1, description="share of application threads busy, normal load"
    )
    thread_pool_exhausted: bool = Field(
        default=False, description="every application thread busy, requests waiting"
    )


class SoftwareComponent(Strict):
    """One row of CVERS as ABAPGetComponentList answers it."""

    component: str = Field(pattern=r"^[A-Z0-9_/-]{1,30}$")
    release: str = Field(min_length=1, max_length=10)
    patchlevel: str = Field(default="0000", max_length=10, description="support package level")
    description: str = ""


def _r3_46c() -> list[SoftwareComponent]:
    # Seed 000's system: SAP R/3 Release 4.6C (its software components; SP levels
    # illustrative, the paper names none).
    return [
        SoftwareComponent(component=c, release="46C", patchlevel=sp, description=d)
        for c, sp, d in (
            ("SAP_BASIS", "0045", "SAP Basis Component"),
            ("SAP_ABA", "0045", "Cross-Application Component"),
            ("SAP_APPL", "0045", "Logistics and Accounting"),
            ("SAP_HR", "0070", "Human Resources"),
        )
    ]


class Software(Strict):
    """What the twin's sapstartsrv says the instances run: GetVersionInfo's kernel (release
    and patch of every executable) and ABAPGetComponentList's components. Instances named
    in `lagging` still run `lagging_patch` (the kernel-patch-drift fault: sapcpe did not
    copy the new kernel to them, or they were not restarted after the update)."""

    kernel_release: str = Field(default="753", pattern=r"^[0-9]{2,3}[A-Z]?$")
    kernel_patch: int = Field(default=1100, ge=0)
    kernel_changelist: int = Field(default=2117385, ge=0)
    lagging: list[str] = Field(
        default_factory=list, description="instance names (host_D01) on lagging_patch"
    )
    lagging_patch: int = Field(default=900, ge=0)
    components: list[SoftwareComponent] = Field(default_factory=_r3_46c)


class Landscape(Strict):
    name: str
    description: str
    sid: str
    app_servers: AppServers
    instance: Instance
    instance_overrides: dict[str, dict[str, int]] = Field(default_factory=dict)
    instance_affinity: dict[str, Affinity] = Field(
        default_factory=dict, description="per instance name (host_D01): the cores it runs on"
    )
    hardware: dict[str, Hardware] = Field(
        default_factory=dict, description="per host name: sockets and memory locality"
    )
    central_services: CentralServices
    database: Database
    devices: dict[DeviceKind, Device] = Field(description="I/O service times per device kind")
    tables: dict[str, Table]
    os: OperatingSystem
    abap_errors: AbapErrors = Field(default_factory=AbapErrors)
    ascs_failover: AscsFailover | None = None
    java: JavaInstance | None = None
    software: Software = Field(default_factory=Software)

    @model_validator(mode="after")
    def _tables_use_known_pools(self) -> Landscape:
        for name, over in self.instance_overrides.items():
            for key, value in over.items():
                where = f"instance_overrides.{name}.{key}"
                if key not in ("dialog_work_processes", "update_work_processes"):
                    raise ValueError(f"{where}: only work-process counts can be overridden")
                if not 0 < value <= MAX_WORK_PROCESSES:
                    raise ValueError(f"{where}: {value} is not in 1..{MAX_WORK_PROCESSES}")
        pools = {p.name for p in self.database.bufferpools}
        for name, table in self.tables.items():
            for pool in (table.data_pool, table.index_pool):
                if pool not in pools:
                    raise ValueError(f"tables.{name}: unknown buffer pool {pool!r}")
        for path, disks in (
            ("database.disks", self.database.disks),
            ("database.log", self.database.log),
        ):
            if disks.kind not in self.devices:
                raise ValueError(f"{path}.kind: no devices.{disks.kind} entry")
        db = self.database
        if db.log_on_data_disks and db.log.kind != db.disks.kind:
            raise ValueError(
                f"database.log.kind: {db.log.kind} differs from database.disks.kind "
                f"{db.disks.kind}, but log_on_data_disks puts the log on the data disks"
            )
        if db.log_on_data_disks and db.log.write_cache is not None:
            raise ValueError(
                "database.log.write_cache: the log is on the data disks "
                "(log_on_data_disks): its writes go through database.disks.write_cache"
            )
        self.hosts  # noqa: B018 - validates the placement
        self.cpu_sets  # noqa: B018 - validates the affinities
        return self

    def instance_names(self) -> list[tuple[str, str]]:
        """(host, instance name) of every instance, host by host."""
        apps = self.app_servers
        return [(h, f"{h}_{apps.numbers[k]}") for h in apps.hosts for k in range(apps.instances)]

    def hardware_of(self, host: str) -> Hardware:
        return self.hardware.get(host, Hardware())

    @cached_property
    def cpu_sets(self) -> dict[str, tuple[int, ...]]:
        """Per tenant ("instance:<name>", "database", and "central_services" when their
        CPU runs on a pinned set: `central_services.affinity`, else the central instance's
        cores when that instance is pinned) the cores it may run on, validated:
        every core and socket exists on its host, and two tenants' sets are the same or
        disjoint (a set of cores is one processor-sharing station; an overlap would be
        neither)."""
        hosts = {h.name: h for h in self.hosts}
        for name, hw in self.hardware.items():
            if name not in hosts:
                raise ValueError(f"hardware.{name}: no such host (hosts: {', '.join(hosts)})")
            cpus = hosts[name].cpus
            if cpus % hw.sockets:
                raise ValueError(
                    f"hardware.{name}.sockets: {hw.sockets} sockets do not divide the "
                    f"host's {cpus} cores evenly"
                )
        names = self.instance_names()
        known = {n for _, n in names}
        for name in self.instance_affinity:
            if name not in known:
                raise ValueError(f"instance_affinity.{name}: no such instance")
        tenants: list[tuple[str, str, str, tuple[int, ...]]] = []  # key, path, host, cores
        per_host: dict[str, int] = {}
        for host, name in names:
            k = per_host.get(host, 0)
            per_host[host] = k + 1
            aff = self.instance_affinity.get(name)
            path = f"instance_affinity.{name}"
            if aff is None and self.app_servers.affinity == "per-core":
                aff, path = Affinity(cores=[k]), f"app_servers.affinity (instance {name})"
            tenants.append((f"instance:{name}", path, host, self._cores(host, aff, path)))
        db = self.database
        tenants.append(
            (
                "database",
                "database.affinity",
                db.host,
                self._cores(db.host, db.affinity, "database.affinity"),
            )
        )
        cs = self.central_services
        if cs.affinity is not None:
            path = "central_services.affinity"
            tenants.append(
                ("central_services", path, cs.host, self._cores(cs.host, cs.affinity, path))
            )
        elif (central := self.central_instance) is not None and self._pinned(central):
            # The enqueue work process is one of the central instance's (seed 004: "The
            # central instance was comprised of two dialog processes, one update process,
            # and one enqueue process"): its profile's affinity is theirs.
            key = f"instance:{central}"
            tenants.append(
                (
                    "central_services",
                    "central_services",
                    cs.host,
                    next(t[3] for t in tenants if t[0] == key),
                )
            )
        # Distinct sets per host (the first tenant naming a set stands for it), then
        # pairs of distinct sets: unpinned tenants are one set, so nothing to compare.
        first: dict[tuple[str, tuple[int, ...]], str] = {}
        for key, path, host, cores in tenants:
            if (host, cores) in first:
                continue
            for (other_host, other), other_key in first.items():
                if other_host == host and not set(cores).isdisjoint(other):
                    raise ValueError(
                        f"{path}: cores {list(cores)} overlap {other_key}'s {list(other)} "
                        "without being the same set (tenants share a set of cores or none)"
                    )
            first[host, cores] = key
        return {key: cores for key, _, _, cores in tenants}

    @property
    def central_instance(self) -> str | None:
        """The instance the central services belong to: the first instance of their host
        (D00, the DVEBMGS of a two-tier system), or None on a host of their own."""
        return next((n for h, n in self.instance_names() if h == self.central_services.host), None)

    def _pinned(self, instance: str) -> bool:
        return instance in self.instance_affinity or self.app_servers.affinity == "per-core"

    def _cores(self, host: str, aff: Affinity | None, path: str) -> tuple[int, ...]:
        cpus = self.host(host).cpus
        sockets = self.hardware_of(host).sockets
        if aff is None:
            return tuple(range(cpus))
        if aff.cores is not None:
            for c in aff.cores:
                if c >= cpus:
                    raise ValueError(
                        f"{path}.cores: core {c} is not on host {host!r} (cores 0..{cpus - 1})"
                    )
            return tuple(sorted(aff.cores))
        per = cpus // sockets
        for s in aff.sockets or ():
            if s >= sockets:
                raise ValueError(
                    f"{path}.sockets: socket {s} is not on host {host!r} "
                    f"(sockets 0..{sockets - 1}; hardware.{host}.sockets)"
                )
        return tuple(c for s in sorted(aff.sockets or ()) for c in range(s * per, (s + 1) * per))

    @property
    def log_write_s(self) -> float:
        """What one commit's log write occupies its device, in both engines. On the data disks
        it is a random write: the heads leave the data for the log's tracks and back (seed
        002: the logs gained from a storage server of their own). On a device of its own it
        is a sequential append where the device kind gives `seq_write_s`, else `log_write_s`
        (the landscapes shipped before storage data: the calibration stays where it was)."""
        db = self.database
        if db.log_on_data_disks:
            return self.devices[db.disks.kind].write_s
        dev = self.devices[db.log.kind]
        return dev.seq_write_s if dev.seq_write_s is not None else dev.log_write_s

    def write_cache(self, target: str) -> tuple[float, float, float] | None:
        """The write cache in front of `data` (the data disks) or `log` writes, in both
        engines: (ack_s, writes/s it can destage, writes it holds), or None. It cannot
        destage faster than its devices write (count / the time of one write there), and
        leaves them a tenth of their time (MAX_DESTAGE_SHARE) for the I/Os it does not take:
        a destage that could fill the devices would leave the writes it turns away an
        endless queue (the DES caps the cleaners' share of the disks alike)."""
        db = self.database
        disks = db.disks if target == "data" or db.log_on_data_disks else db.log
        cache = disks.write_cache
        if cache is None:
            return None
        one = self.devices[db.disks.kind].write_s if disks is db.disks else self.log_write_s
        rate = min(cache.destage_writes_per_s, MAX_DESTAGE_SHARE * disks.count / one)
        return cache.ack_s, rate, float(cache.writes)

    @cached_property
    def hosts(self) -> list[Host]:
        """Every host once: application servers, then the central services and database hosts
        unless they run on an application server (two-tier), where they share its CPUs."""
        apps = self.app_servers
        out = {h: Host(name=h, cpus=apps.cpus, memory_bytes=apps.memory_bytes) for h in apps.hosts}
        for path, part in (
            ("central_services", self.central_services),
            ("database", self.database),
        ):
            if part.host in out:
                host = out[part.host]
                for field in ("cpus", "memory_bytes"):
                    value = getattr(part, field)
                    if value is not None and value != getattr(host, field):
                        raise ValueError(
                            f"{path}.{field}: {value} differs from host {part.host!r}'s "
                            f"{getattr(host, field)}; a part on a shared host uses the host's"
                        )
                continue
            if part.cpus is None or part.memory_bytes is None:
                raise ValueError(
                    f"{path}: host {part.host!r} is not an application server, "
                    "so it needs cpus and memory_bytes"
                )
            out[part.host] = Host(name=part.host, cpus=part.cpus, memory_bytes=part.memory_bytes)
        return list(out.values())

    def host_role(self, name: str) -> str:
        """What host `name` runs, for a person reading host counters: "database",
        "central_services" (message and enqueue server), "application", joined by "+" in that
        order where one host runs several (two-tier). At most seven values: a bounded label."""
        parts = (
            ("database", name == self.database.host),
            ("central_services", name == self.central_services.host),
            ("application", name in self.app_servers.hosts),
        )
        return "+".join(role for role, runs in parts if runs)

    def host(self, name: str) -> Host:
        return next(h for h in self.hosts if h.name == name)


class Statement(Strict):
    """One SQL statement a step issues (what ST05 would list)."""

    table: str
    op: Literal["SELECT", "INSERT", "UPDATE", "DELETE"]
    where: str = ""
    calls: float = Field(ge=0, description="executions per step")
    rows: float = Field(ge=0, description="rows per execution")
    data_reads: float = Field(ge=0, description="logical data page reads per execution")
    index_reads: float = Field(ge=0, description="logical index page reads per execution")
    page_writes: float = Field(ge=0, default=0.0, description="pages dirtied per execution")
    lock: str | None = Field(default=None, description="a database.locks entry it holds")


class StepDemand(Strict):
    cpu_s: float = Field(ge=0, description="ABAP CPU time per step on the application server")
    enqueues: float = Field(ge=0, default=0.0, description="enqueue requests per step")
    commits: float = Field(ge=0, default=0.0, description="database commits per step")
    statements: list[Statement] = Field(default_factory=list)


class Transaction(Strict):
    description: str
    dialog_steps: int = Field(gt=0, description="dialog steps per execution")
    line_items: int = Field(ge=0, default=0)
    gui_s: float = Field(ge=0, description="front-end round-trip time per step")
    dialog: StepDemand
    update: StepDemand | None = Field(default=None, description="one V1 update per execution")


class Target(Strict):
    figure: str
    paper: float
    unit: str
    source: str
    # How the model reaches the figure: the parameter fitted to it, "derived: ..." when it
    # follows from fitted figures by a law or the mix (no independent evidence), or
    # "predicted" when nothing was fitted to make it come out.
    fitted_by: str = Field(
        default="predicted",
        description="the parameter fitted to this figure, derived: how, or predicted",
    )


class Scenario(Strict):
    name: str
    description: str
    landscape: Landscape
    users: int = Field(gt=0, le=MAX_USERS)
    think_time_s: float = Field(ge=0)
    histogram_cv: float = Field(gt=0, description="coefficient of variation of step service")
    transactions: dict[str, Transaction] = Field(min_length=1)
    bent: list[str] = Field(default_factory=list, description="figures the model departs from")
    targets: list[Target] = Field(default_factory=list)

    @model_validator(mode="after")
    def _statements_use_known_tables(self) -> Scenario:
        for tname, tx in self.transactions.items():
            for part, demand in (("dialog", tx.dialog), ("update", tx.update)):
                if demand is None:
                    continue
                locks = {lk.name for lk in self.landscape.database.locks}
                for i, st in enumerate(demand.statements):
                    where = f"transactions.{tname}.{part}.statements.{i}"
                    if st.table not in self.landscape.tables:
                        raise ValueError(f"{where}.table: unknown table {st.table!r}")
                    if st.lock is not None and st.lock not in locks:
                        raise ValueError(f"{where}.lock: no database.locks entry {st.lock!r}")
        return self

    @property
    def steps_per_cycle(self) -> int:
        return sum(t.dialog_steps for t in self.transactions.values())


class Fault(Strict):
    name: str
    description: str
    indicator: str = Field(
        description="the ST03 figure the fault drives past its threshold, or for a fault only "
        "SAPControl shows (short dumps, update errors) what it shows there"
    )
    source: str
    patch: dict = Field(description="partial scenario document merged over the scenario")
