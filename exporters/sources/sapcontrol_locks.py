"""The enqueue lock table (SM12) through EnqGetLockTable: how long each lock has been held,
tracked across readings, and the table summed up into bounded figures.

A lock entry carries no time (the WSDL's EnqLock has table, argument, mode, owner, user,
client, transaction), so its age is how long it has been seen: from the first answer that
had it (key: table, argument, mode, owner) to now. Locks already there at the exporter's
first reading count from that reading: their age is a lower bound, said so in the metric's
help. Tables and users are free text with thousands of values: tables allow-listed
(WLMON_SAPCONTROL_LOCK_TABLES) are labels, every other one counts as `other`; users are
only counted (how many hold locks, the most locks one of them holds).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable

from exporters.collectors.sapcontrol import LockSummary
from exporters.sapcontrol.schema import Record


def _key(row: Record) -> tuple[str, ...]:
    return tuple(str(row.get(f) or "") for f in ("lock-name", "lock-arg", "lock-mode", "owner"))


class LockAges:
    """First-seen times of every instance's locks; summaries as of now."""

    def __init__(self, tables: Iterable[str], clock: Callable[[], float] = time.monotonic):
        self.tables = frozenset(t.strip().upper() for t in tables)
        self.clock = clock
        self._seen: dict[str, dict[tuple[str, ...], float]] = {}
        self._last: dict[str, list[Record]] = {}

    def read(self, instance: str, rows: list[Record]) -> None:
        now = self.clock()
        before = self._seen.get(instance, {})
        self._seen[instance] = {k: before.get(k, now) for k in map(_key, rows)}
        self._last[instance] = rows

    def summary(self, instance: str) -> LockSummary | None:
        """None before the instance's first reading."""
        if instance not in self._last:
            return None
        rows = self._last[instance]
        by_table = dict.fromkeys([*sorted(self.tables), "other"], 0)
        users: Counter = Counter()
        for row in rows:
            table = str(row.get("lock-name") or "").strip().upper()
            by_table[table if table in self.tables else "other"] += 1
            users[(str(row.get("client") or ""), str(row.get("user") or ""))] += 1
        seen = self._seen[instance].values()
        return LockSummary(
            by_table=by_table,
            users=len(users),
            most_by_one_user=max(users.values(), default=0),
            oldest_age_s=self.clock() - min(seen) if seen else None,
        )
