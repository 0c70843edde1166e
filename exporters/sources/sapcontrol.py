"""The sapcontrol collector's source: sapstartsrv instances read through SAPControl.

Reads any sapstartsrv, a real one or the model's (exporters.sapstartsrv). Instances come
from the SAPControlSettings it is given (read at the edge, exporters.config), or from
GetSystemInstanceList (exporters.sources.sapcontrol_discovery, within the same deadline).
Each reading asks
every instance in parallel, each within that deadline: a dead or hung instance costs at
most the deadline and is read as down, the others are complete. Which methods are called
follows what the instance runs (its `features`).
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
    SAPControlUnavailable,
    tls_verify,
)
from exporters.sapcontrol.settings import SAPControlSettings
from exporters.sources.sapcontrol_discovery import ClientFactory, Discovery, endpoint

log = logging.getLogger(__name__)


class SAPControlScraper:
    """Reads every configured or discovered sapstartsrv, each in its own deadline."""

    def __init__(
        self,
        settings: SAPControlSettings,
        client_factory: ClientFactory | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.settings = settings
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

    def read(self) -> SAPControlReading:
        instances = self.scrape()
        discovery = self._discovery.ok if self.settings.discover else None
        if discovery is None and not self._last_complete:
            discovery = False  # still no answer, and nothing known to read
        return SAPControlReading(
            instances, discovery, complete=self._last_complete, notation=self.settings.decimal
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
        static = [Target(endpoint(e), configured=True) for e in self.settings.endpoints]
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
            out += ["ABAPGetWPTable", "GetQueueStatistic", "GetAlertTree"]
        elif "ICMAN" in feats:
            out.append("GetQueueStatistic")
        if "ICMAN" in feats:
            out += ["ICMGetThreadList", "ICMGetConnectionList"]
        if "ENQUE" in feats:
            out.append("EnqGetStatistic")
        return out

    def scrape_instance(self, target: Target, deadline: float) -> InstanceResult:
        start = self.clock()
        client = self.client(target.endpoint, target.credentials)
        result = InstanceResult(target, self._fallback_identity(target))
        try:
            identity = self._identity(target, client, deadline)
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
            for method in self.methods(result.identity.features):
                remaining = deadline - self.clock()
                if remaining <= 0:
                    raise SAPControlUnavailable(f"{target.endpoint.label}: deadline passed")
                t0 = self.clock()
                try:
                    result.data[method] = client.call(method, remaining)
                    result.calls[method] = (True, self.clock() - t0)
                except SAPControlUnavailable:
                    result.calls[method] = (False, self.clock() - t0)
                    raise
                except SAPControlError as exc:
                    # The instance answered (a fault, a 401): it is up, this method failed.
                    self._note(target, method, str(exc))
                    result.calls[method] = (False, self.clock() - t0)
                else:
                    self._note(target, method, "")
            result.up = True
            self._note(target, "", "")
        except SAPControlError as exc:
            self._note(target, "", f"instance down: {exc}")
            result.error = str(exc)
        result.duration = self.clock() - start
        return result

    def _note(self, target: Target, method: str, error: str) -> None:
        """Log a failure when it starts and when it ends, not at every scrape."""
        key = (target.endpoint, method)
        before = self._errors.get(key, "")
        if error and not before:
            log.warning("sapcontrol %s", error)
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
        futures = {self._pool.submit(self.scrape_instance, t, deadline): t for t in targets}
        done, _ = wait(futures, timeout=max(deadline - self.clock(), 0.0) + 0.25)
        results = []
        for future, target in futures.items():
            if future in done and future.exception() is None:
                results.append(future.result())
            else:
                res = InstanceResult(target, self._fallback_identity(target))
                res.error = "no answer within the deadline"
                res.duration = timeout
                results.append(res)
        # No instance list at all: the discovery instances read down, the collector failed.
        self._last_complete = not self.settings.discover or self._discovery.known
        if not self._last_complete:
            for url in self.settings.discover:
                target = Target(endpoint(url))
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
