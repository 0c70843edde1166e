"""SAP buffers per instance (ST02): program, CUA, screen, table definition, field
description, generic key, single record, export/import. Hit ratio is
`rate(sap_buffer_hits_total) / rate(sap_buffer_requests_total)`; swaps (displacements)
should stay 0 (seed 000, 4.3.1). Sample::

    sap_buffer_requests_total{sid="BMK",sap_instance="penguin2_D00",buffer="generic_key"} 4.1e+05
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from exporters.collectors.base import SourceCollector


@dataclass(frozen=True)
class SAPBuffers:
    """ST02 per instance and buffer: counters since the start, sizes now (bytes)."""

    sid: str
    instances: Sequence[str]
    buffers: Sequence[str]
    requests: np.ndarray  # [instance, buffer]
    hits: np.ndarray
    swaps: np.ndarray
    size_bytes: np.ndarray
    used_bytes: np.ndarray


class SAPBufferSource(Protocol):
    def sap_buffers(self) -> SAPBuffers: ...


class SAPBufferCollector(SourceCollector[SAPBufferSource, SAPBuffers]):
    def read(self) -> SAPBuffers:
        return self.source.sap_buffers()

    def families(self, reading: SAPBuffers | None) -> Iterator[Metric]:
        labels = ["sid", "sap_instance", "buffer"]
        requests = CounterMetricFamily(
            "sap_buffer_requests", "Buffer accesses (ST02 'Requests').", labels=labels
        )
        hits = CounterMetricFamily(
            "sap_buffer_hits", "Accesses served from the buffer (ST02 'Hitratio').", labels=labels
        )
        swaps = CounterMetricFamily(
            "sap_buffer_swaps", "Objects displaced for lack of room (ST02 'Swaps').", labels=labels
        )
        size = GaugeMetricFamily(
            "sap_buffer_size_bytes", "Configured buffer size (ST02 'Size').", labels=labels
        )
        used = GaugeMetricFamily(
            "sap_buffer_used_bytes",
            "Buffer space in use (ST02 'Size' minus 'Free').",
            labels=labels,
        )
        if reading is not None:
            for i, inst in enumerate(reading.instances):
                for b, buf in enumerate(reading.buffers):
                    key = [reading.sid, inst, buf]
                    for family, values in (
                        (requests, reading.requests),
                        (hits, reading.hits),
                        (swaps, reading.swaps),
                        (size, reading.size_bytes),
                        (used, reading.used_bytes),
                    ):
                        family.add_metric(key, float(values[i, b]))
        yield from (requests, hits, swaps, size, used)
