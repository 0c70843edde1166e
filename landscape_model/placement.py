"""Where each tenant of a host runs, compiled for both engines: its CPU station and how
much its memory's locality stretches its CPU demand.

- **CPU placement.** A set of cores that one or more tenants are pinned to (`affinity`) is
  a processor-sharing station of its own, with as many servers as cores: the database
  pinned to the central instance's core competes there with that instance's work
  processes, and with nobody else (seed 004, "Scale-Up"). Unpinned tenants share all the
  host's cores: one station per host, as before.
- **Remote memory.** On a host with several sockets, a tenant whose memory is not all on
  the socket its thread runs on waits longer for the share of its memory accesses that
  cross to the other node. With m the share of a busy CPU second spent waiting for main
  memory at local latency, ρ the remote/local latency ratio and r the share of accesses
  that are remote, its CPU demand is stretched by 1 + m·r·(ρ − 1). r follows from where
  its threads run (uniformly over its cores' sockets S) and where its memory sits (M:
  `local`, S itself; `interleave`, every socket of the host): r = 1 − |S ∩ M| / (|S|·|M|).
- **Central services on a pinned set.** The enqueue work process is a work process of the
  central instance (seed 004: the central instance "was comprised of two dialog processes,
  one update process, and one enqueue process"; affinity "set in the SAP instance
  profiles"), so where that instance is pinned the enqueue requests' service and the
  message server's CPU per dialog step are CPU demand on its station (`cs_station`),
  competing with it and the database there. Where they are not pinned but share a host
  with other tenants (an application server or the database's host, every core shared:
  `sd-two-tier`), the same CPU demand is on that host's shared station, beside everyone
  else's there. On a host of their own (`cs_station` None: `sd-benchmark-2003`) they stay
  as before: the enqueue work processes a queue of their own, the message server's CPU
  counted, not queued for (nobody else competes for those cores).
"""

from __future__ import annotations

from dataclasses import dataclass

from landscape_model.config import Landscape, MemoryPlacement


@dataclass(frozen=True)
class CpuStation:
    name: str  # cpu:<host> (all its cores) or cpu:<host>/<cores>
    host: str
    cores: int


@dataclass(frozen=True)
class Placement:
    stations: list[CpuStation]  # every host's stations, host by host (landscape order)
    instance_station: list[int]  # [instance] its station
    db_station: int
    instance_stretch: list[float]  # [instance] factor on its ABAP CPU demand
    db_stretch: float  # factor on the database's CPU demand
    instance_remote: list[float]  # [instance] share of its memory accesses that are remote
    db_remote: float
    cs_station: int | None = None  # the central services' CPU station, None: not on a CPU

    def host_stations(self, host: str) -> list[int]:
        return [s for s, st in enumerate(self.stations) if st.host == host]


def _label(cores: tuple[int, ...], cpus: int) -> str:
    if len(cores) == cpus:
        return ""
    runs, start = [], cores[0]
    for a, b in zip(cores, (*cores[1:], None), strict=True):
        if b != a + 1:
            runs.append(f"{start}" if start == a else f"{start}-{a}")
            start = b
    return "/" + ",".join(runs)


def remote_share(
    land: Landscape, host: str, cores: tuple[int, ...], memory: MemoryPlacement
) -> float:
    """Share of a tenant's memory accesses that go to another socket's node."""
    hw = land.hardware_of(host)
    per = land.host(host).cpus // hw.sockets
    runs_on = {c // per for c in cores}
    sits_on = runs_on if memory == "local" else set(range(hw.sockets))
    return 1.0 - len(runs_on & sits_on) / (len(runs_on) * len(sits_on))


def stretch(land: Landscape, host: str, remote: float) -> float:
    hw = land.hardware_of(host)
    return 1.0 + hw.memory_stall_share * remote * (hw.remote_memory_latency_ratio - 1.0)


def place(land: Landscape) -> Placement:
    """The landscape's tenants on their CPU stations (`Landscape.cpu_sets` validated them)."""
    sets = land.cpu_sets
    stations: list[CpuStation] = []
    index: dict[tuple[str, tuple[int, ...]], int] = {}
    tenants = [(f"instance:{n}", h) for h, n in land.instance_names()]
    tenants.append(("database", land.database.host))
    if "central_services" in sets:
        tenants.append(("central_services", land.central_services.host))
    for h in land.hosts:
        mine = [sets[key] for key, host in tenants if host == h.name]
        # A host nobody is pinned on (or that runs no tenant, e.g. the central services'
        # own) is one station over all its cores.
        for cores in mine or [tuple(range(h.cpus))]:
            if (h.name, cores) not in index:
                index[h.name, cores] = len(stations)
                stations.append(
                    CpuStation(f"cpu:{h.name}{_label(cores, h.cpus)}", h.name, len(cores))
                )
    inst_station, inst_remote = [], []
    for host, name in land.instance_names():
        cores = sets[f"instance:{name}"]
        inst_station.append(index[host, cores])
        inst_remote.append(remote_share(land, host, cores, land.instance.memory))
    db = land.database
    db_remote = remote_share(land, db.host, sets["database"], db.memory)
    return Placement(
        stations=stations,
        instance_station=inst_station,
        db_station=index[db.host, sets["database"]],
        instance_stretch=[
            stretch(land, h, r)
            for (h, _), r in zip(land.instance_names(), inst_remote, strict=True)
        ],
        db_stretch=stretch(land, db.host, db_remote),
        instance_remote=inst_remote,
        db_remote=db_remote,
        cs_station=_cs_station(land, sets, index, tenants),
    )


def _cs_station(
    land: Landscape,
    sets: dict[str, tuple[int, ...]],
    index: dict[tuple[str, tuple[int, ...]], int],
    tenants: list[tuple[str, str]],
) -> int | None:
    """The central services' CPU station: their pinned set; else, on a host another tenant
    runs on (an application server, the database's), the station of the host's shared
    cores; None on a host of their own."""
    host = land.central_services.host
    if "central_services" in sets:
        return index[host, sets["central_services"]]
    if not any(h == host for key, h in tenants if key != "central_services"):
        return None
    # Every tenant there pinned to a subset leaves no station of all the host's cores.
    return index.get((host, tuple(range(land.host(host).cpus))))
