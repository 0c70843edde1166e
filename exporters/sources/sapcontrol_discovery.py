"""Finding a SAP system's instances from GetSystemInstanceList, for the sapcontrol source.

Discovery asks the configured discovery URLs in turn (the one that answered last first)
within the scrape's own deadline, so a hung discovery instance costs no more than that
deadline. While an instance list is known it runs in the background and the scrape reads
the known list; only with no list at all does the scrape wait for it. A failed discovery
is retried after `discovery_retry_s`, doubling up to `discovery_interval_s`; the last good
list stays in use, and in `state_file` across restarts. `refresh()` asks at once (an
instance stopped answering: it may have failed over), at most once per
`discovery_retry_s`; a list naming an instance number on another host than before is a
failover, logged and counted by the scraper.

Host names of the list are kept in the URLs; `HOSTS` gives only the address connected to
(Endpoint.address), so TLS still checks SAP's certificate against SAP's host name.

Instances are reached the way discovery was: over HTTPS (their httpsPort) when the
discovery URL is https, and never with credentials over plain HTTP then. A Unix socket
(`unix:/tmp/.sapstream5NN13`) reaches only its own instance; the others are reached over
HTTP (HTTPS with PREFER_HTTPS).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit

from exporters.collectors.sapcontrol import Target
from exporters.sapcontrol.client import Endpoint, SAPControlClient, SAPControlError
from exporters.sapcontrol.schema import Record
from exporters.sapcontrol.settings import SAPControlSettings

log = logging.getLogger(__name__)

ClientFactory = Callable[[Endpoint, "tuple[str, str] | None"], SAPControlClient]
UNIX = "unix:"


def endpoint(text: str, hosts: dict[str, str] | None = None) -> Endpoint:
    """The Endpoint of a configured address: http(s)://host:port/ or unix:/path. A host
    named in `hosts` (by its name: '*' is for the instance list's names only) is
    connected to at its mapped address, and TLS still checks the name."""
    if text.startswith(UNIX):
        return Endpoint("http://localhost/", uds=text.removeprefix(UNIX))
    url = text if text.endswith("/") else text + "/"
    address = (hosts or {}).get(urlsplit(url).hostname or "")
    return Endpoint(url, address=address)


class Reader(Protocol):
    """What discovery needs of the scraper."""

    settings: SAPControlSettings
    clock: Callable[[], float]

    def client(self, endpoint: Endpoint, credentials: bool = True) -> SAPControlClient: ...


class Discovery:
    """The discovered instance list of one scraper, refreshed when due."""

    def __init__(self, reader: Reader, pool: ThreadPoolExecutor) -> None:
        self.reader = reader
        self.settings = reader.settings
        self._pool = pool
        self._lock = threading.Lock()
        self._targets: list[Target] = []
        self._future: Future | None = None
        self._next = float("-inf")
        self._failures = 0
        self._order = list(self.settings.discover)
        self._refreshed = float("-inf")
        # (instance number, features, old host, new host) since the scraper last took them.
        self._failovers: list[tuple[int, str, str, str]] = []
        # None until a discovery finished; then whether the last one answered.
        self.ok: bool | None = None
        self._load()

    @property
    def known(self) -> bool:
        with self._lock:
            return bool(self._targets)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def targets(self, deadline: float) -> list[Target]:
        future = self._start(deadline)
        if future is not None and not self.known:
            with contextlib.suppress(FutureTimeout):
                future.result(timeout=max(deadline - self.reader.clock(), 0.0))
        with self._lock:
            return list(self._targets)

    def refresh(self) -> None:
        """Discover now, in the background (an instance stopped answering: it may have
        moved), unless that was asked less than `discovery_retry_s` ago."""
        now = self.reader.clock()
        with self._lock:
            # Not while discovery itself fails: its own backoff holds (a failover is
            # followed through a discovery URL that answers; name several).
            if self._failures or now - self._refreshed < self.settings.discovery_retry_s:
                return
            self._refreshed = now
            self._next = min(self._next, now)
        self._start(now + self.settings.timeout_s)

    def take_failovers(self) -> list[tuple[int, str, str, str]]:
        with self._lock:
            out, self._failovers = self._failovers, []
        return out

    def _start(self, deadline: float) -> Future | None:
        with self._lock:
            if self._future is not None and not self._future.done():
                return self._future
            if self.reader.clock() < self._next:
                return None
            self._future = self._pool.submit(self._discover, deadline)
            return self._future

    # ------------------------------------------------------------------ one discovery
    def _discover(self, deadline: float) -> None:
        errors = []
        urls = list(self._order)
        for k, url in enumerate(urls):
            remaining = deadline - self.reader.clock()
            if remaining <= 0:
                errors.append(f"{url}: deadline passed")
                break
            try:
                targets = self._ask(url, remaining / (len(urls) - k), deadline)
            except SAPControlError as exc:
                errors.append(str(exc))
                continue
            except Exception as exc:  # a scrape must never raise: log it, try the next
                log.exception("sapcontrol discovery at %s failed", url)
                errors.append(f"{url}: {type(exc).__name__}")
                continue
            self._succeeded(url, targets)
            return
        self._failed(errors)

    def _ask(self, url: str, timeout: float, deadline: float) -> list[Target]:
        client = self.reader.client(endpoint(url, self.settings.hosts))
        rows = client.system_instance_list(timeout)
        local = self._local(url, client, deadline)
        targets = self.build(url, rows, local)
        if not targets:
            # A list was read but names nothing readable: discovery did not succeed.
            raise SAPControlError(
                f"{url}: GetSystemInstanceList listed {len(rows)} instances, none readable"
            )
        self._save(url, rows, local)
        return targets

    def _local(self, url: str, client: SAPControlClient, deadline: float) -> tuple:
        """(SAPLOCALHOST, instance number) of the instance behind a Unix socket: the one
        row of the list the socket reaches."""
        if not url.startswith(UNIX):
            return ()
        try:
            props = client.instance_properties(max(deadline - self.reader.clock(), 0.01))
            return (props.get("SAPLOCALHOST", ""), int(props.get("SAPSYSTEM") or -1))
        except (SAPControlError, ValueError) as exc:
            log.warning(
                "sapcontrol: %s: local instance unknown (%s); all over the network", url, exc
            )
            return ()

    def _succeeded(self, url: str, targets: list[Target]) -> None:
        with self._lock:
            self._failovers += self._moved(self._targets, targets)
            self._targets = targets
            self.ok = True
            self._failures = 0
            self._next = self.reader.clock() + self.settings.discovery_interval_s
            self._order = [url, *(u for u in self._order if u != url)]

    def _failed(self, errors: list[str]) -> None:
        s = self.settings
        with self._lock:
            self.ok = False
            self._failures += 1
            wait = min(
                s.discovery_retry_s * 2 ** (self._failures - 1),
                max(s.discovery_interval_s, s.discovery_retry_s),
            )
            self._next = self.reader.clock() + wait
            kept = len(self._targets)
        log.warning(
            "sapcontrol discovery failed (%s); keeping %d known instances, next try in %.0f s",
            "; ".join(errors) or "no discovery URL",
            kept,
            wait,
        )

    @staticmethod
    def _moved(old: list[Target], new: list[Target]) -> list[tuple[int, str, str, str]]:
        """Instances (number and features) listed on another host than before, and no
        longer on the old one: an HA failover. An instance number is unique on a host, not
        in a system (D00 on every application server, an ASCS01 beside D01s), so an
        instance is its number with its features, and the old host is the one it left."""
        now = {(t.nr, t.hostname.lower()) for t in new}
        before: dict[tuple[int, str], list[str]] = {}
        for t in old:
            if t.nr >= 0:
                before.setdefault((t.nr, t.features), []).append(t.hostname)
        out = []
        for t in new:
            hosts = before.get((t.nr, t.features), [])
            if t.hostname.lower() in {h.lower() for h in hosts}:
                continue
            left = [h for h in hosts if (t.nr, h.lower()) not in now]
            if left:
                out.append((t.nr, t.features, left[0], t.hostname))
        return out

    # ------------------------------------------------------------------ targets
    def build(self, url: str, rows: list[Record], local: tuple = ()) -> list[Target]:
        out = []
        for row in rows:
            try:
                target = self._target(row, url, local)
            except (KeyError, TypeError, ValueError) as exc:
                log.warning("sapcontrol: instance list row %r unusable: %s", row, exc)
                continue
            if target is not None:
                out.append(target)
        return out

    def _target(self, row: Record, url: str, local: tuple) -> Target | None:
        where = dict(
            hostname=row["hostname"],
            nr=int(row["instanceNr"]),
            features=row["features"],
            dispstatus=row["dispstatus"],
        )
        if local and (row["hostname"], int(row["instanceNr"])) == local:
            return Target(endpoint(url, self.settings.hosts), **where)
        found_by = "http" if url.startswith(UNIX) else urlsplit(url).scheme
        tls = found_by == "https" or self.settings.prefer_https
        http, https = int(row["httpPort"] or 0), int(row["httpsPort"] or 0)
        if https and (tls or not http):
            scheme, port = "https", https
        elif http:
            scheme, port = "http", http
        else:
            log.warning("sapcontrol: %s lists no port; not read", row["hostname"])
            return None
        # Found over HTTPS but only reachable over HTTP: read what needs no password.
        credentials = not (found_by == "https" and scheme == "http")
        address = self._address(row["hostname"])
        url = f"{scheme}://{row['hostname']}:{port}/"
        return Target(Endpoint(url, address=address), credentials=credentials, **where)

    def _address(self, hostname: str) -> str | None:
        """The mapped address of an instance list's host name; None: DNS resolves it."""
        hosts = self.settings.hosts
        address = hosts.get(hostname, hosts.get("*"))
        return None if address == hostname else address

    # ------------------------------------------------------------------ state file
    def _save(self, url: str, rows: list[Record], local: tuple) -> None:
        path = self.settings.state_file
        if path is None:
            return
        data = {"discover": url, "local": list(local), "instances": rows}
        tmp = path.with_name(path.name + ".tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(data, indent=1))
            os.replace(tmp, path)
        except OSError as exc:
            log.warning("sapcontrol: cannot write %s: %s", path, exc.strerror)

    def _load(self) -> None:
        path: Path | None = self.settings.state_file
        if path is None or not path.is_file():
            return
        try:
            data = json.loads(path.read_text())
            url = data["discover"]
            if url not in self.settings.discover:
                return  # found through another URL: another system, perhaps
            self._targets = self.build(url, data["instances"], tuple(data.get("local", ())))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("sapcontrol: ignoring %s: %s", path, exc)
