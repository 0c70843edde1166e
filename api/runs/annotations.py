"""A run's events where people look: InfluxDB and the log store (run events, labelled like the
exporter's) and, where Grafana runs, Grafana annotations tagged with the run id, which the
forensics dashboard shows for the run picked."""

from __future__ import annotations

import logging
from datetime import datetime

from api.config import Settings
from api.outbox import OUTBOX
from api.runs.storage import RunRow
from exporters.sinks.events import RunEvents
from exporters.sinks.loki import LokiSink

log = logging.getLogger(__name__)


def _ms(at: datetime) -> int:
    return int(at.timestamp() * 1000)


class RunAnnotations:
    """Open for the life of one run; `close()` flushes what is buffered (the log store and InfluxDB
    writes retry in the background, so an outage shorter than the run loses nothing)."""

    def __init__(self, settings: Settings, run: RunRow) -> None:
        self.settings = settings
        self.run = run
        self.loki = (
            LokiSink(
                settings.logs_url,
                access=settings.logs_access,
                push_path=settings.logs_push_path,
            ).start()
            if settings.logs_url
            else None
        )
        self.events = RunEvents(
            settings.sid,
            influx_url=settings.influx_url,
            influx_token=settings.influx_credentials,
            loki=self.loki,
        )
        self.failures: list[str] = []

    def event(
        self,
        event: str,
        at: datetime,
        message: str,
        *,
        details: dict | None = None,
    ) -> None:
        """One event: to InfluxDB and the log store, and to Grafana as an annotation."""
        window = {"label": self.run.label, "kind": self.run.kind, **(details or {})}
        self.events.emit(
            event,
            scenario=self.run.scenario,
            message=message,
            run_id=self.run.id,
            at_ns=int(at.timestamp() * 1e9),
            details=window,
        )
        self.annotate(event, at, message)

    def annotate(
        self, event: str, at: datetime, text: str, *tags: str, end: datetime | None = None
    ) -> None:
        """A Grafana annotation only (a region when `end` is given)."""
        s = self.settings
        if not s.grafana_url or s.grafana_password is None:
            return
        label = self.run.label
        body = {
            "time": _ms(at),
            "tags": ["wlmon", "run", self.run.id, event, *tags],
            "text": f"{text} (run {self.run.id}{': ' + label if label else ''})",
        }
        if end is not None:
            body["timeEnd"] = _ms(end)
        # Queued and retried (api/outbox.py): the user's Grafana may be down or not up yet
        # (a run resumed at the API's start); failing to add one must not fail the run.
        queued = OUTBOX.put(
            "grafana_annotations",
            method="POST",
            url=f"{s.grafana_url.rstrip('/')}/api/annotations",
            json=body,
            auth=(s.grafana_user, s.grafana_password.get_secret_value()),
        )
        if not queued:
            self.failures.append(f"Grafana annotation {event}: the side-write queue is full")
            log.warning("cannot annotate run %s in Grafana: queue full", self.run.id)

    @staticmethod
    def window(start: datetime, steady_at: datetime, end: datetime) -> dict[str, int]:
        """The run's window in epoch ms, for the dashboard's run picker and its links."""
        return {
            "start_ms": _ms(start),
            "steady_start_ms": _ms(steady_at),
            "end_ms": _ms(end),
        }

    def start(self, start: datetime, steady_at: datetime, planned_end: datetime, text: str) -> None:
        self.event("run_start", start, text, details=self.window(start, steady_at, planned_end))

    def end(
        self, status: str, message: str, start: datetime, steady_at: datetime, end: datetime
    ) -> None:
        """The end event, and the run's window and steady state as Grafana regions."""
        self.event(
            "run_end",
            end,
            f"run {status}" + (f": {message}" if message else ""),
            details=self.window(start, steady_at, end),
        )
        self.annotate("run_window", start, f"run {status}", end=end)
        if end > steady_at:
            self.annotate("steady_state_window", steady_at, "steady state (report window)", end=end)

    def close(self) -> None:
        self.events.close()
        if self.loki is not None:
            self.loki.stop()
