"""Imports of real data: a Windows PerfMon CSV or an ST03 export becomes a run the same
report reads."""

from __future__ import annotations

import os
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request, status
from fastapi.concurrency import run_in_threadpool

from api.deps import PoolDep, SettingsDep, WriteAuth
from api.schemas import Run, refusals
from api.services import imports, workers
from api.services.import_limits import ImportLimits, limits

router = APIRouter(prefix="/imports", tags=["imports"])
Label = Annotated[str, Query(max_length=200, description="a name for the run")]


@asynccontextmanager
async def _upload() -> AsyncIterator[Path]:
    """A file on disk for one upload, removed when the import is done: a worker process
    streams it from there, so neither process holds a large body in memory."""
    fd, name = tempfile.mkstemp(prefix="wlmon-upload-")
    os.close(fd)
    try:
        yield Path(name)
    finally:
        # Freeing a file of hundreds of megabytes takes the file system a while: a thread.
        await run_in_threadpool(Path(name).unlink, missing_ok=True)


async def _read_limited(request: Request, limit: ImportLimits, path: Path) -> None:
    """Write the body to `path`, refused with 413 as soon as it passes the limit (declared or
    streamed)."""
    declared = request.headers.get("content-length") or "0"
    if declared.isdigit() and int(declared) > limit.max_bytes:
        raise HTTPException(
            status.HTTP_413_CONTENT_TOO_LARGE, str(limit.too_many_bytes(int(declared)))
        )
    size = 0
    with path.open("wb") as out:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit.max_bytes:
                raise HTTPException(status.HTTP_413_CONTENT_TOO_LARGE, str(limit.too_many_bytes()))
            out.write(chunk)


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
            503: "every worker is busy (refused before the body is read); retry after the "
            "Retry-After seconds",
        },
        write=True,
    ),
}


@router.post(
    "/perfmon",
    summary="Import a Windows Performance Monitor CSV (typeperf, relog, logman) as a run",
    **AS_RUN,
)
async def import_perfmon(
    request: Request, pool: PoolDep, settings: SettingsDep, label: Label = ""
) -> dict:
    limit = limits(settings, "perfmon")
    # The worker's slot first: with none free the body is not even read.
    with pool.slot() as run:
        async with _upload() as path:
            await _read_limited(request, limit, path)
            # Parsing a large file takes a while: in a worker process, off the event loop
            # and its GIL.
            return await run(workers.import_perfmon, path, label, limit)


@router.post(
    "/st03",
    summary="Import an ST03/ST03N export (overview, transaction or time profile; tabs, ;, "
    "CSV or the unconverted list) as a run; columns in docs/imports.md",
    **AS_RUN,
)
async def import_st03(
    request: Request,
    pool: PoolDep,
    settings: SettingsDep,
    label: Label = "",
    start: Annotated[
        str,
        Query(
            alias="from",
            max_length=40,
            description="start of the period the export covers (2026-11-25T10:00), local time",
        ),
    ] = "",
    end: Annotated[
        str, Query(alias="to", max_length=40, description="end of the period (with from)")
    ] = "",
    period: Annotated[
        str, Query(max_length=40, description="the period's length: 1h, 90min, 3600s, PT1H")
    ] = "",
    task_type: Annotated[
        str,
        Query(max_length=40, description="the task type of a file without a task-type column"),
    ] = "",
    decimal: Annotated[
        str, Query(max_length=5, description="point or comma, if no cell of the file tells")
    ] = "",
) -> dict:
    # The options first: a wrong one is refused before a slot is taken or a byte read.
    options = imports.st03_options(start, end, period, task_type, decimal)
    with pool.slot() as run:
        async with _upload() as path:
            limit = limits(settings, "st03")
            await _read_limited(request, limit, path)
            return await run(workers.import_st03, path, label, limit, options)
