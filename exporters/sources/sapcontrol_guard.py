"""What one sapstartsrv may be asked now: per-method backoff, the monitoring user's
refusal, a call budget per minute, and the counts that make all of it visible.

A method that failed (HTTP 5xx, a SOAP fault, a malformed answer, no answer in time) is
left alone for BACKOFF_S, doubling per failure up to BACKOFF_MAX_S; HTTP 401 holds every
method not seen answering since for AUTH_BACKOFF_S (doubling up to AUTH_BACKOFF_MAX_S), so
a refused user costs one failed OS login per period, not one per method and scrape.
Jitter (+- BACKOFF_JITTER) comes from a generator seeded by the endpoint: reproducible,
and instances that failed together come back apart. Connection refused is no method's
fault (the instance is down) and backs nothing off: a closed port costs sapstartsrv
nothing, and the process list stays the liveness probe.
"""

from __future__ import annotations

import random
import zlib
from collections import Counter, deque
from dataclasses import dataclass

from exporters.collectors.sapcontrol import CallHealth
from exporters.sapcontrol.client import (
    SAPControlError,
    SAPControlFault,
    SAPControlInvalid,
    SAPControlServerError,
    SAPControlTimeout,
    SAPControlUnauthorized,
    SAPControlUnavailable,
)
from exporters.sapcontrol.settings import SAPControlSettings

WINDOW_S = 60.0
# Methods sapstartsrv answers by asking a process of the instance: the ABAP ones ask the
# dispatcher, the ICM ones icman. While that process is not running (GRAY, RED) they only
# fault ("DpAttachStartService failed", "IcmAttach failed") and burden a system in trouble.
NEEDS = {
    "ABAPGetWPTable": "disp+work",
    "GetQueueStatistic": "disp+work",
    "GetAlertTree": "disp+work",
    "GetAlerts": "disp+work",
    "ABAPGetComponentList": "disp+work",
    "ICMGetThreadList": "icman",
    "ICMGetConnectionList": "icman",
    # AS Java 7.1+: jstart runs the server nodes; sapstartsrv asks it for the J2EE lists.
    "J2EEGetProcessList2": "jstart",
    "J2EEGetThreadList2": "jstart",
}
RUNNING = frozenset({"SAPControl-GREEN", "SAPControl-YELLOW"})
HA_METHODS = ("HAGetFailoverConfig", "HACheckConfig", "HACheckFailoverConfig")
J2EE_METHODS = ("J2EEGetProcessList2", "J2EEGetThreadList2")
# What an instance runs: changes only with a restart or a transport of a support package.
VERSION_METHODS = ("GetVersionInfo", "ABAPGetComponentList")


def outcome(exc: SAPControlError | None) -> str:
    """The `outcome` label of one call."""
    if exc is None:
        return "ok"
    for kind, name in (
        (SAPControlUnauthorized, "unauthorized"),
        (SAPControlTimeout, "timeout"),
        (SAPControlUnavailable, "unreachable"),
        (SAPControlFault, "fault"),
        (SAPControlServerError, "server_error"),
        (SAPControlInvalid, "invalid"),
    ):
        if isinstance(exc, kind):
            return name
    return "invalid"


@dataclass
class _Method:
    failures: int = 0
    until: float = float("-inf")
    failing: bool = False


class Guard:
    """The call policy and call counts of one sapstartsrv endpoint."""

    def __init__(self, settings: SAPControlSettings, key: str) -> None:
        self.s = settings
        self._rng = random.Random(zlib.crc32(key.encode()))
        self._methods: dict[str, _Method] = {}
        self._auth_failures = 0
        self._auth_until = float("-inf")
        self._open: set[str] = set()  # answered without 401 since the last refusal
        self._refused: set[str] = set()  # answered 401 last time
        self._window: deque[float] = deque()
        self._exhausted_at: float | None = None
        self.calls: Counter = Counter()
        self.skipped: Counter = Counter()
        self.budget_exhausted = 0
        # Methods asked at most every so many seconds (their answer is long and slow to
        # change): method -> seconds, and when each was last asked.
        self.intervals = {
            "ABAPReadSyslog": settings.syslog_interval_s,
            "EnqGetLockTable": settings.lock_table_interval_s,
            **dict.fromkeys(HA_METHODS, settings.ha_interval_s),
            **dict.fromkeys(VERSION_METHODS, settings.version_interval_s),
        }
        self._asked: dict[str, float] = {}
        # Their last answers, standing in between (method -> payload).
        self.answers: dict[str, object] = {}
        # GetProcessList's dispstatus by process name, from its last answer.
        self.processes: dict[str, str] = {}
        self.last_up = False

    def _delay(self, base: float, failures: int, cap: float) -> float:
        delay = min(base * 2 ** (failures - 1), cap)
        return delay * (1 + self.s.backoff_jitter * (2 * self._rng.random() - 1))

    @property
    def auth_refused(self) -> bool:
        return self._auth_failures > 0

    def skip(self, method: str, now: float) -> str | None:
        """Why `method` is not to be called now (None: call it)."""
        state = self._methods.get(method)
        if state is not None and now < state.until:
            return "backoff"
        if self.auth_refused and now < self._auth_until and method not in self._open:
            return "auth"
        interval = self.intervals.get(method)
        if interval is not None and now - self._asked.get(method, float("-inf")) < interval:
            return "interval"
        needed = self.processes.get(NEEDS.get(method, ""))
        if needed is not None and needed not in RUNNING:
            return "state"
        while self._window and self._window[0] <= now - WINDOW_S:
            self._window.popleft()
        if len(self._window) >= self.s.call_budget_per_minute:
            if self._exhausted_at is None or now - self._exhausted_at >= WINDOW_S:
                self.budget_exhausted += 1  # once per window it runs out in
                self._exhausted_at = now
            return "budget"
        return None

    def skipped_call(self, method: str, reason: str) -> None:
        self.skipped[(method, reason)] += 1

    def record(self, method: str, result: str, now: float) -> None:
        """One call made and how it ended."""
        self._window.append(now)
        self._asked[method] = now
        self.calls[(method, result)] += 1
        state = self._methods.setdefault(method, _Method())
        if result == "ok":
            state.failures, state.until, state.failing = 0, float("-inf"), False
            self._open.add(method)
            if method in self._refused:  # refused before, answers now: the user works again
                self._refused.discard(method)
                self._auth_failures, self._auth_until = 0, float("-inf")
            return
        if result == "unauthorized":
            self._open.discard(method)
            self._refused.add(method)
            self._auth_failures += 1
            self._auth_until = now + self._delay(
                self.s.auth_backoff_s, self._auth_failures, self.s.auth_backoff_max_s
            )
            return
        if result == "unreachable":
            return  # the instance is down (sap_up 0 says so), not this method
        state.failing = True
        state.failures += 1
        state.until = now + self._delay(self.s.backoff_s, state.failures, self.s.backoff_max_s)

    def health(self, now: float, insecure: tuple[str, ...]) -> CallHealth:
        backoff = {}
        for method, state in self._methods.items():
            left = max(state.until - now, 0.0)
            if self.auth_refused and method not in self._open:
                left = max(left, self._auth_until - now, 0.0)
            backoff[method] = left
        return CallHealth(
            calls=dict(self.calls),
            skipped=dict(self.skipped),
            backoff_s=backoff,
            failing={m: s.failing for m, s in self._methods.items()},
            auth_refused=self.auth_refused,
            budget_exhausted=self.budget_exhausted,
            budget_left=max(self.s.call_budget_per_minute - len(self._window), 0),
            insecure=insecure,
        )
