"""Imports of real data: a Windows PerfMon CSV becomes a run the same report reads."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import numpy as np
from fastapi import APIRouter, HTTPException, Query, Request, status

from api.deps import StoreDep, WriteAuth
from api.imports.perfmon import MAX_BYTES, PerfmonError, parse
from api.imports.st03 import MAX_BYTES as ST03_MAX
from api.imports.st03 import ST03Error
from api.imports.st03 import parse as parse_st03
from api.runs.recorder import RunData

router = APIRouter(prefix="/imports", tags=["imports"])


async def _read_limited(request: Request, limit: int) -> bytes:
    """The body, refused with 413 as soon as it passes `limit` (declared or streamed)."""
    if int(request.headers.get("content-length") or 0) > limit:
        raise HTTPException(status.HTTP_413_CONTENT_TOO_LARGE, f"file over {limit} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPException(status.HTTP_413_CONTENT_TOO_LARGE, f"file over {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def store_perfmon(store, raw: bytes, label: str) -> dict:
    """Parse and store as one run; a file that fails to parse stores nothing."""
    data = parse(raw)
    run = RunData(
        data.times,
        data.columns,
        data.values,
        None,
        None,
        {"source": "perfmon", "hosts": data.hosts, "counter_names": data.names},
    )
    run_id = store.runs.add(
        kind="imported",
        scenario="perfmon",
        label=label,
        start=data.start,
        duration_s=float(data.times[-1]),
        ramp_up_s=0.0,
        spec={"source": "perfmon", "samples": int(data.times.size), "hosts": data.hosts},
        data=run,
    )
    return store.runs.get(run_id)


@router.post(
    "/perfmon",
    status_code=status.HTTP_201_CREATED,
    dependencies=[WriteAuth],
    summary="Import a Windows Performance Monitor CSV (typeperf, relog, logman) as a run",
)
async def import_perfmon(
    request: Request, store: StoreDep, label: Annotated[str, Query(max_length=200)] = ""
) -> dict:
    raw = await _read_limited(request, MAX_BYTES)
    try:
        return store_perfmon(store, raw, label)
    except PerfmonError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from exc


def store_st03(store, raw: bytes, label: str) -> dict:
    """An ST03 export as a run of one interval: steps and time totals per task type and
    transaction; the report's ST03 tables read it like a recorded run."""
    rows = parse_st03(raw)
    columns: list[str] = []
    values: list[float] = []
    totals: dict[str, float] = {}
    transactions: list[str] = []
    for r in rows:
        if r.transaction:
            if r.transaction not in transactions:
                transactions.append(r.transaction)
            for name, value in (
                (f"tx.{r.task_type}.{r.transaction}.steps", r.steps),
                (f"tx.{r.task_type}.{r.transaction}.response", r.seconds.get("response", 0.0)),
            ):
                totals[name] = totals.get(name, 0.0) + value
        totals[f"st03.{r.task_type}.steps"] = totals.get(f"st03.{r.task_type}.steps", 0.0) + r.steps
        for part, secs in r.seconds.items():
            key = f"st03.{r.task_type}.{part}"
            totals[key] = totals.get(key, 0.0) + secs
    for name, value in totals.items():
        columns.append(name)
        values.append(value)
    run = RunData(
        np.array([1.0]),
        columns,
        np.array([values]),
        None,
        None,
        {"source": "st03", "transactions": transactions},
    )
    run_id = store.runs.add(
        kind="imported",
        scenario="st03",
        label=label,
        start=datetime.now(UTC),
        duration_s=1.0,
        ramp_up_s=0.0,
        spec={"source": "st03", "rows": len(rows)},
        data=run,
    )
    return store.runs.get(run_id)


@router.post(
    "/st03",
    status_code=status.HTTP_201_CREATED,
    dependencies=[WriteAuth],
    summary="Import an ST03/ST03N workload export (CSV) as a run; columns in api/imports/st03.py",
)
async def import_st03(
    request: Request, store: StoreDep, label: Annotated[str, Query(max_length=200)] = ""
) -> dict:
    raw = await _read_limited(request, ST03_MAX)
    try:
        return store_st03(store, raw, label)
    except ST03Error as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from exc
