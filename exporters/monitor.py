"""Monitor-only exporter: real SIDs read through SAPControl, no model at all.

`wlmon exporter --monitor FILE` serves /metrics for the SIDs the file names (docs/monitor.md):

    sids:
      - sid: PRD
        sapcontrol:
          discover: ["https://prdascs:50114/"]
          hosts: {prdascs: 10.0.0.11}
          username: wlmonmon
          password_file: /etc/wlmon/prd.password
          ca_file: /etc/wlmon/sap-ca.pem
          prefer_https: true

Nothing of the model is built (no simulated series, no model ports, no control endpoint),
and nothing is read from WLMON_SAPCONTROL_* variables: a SID's settings are its entry's
alone, so two SIDs, or two exporters, never share a user, a CA or an endpoint by accident.
The SID is the entry's from the first scrape on, before any instance has answered, so every
series of the SID carries it (a SID whose discovery instance is unreachable still has
`sid` on its `sap_up`, discovery and collector series). One process may serve several SIDs
(bench/sapcontrol_scale.py measures what that saves); each SID's instances are read in
parallel with the other SIDs', each SID within its own deadline.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Literal
from wsgiref.simple_server import make_server

import yaml
from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_settings import PydanticBaseSettingsSource, SettingsConfigDict

from exporters import __version__
from exporters.collectors.exposition import QuietHandler, ThreadingWSGIServer, make_metrics_app
from exporters.collectors.sapcontrol import SAPControlCollector, SAPControlReading
from exporters.sapcontrol.settings import SAPControlSettings
from exporters.sources.sapcontrol import SAPControlScraper

log = logging.getLogger(__name__)

# A SAP system ID: three characters, a letter first.
SID_PATTERN = r"^[A-Z][A-Z0-9]{2}$"
MAX_SIDS_PER_PROCESS = 100
# What each SID is: the model answering as a system (`twin`), or a system read through
# SAPControl (`sapcontrol`). The info metric's `kind` label (docs/monitor.md).
KIND_TWIN = "twin"
KIND_SAPCONTROL = "sapcontrol"
INFO_HELP = (
    "One per SID the exporter serves; kind=twin: the model answering as that system, "
    "kind=sapcontrol: a system read through SAPControl. Always 1."
)


class MonitorFileError(ValueError):
    """A monitor (or fleet) entry to fix; the message names the file and the field."""


class SapControlSpec(BaseModel):
    """One SID's SAPControl settings as a file gives them (a monitor file or a fleet entry).

    The password only from a file (`password_file`): a password written into the YAML would
    be in every copy and diff of it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    discover: list[str] = Field(default_factory=list)
    endpoints: list[str] = Field(default_factory=list)
    hosts: dict[str, str] = Field(default_factory=dict)
    username: str | None = None
    password_file: Path | None = None
    ca_file: Path | None = None
    # The TLS preference: read discovered instances on their HTTPS port (5NN14) where listed.
    prefer_https: bool = False
    verify: bool = True
    timeout_s: float = Field(default=3.0, gt=0)
    cache_s: float = Field(default=0.0, ge=0)
    decimal: Literal["point", "comma"] | None = None
    state_file: Path | None = None

    def settings(self) -> SAPControlSettings:
        """The source's settings, validated as WLMON_SAPCONTROL_* would be (addresses, the
        password file readable, VERIFY/CA_FILE not contradicting), from this entry alone."""
        if not self.discover and not self.endpoints:
            raise ValueError("discover: give discover or endpoints (where sapstartsrv answers)")
        if self.password_file is not None and not self.username:
            raise ValueError("username: needed with password_file")
        if self.ca_file is not None and not self.ca_file.is_file():
            raise ValueError(f"ca_file: {self.ca_file} is not a readable file")
        return EntrySettings(**self.model_dump(exclude_none=True))


class EntrySettings(SAPControlSettings):
    """SAPControlSettings from the given values only: no WLMON_SAPCONTROL_* variable of the
    shell that started the exporter reaches a SID configured by file."""

    model_config = SettingsConfigDict(env_prefix="WLMON_SAPCONTROL_", hide_input_in_errors=True)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type,
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)


class MonitorSid(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    sid: Annotated[str, Field(pattern=SID_PATTERN)]
    sapcontrol: SapControlSpec
    description: str = ""


class MonitorFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    sids: list[MonitorSid] = Field(min_length=1, max_length=MAX_SIDS_PER_PROCESS)


def first_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first["loc"])
    # The field is named by its path here: the environment variable SAPControlSettings'
    # own messages name (for WLMON_SAPCONTROL_*) would send the reader to the wrong place.
    msg = re.sub(r"^Value error, (WLMON_SAPCONTROL_[A-Z_]+: )?", "", first["msg"])
    return f"{field}: {msg}" if field else msg


def load_monitor_file(path: Path) -> list[tuple[str, SAPControlSettings]]:
    """Each SID of the file with its source's settings, checked; MonitorFileError names
    the file, the entry and the field of the first problem."""
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise MonitorFileError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}:" if mark else ""
        raise MonitorFileError(f"{path}:{where} not YAML: {getattr(exc, 'problem', exc)}") from exc
    try:
        parsed = MonitorFile.model_validate(doc)
    except ValidationError as exc:
        raise MonitorFileError(f"{path}: {first_error(exc)}") from exc
    out: list[tuple[str, SAPControlSettings]] = []
    for i, entry in enumerate(parsed.sids):
        if entry.sid in {s for s, _ in out}:
            raise MonitorFileError(f"{path}: sids.{i}.sid: {entry.sid} is listed twice")
        try:
            out.append((entry.sid, entry.sapcontrol.settings()))
        except ValidationError as exc:
            raise MonitorFileError(f"{path}: sids.{i}.sapcontrol.{first_error(exc)}") from exc
        except ValueError as exc:
            raise MonitorFileError(f"{path}: sids.{i}.sapcontrol.{exc}") from exc
    return out


class _SidSource:
    """One SID's scraper, its instances named by the entry's SID: the label is known
    before any instance has answered, and an instance reporting another SID is said in
    the log (a discovery URL of another system) but still counted under its entry."""

    def __init__(self, sid: str, scraper: SAPControlScraper) -> None:
        self.sid = sid
        self.scraper = scraper
        self._warned: set[str] = set()

    def read(self) -> SAPControlReading:
        reading = self.scraper.read()
        for r in reading.instances:
            told = r.identity.sid
            if told and told != self.sid and told not in self._warned:
                self._warned.add(told)
                log.warning(
                    "monitor %s: %s answers as SID %s; its series are kept under %s (check "
                    "the entry's discover/endpoints)",
                    self.sid,
                    r.identity.sap_instance,
                    told,
                    self.sid,
                )
            if told != self.sid:
                r.identity = replace(r.identity, sid=self.sid)
        failovers = {(self.sid, name): n for (_, name), n in reading.failovers.items()}
        return replace(reading, failovers=failovers)


def _with_sid(family: Metric, sid: str) -> Metric:
    """The family with `sid` on every sample that lacks it."""
    for i, sample in enumerate(family.samples):
        if "sid" not in sample.labels:
            family.samples[i] = sample._replace(labels={**sample.labels, "sid": sid})
    return family


class MonitorCollector(Collector):
    """Every SID's sapcontrol families merged into one family per name (the text format
    allows a name once), each sample labelled with its SID, and one info series per SID."""

    def __init__(
        self,
        sids: list[tuple[str, SAPControlScraper]],
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.sids = [
            (sid, SAPControlCollector(_SidSource(sid, scraper), clock=clock))
            for sid, scraper in sids
        ]
        self._pool = ThreadPoolExecutor(max(len(sids), 1), thread_name_prefix="monitor-sid")

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        for _, collector in self.sids:
            collector.source.scraper.close()

    def _one(self, sid: str, collector: SAPControlCollector) -> list[Metric]:
        try:
            return [_with_sid(f, sid) for f in collector.collect()]
        except Exception:  # one SID's failure never empties the others'
            log.exception("monitor %s: reading failed", sid)
            ok = GaugeMetricFamily(
                "sap_scrape_collector_success",
                "1 if the collector succeeded in this scrape.",
                labels=["collector", "sid"],
            )
            ok.add_metric([collector.name, sid], 0.0)
            return [ok]

    def collect(self) -> Iterator[Metric]:
        futures = [self._pool.submit(self._one, sid, c) for sid, c in self.sids]
        merged: dict[str, Metric] = {}
        for future in futures:
            for family in future.result():
                have = merged.get(family.name)
                if have is None:
                    merged[family.name] = family
                else:
                    have.samples.extend(family.samples)
        info = GaugeMetricFamily("sap_system_info", INFO_HELP, labels=["sid", "kind"])
        for sid, _ in self.sids:
            info.add_metric([sid, KIND_SAPCONTROL], 1.0)
        yield from merged.values()
        yield info
        build = GaugeMetricFamily(
            "wlmon_build_info", "wlmon version; always 1.", labels=["version"]
        )
        build.add_metric([__version__], 1.0)
        yield build


def build_monitor(sids: list[tuple[str, SAPControlSettings]]) -> MonitorCollector:
    return MonitorCollector([(sid, SAPControlScraper(settings)) for sid, settings in sids])


def _json(start_response: Callable, status: str, body: dict) -> Iterable[bytes]:
    data = json.dumps(body).encode()
    start_response(
        status, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))]
    )
    return [data]


def build_app(collector: MonitorCollector) -> Callable:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    metrics_app = make_metrics_app(registry, registry.collect)
    sids = [sid for sid, _ in collector.sids]

    def app(environ, start_response) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "/")
        if path == "/metrics":
            return metrics_app(environ, start_response)
        if path == "/healthz":
            return _json(
                start_response, "200 OK", {"status": "ok", "mode": "monitor", "sids": sids}
            )
        if path.startswith("/control"):
            return _json(
                start_response,
                "404 Not Found",
                {"error": "a monitor-only exporter runs no model: nothing to control"},
            )
        return _json(start_response, "404 Not Found", {"error": f"no such path {path}"})

    return app


class MonitorServer:
    """The monitor-only exporter: start in a thread (tests) or serve forever (CLI)."""

    def __init__(
        self, sids: list[tuple[str, SAPControlSettings]], host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self.collector = build_monitor(sids)
        self.httpd = make_server(
            host,
            port,
            build_app(self.collector),
            server_class=ThreadingWSGIServer,
            handler_class=QuietHandler,
        )
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self.httpd.server_port

    def warm(self) -> None:
        """One reading before /healthz answers: discovery and the clients (issue 21)."""
        for _ in self.collector.collect():
            pass

    def start(self) -> MonitorServer:
        self.warm()
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, name="wlmon-monitor-http", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.collector.close()
