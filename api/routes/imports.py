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
from starlette.datastructures import FormData, UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser

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
    request: Request,
    pool: PoolDep,
    settings: SettingsDep,
    label: Label = "",
    tz: Annotated[
        str,
        Query(
            max_length=64,
            description="the machine's time zone (IANA) for a console capture that names "
            "none; checked against a typeperf header's zone",
        ),
    ] = "",
) -> Run:
    # The zone first: a wrong one is refused before a slot is taken or a byte read.
    options = imports.st03_options(tz=tz)
    limit = limits(settings, "perfmon")
    # The worker's slot first: with none free the body is not even read.
    with pool.slot() as run:
        async with _upload() as path:
            await _read_limited(request, limit, path)
            # Parsing a large file takes a while: in a worker process, off the event loop
            # and its GIL.
            return await run(workers.import_perfmon, path, label, limit, options.tz)


@router.post(
    "/st03",
    summary="Import an ST03/ST03N export (overview, transaction or time profile; tabs, ;, "
    "CSV or the unconverted list) as a run; columns in docs/imports.md",
    description="The body is the export, options in the query; or multipart/form-data: "
    "`file` the export, `perfmon` (optional) a PerfMon capture of the same hours joined into "
    "the run (refused naming both windows when they do not overlap), text fields `from`, "
    "`to`, `period`, `task_type`, `decimal`, `tz`, `label` (a field left out is taken from "
    "the query).",
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
    tz: Annotated[
        str,
        Query(
            max_length=64,
            description="the SAP system's time zone (IANA, e.g. Europe/Berlin): the period is "
            "stored in UTC and shown in both",
        ),
    ] = "",
) -> Run:
    if request.headers.get("content-type", "").startswith("multipart/form-data"):
        given = {
            "from": start,
            "to": end,
            "period": period,
            "task_type": task_type,
            "decimal": decimal,
            "tz": tz,
            "label": label,
        }
        return await _import_st03_form(request, pool, settings, given)
    # The options first: a wrong one is refused before a slot is taken or a byte read.
    options = imports.st03_options(start, end, period, task_type, decimal, tz)
    with pool.slot() as run:
        async with _upload() as path:
            limit = limits(settings, "st03")
            await _read_limited(request, limit, path)
            return await run(workers.import_st03, path, label, limit, options)


ST03_FIELDS = ("file", "perfmon", "tz", "from", "to", "period", "task_type", "decimal", "label")
TEXT_LENGTHS = {"tz": 64, "from": 40, "to": 40, "period": 40, "task_type": 40, "decimal": 5}


async def _import_st03_form(request: Request, pool, settings, query: dict[str, str]) -> Run:
    """The ST03 export as the part `file` of a multipart form, a PerfMon capture of the same
    hours as `perfmon` (one run of both, refused naming both windows when they do not
    overlap), the options as text fields (or, as for a raw body, in the query)."""
    limit = limits(settings, "st03")
    with pool.slot() as run:
        async with _upload() as body, _upload() as path, _upload() as capture:
            await _read_limited(request, limit, body)
            form = await _form(request, body, ST03_FIELDS)
            try:
                unknown = sorted(set(form) - set(ST03_FIELDS))
                if unknown:
                    raise FormError(
                        f"field {unknown[0]!r} is not read; the form has " + ", ".join(ST03_FIELDS)
                    )
                upload = form.get("file")
                if not isinstance(upload, UploadFile):
                    raise FormError("no part 'file' holding the ST03 export (a file)")
                text = {k: _text_field(form, k, n) or query[k] for k, n in TEXT_LENGTHS.items()}
                label = (
                    _text_field(form, "label", 200) or query["label"] or (upload.filename or "")
                )[:200]
                options = imports.st03_options(
                    text["from"],
                    text["to"],
                    text["period"],
                    text["task_type"],
                    text["decimal"],
                    text["tz"],
                )
                joined = await _save_parts(form, upload, path, capture)
            finally:
                await form.close()
            return await run(
                workers.import_st03,
                path,
                label,
                limit,
                options,
                capture if joined else None,
            )


STAD_FIELDS = ("file", "targets", "perfmon", "tz", "from", "to", "decimal", "label")
MAX_TARGETS_BYTES = 10 * 1024 * 1024  # a sheet of target times per transaction
STAD_FORM = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {
                        "file": {"type": "string", "format": "binary"},
                        "targets": {"type": "string", "format": "binary"},
                        "perfmon": {"type": "string", "format": "binary"},
                        "tz": {"type": "string", "maxLength": 64},
                        "from": {"type": "string", "maxLength": 40},
                        "to": {"type": "string", "maxLength": 40},
                        "decimal": {"type": "string", "maxLength": 5},
                        "label": {"type": "string", "maxLength": 200},
                    },
                }
            }
        },
    }
}


async def _form(request: Request, body: Path, fields: tuple[str, ...] = STAD_FIELDS) -> FormData:
    """The multipart form spooled to `body`, parsed from there (its files on disk, not in
    memory); 400 naming what is wrong with it."""

    async def chunks():
        with body.open("rb") as f:
            while chunk := await run_in_threadpool(f.read, 1 << 20):
                yield chunk

    try:
        return await MultiPartParser(
            request.headers, chunks(), max_files=3, max_fields=len(fields)
        ).parse()
    except MultiPartException as exc:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, f"multipart form: {exc.message}") from None


def _text_field(form: FormData, name: str, longest: int) -> str:
    value = form.get(name) or ""
    if not isinstance(value, str):
        raise FormError(f"field {name!r}: give text, not a file")
    if len(value) > longest:
        raise FormError(f"field {name!r}: longer than {longest} characters")
    return value.strip()


class FormError(HTTPException):
    """422 naming the form's field."""

    def __init__(self, message: str) -> None:
        super().__init__(status.HTTP_422_UNPROCESSABLE_CONTENT, message)


@router.post(
    "/stad",
    summary="Import a STAD/STATS export (one record per dialog step; XLSX, tabs, ;, CSV, HTML, "
    "MHTML) as a run, with an optional sheet of target response times per transaction",
    description="multipart/form-data: `file` the STAD export, `targets` (optional) a CSV or "
    "XLSX of TCODE and Target Response Time (Seconds), optionally Statistic; `perfmon` "
    "(optional) a PerfMon capture of the same hours joined into the run; text fields `tz` "
    "(the SAP system's IANA time zone), `from`/`to` (the period, when the file does not say "
    "it), `decimal` (point or comma), `label`. Limits: WLMON_API_STAD_MAX_BYTES for the whole "
    "body, WLMON_API_STAD_MAX_ROWS rows.",
    openapi_extra=STAD_FORM,
    **{
        **AS_RUN,
        "responses": {
            **AS_RUN["responses"],
            400: {"description": "the multipart form cannot be read"},
            415: {"description": "the body is not multipart/form-data"},
        },
    },
)
async def import_stad(request: Request, pool: PoolDep, settings: SettingsDep) -> Run:
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise HTTPException(
            status.HTTP_415_UNSUPPORTED_MEDIA_TYPE,
            "send multipart/form-data: a part 'file' (the STAD export), optionally 'targets' "
            "(CSV/XLSX of target response per transaction) and the fields tz, from, to, "
            "decimal, label",
        )
    limit = limits(settings, "stad")
    with pool.slot() as run:
        async with _upload() as body, _upload() as path, _upload() as capture:
            await _read_limited(request, limit, body)
            form = await _form(request, body)
            try:
                unknown = sorted(set(form) - set(STAD_FIELDS))
                if unknown:
                    raise FormError(
                        f"field {unknown[0]!r} is not read; the form has " + ", ".join(STAD_FIELDS)
                    )
                upload = form.get("file")
                if not isinstance(upload, UploadFile):
                    raise FormError("no part 'file' holding the STAD export (a file)")
                label = _text_field(form, "label", 200) or (upload.filename or "")[:200]
                options = imports.st03_options(
                    _text_field(form, "from", 40),
                    _text_field(form, "to", 40),
                    None,
                    None,
                    _text_field(form, "decimal", 5),
                    _text_field(form, "tz", 64),
                )
                sheet = None
                goals = form.get("targets")
                if goals is not None:
                    if not isinstance(goals, UploadFile):
                        raise FormError("part 'targets': give a file (CSV or XLSX)")
                    sheet = await goals.read(MAX_TARGETS_BYTES + 1)
                    if len(sheet) > MAX_TARGETS_BYTES:
                        raise FormError(
                            f"part 'targets': over {MAX_TARGETS_BYTES:,} bytes for a sheet of "
                            "targets"
                        )
                joined = await _save_parts(form, upload, path, capture)
            finally:
                await form.close()
            return await run(
                workers.import_stad,
                path,
                label,
                limit,
                options,
                sheet,
                capture if joined else None,
            )


async def _save_parts(form, upload: UploadFile, path: Path, capture: Path) -> bool:
    """The export to `path` and, when the form has a `perfmon` part, the capture to
    `capture`; whether there was one."""
    with path.open("wb") as out:
        await run_in_threadpool(_copy, upload, out)
    joined = form.get("perfmon")
    if joined is None:
        return False
    if not isinstance(joined, UploadFile):
        raise FormError("part 'perfmon': give a file (a PerfMon CSV or TSV)")
    with capture.open("wb") as out:
        await run_in_threadpool(_copy, joined, out)
    return True


def _copy(upload: UploadFile, out) -> None:
    upload.file.seek(0)
    while chunk := upload.file.read(1 << 20):
        out.write(chunk)
