"""`wlmon st05 top`: the compressed SQL trace sorted by elapsed time, live or simulated."""

from __future__ import annotations

import httpx

from exporters.sources.model import statement_totals
from landscape_model.catalog import Catalog
from landscape_model.engine import UnconvergedSolve
from landscape_model.engines import RUN_ENGINE, make_simulation
from landscape_model.network import compile_network
from landscape_model.sqltext import statement_hash


def _row(
    statement: str, sql: str, table: str, op: str, execs: float, recs: float, secs: float
) -> dict:
    return {
        "statement": statement,
        "table": table,
        "operation": op,
        "executions": execs,
        "records": recs,
        "elapsed_ms": secs * 1000,
        "per_execution_ms": secs * 1000 / execs if execs else 0.0,
        "sql": sql,
    }


def sql_texts(scenario: str) -> dict[str, str]:
    """Statement hash -> SQL text for every statement of the scenario."""
    net = compile_network(Catalog().scenario(scenario))
    return {statement_hash(text): text for text in net.statement_sql}


def from_simulation(
    scenario: str,
    faults: list[str],
    seconds: float,
    engine: str = RUN_ENGINE,
    unconverged: list[UnconvergedSolve] | None = None,
) -> list[dict]:
    """The trace of a run of `seconds` on `engine` (engines.py: the default of everything
    that produces a run's time series, as `wlmon simulate` and `wlmon run`); `unconverged`
    receives the analytic engine's solves that did not reach their fixed point."""
    sim = make_simulation(engine, scenario, faults=faults)
    sim.run(seconds)
    if unconverged is not None:
        unconverged.extend(sim.unconverged)
    return [
        _row(r.statement, r.text, r.table, r.operation, r.executions, r.rows, r.elapsed)
        for r in statement_totals(sim.snapshot())
    ]


def from_prometheus(url: str, window: str, texts: dict[str, str]) -> list[dict]:
    values: dict[str, dict[tuple, float]] = {}
    for name in ("elapsed_seconds", "executions", "rows"):
        metric = f"sap_st05_statement_{name}_total"
        query = f"sum by (statement, table, operation) (increase({metric}[{window}]))"
        try:
            r = httpx.get(f"{url}/api/v1/query", params={"query": query}, timeout=30)
            r.raise_for_status()
        except httpx.HTTPError as exc:
            raise RuntimeError(f"cannot query Prometheus at {url}: {exc}") from exc
        values[name] = {
            (m["metric"]["statement"], m["metric"]["table"], m["metric"]["operation"]): float(
                m["value"][1]
            )
            for m in r.json()["data"]["result"]
        }
    rows = [
        _row(
            st,
            texts.get(st, '(text in the log store: {source="st05"})'),
            table,
            op,
            values["executions"].get(key, 0.0),
            values["rows"].get(key, 0.0),
            secs,
        )
        for key, secs in values["elapsed_seconds"].items()
        for st, table, op in [key]
    ]
    return sorted(rows, key=lambda r: -r["elapsed_ms"])
