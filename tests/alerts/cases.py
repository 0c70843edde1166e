"""Builds the promtool unit tests of every alert (tests/alerts/*.test.yml).

Run `python -m tests.alerts.cases` to rewrite the files; test_rules.py fails when the
committed files and this builder disagree, then runs promtool on them. Every alert gets:
fires above its threshold (labels and annotations asserted), silent just below, a spike
shorter than `for` stays silent, no traffic stays silent, a counter reset stays silent.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from alerts.settings import DEFAULT_RUNBOOK_BASE_URL, runbook_url
from alerts.thresholds import threshold_seconds
from exporters.vocabulary import INDICATORS, Indicator

OUT = Path(__file__).parent
RULES = [
    f"../../alerts/{name}"
    for name in (
        "recording.rules.yml",
        "workload.rules.yml",
        "exporter.rules.yml",
        "database.rules.yml",
        "sapbuffer.rules.yml",
    )
]
SID, INST = "BMK", "penguin2_D00"
STEPS_PER_MIN = 600  # 10 dialog steps/s on the instance
MINUTES = 30


def _labels(task: str = "dialog") -> str:
    return f'{{sid="{SID}",sap_instance="{INST}",task_type="{task}"}}'


def _series(part: str, per_min_seconds: str, steps: str) -> list[dict]:
    return [
        {"series": f"sap_workload_steps_total{_labels()}", "values": steps},
        {"series": f"sap_workload_{part}_seconds_total{_labels()}", "values": per_min_seconds},
    ]


def _inc(ms: float) -> float:
    """Counter increment per minute giving `ms` per step at STEPS_PER_MIN."""
    return round(ms / 1000.0 * STEPS_PER_MIN, 6)


def _case(name: str, series: list[dict], alertname: str, eval_min: int, alerts: list[dict]) -> dict:
    return {
        "name": name,
        "interval": "1m",
        "input_series": series,
        "alert_rule_test": [
            {"eval_time": f"{eval_min}m", "alertname": alertname, "exp_alerts": alerts}
        ],
    }


FAST_PER_MIN = 4  # 15 s samples, the default scrape: the critical twins' 1-minute window


def _fast_case(name: str, series: list[dict], alertname: str, evals: dict[str, list[dict]]) -> dict:
    """A case at the real 15 s scrape, judged at several instants (a 1-minute rate needs
    more than one sample in its window)."""
    return {
        "name": name,
        "interval": "15s",
        "input_series": series,
        "alert_rule_test": [
            {"eval_time": t, "alertname": alertname, "exp_alerts": alerts}
            for t, alerts in evals.items()
        ],
    }


def _fast_values(ms_per_quarter: list[tuple[float, int]], start: float = 0.0) -> str:
    """A time counter at 15 s samples: (ms per step, number of samples) segments, at
    STEPS_PER_MIN / 4 steps per sample."""
    parts, total = [], start
    for ms, n in ms_per_quarter:
        inc = round(_inc(ms) / FAST_PER_MIN, 6)
        parts.append(f"{round(total, 6):g}+{inc:g}x{n - 1}")
        total += inc * n
    return " ".join(parts)


def _expected(a: Indicator, warn_ms: float, fmt: str):
    """The alert an indicator case expects at a mean of `ms` and a severity."""

    def expected(ms: float, severity: str) -> dict:
        text = a.description.format(inst=f"{INST} ({SID})", value=fmt.format(ms))
        tail = (
            f" over the last minute, much higher than the {warn_ms:g} ms threshold."
            if severity == "critical"
            else f" (threshold {warn_ms:g} ms)."
        )
        return {
            "exp_labels": {
                "severity": severity,
                "sid": SID,
                "sap_instance": INST,
                "task_type": "dialog",
            },
            "exp_annotations": _annotations(a.alert, a.summary, text + tail, a.diagnosis),
        }

    return expected


def part_alert_tests(a: Indicator) -> list[dict]:
    """The six cases of one whitepaper indicator, at its threshold in alerts/thresholds.yml."""
    warn_ms = threshold_seconds(a) * 1000
    fmt = a.value_format.replace("%", "{:") + "}"
    part, name = a.component, a.alert

    expected = _expected(a, warn_ms, fmt)

    steps = f"0+{STEPS_PER_MIN}x{MINUTES}"
    above = warn_ms * 1.2
    below = warn_ms * 0.98
    base = warn_ms * 0.3
    spike = warn_ms * 6
    spike_values = f"0+{_inc(base)}x10 {_inc(base) * 10 + _inc(spike)}+{_inc(base)}x{MINUTES - 11}"
    return [
        _case(
            f"{name} fires as a warning when dialog steps average {fmt.format(above)} ms",
            _series(part, f"0+{_inc(above)}x{MINUTES}", steps),
            name,
            15,
            [expected(above, "warning")],
        ),
        _case(
            f"{name} stays silent just below the threshold",
            _series(part, f"0+{_inc(below)}x{MINUTES}", steps),
            name,
            20,
            [],
        ),
        _case(
            f"{name} stays silent after a one-minute spike shorter than its for duration",
            _series(part, spike_values, steps),
            name,
            14,
            [],
        ),
        _case(
            f"{name} stays silent when no steps run",
            _series(part, f"0x{MINUTES}", f"0x{MINUTES}"),
            name,
            20,
            [],
        ),
        _case(
            f"{name} stays silent across a counter reset below the threshold",
            _series(
                part,
                f"0+{_inc(base)}x10 0+{_inc(base)}x{MINUTES - 11}",
                f"0+{STEPS_PER_MIN}x10 0+{STEPS_PER_MIN}x{MINUTES - 11}",
            ),
            name,
            14,
            [],
        ),
    ]


def part_alert_fast_tests(a: Indicator) -> list[dict]:
    """The critical twin on its 1-minute window, at the real 15 s scrape and evaluation."""
    warn_ms = threshold_seconds(a) * 1000
    crit_ms = warn_ms * a.critical_multiple
    fmt = a.value_format.replace("%", "{:") + "}"
    part, name = a.component, a.alert
    expected = _expected(a, warn_ms, fmt)
    fast_steps = f"0+{STEPS_PER_MIN // FAST_PER_MIN}x{MINUTES * FAST_PER_MIN}"
    much_above, base, burst = crit_ms * 1.25, warn_ms * 0.3, crit_ms * 2.5
    return [
        _fast_case(
            f"{name} also pages as critical when the mean is much higher, {fmt.format(much_above)} ms",
            _series(part, _fast_values([(much_above, MINUTES * FAST_PER_MIN)]), fast_steps),
            name,
            {"15m": [expected(much_above, "warning"), expected(much_above, "critical")]},
        ),
        _fast_case(
            f"{name} pages as critical within 105 s of a sustained breach at "
            f"{fmt.format(much_above)} ms, before the warning",
            # 10 healthy minutes, then the breach: 1-minute window + for 30 s + evaluation.
            _series(
                part,
                _fast_values([(base, 40), (much_above, MINUTES * FAST_PER_MIN - 40)]),
                fast_steps,
            ),
            name,
            {"10m45s": [], "11m45s": [expected(much_above, "critical")]},
        ),
        _fast_case(
            f"{name} stays silent after a 30-second burst at {fmt.format(burst)} ms",
            _series(
                part,
                _fast_values([(base, 40), (burst, 2), (base, MINUTES * FAST_PER_MIN - 42)]),
                fast_steps,
            ),
            name,
            {f"{10 * 60 + 15 * k}s": [] for k in range(1, 9)},
        ),
        _fast_case(
            f"{name} stays silent on the fast window across a counter reset",
            _series(
                part,
                f"{_fast_values([(base, 40)])} {_fast_values([(base, MINUTES * FAST_PER_MIN - 40)])}",
                f"0+{STEPS_PER_MIN // FAST_PER_MIN}x39 0+{STEPS_PER_MIN // FAST_PER_MIN}x{MINUTES * FAST_PER_MIN - 41}",
            ),
            name,
            {f"{10 * 60 + 15 * k}s": [] for k in range(1, 9)},
        ),
    ]


def _annotations(name: str, summary: str, description: str, diagnosis: str) -> dict:
    return {
        "summary": summary,
        "description": description,
        "diagnosis": diagnosis,
        "runbook_url": runbook_url(DEFAULT_RUNBOOK_BASE_URL, name),
    }


def response_tests() -> list[dict]:
    name = "SAPDialogResponseTimeHigh"
    ann = _annotations(
        name,
        "Average dialog response time is at or above the 2 s benchmark bound.",
        "Dialog steps of BMK take 2.10 s on average (SD benchmark bound: below 2 s).",
        "The SD benchmark passes only with an average weighted dialog response below 2 s at 10 s think "
        "time (seed 000, section 2). Look at which part grew (dispatcher wait, DB request, enqueue, roll) "
        "and at the alerts on those parts.",
    )
    steps = f"0+{STEPS_PER_MIN}x{MINUTES}"

    def series(resp: str, st: str = steps) -> list[dict]:
        # Two instances: the bound is on the system's average, not one instance's.
        out = []
        for inst in ("penguin2_D00", "penguin3_D00"):
            lab = f'{{sid="{SID}",sap_instance="{inst}",task_type="dialog"}}'
            out += [
                {"series": f"sap_workload_steps_total{lab}", "values": st},
                {"series": f"sap_workload_response_seconds_total{lab}", "values": resp},
            ]
        return out

    fires = [{"exp_labels": {"severity": "warning", "sid": SID}, "exp_annotations": ann}]
    return [
        _case(
            f"{name} fires when the system's dialog steps average 2.10 s",
            series(f"0+{2.1 * 600:g}x{MINUTES}"),
            name,
            20,
            fires,
        ),
        _case(
            f"{name} stays silent at 1.96 s, the benchmark's own result",
            series(f"0+{1.96 * 600:g}x{MINUTES}"),
            name,
            20,
            [],
        ),
        _case(
            f"{name} stays silent after a two-minute spike shorter than its for duration",
            series(f"0+{1.5 * 600:g}x10 {1.5 * 6000 + 2 * 6 * 600:g}+{1.5 * 600:g}x{MINUTES - 11}"),
            name,
            15,
            [],
        ),
        _case(
            f"{name} stays silent when no steps run",
            series(f"0x{MINUTES}", f"0x{MINUTES}"),
            name,
            20,
            [],
        ),
        _case(
            f"{name} stays silent across a counter reset below the bound",
            series(
                f"0+{1.5 * 600:g}x10 0+{1.5 * 600:g}x{MINUTES - 11}",
                f"0+{STEPS_PER_MIN}x10 0+{STEPS_PER_MIN}x{MINUTES - 11}",
            ),
            name,
            14,
            [],
        ),
    ]


def roll_file_tests() -> list[dict]:
    name = "SAPRollFileInUse"
    lab = f'{{sid="{SID}",sap_instance="{INST}"}}'
    ann = _annotations(
        name,
        "User contexts are rolled to the roll file on disk.",
        f"{INST} ({SID}) writes 1kiB/s to the roll file.",
        "The roll file should not be used; keep the roll area in memory by setting rdisp/ROLL_MAXFS equal "
        "to rdisp/ROLL_SHM and sizing it for the users (seed 000, 4.3.1 guideline 3).",
    )

    def series(values: str) -> list[dict]:
        return [{"series": f"sap_roll_file_written_bytes_total{lab}", "values": values}]

    return [
        _case(
            f"{name} fires while bytes go to the roll file",
            series(f"0+61440x{MINUTES}"),
            name,
            15,
            [
                {
                    "exp_labels": {"severity": "warning", "sid": SID, "sap_instance": INST},
                    "exp_annotations": ann,
                }
            ],
        ),
        _case(
            f"{name} stays silent while the roll file is untouched",
            series(f"0x{MINUTES}"),
            name,
            20,
            [],
        ),
        _case(
            f"{name} stays silent after one minute of roll-file writes",
            series(f"0x10 61440x{MINUTES - 11}"),
            name,
            14,
            [],
        ),
        _case(
            f"{name} stays silent when the exporter restarts and its counter resets",
            series(f"5000000x10 0x{MINUTES - 11}"),
            name,
            14,
            [],
        ),
    ]


def extended_memory_tests() -> list[dict]:
    name = "SAPExtendedMemoryFull"
    lab = f'{{sid="{SID}",sap_instance="{INST}"}}'
    size = 1073741824
    ann = _annotations(
        name,
        "Extended memory is full.",
        f"Extended memory of {INST} ({SID}) is 99% used.",
        "Performance drops sharply when extended memory runs full (seed 000, 4.3.1 guideline 4). Enlarge "
        "em/initial_size_MB; unused extended memory costs little because the operating system pages it out.",
    )

    def series(used: str, sz: str = f"{size}x{MINUTES}") -> list[dict]:
        return [
            {"series": f"sap_extended_memory_used_bytes{lab}", "values": used},
            {"series": f"sap_extended_memory_size_bytes{lab}", "values": sz},
        ]

    return [
        _case(
            f"{name} fires at 99 % used",
            series(f"{int(size * 0.99)}x{MINUTES}"),
            name,
            10,
            [
                {
                    "exp_labels": {"severity": "critical", "sid": SID, "sap_instance": INST},
                    "exp_annotations": ann,
                }
            ],
        ),
        _case(
            f"{name} stays silent at 97 % used",
            series(f"{int(size * 0.97)}x{MINUTES}"),
            name,
            10,
            [],
        ),
        _case(
            f"{name} stays silent after a three-minute peak",
            series(f"{int(size * 0.5)}x5 {size}x3 {int(size * 0.5)}x{MINUTES - 9}"),
            name,
            8,
            [],
        ),
        _case(
            f"{name} stays silent when an instance reports no extended memory",
            series(f"0x{MINUTES}", f"0x{MINUTES}"),
            name,
            10,
            [],
        ),
        _case(
            f"{name} stays silent after an instance restart empties it",
            series(f"{int(size * 0.9)}x5 0x{MINUTES - 6}"),
            name,
            12,
            [],
        ),
    ]


def exporter_tests() -> list[dict]:
    down, failing = "SAPExporterDown", "SAPExporterCollectorFailing"
    # The scrape target's labels, sid included (prometheus.yml gives the exporter's target one).
    target = {"instance": "127.0.0.1:9300", "job": "wlmon-exporter", "sid": "BMK"}
    up = 'up{instance="127.0.0.1:9300",job="wlmon-exporter",sid="BMK"}'
    coll = 'sap_scrape_collector_success{collector="st03",instance="127.0.0.1:9300",job="wlmon-exporter",sid="BMK"}'
    system_up = 'sap_up{instance="127.0.0.1:9300",job="wlmon-exporter",sid="BMK"}'
    sapcontrol_ok = coll.replace('"st03"', '"sapcontrol"')
    instance_up = (
        'sap_up{instance="127.0.0.1:9300",job="wlmon-exporter",sid="BMK",'
        'sap_instance="penguin2_D00",source="sapcontrol"}'
    )
    down_ann = _annotations(
        down,
        "The wlmon exporter cannot be scraped.",
        "Prometheus cannot scrape the exporter of BMK at 127.0.0.1:9300 (job wlmon-exporter); no SAP workload data "
        "arrives.",
        "Without the exporter every SAP alert is blind. Check that the exporter runs (wlmon status) and listens "
        "where Prometheus looks.",
    )
    fail_ann = _annotations(
        failing,
        "A wlmon collector fails its scrapes.",
        "Collector st03 on 127.0.0.1:9300 has failed every scrape for 5 minutes.",
        "Part of the SAP statistics is missing, so alerts built on it cannot fire. The exporter's log names the "
        "error.",
    )
    return [
        _case(
            f"{down} fires when the exporter's target is down",
            [{"series": up, "values": f"1x5 0x{MINUTES}"}],
            down,
            10,
            [{"exp_labels": {"severity": "critical", **target}, "exp_annotations": down_ann}],
        ),
        _case(
            f"{down} stays silent while the target is up",
            [{"series": up, "values": f"1x{MINUTES}"}],
            down,
            10,
            [],
        ),
        _case(
            f"{down} stays silent after a single failed scrape",
            [{"series": up, "values": f"1x5 0 1x{MINUTES}"}],
            down,
            7,
            [],
        ),
        _case(
            f"{failing} fires when a collector keeps failing",
            [{"series": coll, "values": f"1x5 0x{MINUTES}"}],
            failing,
            12,
            [
                {
                    "exp_labels": {"severity": "warning", "collector": "st03", **target},
                    "exp_annotations": fail_ann,
                }
            ],
        ),
        _case(
            f"{failing} stays silent while collectors succeed",
            [{"series": coll, "values": f"1x{MINUTES}"}],
            failing,
            12,
            [],
        ),
        _case(
            f"{failing} stays silent after a brief collector failure",
            [{"series": coll, "values": f"1x5 0x2 1x{MINUTES}"}],
            failing,
            9,
            [],
        ),
        _case(
            f"{failing} fires when the monitored system cannot be read (sap_up 0)",
            [{"series": system_up, "values": f"1x5 0x{MINUTES}"}],
            failing,
            12,
            [
                {
                    "exp_labels": {"severity": "warning", **target},
                    "exp_annotations": {
                        **fail_ann,
                        "description": "The exporter on 127.0.0.1:9300 has not read the monitored "
                        "system BMK for 5 minutes.",
                    },
                }
            ],
        ),
        _case(
            # SAPStartSrvUnreachable pages for it (tests/sapcontrol/rules): one cause, one page.
            f"{failing} stays silent while only an instance's sapstartsrv does not answer",
            [
                {"series": system_up, "values": f"1x{MINUTES}"},
                {"series": sapcontrol_ok, "values": f"1x{MINUTES}"},
                {"series": instance_up, "values": f"1x5 0x{MINUTES}"},
            ],
            failing,
            12,
            [],
        ),
    ]


def bufferpool_tests() -> list[dict]:
    name = "SAPDB2BufferPoolHitRatioLow"
    lab = f'{{sid="{SID}",bufferpool="MIX4K"}}'
    diag_data = (
        "Too little memory for the pool's tables forces physical reads (seed 000, 4.2.3). Enlarge the pool "
        "or give its hottest tables a pool of their own, as the benchmark did with its seven pools (Table 4)."
    )

    def series(logical: str, physical: str) -> list[dict]:
        return [
            {"series": f"sap_db_bufferpool_data_logical_reads_total{lab}", "values": logical},
            {"series": f"sap_db_bufferpool_data_physical_reads_total{lab}", "values": physical},
        ]

    fires = [
        {
            "exp_labels": {
                "severity": "warning",
                "page_type": "data",
                "sid": SID,
                "bufferpool": "MIX4K",
            },
            "exp_annotations": _annotations(
                name,
                "A DB2 buffer pool misses too many data pages.",
                "Buffer pool MIX4K of BMK finds 85.0 % of data pages in memory (below 90 %).",
                diag_data,
            ),
        }
    ]
    return [
        _case(
            f"{name} fires when MIX4K finds 85 % of data pages",
            series("0+60000x40", "0+9000x40"),
            name,
            20,
            fires,
        ),
        _case(f"{name} stays silent at 91 %", series("0+60000x40", "0+5400x40"), name, 20, []),
        _case(
            f"{name} stays silent after a five-minute dip",
            series("0+60000x40", "0+3000x10 33000+12000x5 93000+3000x24"),
            name,
            18,
            [],
        ),
        _case(f"{name} stays silent when the pool is idle", series("0x40", "0x40"), name, 20, []),
        _case(
            f"{name} stays silent across a counter reset",
            series("0+60000x10 0+60000x29", "0+3000x10 0+3000x29"),
            name,
            14,
            [],
        ),
    ]


def io_cleaner_tests() -> list[dict]:
    name = "SAPDB2IOCleanersBehind"
    lab = f'{{sid="{SID}",bufferpool="MIX4K"}}'

    def series(data: str, adata: str, index: str, aindex: str) -> list[dict]:
        return [
            {"series": f"sap_db_bufferpool_data_writes_total{lab}", "values": data},
            {"series": f"sap_db_bufferpool_async_data_writes_total{lab}", "values": adata},
            {"series": f"sap_db_bufferpool_index_writes_total{lab}", "values": index},
            {"series": f"sap_db_bufferpool_async_index_writes_total{lab}", "values": aindex},
        ]

    ann = _annotations(
        name,
        "DB2 agents write dirty pages themselves because the I/O cleaners fall behind.",
        "BMK: 10 data pages/s are written synchronously (pool_data_writes > pool_async_data_writes, and likewise "
        "for index pages).",
        "When both pool_data_writes > pool_async_data_writes and pool_index_writes > pool_async_index_writes, "
        "increase NUM_IOCLEANERS (seed 000, Table 3); too many cleaners cost CPU.",
    )
    return [
        _case(
            f"{name} fires when data and index pages are both written synchronously",
            series("0+6000x40", "0+5400x40", "0+3000x40", "0+2700x40"),
            name,
            25,
            [{"exp_labels": {"severity": "warning", "sid": SID}, "exp_annotations": ann}],
        ),
        _case(
            f"{name} stays silent when only data pages are written synchronously",
            series("0+6000x40", "0+5400x40", "0+3000x40", "0+3000x40"),
            name,
            25,
            [],
        ),
        _case(
            f"{name} stays silent while the cleaners keep up",
            series("0+6000x40", "0+6000x40", "0+3000x40", "0+3000x40"),
            name,
            25,
            [],
        ),
        _case(
            f"{name} stays silent after a short burst",
            series("0+6000x40", "0+6000x10 57000+6000x29", "0+3000x40", "0+3000x10 28500+3000x29"),
            name,
            18,
            [],
        ),
        _case(
            f"{name} stays silent with no writes",
            series("0x40", "0x40", "0x40", "0x40"),
            name,
            25,
            [],
        ),
        _case(
            f"{name} stays silent across a counter reset",
            series(
                "0+6000x10 0+6000x29",
                "0+6000x10 0+6000x29",
                "0+3000x10 0+3000x29",
                "0+3000x10 0+3000x29",
            ),
            name,
            14,
            [],
        ),
    ]


def sap_buffer_tests() -> list[dict]:
    ratio, swaps = "SAPBufferHitRatioLow", "SAPBufferSwaps"

    def series(buffer: str, requests: str, hits: str, swap: str = "0x40") -> list[dict]:
        lab = f'{{sid="{SID}",sap_instance="{INST}",buffer="{buffer}"}}'
        return [
            {"series": f"sap_buffer_requests_total{lab}", "values": requests},
            {"series": f"sap_buffer_hits_total{lab}", "values": hits},
            {"series": f"sap_buffer_swaps_total{lab}", "values": swap},
        ]

    def labels(buffer: str) -> dict:
        return {"severity": "warning", "sid": SID, "sap_instance": INST, "buffer": buffer}

    ratio_ann = _annotations(
        ratio,
        "An SAP buffer serves less than 98 % of its requests.",
        f"The generic_key buffer of {INST} ({SID}) serves 95.0 % of requests from memory (at least 98 % expected).",
        "R/3 buffers should hit 98 % or better; only the program, single-record and export/import buffers may run "
        "lower (seed 000, 4.3.1 guideline 1). Enlarge the buffer or its maximum number of entries.",
    )
    swap_ann = _annotations(
        swaps,
        "An SAP buffer displaces objects for lack of room.",
        f"The generic_key buffer of {INST} ({SID}) swaps 2.00 objects/s.",
        "There should be no swaps in any R/3 buffer; increase the buffer's memory size or its maximum number of "
        "entries (seed 000, 4.3.1 guideline 2).",
    )
    return [
        _case(
            f"{ratio} fires when the generic key buffer hits 95 %",
            series("generic_key", "0+6000x40", "0+5700x40"),
            ratio,
            20,
            [{"exp_labels": labels("generic_key"), "exp_annotations": ratio_ann}],
        ),
        _case(
            f"{ratio} stays silent at 98.5 %",
            series("generic_key", "0+6000x40", "0+5910x40"),
            ratio,
            20,
            [],
        ),
        _case(
            f"{ratio} stays silent for the program buffer at 95 %, which the paper excepts",
            series("program", "0+6000x40", "0+5700x40"),
            ratio,
            20,
            [],
        ),
        _case(
            f"{ratio} stays silent after a five-minute dip",
            series("generic_key", "0+6000x40", "0+5990x10 59900+5400x5 86900+5990x24"),
            ratio,
            18,
            [],
        ),
        _case(
            f"{ratio} stays silent when the buffer is not used",
            series("generic_key", "0x40", "0x40"),
            ratio,
            20,
            [],
        ),
        _case(
            f"{ratio} stays silent across a counter reset",
            series("generic_key", "0+6000x10 0+6000x29", "0+5990x10 0+5990x29"),
            ratio,
            14,
            [],
        ),
        _case(
            f"{swaps} fires while a buffer swaps",
            series("generic_key", "0+6000x40", "0+5990x40", "0+120x40"),
            swaps,
            15,
            [{"exp_labels": labels("generic_key"), "exp_annotations": swap_ann}],
        ),
        _case(
            f"{swaps} stays silent without swaps",
            series("generic_key", "0+6000x40", "0+5990x40"),
            swaps,
            15,
            [],
        ),
        _case(
            f"{swaps} stays silent after a single minute of swaps",
            series("generic_key", "0+6000x40", "0+5990x40", "0x10 120x29"),
            swaps,
            14,
            [],
        ),
        _case(
            f"{swaps} stays silent when the instance restarts and its counter resets",
            series("generic_key", "0+6000x40", "0+5990x40", "500x10 0x29"),
            swaps,
            14,
            [],
        ),
    ]


def build() -> dict[str, str]:
    suites = {a.alert: part_alert_tests(a) for a in INDICATORS}
    suites |= {
        "SAPDialogResponseTimeHigh": response_tests(),
        "SAPRollFileInUse": roll_file_tests(),
        "SAPExtendedMemoryFull": extended_memory_tests(),
        "SAPExporter": exporter_tests(),
        "SAPDB2BufferPoolHitRatioLow": bufferpool_tests(),
        "SAPDB2IOCleanersBehind": io_cleaner_tests(),
        "SAPBuffer": sap_buffer_tests(),
    }
    files = {name: (RULES, "1m", tests) for name, tests in suites.items()}
    # The critical twins at the real 15 s scrape and evaluation: their own files, because
    # promtool's evaluation interval is per file.
    files |= {
        f"{a.alert}Critical": (RULES, "15s", part_alert_fast_tests(a))
        for a in INDICATORS
        if a.critical_multiple is not None
    }
    # Imported here: monitoring_cases builds on this module's helpers.
    from tests.alerts import monitoring_cases

    files |= {
        name: (monitoring_cases.RULES, "1m", t) for name, t in monitoring_cases.suites().items()
    }
    return {
        f"{name}.test.yml": yaml.safe_dump(
            {"rule_files": rules, "evaluation_interval": every, "tests": tests},
            sort_keys=False,
            width=120,
        )
        for name, (rules, every, tests) in files.items()
    }


if __name__ == "__main__":
    for name, text in build().items():
        (OUT / name).write_text(text)
        print("wrote", OUT / name)
