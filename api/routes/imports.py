"""Imports of real data: a Windows PerfMon CSV becomes a run the same report reads."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Request, status

from api.deps import StoreDep, WriteAuth
from api.imports.perfmon import MAX_BYTES, PerfmonError, parse
from api.runs.recorder import RunData

router = APIRouter(prefix="/imports", tags=["imports"])


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
    declared = int(request.headers.get("content-length") or 0)
    if declared > MAX_BYTES:
        raise HTTPException(status.HTTP_413_CONTENT_TOO_LARGE, f"file over {MAX_BYTES} bytes")
    raw = await request.body()
    try:
        return store_perfmon(store, raw, label)
    except PerfmonError as exc:
        code = (
            status.HTTP_413_CONTENT_TOO_LARGE
            if len(raw) > MAX_BYTES
            else status.HTTP_422_UNPROCESSABLE_CONTENT
        )
        raise HTTPException(code, str(exc)) from exc
