"""The sapcontrol collector's source: sapstartsrv instances read through SAPControl.

Reads any sapstartsrv, a real one or the model's (exporters.sapstartsrv). Instances come
from the SAPControlSettings it is given (read at the edge, exporters.config), or from
GetSystemInstanceList (exporters.sources.sapcontrol_discovery, within the same deadline).
Each reading asks
every instance in parallel, each within that deadline: a dead or hung instance costs at
most the deadline and is read as down, the others are complete. Which methods are called
follows what the instance runs (its `features`) and its state (no ABAP method while
disp+work is not running), and what its guard allows (exporters.sources.sapcontrol_guard:
backoff, the monitoring user's refusal, the call budget).

One method's failure is that method's: `sap_up` says only whether sapstartsrv answered at
all in this scrape, and what the other methods answered is kept. An instance that stops
answering starts a rediscovery at once, so an ASCS that failed over to another node is
read there by the next scrape, and its old name leaves with the list that no longer names it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import replace

from exporters.collectors.sapcontrol import (
    Identity,
    InstanceResult,
    SAPControlReading,
    Target,
    guess_instance_name,
)
from exporters.sapcontrol.client import (
    Endpoint,
    SAPControlClient,
    SAPControlError,
    SAPControlTimeout,
    SAPControlUnavailable,
    scrub,
    tls_verify,
)
from exporters.sapcontrol.settings import SAPControlSettings
from exporters.sources.sapcontrol_discovery import ClientFactory, Discovery, endpoint
from exporters.sources.sapcontrol_guard import HA_METHODS, J2EE_METHODS, Guard, outcome
from exporters.sources.sapcontrol_locks import LockAges
from exporters.sources.sapcontrol_syslog import LineSink, SyslogReader

log = logging.getLogger(__name__)
# Why a method asked at intervals was not asked now, for which its last answer still stands:
# not due yet, or no time or budget left in this scrape. A method backed off, refused or
# gated by state is not read, and says so (its series go).
STANDING = frozenset({"interval", "deadline", "budget"})


class SAPControlScraper:
    """Reads every configured or discovered sapstartsrv, each in its own deadline."""

    def __init__(
        self,
        settings: SAPControlSettings,
        client_factory: ClientFactory | None = None,
        clock: Callable[[], float] = time.perf_counter,
        log_sink: LineSink | None = None,
    ) -> None:
        self.settings = settings
        # SM21 entries: counted by severity and allow-listed id, their text to `log_sink`
        # (the log store's Loki-protocol sink) when one is given.
        self._syslog = SyslogReader(settings.syslog_message_ids, log_sink)
        # SM12: each lock's first sighting, so the oldest lock's age grows across readings.
        self._locks = LockAges(settings.lock_tables, clock)
        self.clock = clock
        self._client_factory = client_factory or self._make_client
        self._clients: dict[tuple[Endpoint, bool], SAPControlClient] = {}
        self._identities: dict[Endpoint, Identity] = {}
        self._pool = ThreadPoolExecutor(
            max_workers=settings.max_parallel, thread_name_prefix="sapcontrol"
        )
        # Discovery runs apart from the instances, so a hung discovery instance never
        # holds a worker the instances need.
        self._discovery = Discovery(self, ThreadPoolExecutor(1, "sapcontrol-discovery"))
        self._lock = threading.Lock()
        self._last: list[InstanceResult] = []
        self._last_complete = True
        self._errors: dict[tuple[Endpoint, str], str] = {}
        self._scrape_lock = threading.Lock()
        self._last_at: float | None = None
        self._guards: dict[Endpoint, Guard] = {}
        # Instances whose last read has not returned: never a second worker for one.
        self._running: set[Endpoint] = set()
        self._warned: set[tuple[str, str]] = set()
        self._failovers: dict[tuple[str, str], int] = {}
        if not settings.verify:
            log.warning(
                "sapcontrol: WLMON_SAPCONTROL_VERIFY=false: sapstartsrv's TLS certificates "
                "are not checked, so anyone on the path can read the monitoring user's "
                "password; trust SAP's CA with WLMON_SAPCONTROL_CA_FILE instead"
            )

    def read(self) -> SAPControlReading:
        instances = self.scrape()
        discovery = self._discovery.ok if self.settings.discover else None
        if discovery is None and not self._last_complete:
            discovery = False  # still no answer, and nothing known to read
        return SAPControlReading(
            instances,
            discovery,
            complete=self._last_complete,
            notation=self.settings.decimal,
            failovers=dict(self._failovers),
            ccms_nodes={
                name: tuple(p for p in path.strip("/").split("/") if p)
                for name, path in self.settings.ccms_nodes.items()
            },
        )

    def _make_client(self, endpoint: Endpoint, auth: tuple[str, str] | None) -> SAPControlClient:
        s = self.settings
        return SAPControlClient(
            endpoint, auth=auth, verify=tls_verify(s.verify, s.ca_file), timeout_s=s.timeout_s
        )

    def client(self, endpoint: Endpoint, credentials: bool = True) -> SAPControlClient:
        """The client of `endpoint`; without `credentials` it never sends the password."""
        key = (endpoint, credentials)
        with self._lock:
            if key not in self._clients:
                auth = self.settings.auth if credentials else None
                self._clients[key] = self._client_factory(endpoint, auth)
            return self._clients[key]

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._discovery.close()
        for client in self._clients.values():
            client.close()

    # ------------------------------------------------------------------ targets
    def targets(self, deadline: float | None = None) -> list[Target]:
        """The configured endpoints and the discovered system. Discovery, when due, runs
        within `deadline` (the scrape's): in the background while an instance list is
        known, waited for when none is."""
        static = [
            Target(endpoint(e, self.settings.hosts), configured=True)
            for e in self.settings.endpoints
        ]
        if not self.settings.discover:
            return self._distinct(static)
        if deadline is None:
            deadline = self.clock() + self.settings.timeout_s
        return self._distinct(static + self._discovery.targets(deadline))

    def _distinct(self, targets: list[Target]) -> list[Target]:
        """One target per instance already identified: the first of the configured ones,
        else the first found (the same instance configured by its socket and its port, or
        configured and discovered, is read once)."""
        seen: set[tuple] = set()
        out = []
        for target in sorted(targets, key=lambda t: not t.configured):
            known = self._identities.get(target.endpoint)
            key = known.key if known is not None else None
            if key is None and target.hostname and target.nr >= 0:
                key = self._listed_key(target)
            if key is not None and key in seen:
                continue
            if key is not None:
                seen.add(key)
            out.append(target)
        return out

    def _listed_key(self, target: Target) -> tuple | None:
        """The key of a discovered, not yet identified target, when an identified instance
        shares its host and number (its SID is the system's)."""
        for ident in self._identities.values():
            key = ident.key
            if key is not None and key[1:] == (target.nr, target.hostname.lower()):
                return key
        return None

    # ------------------------------------------------------------------ one instance
    def _identity(
        self, target: Target, client: SAPControlClient, deadline: float
    ) -> Identity | None:
        """Who answers at the target: SID, host and number from GetInstanceProperties (the
        instance list's where it lacks them); None when neither names the instance."""
        known = self._identities.get(target.endpoint)
        if known is not None and (not target.features or known.features == target.features):
            return known
        props = client.instance_properties(max(deadline - self.clock(), 0.01))
        host = props.get("SAPLOCALHOST") or target.hostname
        number = props.get("SAPSYSTEM", "").strip()
        nr = int(number) if number.isdigit() else target.nr
        if not host or nr < 0:
            return None
        features = target.features or props.get("Features", "")
        if not features:
            features = self._features_from_list(client, props, deadline)
        name = props.get("INSTANCE_NAME") or guess_instance_name(features, nr)
        sid = props.get("SAPSYSTEMNAME", "")
        ident = Identity(sid, f"{host}_{name}", features, host=host, nr=nr)
        self._identities[target.endpoint] = ident
        return ident

    def _features_from_list(self, client: SAPControlClient, props: dict, deadline: float) -> str:
        try:
            rows = client.system_instance_list(max(deadline - self.clock(), 0.01))
        except SAPControlUnavailable:
            raise
        except SAPControlError:
            return "ABAP|ENQUE"  # unknown: try both, faults then say what it does not run
        nr = int(props.get("SAPSYSTEM") or -1)
        for row in rows:
            if row["hostname"] == props.get("SAPLOCALHOST") and row["instanceNr"] == nr:
                return row["features"]
        return "ABAP|ENQUE"

    def _fallback_identity(self, target: Target) -> Identity:
        known = self._identities.get(target.endpoint)
        if known is not None:
            return known
        sid = ""  # filled in from the system's other instances after the scrape
        if target.hostname:
            name = f"{target.hostname}_{guess_instance_name(target.features, target.nr)}"
            return Identity(sid, name, target.features, host=target.hostname, nr=target.nr)
        return Identity(sid, target.endpoint.label, target.features)

    @staticmethod
    def methods(features: str) -> list[str]:
        """The web methods worth calling on an instance running `features`. GATEWAY has
        none: the WSDL wlmon follows has no gateway method (its gwrd light comes from
        GetProcessList)."""
        feats = set(features.split("|"))
        out = ["GetProcessList"]
        if "ABAP" in feats:
            # ABAPReadSyslog last: sapstartsrv reads the syslog file itself, so it is not
            # held back while disp+work is down (the log says why it went down).
            out += [
                "ABAPGetWPTable",
                "GetQueueStatistic",
                "GetAlertTree",
                "GetAlerts",
                "ABAPGetComponentList",
                "ABAPReadSyslog",
            ]
        elif "ICMAN" in feats:
            out.append("GetQueueStatistic")
        if "ICMAN" in feats:
            out += ["ICMGetThreadList", "ICMGetConnectionList"]
        if "ENQUE" in feats:
            out += ["EnqGetStatistic", "EnqGetLockTable"]
        if "J2EE" in feats:
            # AS Java: its server processes (state, restarts) and its threads (pool use).
            out += list(J2EE_METHODS)
        # The instances a cluster moves (ASCS, ERS) say whether it does and how its checks
        # stand; dialog instances are not cluster resources in the usual set-ups.
        if {"ENQUE", "ENQREP", "MESSAGESERVER"} & feats:
            out += list(HA_METHODS)
        # Last, as what matters least now: sapstartsrv reads the executables' versions
        # itself (every kind of instance); asked every WLMON_SAPCONTROL_VERSION_INTERVAL_S.
        out.append("GetVersionInfo")
        return out

    def guard(self, endpoint: Endpoint) -> Guard:
        with self._lock:
            if endpoint not in self._guards:
                self._guards[endpoint] = Guard(self.settings, endpoint.url + (endpoint.uds or ""))
            return self._guards[endpoint]

    def insecure(self, target: Target) -> tuple[str, ...]:
        """How the instance's transport is weak, each said once in the log."""
        out = []
        if self.settings.auth and target.credentials and target.endpoint.plain_http:
            out.append("basic_auth_over_http")
        if not self.settings.verify and target.endpoint.url.startswith("https:"):
            out.append("tls_verify_off")
        for reason in out:
            if (target.endpoint.url, reason) not in self._warned:
                self._warned.add((target.endpoint.url, reason))
                log.warning(
                    "sapcontrol %s: %s",
                    target.endpoint.label,
                    "basic auth over plain HTTP: the monitoring user's password crosses the "
                    "network readable by anyone on the path; use the HTTPS port (5NN14, "
                    "PREFER_HTTPS) or the Unix socket"
                    if reason == "basic_auth_over_http"
                    else "TLS certificate not verified (VERIFY=false)",
                )
        return tuple(out)

    def scrape_instance(self, target: Target, deadline: float) -> InstanceResult:
        start = self.clock()
        guard = self.guard(target.endpoint)
        client = self.client(target.endpoint, target.credentials)
        result = InstanceResult(target, self._fallback_identity(target))
        answered = attempted = False
        asked = target.endpoint not in self._identities  # GetInstanceProperties, once
        try:
            identity = self._identity(target, client, deadline)
            if asked:
                guard.record("GetInstanceProperties", "ok", time.monotonic())
                answered = attempted = True
        except SAPControlError as exc:
            guard.record("GetInstanceProperties", outcome(exc), time.monotonic())
            self._note(target, "GetInstanceProperties", str(exc))
            if isinstance(exc, SAPControlUnavailable):
                return self._down(result, guard, str(exc), start)
            identity = result.identity  # it answered (a 401, a fault): named by convention
        if identity is None:
            result.anonymous = True
            result.up = True
            self._note(
                target,
                "GetInstanceProperties",
                f"{target.endpoint.label}: GetInstanceProperties names no SAPLOCALHOST "
                "and SAPSYSTEM; the instance is skipped",
            )
            result.duration = self.clock() - start
            return result
        result.identity = identity
        for method in self.methods(identity.features):
            now = time.monotonic()
            remaining = deadline - self.clock()
            reason = guard.skip(method, now) or ("deadline" if remaining <= 0 else None)
            if reason is not None:
                guard.skipped_call(method, reason)
                if reason in STANDING and method in guard.answers:
                    # Asked less often than scraped: its last answer stands until the next
                    # (a series that came and went with each call would reset every for:),
                    # also when this scrape's deadline or budget ran out before it.
                    result.data[method] = guard.answers[method]
                continue
            attempted = True
            t0 = self.clock()
            try:
                payload = client.call(method, remaining)
            except SAPControlError as exc:
                result.calls[method] = (False, self.clock() - t0)
                guard.record(method, outcome(exc), time.monotonic())
                self._note(target, method, str(exc))
                if isinstance(exc, SAPControlUnavailable) and not isinstance(
                    exc, SAPControlTimeout
                ):
                    break  # no connection: the other methods would find none either
                # A fault, a 401, a 5xx or a malformed answer is an answer.
                answered = answered or not isinstance(exc, SAPControlUnavailable)
                continue
            answered = True
            result.calls[method] = (True, self.clock() - t0)
            result.data[method] = payload
            guard.record(method, "ok", time.monotonic())
            if method in guard.intervals:
                guard.answers[method] = payload
            self._note(target, method, "")
            if method == "GetProcessList":
                guard.processes = {r["name"]: r["dispstatus"] for r in payload if r["name"]}
            elif method == "ABAPReadSyslog":
                labels = {
                    "source": "sapcontrol_syslog",
                    "sid": identity.sid,
                    "sap_instance": identity.sap_instance,
                }
                self._syslog.read(f"{identity.sid}/{identity.sap_instance}", labels, payload)
            elif method == "EnqGetLockTable":
                self._locks.read(f"{identity.sid}/{identity.sap_instance}", payload)
        result.syslog = self._syslog.counts(f"{identity.sid}/{identity.sap_instance}")
        result.locks = self._locks.summary(f"{identity.sid}/{identity.sap_instance}")
        if not attempted:
            answered = guard.last_up  # everything held back: what the last calls said
        guard.last_up = answered
        if not answered:
            errors = [e for (t, m), e in self._errors.items() if t == target.endpoint and e]
            return self._down(result, guard, errors[-1] if errors else "no answer", start)
        result.up = True
        self._note(target, "", "")
        result.health = guard.health(time.monotonic(), self.insecure(target))
        result.duration = self.clock() - start
        return result

    def _down(self, result: InstanceResult, guard: Guard, error: str, start: float):
        guard.last_up = False
        self._note(result.target, "", f"instance down: {error}")
        result.error = error
        result.health = guard.health(time.monotonic(), self.insecure(result.target))
        result.duration = self.clock() - start
        return result

    @property
    def _secrets(self) -> tuple[str, ...]:
        auth = self.settings.auth
        return (auth[1],) if auth else ()

    def _note(self, target: Target, method: str, error: str) -> None:
        """Log a failure when it starts and when it ends, not at every scrape."""
        key = (target.endpoint, method)
        before = self._errors.get(key, "")
        if error and not before:
            log.warning("sapcontrol %s", scrub(error, self._secrets))
        elif before and not error:
            log.info("sapcontrol %s %s answers again", target.endpoint.label, method or "")
        self._errors[key] = error

    # ------------------------------------------------------------------ one scrape
    def scrape(self) -> list[InstanceResult]:
        """Every instance read now, or the last reading if it is younger than `cache_s`
        (two scrapers of one exporter then share it instead of doubling the load)."""
        with self._scrape_lock:
            cache = self.settings.cache_s
            if cache > 0 and self._last_at is not None and time.monotonic() - self._last_at < cache:
                return self._last
            results = self._scrape()
            self._last_at = time.monotonic()
            return results

    def _scrape(self) -> list[InstanceResult]:
        timeout = self.settings.timeout_s
        # One deadline for everything this scrape asks, discovery included.
        deadline = self.clock() + timeout
        targets = self.targets(deadline)
        futures = {}
        results = []
        for t in targets:
            with self._lock:
                busy = t.endpoint in self._running
                self._running.add(t.endpoint)
            if busy:  # its last read has not returned: no second worker for it
                res = InstanceResult(t, self._fallback_identity(t))
                res.error = "the previous read has not returned"
                results.append(res)
                continue
            futures[self._pool.submit(self._read_one, t, deadline)] = t
        done, _ = wait(futures, timeout=max(deadline - self.clock(), 0.0) + 0.25)
        for future, target in futures.items():
            if future in done and future.exception() is None:
                results.append(future.result())
            else:
                res = InstanceResult(target, self._fallback_identity(target))
                res.error = "no answer within the deadline"
                res.duration = timeout
                results.append(res)
        # An instance discovered and now not answering may have moved (an HA failover):
        # ask for the instance list now, not at the next interval.
        if any(not r.up and not r.target.configured and r.target.hostname for r in results):
            self._discovery.refresh()
        self._count_failovers()
        # No instance list at all: the discovery instances read down, the collector failed.
        self._last_complete = not self.settings.discover or self._discovery.known
        if not self._last_complete:
            for url in self.settings.discover:
                target = Target(endpoint(url, self.settings.hosts))
                res = InstanceResult(target, self._fallback_identity(target))
                res.error = "discovery failed and no instance list is known"
                results.append(res)
        # An instance never seen answering belongs to the system the others name.
        sid = next((r.identity.sid for r in results if r.identity.sid), "")
        for r in results:
            if not r.identity.sid:
                r.identity = replace(r.identity, sid=sid)
        results = self._merged(results)
        self._last = results
        return results

    def _read_one(self, target: Target, deadline: float) -> InstanceResult:
        try:
            return self.scrape_instance(target, deadline)
        finally:
            with self._lock:
                self._running.discard(target.endpoint)

    def _count_failovers(self) -> None:
        """Failovers discovery saw, by SID and instance name; every identified instance
        has its series from the start (0), so the first failover is an increase."""
        sid = next((i.sid for i in self._identities.values() if i.sid), "")
        for ident in list(self._identities.values()):
            name = ident.sap_instance.removeprefix(f"{ident.host}_")
            self._failovers.setdefault((ident.sid or sid, name), 0)
        for nr, features, old, new in self._discovery.take_failovers():
            known = next(
                (
                    i
                    for i in self._identities.values()
                    if i.nr == nr and i.host.lower() == old.lower()
                ),
                None,
            )
            if known is not None:
                name = known.sap_instance.removeprefix(f"{known.host}_")
            else:
                name = guess_instance_name(features, nr)
            key = (known.sid if known is not None and known.sid else sid, name)
            self._failovers[key] = self._failovers.get(key, 0) + 1
            log.warning(
                "sapcontrol: failover: %s %s moved from %s to %s (instance list)",
                key[0],
                name,
                old,
                new,
            )

    @staticmethod
    def _merged(results: list[InstanceResult]) -> list[InstanceResult]:
        """One result per instance (SID, number, host): a configured target before a
        discovered one, then the first; instances answering without identity are left out."""
        out: list[InstanceResult] = []
        seen: set[tuple] = set()
        for r in sorted(results, key=lambda r: not r.target.configured):
            if r.anonymous:
                continue
            key = r.identity.key
            if key is not None and key in seen:
                continue
            if key is not None:
                seen.add(key)
            out.append(r)
        return out
