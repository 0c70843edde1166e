"""Run events (start, fault injected, fault removed, scenario switched, end) to InfluxDB and
the log store (Loki's push protocol) with the same labels, so a dashboard can annotate
either way.

InfluxDB writes go through influxdb-client's batching write API, which retries with
exponential backoff for up to `max_retry_time_ms`, so an outage of InfluxDB shorter than
that loses no event; log lines go through the buffered LokiSink.
"""

from __future__ import annotations

import json
import logging
import time

from influxdb_client import InfluxDBClient, Point, WriteOptions

from exporters.sinks.loki import LokiSink

log = logging.getLogger(__name__)
MEASUREMENT = "wlmon_run_events"


class RunEvents:
    def __init__(
        self,
        sid: str,
        *,
        influx_url: str | None = None,
        influx_token: str = "",
        bucket: str = "wlmon/autogen",
        loki: LokiSink | None = None,
        max_retry_time_ms: int = 600_000,
    ) -> None:
        self.sid = sid
        self.bucket = bucket
        self.loki = loki
        # InfluxDB 1.8 takes "user:password" as the 2.x API's token (empty: auth off).
        self._client = (
            InfluxDBClient(url=influx_url, token=influx_token, org="-") if influx_url else None
        )
        self._write = (
            self._client.write_api(
                write_options=WriteOptions(
                    batch_size=500,
                    flush_interval=1_000,
                    retry_interval=1_000,
                    max_retries=1_000,
                    max_retry_delay=10_000,
                    max_retry_time=max_retry_time_ms,
                    exponential_base=2,
                )
            )
            if self._client
            else None
        )

    def emit(
        self,
        event: str,
        *,
        scenario: str,
        faults: tuple[str, ...] | list[str] = (),
        message: str = "",
        run_id: str = "",
        at_ns: int | None = None,
        details: dict[str, str | int | float] | None = None,
    ) -> None:
        """`at_ns`: when it happened (default now; a registered past window gives its own);
        `details`: extra fields, e.g. a run's window for a dashboard's run picker."""
        ts = at_ns or time.time_ns()
        details = details or {}
        labels = {"sid": self.sid, "source": "run_events", "event": event, "scenario": scenario}
        if self._write is not None:
            point = Point(MEASUREMENT).time(ts)
            for key, value in labels.items():
                point = point.tag(key, value)
            if run_id:
                point = point.tag("run_id", run_id)
            point = point.field("faults", ",".join(faults)).field("message", message or event)
            for key, value in details.items():
                point = point.field(key, value)
            self._write.write(bucket=self.bucket, record=point)
        if self.loki is not None:
            line = json.dumps(
                {
                    "event": event,
                    "scenario": scenario,
                    "faults": list(faults),
                    "message": message or event,
                    "run_id": run_id,
                    **details,
                },
                sort_keys=True,
            )
            # The run as a stream label too (a VictoriaLogs stream field): a run's events are
            # one stream lookup, `{source="run_events", run_id="..."}`. Runs are few a day.
            self.loki.emit(labels | ({"run_id": run_id} if run_id else {}), line, ts)

    def close(self) -> None:
        if self._write is not None:
            self._write.close()  # flushes what is batched (and still retrying)
        if self._client is not None:
            self._client.close()
