"""Rendered reports of ended runs, kept in memory: an ended run's report only changes when
its row does (every change sets `updated_at`) or, for runs of the monitored system, when a
new firing notification may add to the alerts of its window. The key holds both, so a
change makes the next request compute it again.

Requests for a report being computed wait for that one computation instead of each
starting their own (a burst of requests for a fresh run costs one worker job).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable

from api.services.workers import Rendered


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
