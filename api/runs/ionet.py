"""I/O wait and network, where a run's data has them: per host and counter the steady
state's mean, p95 and maximum, unrounded (a check compares them; the page rounds).

What each source records (checked, not assumed): a PerfMon capture keeps every counter it
holds, so disks (PhysicalDisk/LogicalDisk % Idle Time, Avg. Disk sec/Read|Write|Transfer,
queue lengths), the processors' privileged and interrupt time and the network interfaces
(Bytes Total/sec, Bytes Received|Sent/sec, Output Queue Length) are there when the capture
took them. Model runs and Prometheus windows record one disk figure per host, the standard
`disk_queue` (the model's outstanding I/Os; Prometheus: windows_physical_disk read + write
seconds per second), already charted with the OS counters, and no network and no I/O-wait
time: neither section is there, never a row of zeros."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from api.runs.record import Column, RunRecord
from exporters.vocabulary import DISK_QUEUE, OS_COUNTER_BY_KEY

IO_WAIT, NETWORK = "io_wait", "network"
SECTIONS = (IO_WAIT, NETWORK)
P95 = 95.0

DISKS = frozenset({"physicaldisk", "logicaldisk"})
PROCESSORS = frozenset({"processor", "processor information"})
NICS = frozenset({"network interface", "network adapter"})
# (objects, counter as PDH names it in English, lower case) -> (section, unit)
COUNTERS: dict[tuple[frozenset[str], str], tuple[str, str]] = {
    (DISKS, "% idle time"): (IO_WAIT, "%"),
    (DISKS, "% disk time"): (IO_WAIT, "%"),
    (DISKS, "avg. disk sec/read"): (IO_WAIT, "s"),
    (DISKS, "avg. disk sec/write"): (IO_WAIT, "s"),
    (DISKS, "avg. disk sec/transfer"): (IO_WAIT, "s"),
    (DISKS, "avg. disk queue length"): (IO_WAIT, "requests"),
    (DISKS, "avg. disk read queue length"): (IO_WAIT, "requests"),
    (DISKS, "avg. disk write queue length"): (IO_WAIT, "requests"),
    (DISKS, "current disk queue length"): (IO_WAIT, "requests"),
    (PROCESSORS, "% privileged time"): (IO_WAIT, "%"),
    (PROCESSORS, "% interrupt time"): (IO_WAIT, "%"),
    (NICS, "bytes total/sec"): (NETWORK, "bytes/s"),
    (NICS, "bytes received/sec"): (NETWORK, "bytes/s"),
    (NICS, "bytes sent/sec"): (NETWORK, "bytes/s"),
    (NICS, "output queue length"): (NETWORK, "packets"),
}
# The report's standard row every source may have (from _Total or the sum of the disks).
STANDARD = {
    DISK_QUEUE: (IO_WAIT, OS_COUNTER_BY_KEY[DISK_QUEUE].unit, OS_COUNTER_BY_KEY[DISK_QUEUE].counter)
}
PATH = re.compile(r"^(?P<object>[^\\(]+)(\((?P<instance>.*)\))?\\(?P<counter>[^\\]+)$")


@dataclass(frozen=True)
class Found:
    section: str
    unit: str
    counter: str  # the path without the host, as the report prints it
    name: str  # without the instance: what one chart shows


def classify(key: str, path: str | None) -> Found | None:
    """The section a column belongs to, from its standard key or its counter path."""
    if key in STANDARD:
        section, unit, counter = STANDARD[key]
        return Found(section, unit, counter, counter.split("\\")[-1])
    m = PATH.match(path or "")
    if m is None:
        return None
    obj, counter = m["object"].strip().lower(), m["counter"].strip().lower()
    # Per processor beside _Total: the host's figure is _Total, the CPUs would bury it.
    if obj in PROCESSORS and m["instance"] not in (None, "_Total"):
        return None
    for (objects, name), (section, unit) in COUNTERS.items():
        if obj in objects and counter == name:
            return Found(section, unit, path or "", m["counter"].strip())
    return None


def sections(data: RunRecord, mask: np.ndarray) -> dict[str, list[dict]]:
    """Per section, one row per host and counter with samples in the steady state (`mask`);
    a section without rows is left out."""
    names = data.meta.details.get("counter_names", {})
    out: dict[str, list[dict]] = {}
    for c in data.of_kind("os"):
        found = classify(c.last, names.get(str(c)))
        if found is None:
            continue
        v = data.series(c)[mask]
        v = v[~np.isnan(v)]
        if not v.size:
            continue  # a counter blank over the whole window: absent, not 0
        out.setdefault(found.section, []).append(
            {
                "host": c.part("host"),
                "key": c.last,
                "counter": found.counter,
                "unit": found.unit,
                "mean": float(v.mean()),
                "p95": float(np.percentile(v, P95)),
                "max": float(v.max()),
                "samples": int(v.size),
            }
        )
    # The standard disk queue alone (all a model run or a Prometheus window has) is charted
    # with the OS counters already: it joins an I/O section, it does not make one.
    if all(r["key"] in STANDARD for r in out.get(IO_WAIT, [])):
        out.pop(IO_WAIT, None)
    for rows in out.values():
        rows.sort(key=lambda r: (r["host"], r["counter"]))
    return out


def chart_groups(data: RunRecord, section: str) -> dict[tuple[str, str], list[Column]]:
    """Per (counter name, unit), the columns one chart draws: the same counter of every
    host and instance on one axis. Call it for a section the report shows."""
    names = data.meta.details.get("counter_names", {})
    groups: dict[tuple[str, str], list[Column]] = {}
    for c in data.of_kind("os"):
        found = classify(c.last, names.get(str(c)))
        if found is not None and found.section == section:
            groups.setdefault((found.name, found.unit), []).append(c)
    return groups
