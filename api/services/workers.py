"""Worker processes for the API's CPU-bound work: imports, fast runs and reports.

A thread would not do: parsing and simulating are Python code holding the GIL, and the event
loop (health checks, Alertmanager's webhook) would wait for it in 5 ms slices, request after
request. A process has its own interpreter. Each worker opens the API's SQLite file itself
(WAL mode lets the API read meanwhile) and answers with small, picklable results: a run's
row, or a report's bytes.

Concurrency is bounded twice: `workers` processes, and at most `queue` more jobs waiting;
past that a request is refused with 503 and Retry-After instead of piling up.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import multiprocessing
import os
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from fastapi import status

from api.imports import st03
from api.runs.spec import RunSpec
from api.schemas import CheckResult, Comparison, Run
from api.services import checks, imports, reports, runs
from api.services.errors import ServiceError
from api.services.import_limits import ImportLimits
from api.store import Database, Store
from exporters.thresholds import Thresholds

ReportFormat = Literal["json", "html"]


class Busy(ServiceError):
    """Every worker is busy and the queue is full: try again shortly."""

    status_code = status.HTTP_503_SERVICE_UNAVAILABLE


@dataclass(frozen=True)
class Rendered:
    """A report as sent: its bytes, their media type and their ETag."""

    body: bytes
    media_type: str
    etag: str


# --- in the worker process -----------------------------------------------------------------

# One connection per database and worker process, opened on its first job, with the API's
# cap (Database carries it: a worker opening the file without it grew it past the cap).
_stores: dict[Database, Store] = {}


# Workers yield the CPU to the API process: on a machine with as many cores as workers, an
# equal share would let two imports delay every health check by a scheduler slice. The
# lowest priority: imports and reports are batch work, the loop answers the NOC (at 10,
# the loop still lagged over 50 ms about 2 % of the time during two imports).
WORKER_NICENESS = 19


def _init_worker(parent: int) -> None:
    os.nice(WORKER_NICENESS)
    _lowest_class()
    _watch_parent(parent)


def _lowest_class() -> None:
    """SCHED_IDLE where the OS has it (Linux): the worker runs only on a CPU nothing else of
    normal class wants, below even nice 19 (CFS weight 3 against 15; issue 38 item 7).
    Any process may lower itself to it; elsewhere the nice level alone."""
    with contextlib.suppress(AttributeError, OSError):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


def _watch_parent(parent: int) -> None:
    """End this worker when the API is gone, however it ended (a killed API cannot tell
    its workers, and an orphan would hold the API's pipes and memory)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="wlmon-worker-watch", daemon=True).start()


def _store(db: Database) -> Store:
    if db not in _stores:
        _stores[db] = Store.open(db)
    return _stores[db]


def record_fast(db: Database, spec: RunSpec) -> Run:
    return runs.answer(runs.record_fast(_store(db), spec))


def import_st03(
    db: Database,
    upload: Path,
    label: str,
    limits: ImportLimits,
    options: st03.Options | None = None,
    capture: Path | None = None,
) -> Run:
    """Import the uploaded file the API spooled to disk, streamed from there (a PerfMon
    capture of the same hours joined, `capture`)."""
    limits.check_rows(upload)
    with upload.open("rb") as source:
        if capture is None:
            return runs.answer(imports.store_st03(_store(db), source, label, options))
        with capture.open("rb") as pm:
            return runs.answer(imports.store_st03(_store(db), source, label, options, pm))


def import_stad(
    db: Database,
    upload: Path,
    label: str,
    limits: ImportLimits,
    options: st03.Options,
    target_sheet: bytes | None,
    capture: Path | None = None,
) -> Run:
    """Import an uploaded STAD export (its targets sheet, a PerfMon capture of the same
    hours), streamed from disk."""
    limits.check_rows(upload)
    with upload.open("rb") as source:
        if capture is None:
            return runs.answer(imports.store_stad(_store(db), source, label, options, target_sheet))
        with capture.open("rb") as pm:
            return runs.answer(
                imports.store_stad(_store(db), source, label, options, target_sheet, pm)
            )


def import_perfmon(
    db: Database, upload: Path, label: str, limits: ImportLimits, tz: str | None = None
) -> Run:
    limits.check_rows(upload)
    with upload.open("rb") as source:
        return runs.answer(imports.store_perfmon(_store(db), source, label, tz))


def render_report(
    db: Database,
    thresholds: Thresholds,
    run_id: str,
    fmt: ReportFormat,
    options: dict[str, float],
) -> Rendered:
    """The report as the route would send it: JSON validated against the answer model once
    here (so a cached copy costs nothing per request), or the HTML page."""
    store = _store(db)
    if fmt == "html":
        page = reports.page(store, run_id, thresholds, **options)
        body, media_type = page.encode(), "text/html; charset=utf-8"
    else:
        doc = reports.answer(reports.report(store, run_id, thresholds, **options))
        # Keys a run does not have (alerts_fired, benchmark checks) stay out, not null.
        # by_alias: the audit's key is `import`, as the schema names it (not `import_`).
        body = doc.model_dump_json(exclude_unset=True, by_alias=True).encode()
        media_type = "application/json"
    return _rendered(body, media_type)


def _rendered(body: bytes, media_type: str = "application/json") -> Rendered:
    return Rendered(body, media_type, f'"{hashlib.sha256(body).hexdigest()[:32]}"')


def render_compare(
    db: Database,
    thresholds: Thresholds,
    base: str,
    new: str,
    tolerances: dict[str, float],
    fmt: ReportFormat = "json",
    options: dict[str, float] | None = None,
) -> Rendered:
    """GET /runs/compare's answer: two reports and their comparison, one worker job."""
    store, options = _store(db), options or {}
    if fmt == "html":
        page = reports.compare_page(store, base, new, thresholds, tolerances, **options)
        return _rendered(page.encode(), "text/html; charset=utf-8")
    doc = reports.compare_runs(store, base, new, thresholds, tolerances, **options)
    return _rendered(Comparison.model_validate(doc).model_dump_json().encode())


def render_check(
    db: Database, thresholds: Thresholds, run_id: str, sla: str, baseline: str | None
) -> Rendered:
    """A check's verdicts (the run's report, the baseline's, the SLA's bounds)."""
    doc = checks.check(_store(db), run_id, thresholds, sla, baseline)
    return _rendered(CheckResult.model_validate(doc).model_dump_json().encode())


# --- in the API process --------------------------------------------------------------------


class WorkerPool:
    """Processes started on the first job (an app that never needs one starts none) and
    stopped with the app; a pool whose process died is replaced on the next job."""

    def __init__(self, db: Database, workers: int, queue: int) -> None:
        self.db = db
        self.workers = workers
        self.capacity = workers + queue
        self._lock = threading.Lock()
        self._executor: ProcessPoolExecutor | None = None
        self._in_flight = 0

    @property
    def in_flight(self) -> int:
        """Jobs running or waiting, including ones whose client has gone."""
        with self._lock:
            return self._in_flight

    def _take_slot(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._in_flight >= self.capacity:
                raise Busy(
                    f"all {self.workers} workers are busy and {self.capacity - self.workers} "
                    "jobs wait; try again shortly"
                )
            self._in_flight += 1
            if self._executor is None:
                # spawn, not fork: the API process has threads (the thread pool, the log
                # forwarder) whose locks a forked child would inherit held.
                self._executor = ProcessPoolExecutor(
                    self.workers,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_init_worker,
                    initargs=(os.getpid(),),
                )
            return self._executor

    def _release(self, _: Future | None = None) -> None:
        with self._lock:
            self._in_flight -= 1

    def _broken(self, executor: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._executor is executor:
                self._executor = None
        _stop(executor)

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """`fn(db, *args)` in a worker; its result, or the ServiceError it raised. The
        slot is held until the job ends, even when the client gives up waiting."""
        return await self._submit(self._take_slot(), fn, args)

    @contextmanager
    def slot(self) -> Iterator[Callable[..., Awaitable[Any]]]:
        """A slot taken now (Busy if there is none) for one job submitted later with the
        `run` yielded: an upload is refused before its body is read and spooled, and the
        uploads being spooled are bounded by the slots. Released if no job is submitted."""
        executor = self._take_slot()
        submitted = False

        async def run(fn: Callable[..., Any], *args: Any) -> Any:
            nonlocal submitted
            submitted = True
            return await self._submit(executor, fn, args)

        try:
            yield run
        finally:
            if not submitted:
                self._release()

    async def _submit(
        self, executor: ProcessPoolExecutor, fn: Callable[..., Any], args: tuple
    ) -> Any:
        try:
            future = executor.submit(fn, self.db, *args)
        except BaseException:
            self._release()
            raise
        future.add_done_callback(self._release)
        try:
            return await asyncio.wrap_future(future)
        except BrokenProcessPool as exc:
            self._broken(executor)
            raise Busy(
                "a worker process ended abruptly (out of memory?); the job is lost, try again"
            ) from exc

    def shutdown(self) -> None:
        """Stop the processes; jobs still waiting are dropped. A later job starts new ones."""
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            _stop(executor)


def _stop(executor: ProcessPoolExecutor) -> None:
    """Drop waiting jobs and end the processes now: a running job (a day-long fast run) would
    otherwise keep the API from stopping."""
    # The executor keeps its processes private; terminating them is the only way to stop a
    # job in progress.
    processes = list(getattr(executor, "_processes", {}).values())
    executor.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        proc.terminate()
