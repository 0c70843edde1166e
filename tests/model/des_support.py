"""Small landscapes for the discrete-event engine's tests, written as YAML into a catalog.

Everything not asked for is switched off (no roll time, no program load, no network round
trips, no SAP buffers, no enqueues, no commits, no page writes), so that a test case is
the queueing network it names and nothing else.
"""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

from landscape_model.catalog import Catalog


def landscape(
    *,
    hosts: int = 1,
    cpus: int = 1,
    instances_per_host: int = 1,
    dialog_wps: int = 1,
    update_wps: int = 1,
    db_cpus: int = 1,
    two_tier: bool = False,
    disks: int = 1,
    read_s: float = 0.005,
    write_s: float = 0.005,
    log_write_s: float = 0.002,
    log_devices: int = 1,
    cpu_s_per_call: float = 0.0,
    pool_pages: int = 100,
    working_set_pages: int = 100,
    miss_floor: float = 0.0,
    cleaners: int = 4,
    cleaner_pages_per_s: float = 1000.0,
    enqueue_service_s: float = 0.0001,
    locks: list[dict] | None = None,
) -> dict:
    apps = [f"app{k}" for k in range(hosts)]
    db_host = apps[0] if two_tier else "db"
    database = {
        "host": db_host,
        "other_memory_bytes": 0,
        "call_rtt_s": 0.0,
        "cpu_s_per_call": cpu_s_per_call,
        "cpu_s_per_logical_read": 0.0,
        "cpu_s_per_physical_read": 0.0,
        "hit_curve_exponent": 1.0,
        "bufferpools": [
            {
                "name": "POOL",
                "page_kb": 4,
                "pages": pool_pages,
                "working_set_pages": working_set_pages,
                "miss_floor": miss_floor,
            }
        ],
        "disks": {"kind": "hdd", "count": disks},
        "log": {"kind": "hdd", "count": log_devices},
        "locks": locks or [],
        "io_cleaners": cleaners,
        "io_cleaner_pages_per_s": cleaner_pages_per_s,
        "pages_written_per_page_dirtied": 1.0,
        "index_share_of_page_writes": 0.0,
    }
    if not two_tier:
        database |= {"cpus": db_cpus, "memory_bytes": 1 << 32}
    return {
        "name": "case",
        "description": "test case",
        "sid": "TST",
        "app_servers": {
            "hosts": apps,
            "cpus": cpus,
            "memory_bytes": 1 << 32,
            "instances_per_host": instances_per_host,
        },
        "instance": {
            "base_memory_bytes": 0,
            "dialog_work_processes": dialog_wps,
            "update_work_processes": update_wps,
            "load_gen_s": 0.0,
            "roll": {
                "roll_buffer_bytes": 1 << 30,
                "extended_memory_bytes": 1 << 30,
                "copy_bytes_per_s": 1.0e18,
                "em_map_s": 0.0,
                "roll_file_latency_s": 0.0,
                "roll_file_bytes_per_s": 1.0e9,
                "user_roll_bytes": 1,
                "user_em_bytes": 1,
            },
        },
        "central_services": {
            "host": "cs",
            "cpus": 1,
            "memory_bytes": 1 << 32,
            "enqueue_work_processes": 1,
            "enqueue_service_s": enqueue_service_s,
            "link_rtt_s": 0.0,
            "message_server_cpu_s_per_step": 0.0,
        },
        "database": database,
        "devices": {
            "hdd": {"read_s": read_s, "write_s": write_s, "log_write_s": log_write_s},
            "ssd": {"read_s": read_s, "write_s": write_s, "log_write_s": log_write_s},
        },
        "tables": {"T1": {"data_pool": "POOL", "index_pool": "POOL"}},
        "os": {"base_memory_bytes": 0, "page_ops_per_s": 0.0, "system_cpu_share": 0.1},
    }


def statement(calls: float = 1.0, data_reads: float = 0.0, **extra) -> dict:
    return {
        "table": "T1",
        "op": "SELECT",
        "where": "K = ?",
        "calls": calls,
        "rows": 1,
        "data_reads": data_reads,
        "index_reads": 0,
        **extra,
    }


def scenario(
    land: dict,
    *,
    users: int,
    think_s: float,
    cpu_s: float,
    statements: list[dict] | None = None,
    gui_s: float = 0.0,
    update: dict | None = None,
    dialog_steps: int = 1,
    commits: float = 0.0,
) -> dict:
    tx = {
        "description": "one step",
        "dialog_steps": dialog_steps,
        "gui_s": gui_s,
        "dialog": {"cpu_s": cpu_s, "commits": commits, "statements": statements or []},
    }
    if update is not None:
        tx["update"] = update
    return {
        "name": "case",
        "description": "test case",
        "landscape": copy.deepcopy(land),
        "users": users,
        "think_time_s": think_s,
        "histogram_cv": 1.0,
        "transactions": {"T": tx},
    }


def catalog(tmp: Path, doc: dict, faults: dict[str, dict] | None = None) -> Catalog:
    """A catalog holding the scenario `case` (and the named faults, as patches)."""
    for kind in ("landscapes", "scenarios", "faults"):
        (tmp / kind).mkdir(parents=True, exist_ok=True)
    (tmp / "scenarios" / "case.yml").write_text(yaml.safe_dump(doc))
    for name, patch in (faults or {}).items():
        fault = {
            "name": name,
            "description": name,
            "indicator": "dispatcher_wait",
            "source": "test",
            "patch": patch,
        }
        (tmp / "faults" / f"{name}.yml").write_text(yaml.safe_dump(fault))
    return Catalog(tmp)
