"""Reports, comparisons and checks as the API serves them, the one path from a request to
a rendered answer: computed once per revision of the runs they read, in a worker process,
then answered from memory (`rendered_report`, `rendered_compare`, `rendered_check`).

Rendered reports of ended runs are kept in memory: an ended run's report only changes when
its row does (every change sets `updated_at`) or, for runs of the monitored system, when a
new firing notification may add to the alerts of its window. The key holds both, so a
change makes the next request compute it again.

Requests for a report being computed wait for that one computation instead of each
starting their own (a burst of requests for a fresh run costs one worker job).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from functools import partial

from fastapi.concurrency import run_in_threadpool

from api.services.errors import Conflict, NotFound
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
from exporters.thresholds import Thresholds


class ReportCache:
    """Least recently used first out, bounded by the bytes held. Used on the event loop
    only (no lock)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[Hashable, tuple[Hashable, Rendered]] = OrderedDict()
        self._computing: dict[tuple[Hashable, Hashable], asyncio.Task[Rendered]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    async def get(
        self,
        key: Hashable,
        revision: Hashable,
        compute: Callable[[], Awaitable[Rendered]],
    ) -> Rendered:
        """The entry of `key` if it was made at `revision`; else `compute()`'s, kept."""
        entry = self._entries.get(key)
        if entry is not None and entry[0] == revision:
            self._entries.move_to_end(key)
            self.hits += 1
            return entry[1]
        self.misses += 1
        task = self._computing.get((key, revision))
        if task is None:
            task = asyncio.ensure_future(compute())
            self._computing[(key, revision)] = task
            task.add_done_callback(lambda t: self._done(key, revision, t))
        # Shielded: a client that disconnects must not cancel the others' computation.
        return await asyncio.shield(task)

    def _done(self, key: Hashable, revision: Hashable, task: asyncio.Task[Rendered]) -> None:
        self._computing.pop((key, revision), None)
        if task.cancelled() or task.exception() is not None:
            return  # refusals (404, 409) and failures are not kept
        self.put(key, revision, task.result())

    def put(self, key: Hashable, revision: Hashable, rendered: Rendered) -> None:
        old = self._entries.pop(key, None)
        if old is not None:
            self.bytes -= len(old[1].body)
        if len(rendered.body) > self.max_bytes:
            return
        self._entries[key] = (revision, rendered)
        self.bytes += len(rendered.body)
        while self.bytes > self.max_bytes:
            _, (_, dropped) = self._entries.popitem(last=False)
            self.bytes -= len(dropped.body)


def etag_matches(if_none_match: str | None, etag: str) -> bool:
    """RFC 9110 section 13.1.2: weak comparison, a list of tags or `*`."""
    if not if_none_match:
        return False
    if if_none_match.strip() == "*":
        return True
    tags = (t.strip().removeprefix("W/") for t in if_none_match.split(","))
    return etag in tags


def revision(store: Store, run_id: str) -> tuple:
    """What the run's report depends on besides the code: its row's last change and, for
    runs of the monitored system, the newest firing notification."""
    found = store.runs.revision(run_id)
    if found is None:
        raise NotFound(f"no run {run_id!r}")
    kind, status, updated_at = found
    if status == "running":
        # Cheap to say here; a worker would load the run only to say the same.
        run = store.runs.get(run_id)
        end = "" if run is None else run.end.isoformat()
        raise Conflict(f"run {run_id} is still running; it ends at {end}")
    return (status, updated_at, store.firing_revision() if kind in MONITORED else 0)


async def rendered_report(
    store: Store,
    pool: WorkerPool,
    cache: ReportCache,
    thresholds: Thresholds,
    run_id: str,
    fmt: ReportFormat,
    options: dict[str, float],
) -> Rendered:
    """`options`: the report's `top` and `interval_s`; each set of them is its own entry."""
    # SQLite under the store's lock: a thread, so a long read elsewhere never holds the loop.
    rev = await run_in_threadpool(revision, store, run_id)
    key = (run_id, fmt, *sorted(options.items()))
    return await cache.get(
        key, rev, partial(pool.run, render_report, thresholds, run_id, fmt, options)
    )


async def _revisions(store: Store, *run_ids: str | None) -> tuple:
    """The revisions of the runs an answer reads (None: no run, e.g. no baseline)."""

    def read() -> tuple:
        return tuple(revision(store, r) if r is not None else None for r in run_ids)

    return await run_in_threadpool(read)


async def rendered_compare(
    store: Store,
    pool: WorkerPool,
    cache: ReportCache,
    thresholds: Thresholds,
    base: str,
    new: str,
    tolerances: dict[str, float],
    fmt: ReportFormat = "json",
    options: dict[str, float] | None = None,
) -> Rendered:
    """`options`: the reports' settings (APDEX's T), as for rendered_report."""
    options = options or {}
    rev = await _revisions(store, base, new)
    key = ("compare", fmt, base, new, *sorted(tolerances.items()), *sorted(options.items()))
    job = partial(pool.run, render_compare, thresholds, base, new, tolerances, fmt, options)
    return await cache.get(key, rev, job)


async def rendered_check(
    store: Store,
    pool: WorkerPool,
    cache: ReportCache,
    thresholds: Thresholds,
    run_id: str,
    sla: str,
    baseline: str | None,
) -> Rendered:
    rev = await _revisions(store, run_id, baseline)
    # The SLA text by its digest: up to 100 kB, it need not be kept in the key.
    key = ("check", run_id, baseline, hashlib.sha256(sla.encode()).hexdigest())
    return await cache.get(
        key, rev, partial(pool.run, render_check, thresholds, run_id, sla, baseline)
    )
