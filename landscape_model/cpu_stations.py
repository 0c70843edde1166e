"""Per CPU station figures, one shape for every report: `wlmon whatif` (a solved point) and
`wlmon simulate` (a run's counters) both describe each station with `CpuStationFigures`.

A CPU station (placement.py) is a host's cores, or a set of cores tenants are pinned to:
pinned tenants compete with each other and with nobody else, so the busiest station can
bound the users while the host as a whole is not busy (seed 004: core 0 runs the central
instance and the database).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from landscape_model.config import Landscape
from landscape_model.network import CompiledNetwork
from landscape_model.placement import Placement

if TYPE_CHECKING:
    from landscape_model.results import OperatingPoint


@dataclass(frozen=True)
class CpuStationFigures:
    station: str  # cpu:<host> (all its cores) or cpu:<host>/<cores>
    host: str
    cores: list[int] | None  # the cores its tenants are pinned to; None: all the host's
    tenants: list[str]  # "instance:<name>", "database", "central_services"
    cpu_util: float  # its tenants' busy CPU over its cores


def station_busy(net: CompiledNetwork, op: OperatingPoint) -> np.ndarray:
    """Busy cores (CPU-seconds per second) of every CPU station at an operating point: the
    instances' ABAP CPU (memory stretch included), where the database runs every step's DB
    CPU, and where the central services share a station (pinned, or a shared host's
    cores) their CPU."""
    pl = net.placement
    busy = np.zeros(len(pl.stations))
    abap = (op.step_rate * net.cpu_s[None]).sum(axis=(1, 2)) * net.cpu_stretch
    np.add.at(busy, pl.instance_station, abap)
    busy[pl.db_station] += float((op.step_rate.sum(axis=0) * net.db_cpu).sum())
    if pl.cs_station is not None:
        # cs_cpu_util is over the central services' host's CPUs.
        land = net.scenario.landscape
        busy[pl.cs_station] += op.cs_cpu_util * land.host(land.central_services.host).cpus
    return busy


def cpu_station_figures(
    land: Landscape, placement: Placement, busy: np.ndarray
) -> list[CpuStationFigures]:
    """Every station of the placement with its tenants and utilisation; `busy` holds each
    station's busy cores (CPU-seconds per second), in the placement's station order."""
    keys = [f"instance:{name}" for _, name in land.instance_names()]
    station_of = dict(zip(keys, placement.instance_station, strict=True))
    station_of["database"] = placement.db_station
    if placement.cs_station is not None:
        station_of["central_services"] = placement.cs_station
    sets = land.cpu_sets
    out = []
    for s, (st, b) in enumerate(zip(placement.stations, busy, strict=True)):
        tenants = [key for key, at in station_of.items() if at == s]
        cores = sets[tenants[0]] if tenants else ()
        pinned = bool(cores) and len(cores) < land.host(st.host).cpus
        out.append(
            CpuStationFigures(
                station=st.name,
                host=st.host,
                cores=list(cores) if pinned else None,
                tenants=tenants,
                cpu_util=float(b) / st.cores,
            )
        )
    return out
