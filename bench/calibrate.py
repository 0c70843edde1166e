"""Fit the SD benchmark scenario's fitted parameters to seed 000 Table 5, and print them.

Six parameters, one per figure (docs/model.md, "Calibration"):

  avg_dialog_response_s     1.960 s  <- gui_s of every transaction (the bend)
  dia_upd_servers_cpu_ratio 0.61     <- one factor on every transaction's ABAP cpu_s
  db_server_cpu_ratio       0.94     <- database.cpu_s_per_logical_read
  db_request_dialog_s       0.319 s  <- database.hit_curve_exponent (physical reads)
  db_request_update_s       0.083 s  <- devices.hdd.log_write_s (a commit's log write)
  msg_enq_server_cpu_ratio  0.04     <- central_services.message_server_cpu_s_per_step

Everything else follows from these (derived, not predicted): dialog steps/h from the
response by the response-time law, SAPS and line items/h from steps/h and the mix, the 60 %
of all application servers as the CPU-weighted mean of two fitted CPU figures.
Usage: python bench/calibrate.py  (about a minute); paste the printed values
into landscape_model/data/{landscapes,scenarios}/sd-benchmark-2003.yml.
"""

from __future__ import annotations

from landscape_model.catalog import Catalog
from landscape_model.network import compile_network
from landscape_model.solver import Solver
from landscape_model.summary import point_figures

SCENARIO = "sd-benchmark-2003"
TARGETS = {
    "avg_dialog_response_s": 1.960,
    "dia_upd_servers_cpu_ratio": 0.61,
    "db_server_cpu_ratio": 0.94,
    "db_request_dialog_s": 0.319,
    "db_request_update_s": 0.083,
    "msg_enq_server_cpu_ratio": 0.04,
}


def overrides(p: dict[str, float], doc: dict) -> dict:
    txs = {}
    for name, tx in doc["transactions"].items():
        entry: dict = {"gui_s": p["gui_s"], "dialog": {"cpu_s": tx["dialog"]["cpu_s"] * p["cpu"]}}
        if tx.get("update"):
            entry["update"] = {"cpu_s": tx["update"]["cpu_s"] * p["cpu"]}
        txs[name] = entry
    return {
        "transactions": txs,
        "landscape": {
            "database": {
                "cpu_s_per_logical_read": p["logical_read"],
                "hit_curve_exponent": p["exponent"],
            },
            "devices": {"hdd": {"log_write_s": p["log_write"]}},
            "central_services": {"message_server_cpu_s_per_step": p["msg"]},
        },
    }


def figures(catalog: Catalog, p: dict[str, float], doc: dict) -> dict[str, float]:
    scenario = catalog.scenario(SCENARIO, overrides=overrides(p, doc))
    return point_figures(Solver(compile_network(scenario), histogram_samples=10).solve(), scenario)


def main() -> None:
    catalog = Catalog()
    doc = catalog.scenario_document(SCENARIO)
    db = doc["landscape"]["database"]
    p = {
        "gui_s": doc["transactions"]["VA01"]["gui_s"],
        "cpu": 1.0,
        "logical_read": db["cpu_s_per_logical_read"],
        "exponent": db["hit_curve_exponent"],
        "log_write": doc["landscape"]["devices"]["hdd"]["log_write_s"],
        "msg": doc["landscape"]["central_services"]["message_server_cpu_s_per_step"],
    }
    for it in range(60):
        f = figures(catalog, p, doc)
        err = {k: f[k] / v - 1.0 for k, v in TARGETS.items()}
        print(it, {k: f"{100 * e:+.3f}%" for k, e in err.items()}, flush=True)
        if max(abs(e) for e in err.values()) < 2e-4:
            break
        p["gui_s"] += 0.8 * (TARGETS["avg_dialog_response_s"] - f["avg_dialog_response_s"])
        p["cpu"] *= (1.0 + err["dia_upd_servers_cpu_ratio"]) ** -0.8
        p["logical_read"] *= (1.0 + err["db_server_cpu_ratio"]) ** -0.5
        # More physical reads (a flatter hit curve) lengthen dialog DB time.
        p["exponent"] *= (1.0 + err["db_request_dialog_s"]) ** 0.08
        p["log_write"] *= (1.0 + err["db_request_update_s"]) ** -0.25
        p["msg"] *= (1.0 + err["msg_enq_server_cpu_ratio"]) ** -1.0
    print("gui_s:", round(p["gui_s"], 4))
    for name, tx in doc["transactions"].items():
        upd = f", update cpu_s {tx['update']['cpu_s'] * p['cpu']:.4f}" if tx.get("update") else ""
        print(f"{name}: dialog cpu_s {tx['dialog']['cpu_s'] * p['cpu']:.4f}{upd}")
    print("cpu_s_per_logical_read:", f"{p['logical_read']:.4g}")
    print("hit_curve_exponent:", f"{p['exponent']:.4g}")
    print("devices.hdd.log_write_s:", f"{p['log_write']:.4g}")
    print("message_server_cpu_s_per_step:", f"{p['msg']:.4g}")


if __name__ == "__main__":
    main()
