"""ST03-style summary of a run and its calibration against the paper's figures."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from landscape_model.config import Scenario
from landscape_model.cpu_stations import CpuStationFigures, cpu_station_figures
from landscape_model.engine import Snapshot
from landscape_model.placement import place
from landscape_model.results import OperatingPoint
from landscape_model.terms import COMPONENTS, REPORT_ORDER, TASK_TYPES

# Summary row key (ms per step) -> time component, in the order reports print them.
SUMMARY_FIELDS = {f"{comp}_ms": comp for comp in REPORT_ORDER}


@dataclass(frozen=True)
class CalibrationRow:
    figure: str
    paper: float
    model: float
    residual_pct: float
    unit: str
    source: str
    fitted_by: str = "predicted"


def st03_summary(snap: Snapshot) -> list[dict]:
    """One row per task type: steps and the mean of every time part per step, in ms."""
    t = snap.totals
    rows = []
    for k, task in enumerate(TASK_TYPES):
        steps = float(t.steps[:, k].sum())
        row: dict = {"task_type": task, "steps": round(steps)}
        for key, comp in SUMMARY_FIELDS.items():
            total = float(t.seconds[:, k, :, COMPONENTS.index(comp)].sum())
            row[key] = round(1000.0 * total / steps, 3) if steps else 0.0
        calls = float(t.db_calls[:, k].sum())
        row["db_calls_per_step"] = round(calls / steps, 3) if steps else 0.0
        rows.append(row)
    return rows


def transaction_summary(snap: Snapshot) -> list[dict]:
    """One row per task type and transaction, as ST03's transaction profile."""
    t = snap.totals
    rows = []
    for k, task in enumerate(TASK_TYPES):
        for j, tx in enumerate(snap.state.transactions):
            steps = float(t.steps[:, k, j].sum())
            if not steps:
                continue
            row: dict = {"task_type": task, "transaction": tx, "steps": round(steps)}
            for key, comp in SUMMARY_FIELDS.items():
                total = float(t.seconds[:, k, j, COMPONENTS.index(comp)].sum())
                row[key] = round(1000.0 * total / steps, 3)
            rows.append(row)
    return rows


def app_servers_cpus(roles: list[str], cpus: list[int]) -> int:
    """CPUs the application-server figure is over: every host that runs dialog/update
    instances or the central services, each once. On a two-tier host (sd-two-tier) the
    central services sit on the application server: its CPUs are not counted twice."""
    covered = {"application", "central_services"}
    return sum(c for r, c in zip(roles, cpus, strict=True) if covered & set(r.split("+")))


def run_figures(snap: Snapshot) -> dict[str, float]:
    """The Table 5 figures as the model measured them over the run."""
    t = snap.totals
    hours = t.sim_time / 3600.0
    dialog = float(t.steps[:, 0].sum())
    update = float(t.steps[:, 1].sum())
    resp = COMPONENTS.index("response")
    dbr = COMPONENTS.index("db_request")
    executions = {
        tx: float(t.steps[:, 0, j].sum()) / snap.dialog_steps[tx]
        for j, tx in enumerate(snap.state.transactions)
    }
    line_items = sum(executions[tx] * snap.line_items[tx] for tx in executions)
    host_cpu = t.host_cpu_seconds.sum()
    n_hosts = len(snap.state.hosts)
    dia_upd_capacity = n_hosts * snap.host_cpus * t.sim_time
    app_capacity = app_servers_cpus(snap.os_roles, snap.os_cpus) * t.sim_time
    steps_per_hour = dialog / hours if hours else 0.0
    response = float(t.seconds[:, 0, :, resp].sum()) / dialog if dialog else 0.0
    return {
        "dialog_steps_per_hour": steps_per_hour,
        "saps": steps_per_hour / 60.0,
        "line_items_per_hour": line_items / hours if hours else 0.0,
        "avg_dialog_response_s": response,
        "db_request_dialog_s": float(t.seconds[:, 0, :, dbr].sum()) / dialog if dialog else 0.0,
        "db_request_update_s": float(t.seconds[:, 1, :, dbr].sum()) / update if update else 0.0,
        "db_server_cpu_ratio": t.db_cpu_seconds / (snap.db_cpus * t.sim_time)
        if t.sim_time
        else 0.0,
        "app_servers_cpu_ratio": (host_cpu + t.cs_cpu_seconds) / app_capacity
        if app_capacity
        else 0.0,
        "dia_upd_servers_cpu_ratio": host_cpu / dia_upd_capacity if dia_upd_capacity else 0.0,
        "msg_enq_server_cpu_ratio": t.cs_cpu_seconds / (snap.cs_cpus * t.sim_time)
        if t.sim_time
        else 0.0,
        "dialog_steps_per_s": dialog / t.sim_time if t.sim_time else 0.0,
        # Interactive response-time law: X = N / (R + Z).
        "response_time_law_steps_per_s": snap.users / (response + snap.think_time_s),
    }


def point_figures(op: OperatingPoint, scenario: Scenario) -> dict[str, float]:
    """The figures of run_figures, from an operating point (the solver's means, no run)."""
    land = scenario.landscape
    x_dialog = float(op.step_rate[:, 0].sum())
    x_update = float(op.step_rate[:, 1].sum())
    resp, dbr = COMPONENTS.index("response"), COMPONENTS.index("db_request")

    def mean(task: int, comp: int) -> float:
        rate = op.step_rate[:, task]
        total = rate.sum()
        return float((op.means[:, task, :, comp] * rate).sum() / total) if total else 0.0

    executions = {
        tx: float(op.step_rate[:, 0, j].sum()) / scenario.transactions[tx].dialog_steps
        for j, tx in enumerate(op.transactions)
    }
    line_items = sum(executions[tx] * scenario.transactions[tx].line_items for tx in executions)
    app_cpus = land.app_servers.cpus
    cs_cpus = land.host(land.central_services.host).cpus
    host_busy = float(op.host_cpu_util.sum()) * app_cpus
    dia_upd_capacity = len(op.hosts) * app_cpus
    app_capacity = app_servers_cpus(
        [land.host_role(h.name) for h in land.hosts], [h.cpus for h in land.hosts]
    )
    response = mean(0, resp)
    return {
        "dialog_steps_per_hour": 3600.0 * x_dialog,
        "saps": 60.0 * x_dialog,
        "line_items_per_hour": 3600.0 * line_items,
        "avg_dialog_response_s": response,
        "db_request_dialog_s": mean(0, dbr),
        "db_request_update_s": mean(1, dbr),
        "db_server_cpu_ratio": op.db_cpu_util,
        "app_servers_cpu_ratio": (host_busy + op.cs_cpu_util * cs_cpus) / app_capacity,
        "dia_upd_servers_cpu_ratio": host_busy / dia_upd_capacity,
        "msg_enq_server_cpu_ratio": op.cs_cpu_util,
        "dialog_steps_per_s": x_dialog,
        "update_steps_per_s": x_update,
        "response_time_law_steps_per_s": scenario.users / (response + scenario.think_time_s),
        "update_backlog_growth_per_s": float(np.sum(op.update_backlog_growth)),
    }


def calibration(snap: Snapshot, scenario: Scenario) -> list[CalibrationRow]:
    figures = run_figures(snap)
    rows = []
    for target in scenario.targets:
        model = figures[target.figure]
        residual = 100.0 * (model - target.paper) / target.paper if target.paper else float("nan")
        rows.append(
            CalibrationRow(
                target.figure,
                target.paper,
                round(model, 4),
                round(residual, 2),
                target.unit,
                target.source,
                target.fitted_by,
            )
        )
    return rows


def instance_summary(snap: Snapshot) -> list[dict]:
    """Dialog steps per instance over the run: steps/s and the means per step (ms) of the
    response and of the parts the whitepaper thresholds judge."""
    t = snap.totals
    span = t.sim_time or 1.0
    rows = []
    for i, name in enumerate(snap.state.instances):
        steps = float(t.steps[i, 0].sum())

        def ms(comp: str, i: int = i, steps: float = steps) -> float:
            total = float(t.seconds[i, 0, :, COMPONENTS.index(comp)].sum())
            return round(1000.0 * total / steps, 3) if steps else 0.0

        rows.append(
            {
                "instance": name,
                "host": snap.state.hosts[int(snap.state.instance_host[i])],
                "dialog_steps_per_s": round(steps / span, 3),
                "response_ms": ms("response"),
                "dispatcher_wait_ms": ms("dispatcher_wait"),
                "db_request_ms": ms("db_request"),
                "dialog_work_processes": int(snap.state.wp_total[i, 0]),
            }
        )
    return rows


def host_summary(snap: Snapshot) -> list[dict]:
    """Every simulated host's CPU over the run, all its tenants (OS counters' view)."""
    t = snap.totals
    span = t.sim_time or 1.0
    return [
        {"host": h, "cpus": c, "cpu_util": round(float(b) / (c * span), 4)}
        for h, c, b in zip(snap.os_hosts, snap.os_cpus, t.os_cpu_busy_seconds, strict=True)
    ]


def cpu_station_summary(snap: Snapshot, scenario: Scenario) -> list[CpuStationFigures]:
    """Every CPU station's utilisation over the run, as `wlmon whatif` gives it for a
    solved point (none for counters stored before stations were counted)."""
    t = snap.totals
    if not t.cpu_station_busy_seconds.size:
        return []
    land = scenario.landscape
    return cpu_station_figures(land, place(land), t.cpu_station_busy_seconds / (t.sim_time or 1.0))


def report(snap: Snapshot, scenario: Scenario) -> dict:
    """The document `wlmon simulate --json` prints."""
    figures = run_figures(snap)
    law = figures["response_time_law_steps_per_s"]
    measured = figures["dialog_steps_per_s"]
    return {
        "scenario": snap.scenario,
        "faults": list(snap.faults),
        "sid": snap.sid,
        "duration_s": snap.totals.sim_time,
        "summary": st03_summary(snap),
        "transactions": transaction_summary(snap),
        "instances": instance_summary(snap),
        "hosts": host_summary(snap),
        "cpu_stations": [asdict(st) for st in cpu_station_summary(snap, scenario)],
        "calibration": [asdict(r) for r in calibration(snap, scenario)],
        "response_time_law": {
            "users": snap.users,
            "think_time_s": snap.think_time_s,
            "measured_steps_per_s": round(measured, 3),
            "law_steps_per_s": round(law, 3),
            "residual_pct": round(100.0 * (measured - law) / law, 3) if law else 0.0,
        },
        "bent": list(scenario.bent),
        "utilisation": {
            "db_cpu": round(figures["db_server_cpu_ratio"], 4),
            "dia_upd_cpu": round(figures["dia_upd_servers_cpu_ratio"], 4),
            "db_disks": round(float(snap.state.disk_util), 4),
            "enqueue": round(float(snap.state.enqueue_util), 4),
        },
    }
