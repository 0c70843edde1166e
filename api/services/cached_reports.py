"""Reports, comparisons and checks as the API serves them: computed once per revision of
the runs they read, in a worker process, then answered from memory."""

from __future__ import annotations

import hashlib
from functools import partial

from fastapi.concurrency import run_in_threadpool

from api.services.errors import Conflict, NotFound
from api.services.report_cache import ReportCache
from api.services.runs import MONITORED
from api.services.workers import (
    Rendered,
    ReportFormat,
    WorkerPool,
    render_check,
    render_compare,
    render_report,
)
from api.store import Store


def revision(store: Store, run_id: str) -> tuple:
    """What the run's report depends on besides the code: its row's last change and, for
    runs of the monitored system, the newest firing notification."""
    found = store.runs.revision(run_id)
    if found is None:
        raise NotFound(f"no run {run_id!r}")
    kind, status, updated_at = found
    if status == "running":
        # Cheap to say here; a worker would load the run only to say the same.
        end = (store.runs.get(run_id) or {}).get("end", "")
        raise Conflict(f"run {run_id} is still running; it ends at {end}")
    return (status, updated_at, store.firing_revision() if kind in MONITORED else 0)


async def rendered_report(
    store: Store,
    pool: WorkerPool,
    cache: ReportCache,
    run_id: str,
    fmt: ReportFormat,
    options: dict[str, float],
) -> Rendered:
    """`options`: the report's `top` and `interval_s`; each set of them is its own entry."""
    # SQLite under the store's lock: a thread, so a long read elsewhere never holds the loop.
    rev = await run_in_threadpool(revision, store, run_id)
    key = (run_id, fmt, *sorted(options.items()))
    return await cache.get(key, rev, partial(pool.run, render_report, run_id, fmt, options))


async def _revisions(store: Store, *run_ids: str | None) -> tuple:
    """The revisions of the runs an answer reads (None: no run, e.g. no baseline)."""

    def read() -> tuple:
        return tuple(revision(store, r) if r is not None else None for r in run_ids)

    return await run_in_threadpool(read)


async def rendered_compare(
    store: Store,
    pool: WorkerPool,
    cache: ReportCache,
    base: str,
    new: str,
    tolerances: dict[str, float],
) -> Rendered:
    rev = await _revisions(store, base, new)
    key = ("compare", base, new, *sorted(tolerances.items()))
    return await cache.get(key, rev, partial(pool.run, render_compare, base, new, tolerances))


async def rendered_check(
    store: Store,
    pool: WorkerPool,
    cache: ReportCache,
    run_id: str,
    sla: str,
    baseline: str | None,
) -> Rendered:
    rev = await _revisions(store, run_id, baseline)
    # The SLA text by its digest: up to 100 kB, it need not be kept in the key.
    key = ("check", run_id, baseline, hashlib.sha256(sla.encode()).hexdigest())
    return await cache.get(key, rev, partial(pool.run, render_check, run_id, sla, baseline))
