"""SAP buffers per instance (ST02): program, CUA, screen, table definition, field
description, generic key, single record, export/import. Hit ratio is
`rate(sap_buffer_hits_total) / rate(sap_buffer_requests_total)`; swaps (displacements)
should stay 0 (seed 000, 4.3.1). Sample::

    sap_buffer_requests_total{sid="BMK",sap_instance="penguin2_D00",buffer="generic_key"} 4.1e+05
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from exporters.collectors.base import SnapshotCollector
from exporters.model.engine import Snapshot


class SAPBufferCollector(SnapshotCollector):
    name = "sapbuffer"

    def describe_families(self) -> Iterable[Metric]:
        return self._families(None)

    def families(self, snap: Snapshot) -> Iterable[Metric]:
        return self._families(snap)

    def _families(self, snap: Snapshot | None) -> Iterator[Metric]:
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
        if snap is not None:
            t, st = snap.totals, snap.state
            for i, inst in enumerate(st.instances):
                for b, buf in enumerate(st.sap_buffers):
                    key = [snap.sid, inst, buf]
                    requests.add_metric(key, float(t.sap_buffer_requests[i, b]))
                    hits.add_metric(key, float(t.sap_buffer_hits[i, b]))
                    swaps.add_metric(key, float(t.sap_buffer_swaps[i, b]))
                    size.add_metric(key, float(st.sap_buffer_size[i, b]))
                    used.add_metric(key, float(st.sap_buffer_used[i, b]))
        yield from (requests, hits, swaps, size, used)
