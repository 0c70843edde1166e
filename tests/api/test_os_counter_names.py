"""The OS counters' keys, names and units are defined once, in the vocabulary (issue 32,
item 0): each source writes exactly those keys and the report and the page read them."""

from __future__ import annotations

import numpy as np

from api.imports import perfmon
from api.runs import record
from exporters.vocabulary import OS_COUNTER_KEYS


def test_the_perfmon_importer_reads_exactly_the_vocabularys_counters() -> None:
    assert set(perfmon.SINGLE) == set(OS_COUNTER_KEYS)
    assert set(perfmon.FROM_INSTANCES) <= set(OS_COUNTER_KEYS)


def test_a_perfmon_capture_stores_its_standard_counters_under_those_keys() -> None:
    capture = (
        b'"(PDH-CSV 4.0) (Coordinated Universal Time)(0)","\\\\DB01\\Memory\\Available MBytes",'
        b'"\\\\DB01\\Processor(_Total)\\% Processor Time"\r\n'
        b'"11/23/2026 09:00:00.000","2048","12.5"\r\n'
        b'"11/23/2026 09:01:00.000","2000","14.0"\r\n'
    )
    data = perfmon.parse(capture)
    keys = {c.last for c in record.of_kind(list(data.columns), "os")}
    assert keys == {"available_mb", "cpu_pct"} and keys <= set(OS_COUNTER_KEYS)
    cpu = data.values[:, list(data.columns).index(record.col("os", "db01", "cpu_pct"))]
    assert np.allclose(cpu, [12.5, 14.0])
