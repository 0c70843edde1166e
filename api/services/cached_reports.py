"""GET /runs/{id}/report as the API serves it: computed once per run revision in a worker
process, then answered from memory."""

from __future__ import annotations

from functools import partial

from fastapi.concurrency import run_in_threadpool

from api.services.errors import Conflict, NotFound
from api.services.report_cache import ReportCache
from api.services.runs import MONITORED
from api.services.workers import Rendered, ReportFormat, WorkerPool, render_report
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
