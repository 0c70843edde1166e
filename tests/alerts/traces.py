"""Series of the landscape model at speed 1, for the alert rules' promtool cases.

`python -m tests.alerts.traces` runs the discrete-event model (the engine the live exporter
runs, seed 1, 1 s ticks) of the default scenario and writes tests/alerts/traces/*.json:
what Prometheus would scrape every 15 s, for a healthy hour and for each of the four faults
(15 healthy minutes, the fault for 8.5 minutes, 10 healthy minutes). The rules did not make
these numbers, so the cases built from them (cases.py) check the rules' timing against the
model's own onsets, noise and recovery, not against a shape the rules were written for.

Three instances are kept as they are; the other 27 are summed into one series labelled
sap_instance="others" (their counters add up, so per-step means and the SID's totals stay
exact) to keep the files small. The database host's CPU idle seconds, disk queue seconds
and the buffer pools' physical reads are kept whole. Committed, not rebuilt by the tests:
the engine's floating point may differ in the last bits between machines.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from landscape_model.engines import make_simulation
from landscape_model.terms import COMPONENTS

OUT = Path(__file__).parent / "traces"
SCRAPE_S = 15
KEPT = 3
COMPONENTS_KEPT = ("dispatcher_wait", "db_request", "enqueue", "roll_in", "roll_out", "response")
FAULTS = ("db-bottleneck", "too-few-work-processes", "slow-enqueue-link", "roll-area-too-small")
# The fault's window in a fault trace (seconds from the start), and a trace's length.
FAULT_ON_S, FAULT_OFF_S, FAULT_TRACE_S = 900, 1410, 2010
HEALTHY_S = 3600


def _round(x: np.ndarray | float) -> list[float] | float:
    return np.round(x, 4).tolist()


def sample(fault: str | None, seed: int = 1) -> dict:
    sim = make_simulation("des", faults=(), seed=seed)
    length = HEALTHY_S if fault is None else FAULT_TRACE_S
    rows: list[dict] = []
    for t in range(length + 1):
        if fault is not None and t == FAULT_ON_S:
            sim.set_faults((fault,))
        if fault is not None and t == FAULT_OFF_S:
            sim.set_faults(())
        if t % SCRAPE_S == 0:
            snap = sim.snapshot()
            tot = snap.totals
            db = next(i for i, r in enumerate(snap.os_roles) if "database" in r.split("+"))
            steps = tot.steps[:, 0, :].sum(axis=1)  # dialog steps per instance
            secs = {c: tot.seconds[:, 0, :, COMPONENTS.index(c)].sum(axis=1) for c in COMPONENTS}
            rows.append(
                {
                    "steps": steps,
                    "secs": secs,
                    "roll_file": tot.roll_file_bytes,
                    "db_cpu_busy": float(tot.os_cpu_busy_seconds[db]),
                    "db_disk_queue": float(tot.os_disk_queue_seconds[db]),
                    "physical": float(tot.pool_data_physical.sum() + tot.pool_index_physical.sum()),
                    "t": t,
                }
            )
            names = list(snap.state.instances)
            db_host, db_cpus = snap.os_hosts[db], snap.os_cpus[db]
        if t < length:
            sim.step()

    def split(values: list[np.ndarray]) -> dict[str, list[float]]:
        arr = np.array(values)  # [sample, instance]
        out = {names[i]: _round(arr[:, i]) for i in range(KEPT)}
        out["others"] = _round(arr[:, KEPT:].sum(axis=1))
        return out

    return {
        "fault": fault,
        "scrape_s": SCRAPE_S,
        "fault_on_s": None if fault is None else FAULT_ON_S,
        "fault_off_s": None if fault is None else FAULT_OFF_S,
        "db_host": db_host,
        "db_cpus": db_cpus,
        "steps": split([r["steps"] for r in rows]),
        "seconds": {c: split([r["secs"][c] for r in rows]) for c in COMPONENTS_KEPT},
        "roll_file_bytes": split([r["roll_file"] for r in rows]),
        # Idle seconds of one of the host's CPUs (their mean), as node_cpu_seconds_total has.
        "db_cpu_idle_seconds": _round(
            np.array([r["t"] - r["db_cpu_busy"] / db_cpus for r in rows])
        ),
        "db_disk_queue_seconds": _round(np.array([r["db_disk_queue"] for r in rows])),
        "physical_reads": _round(np.array([r["physical"] for r in rows])),
    }


def main() -> None:
    OUT.mkdir(exist_ok=True)
    for fault in (None, *FAULTS):
        name = fault or "healthy"
        (OUT / f"{name}.json").write_text(json.dumps(sample(fault), separators=(",", ":")))
        print("wrote", OUT / f"{name}.json")


if __name__ == "__main__":
    main()
