"""Side writes to servers that may not be up yet, queued and retried (issue 38 item 6).

`wlmon up` starts the API before some of what it writes to, and a user's own Grafana may be
restarting: a run resumed at start wrote its annotations into "Connection refused" and never
retried. A side write (an annotation in a user's Grafana; InfluxDB and the log store have
buffered, retrying writers of their own, exporters/sinks) goes here instead:

- bounded: at most `max_pending` writes wait; one more is refused and counted (overflow), so
  a peer down for days cannot grow the API's memory;
- retried with exponential backoff (1 s doubling to 60 s, with jitter) while the peer is
  unreachable, answers 5xx or 429, for up to `max_age_s`; then given up and counted (expired);
- a 4xx other than 408/429 is not retried: that request will never succeed (counted, rejected);
- visible: wlmon_api_side_writes_pending{target} and
  wlmon_api_side_writes_failed_total{target,reason}, so an alert can say the peer misbehaves.
The targets are a fixed set (bounded labels).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from prometheus_client import Counter, Gauge

log = logging.getLogger(__name__)

TARGETS = ("grafana_annotations",)
PENDING = Gauge("wlmon_api_side_writes_pending", "Side writes queued, not yet taken.", ["target"])
DELIVERED = Counter(
    "wlmon_api_side_writes_delivered_total", "Side writes the peer took.", ["target"]
)
FAILED = Counter(
    "wlmon_api_side_writes_failed_total",
    "Side writes given up: overflow (queue full), expired (peer down too long), rejected "
    "(the peer refused the request itself).",
    ["target", "reason"],
)
for _t in TARGETS:
    PENDING.labels(_t).set(0)
    DELIVERED.labels(_t)
    for _r in ("overflow", "expired", "rejected"):
        FAILED.labels(_t, _r)


@dataclass(order=True)
class _Write:
    due: float
    seq: int
    target: str = field(compare=False)
    request: dict[str, Any] = field(compare=False)
    created: float = field(compare=False)
    attempts: int = field(default=0, compare=False)


class Outbox:
    def __init__(
        self,
        *,
        max_pending: int = 1000,
        max_age_s: float = 3600.0,
        first_delay_s: float = 1.0,
        max_delay_s: float = 60.0,
        send: Callable[[dict[str, Any]], httpx.Response] | None = None,
    ) -> None:
        self.max_pending = max_pending
        self.max_age_s = max_age_s
        self.first_delay_s = first_delay_s
        self.max_delay_s = max_delay_s
        self._send = send or (lambda req: httpx.request(timeout=10, **req))
        self._heap: list[_Write] = []
        self._inflight = 0  # popped and being attempted: still pending
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def put(self, target: str, **request: Any) -> bool:
        """Queue one HTTP request (httpx.request's arguments); False when the queue is full."""
        assert target in TARGETS, target
        with self._cond:
            # The write being attempted counts: it is still pending (it may be retried).
            pending = len(self._heap) + self._inflight
            if pending >= self.max_pending:
                FAILED.labels(target, "overflow").inc()
                log.warning("side write to %s dropped: %d already pending", target, pending)
                return False
            now = time.monotonic()
            heapq.heappush(self._heap, _Write(now, next(self._seq), target, request, now))
            PENDING.labels(target).inc()
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="outbox", daemon=True)
                self._thread.start()
            self._cond.notify()
        return True

    def pending(self) -> int:
        with self._cond:
            return len(self._heap) + self._inflight

    def _backoff(self, attempts: int) -> float:
        delay = min(self.max_delay_s, self.first_delay_s * 2 ** (attempts - 1))
        return delay * random.uniform(0.8, 1.2)  # peers restarted together do not sync up

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._heap or self._heap[0].due > time.monotonic():
                    wait = self._heap[0].due - time.monotonic() if self._heap else None
                    self._cond.wait(timeout=wait)
                write = heapq.heappop(self._heap)
                self._inflight += 1
            outcome = self._attempt(write)
            with self._cond:
                self._inflight -= 1
                if outcome == "retry":
                    heapq.heappush(self._heap, write)
                    continue
                PENDING.labels(write.target).dec()
                if outcome == "delivered":
                    DELIVERED.labels(write.target).inc()
                else:
                    FAILED.labels(write.target, outcome).inc()

    def _attempt(self, write: _Write) -> str:
        write.attempts += 1
        try:
            r = self._send(write.request)
            if r.status_code < 400:
                return "delivered"
            retry = r.status_code >= 500 or r.status_code in (408, 429)
            why = f"answered {r.status_code}"
        except httpx.HTTPError as exc:
            retry, why = True, f"{type(exc).__name__}: {exc}"
        if not retry:
            log.warning("side write to %s rejected (%s): not retried", write.target, why)
            return "rejected"
        if time.monotonic() - write.created > self.max_age_s:
            log.warning(
                "side write to %s given up after %d tries (%s)", write.target, write.attempts, why
            )
            return "expired"
        write.due = time.monotonic() + self._backoff(write.attempts)
        log.info(
            "side write to %s: %s; try %d in %.1f s",
            write.target,
            why,
            write.attempts + 1,
            write.due - time.monotonic(),
        )
        return "retry"


# The API process's one outbox: it outlives each run's annotations (a run resumed at start
# ends before its peer is up; its writes are delivered after).
OUTBOX = Outbox()
