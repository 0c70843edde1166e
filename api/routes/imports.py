"""Imports of real data: a Windows PerfMon CSV or an ST03 export becomes a run the same
report reads."""

from __future__ import annotations

import tempfile
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request, status
from fastapi.concurrency import run_in_threadpool

from api.deps import StoreDep, WriteAuth
from api.imports.perfmon import MAX_BYTES
from api.imports.st03 import MAX_BYTES as ST03_MAX
from api.schemas import Run, refusals
from api.services import imports

router = APIRouter(prefix="/imports", tags=["imports"])
Label = Annotated[str, Query(max_length=200, description="a name for the run")]


SPOOL_BYTES = 8 * 1024 * 1024  # bodies larger than this wait on disk, not in memory


async def _read_limited(request: Request, limit: int) -> tempfile.SpooledTemporaryFile:
    """The body in a spooled file (read from its start), refused with 413 as soon as it
    passes `limit` (declared or streamed)."""
    declared = request.headers.get("content-length") or "0"
    if declared.isdigit() and int(declared) > limit:
        raise HTTPException(status.HTTP_413_CONTENT_TOO_LARGE, f"file over {limit} bytes")
    # Handed to the caller, who closes it once the import has read it.
    body = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise HTTPException(status.HTTP_413_CONTENT_TOO_LARGE, f"file over {limit} bytes")
            body.write(chunk)
    except BaseException:
        body.close()
        raise
    body.seek(0)
    return body


# Both imports answer alike: the run they stored, or why the file was refused.
AS_RUN: dict[str, Any] = {
    "status_code": status.HTTP_201_CREATED,
    "response_model": Run,
    "response_model_exclude_unset": True,
    "dependencies": [WriteAuth],
    "responses": refusals(
        {
            413: "the file is too large",
            422: "the file cannot be read (the message names the line)",
        },
        write=True,
    ),
}


@router.post(
    "/perfmon",
    summary="Import a Windows Performance Monitor CSV (typeperf, relog, logman) as a run",
    **AS_RUN,
)
async def import_perfmon(request: Request, store: StoreDep, label: Label = "") -> dict:
    body = await _read_limited(request, MAX_BYTES)
    # Parsing a large file takes a while: off the event loop, streamed from the spool.
    with body:
        return await run_in_threadpool(imports.store_perfmon, store, body, label)


@router.post(
    "/st03",
    summary="Import an ST03/ST03N workload export (CSV) as a run; columns in api/imports/st03.py",
    **AS_RUN,
)
async def import_st03(request: Request, store: StoreDep, label: Label = "") -> dict:
    body = await _read_limited(request, ST03_MAX)
    with body:
        return await run_in_threadpool(imports.store_st03, store, body, label)
