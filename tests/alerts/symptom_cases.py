"""promtool cases of the alerts around the whitepaper pages: the dialog-response bound, the
dialog throughput, the roll area's and the database host's evidence, and the landscape
model's own series (traces/, written by traces.py): a healthy hour sends nothing, and each
of the four faults fires its cause's alerts only, within 90 s, for the whole fault, and
nothing from 135 s after its removal on.

Expected texts are written out here, not taken from alerts/*.py, so a changed rule text
fails the test until the case is updated.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.alerts.cases import SID, _alerts_series, _annotations, _at, _fast_case

TRACES = Path(__file__).parent / "traces"
CAUSE_NOTE = (
    ", and no alert on a cause (dispatcher wait, DB request, enqueue, roll area) explains it."
)
PER_15S = 150  # dialog steps per 15 s sample: 10 steps/s
N = 160  # 40 minutes of 15 s samples


def _inst_labels(inst: str) -> str:
    return f'sid="{SID}",sap_instance="{inst}",task_type="dialog"'


def _counter(per_sample: list[tuple[float, int]], start: float = 0.0) -> str:
    """A counter from (increment per sample, number of samples) segments."""
    parts, total = [], start
    for inc, n in per_sample:
        parts.append(f"{round(total, 6):g}+{round(inc, 6):g}x{n - 1}")
        total += inc * n
    return " ".join(parts)


def response_tests() -> list[dict]:
    name = "SAPDialogResponseTimeHigh"
    diagnosis = (
        "The SD benchmark passes only with an average weighted dialog response below 2 s at 10 s think "
        "time (seed 000, section 2). Look at which part grew (dispatcher wait, DB request, enqueue, roll) "
        "and at the alerts on those parts."
    )
    ann = _annotations(
        name,
        "Average dialog response time is at or above the 2 s benchmark bound.",
        "Dialog steps of BMK take 2.10 s on average (SD benchmark bound: below 2 s)" + CAUSE_NOTE,
        diagnosis,
    )

    def series(resp: list[tuple[float, int]], db: list[tuple[float, int]] | None = None) -> list:
        # Two instances: the bound is on the system's average, not one instance's.
        out = []
        for inst in ("penguin2_D00", "penguin3_D00"):
            lab = _inst_labels(inst)
            steps = f"0+{PER_15S}x{N}" if resp else f"0x{N}"
            out += [
                {"series": f"sap_workload_steps_total{{{lab}}}", "values": steps},
                {
                    "series": f"sap_workload_response_seconds_total{{{lab}}}",
                    "values": _counter([(s * PER_15S, k) for s, k in resp]) if resp else f"0x{N}",
                },
            ]
            if db:
                out.append(
                    {
                        "series": f"sap_workload_db_request_seconds_total{{{lab}}}",
                        "values": _counter([(s * PER_15S, k) for s, k in db]),
                    }
                )
        return out

    fires = [
        {
            "exp_labels": {"severity": "warning", "cause": "dialog-response", "sid": SID},
            "exp_annotations": ann,
        }
    ]
    db_labels = {"cause": "database", "severity": "critical", "sid": SID, "task_type": "dialog"}
    explained = _fast_case(
        f"{name} stays silent while a slow database explains it, and after the fault is removed",
        # The DB request time at 1.2 s and the response at 3 s for 10 minutes, from minute 10.
        series([(1.9, 40), (3.0, 40), (1.9, N - 80)], db=[(0.3, 40), (1.2, 40), (0.3, N - 80)]),
        name,
        {_at(60 * k): [] for k in range(1, 40)},
    )
    explained["promql_expr_test"] = [
        {
            "expr": 'ALERTS{alertname="SAPDatabaseRequestTimeHigh",alertstate="firing"}',
            "eval_time": "15m",
            "exp_samples": [
                {
                    "labels": _alerts_series(
                        "SAPDatabaseRequestTimeHigh", {**db_labels, "sap_instance": inst}
                    ),
                    "value": 1,
                }
                for inst in ("penguin2_D00", "penguin3_D00")
            ],
        }
    ]
    return [
        _fast_case(
            f"{name} fires when the system's dialog steps average 2.10 s and no cause explains it",
            series([(2.1, N)]),
            name,
            {"4m": [], "10m": fires, "30m": fires},
        ),
        _fast_case(
            f"{name} stays silent at 1.96 s, the benchmark's own result",
            series([(1.96, N)]),
            name,
            {_at(60 * k): [] for k in range(5, 40, 5)},
        ),
        _fast_case(
            f"{name} stays silent after a two-minute spike shorter than its for duration",
            series([(1.5, 40), (4.0, 8), (1.5, N - 48)]),
            name,
            {_at(60 * k): [] for k in range(10, 25)},
        ),
        explained,
        _fast_case(f"{name} stays silent when no steps run", series([]), name, {"20m": []}),
    ]


def throughput_tests() -> list[dict]:
    """At 1-minute samples: yesterday needs a day of them."""
    name = "SAPDialogThroughputLow"
    lab = f"sap_workload_steps_total{{{_inst_labels('penguin2_D00')}}}"
    day = 1440

    def case(title: str, per_min: list[tuple[int, int]], minute: int, fires: int | None) -> dict:
        alerts = []
        if fires is not None:
            ann = _annotations(
                name,
                "The system serves fewer dialog steps than at the same time before.",
                f"BMK serves {fires} dialog steps/s over the last 2 minutes, below 90 % of what it "
                "served at the same time yesterday (else a week ago, else most of the hour before: its "
                "median).",
                "Users get less work done: fewer steps reach a work process (too few work processes, a "
                "queue in the dispatcher), each step takes longer (database, enqueue, roll area), or "
                "fewer users work (logon problems, a network cut, a holiday). Read the cause alerts of "
                "the SID first; SAPS is 60 x dialog steps/s on the NOC dashboard.",
            )
            alerts = [
                {
                    "exp_labels": {"severity": "warning", "cause": "throughput", "sid": SID},
                    "exp_annotations": ann,
                }
            ]
        return {
            "name": title,
            "interval": "1m",
            "input_series": [{"series": lab, "values": _counter(per_min)}],
            "alert_rule_test": [
                {"eval_time": f"{minute}m", "alertname": name, "exp_alerts": alerts}
            ],
        }

    return [
        case(
            f"{name} fires when the SID serves 20 % fewer steps than at the same time yesterday",
            [(600, day + 10), (480, 30)],
            day + 20,
            8,
        ),
        case(
            f"{name} stays silent at 5 % fewer than yesterday",
            [(600, day + 10), (570, 30)],
            day + 20,
            None,
        ),
        case(
            f"{name} stays silent when yesterday was as low, though the hour before was higher",
            [(480, 60), (600, day - 60 + 10), (480, 30)],
            day + 20,
            None,
        ),
        case(
            f"{name} falls back to the hour before on a stack with no history of yesterday",
            [(600, 90), (480, 30)],
            100,
            8,
        ),
        # The bench's too-few-work-processes (issue 37): a fresh stack whose hour before
        # holds its first, low rate (a 2-minute rate of a series a minute old) and an
        # earlier, milder fault; the hour's mean (9.15 steps/s) put the 8.3 steps/s fault
        # above 90 % of it, its median (9.75) does not.
        case(
            f"{name} fires on a fresh stack whose hour before holds its start and an earlier fault",
            [(600, 6), (540, 7), (600, 6), (500, 12)],
            25,
            8,
        ),
        case(
            f"{name} stays silent on a fresh stack after an earlier fault, at the healthy rate",
            [(600, 6), (540, 7), (600, 18)],
            25,
            None,
        ),
        case(f"{name} stays silent when no steps ran", [(0, day + 40)], day + 20, None),
    ]


def roll_file_tests() -> list[dict]:
    name = "SAPRollFileInUse"
    lab = f'{{sid="{SID}",sap_instance="penguin2_D00"}}'
    ann = _annotations(
        name,
        "User contexts are rolled to the roll file on disk.",
        "penguin2_D00 (BMK) writes 10kiB/s to the roll file.",
        "The roll file should not be used; keep the roll area in memory by setting rdisp/ROLL_MAXFS equal "
        "to rdisp/ROLL_SHM and sizing it for the users (seed 000, 4.3.1 guideline 3).",
    )
    labels = {
        "severity": "warning",
        "cause": "roll-area",
        "sid": SID,
        "sap_instance": "penguin2_D00",
    }

    def series(values: str) -> list[dict]:
        return [{"series": f"sap_roll_file_written_bytes_total{lab}", "values": values}]

    kib = 15 * 10 * 1024  # 10 KiB/s
    return [
        _fast_case(
            f"{name} fires 75 s after bytes go to the roll file",
            series(_counter([(0, 40), (kib, N - 40)])),
            name,
            {"10m45s": [], "11m15s": [{"exp_labels": labels, "exp_annotations": ann}]},
        ),
        _fast_case(
            f"{name} resolves 2 minutes after the last write and does not fire again",
            series(_counter([(0, 40), (kib, 20), (0, N - 60)])),
            name,
            # The 1-minute rate holds a minute, keep_firing_for 40 s more (with extended
            # memory: one resolved message for the roll area's evidence).
            {_at(900 + 105 + 15 * k): [] for k in range(40)},
            {_at(900): [labels]},
        ),
        _fast_case(
            f"{name} stays silent while the roll file is untouched",
            series(f"0x{N}"),
            name,
            {_at(60 * k): [] for k in range(1, 40, 3)},
        ),
        _fast_case(
            f"{name} stays silent after 30 s of roll-file writes",
            series(_counter([(0, 40), (kib, 2), (0, N - 42)])),
            name,
            {_at(600 + 15 * k): [] for k in range(1, 12)},
        ),
        _fast_case(
            f"{name} stays silent when the exporter restarts and its counter resets",
            series(f"5000000x40 0x{N - 41}"),
            name,
            {_at(600 + 15 * k): [] for k in range(1, 12)},
        ),
    ]


def extended_memory_tests() -> list[dict]:
    name = "SAPExtendedMemoryFull"
    lab = f'{{sid="{SID}",sap_instance="penguin2_D00"}}'
    size = 1073741824
    ann = _annotations(
        name,
        "Extended memory is full.",
        "Extended memory of penguin2_D00 (BMK) is 99% used.",
        "Performance drops sharply when extended memory runs full (seed 000, 4.3.1 guideline 4). Enlarge "
        "em/initial_size_MB; unused extended memory costs little because the operating system pages it out.",
    )
    labels = {
        "severity": "warning",
        "cause": "roll-area",
        "sid": SID,
        "sap_instance": "penguin2_D00",
    }

    def series(used: str, sz: str = f"{size}x{N}") -> list[dict]:
        return [
            {"series": f"sap_extended_memory_used_bytes{lab}", "values": used},
            {"series": f"sap_extended_memory_size_bytes{lab}", "values": sz},
        ]

    full, half = int(size * 0.99), int(size * 0.5)
    return [
        _fast_case(
            f"{name} fires 30 s after it is 99 % used",
            series(f"{half}x39 {full}x{N - 40}"),
            name,
            {"10m15s": [], "10m30s": [{"exp_labels": labels, "exp_annotations": ann}]},
        ),
        _fast_case(
            f"{name} stays silent at 97 % used",
            series(f"{int(size * 0.97)}x{N}"),
            name,
            {_at(60 * k): [] for k in range(1, 20)},
        ),
        _fast_case(
            f"{name} stays silent after a 15-second peak",
            series(f"{half}x39 {size} {half}x{N - 41}"),
            name,
            {_at(600 + 15 * k): [] for k in range(0, 8)},
        ),
        _fast_case(
            f"{name} resolves 45-60 s after extended memory is enlarged and does not fire again",
            series(f"{full}x{N}", f"{size}x39 {2 * size}x{N - 40}"),
            name,
            # Under 98 % from 600 s on, kept firing 40 s more (keep_firing_for): resolved at +45 s.
            {_at(600 + 60 + 15 * k): [] for k in range(40)},
            {_at(600 + 30): [labels]},
        ),
        _fast_case(
            f"{name} stays silent when an instance reports no extended memory",
            series(f"0x{N}", f"0x{N}"),
            name,
            {"10m": []},
        ),
    ]


def db_host_tests() -> list[dict]:
    host = 'sid="BMK",host="walrus"'

    def series(
        idle_per_15s: float = 0.75,
        queue: float = 150,
        reads_per_step: float = 9.0,
        role: str = "database",
        speed: float = 1.0,
    ) -> list[dict]:
        # `speed` host seconds pass per 15 s scrape x 15 (the model running faster than the
        # wall): the host's counters all advance by it, its CPU modes together included.
        host_s = 15 * speed
        return [
            {"series": f'sap_host_info{{{host},role="{role}"}}', "values": f"1x{N}"},
            {
                "series": f'node_cpu_seconds_total{{{host},cpu="0",mode="idle"}}',
                "values": f"0+{idle_per_15s * speed:g}x{N}",
            },
            {
                "series": f'node_cpu_seconds_total{{{host},cpu="0",mode="user"}}',
                "values": f"0+{(15 - idle_per_15s) * speed:g}x{N}",
            },
            {
                "series": f'node_disk_io_time_weighted_seconds_total{{{host},device="sda"}}',
                "values": f"0+{queue * host_s:g}x{N}",
            },
            {
                "series": f"sap_workload_steps_total{{{_inst_labels('penguin2_D00')}}}",
                "values": f"0+{PER_15S}x{N}",
            },
            {
                "series": 'sap_db_bufferpool_data_physical_reads_total{sid="BMK",bufferpool="MIX4K"}',
                "values": f"0+{reads_per_step * PER_15S * 0.75:g}x{N}",
            },
            {
                "series": 'sap_db_bufferpool_index_physical_reads_total{sid="BMK",bufferpool="MIX4KIX"}',
                "values": f"0+{reads_per_step * PER_15S * 0.25:g}x{N}",
            },
        ]

    def expected(name: str, summary: str, description: str, diagnosis: str, **labels) -> list:
        return [
            {
                "exp_labels": {"severity": "warning", "cause": "database", "sid": SID, **labels},
                "exp_annotations": _annotations(name, summary, description, diagnosis),
            }
        ]

    cpu, queue, reads = (
        "SAPDatabaseHostCPUBusy",
        "SAPDatabaseDiskQueueHigh",
        "SAPDatabasePhysicalReadsHigh",
    )
    cpu_fires = expected(
        cpu,
        "The database host has no CPU left.",
        "The database host walrus (BMK) is 99% busy over 5 minutes (warns from 98 %).",
        "Every DB request queues for a processor: expensive statements (ST05, the SQL cache), too many "
        "work processes in total (seed 000, 4.3.2), or other work on the host. Physical reads cost CPU "
        "too (the I/O path).",
        host="walrus",
    )
    queue_fires = expected(
        queue,
        "I/Os queue on the database host's disks.",
        "The disks of the database host walrus (BMK) have 400 I/Os outstanding on average over the last "
        "minute (warns above 300).",
        "The disks cannot serve the reads and writes asked of them: more physical reads than usual (a "
        "buffer pool too small, a new expensive statement), or a slow or failing disk. More than 2 "
        "outstanding I/Os per spindle is a bottleneck; spread the tablespaces over more disks or enlarge "
        "the buffer pools (seed 000, 4.2.3).",
        host="walrus",
    )
    reads_fire = expected(
        reads,
        "The buffer pools read more pages from disk per dialog step than usual.",
        "BMK reads 12.0 pages from disk per dialog step over the last minute (warns above 10.5).",
        "The buffer pools miss pages they used to hold: a pool shrank or a table grew past it (seed 000, "
        "4.2.3 and Table 4), or a statement scans (ST05). Each miss is a disk read a DB request waits "
        "for; compare the pools' hit ratios.",
    )
    return [
        _fast_case(f"{cpu} fires at 99 % busy", series(idle_per_15s=0.15), cpu, {"12m": cpu_fires}),
        _fast_case(f"{cpu} stays silent at 95 % busy", series(idle_per_15s=0.75), cpu, {"12m": []}),
        _fast_case(
            f"{cpu} stays silent for a busy application server",
            series(idle_per_15s=0.15, role="application"),
            cpu,
            {"12m": []},
        ),
        _fast_case(
            f"{queue} fires at 400 outstanding I/Os", series(queue=400), queue, {"5m": queue_fires}
        ),
        _fast_case(f"{queue} stays silent at 150", series(queue=150), queue, {"5m": []}),
        _fast_case(
            f"{queue} stays silent at 150 on a model running at 10x speed (read per host second)",
            series(queue=150, speed=10),
            queue,
            {"5m": []},
        ),
        _fast_case(
            f"{queue} fires at 400 on a model running at 10x speed",
            series(queue=400, speed=10),
            queue,
            {"5m": queue_fires},
        ),
        _fast_case(
            f"{cpu} stays silent at 95 % busy on a model running at 10x speed",
            series(idle_per_15s=0.75, speed=10),
            cpu,
            {"12m": []},
        ),
        _fast_case(
            f"{cpu} fires at 99 % busy on a model running at 10x speed",
            series(idle_per_15s=0.15, speed=10),
            cpu,
            {"12m": cpu_fires},
        ),
        _fast_case(
            f"{queue} stays silent for an application server's disks",
            series(queue=400, role="application"),
            queue,
            {"5m": []},
        ),
        _fast_case(
            f"{reads} fires at 12 physical reads per dialog step",
            series(reads_per_step=12),
            reads,
            {"5m": reads_fire},
        ),
        _fast_case(f"{reads} stays silent at 9.5", series(reads_per_step=9.5), reads, {"5m": []}),
    ]


# What each fault of the model fires, by the rules: alert -> (cause, severity, instances).
# The traces keep 3 instances and the other 27 summed as one: 4 "instances".
FAULT_FIRES = {
    "db-bottleneck": {
        "SAPDatabaseRequestTimeHigh": ("database", "critical", 4),
        "SAPDatabaseDiskQueueHigh": ("database", "warning", 1),
        "SAPDatabasePhysicalReadsHigh": ("database", "warning", 1),
    },
    "too-few-work-processes": {"SAPDispatcherWaitTimeHigh": ("work-processes", "critical", 4)},
    "slow-enqueue-link": {"SAPEnqueueTimeHigh": ("enqueue", "critical", 4)},
    "roll-area-too-small": {
        "SAPRollInTimeHigh": ("roll-area", "critical", 4),
        "SAPRollOutTimeHigh": ("roll-area", "critical", 4),
        "SAPRollFileInUse": ("roll-area", "warning", 4),
    },
}
# The symptom a fault also fires, and by when (s from the fault's first effect): too few
# work processes cost 17 % of the dialog steps. The trace's stack is 15 minutes old at the
# fault, so the throughput's expectation (the median of the hour before the last 15
# minutes, rates over a whole window) exists from 2.5 minutes after its start on: it
# fires 240 s into the fault (on a stack older than 17.5 minutes, 1m + 2 minutes of rate).
SYMPTOM_FIRES = {
    "too-few-work-processes": ("SAPDialogThroughputLow", ("throughput", "warning", 1), 270),
}
# From the fault's first effect: every alert of FAULT_FIRES fires by then; and from its
# removal: none fires any more (docs/alerts.md adds scrape, group_wait, group_interval).
FIRING_BY_S, RESOLVED_BY_S = 90, 135
# The model's first 90 s: its counters start from nothing, so its first rates are not a
# healthy system's (the DB host's CPU and physical reads run high for a moment).
WARM_S = 120


def _values(xs: list[float]) -> str:
    return " ".join(f"{x:g}" for x in xs)


def trace_series(trace: dict) -> list[dict]:
    out = []
    for inst, steps in trace["steps"].items():
        lab = _inst_labels(inst)
        out.append({"series": f"sap_workload_steps_total{{{lab}}}", "values": _values(steps)})
        for part, per in trace["seconds"].items():
            series = f"sap_workload_{part}_seconds_total{{{lab}}}"
            out.append({"series": series, "values": _values(per[inst])})
        out.append(
            {
                "series": f'sap_roll_file_written_bytes_total{{sid="{SID}",sap_instance="{inst}"}}',
                "values": _values(trace["roll_file_bytes"][inst]),
            }
        )
    host, n = trace["db_host"], len(trace["physical_reads"])
    on_host = f'sid="{SID}",host="{host}"'
    return [
        *out,
        {"series": f'sap_host_info{{{on_host},role="database"}}', "values": f"1x{n - 1}"},
        {
            "series": f'node_cpu_seconds_total{{{on_host},cpu="0",mode="idle"}}',
            "values": _values(trace["db_cpu_idle_seconds"]),
        },
        # The CPU's busy seconds: with idle, one second per second of the model's clock
        # (samples every 15 simulated seconds), the host clock the disk queue is read by.
        {
            "series": f'node_cpu_seconds_total{{{on_host},cpu="0",mode="user"}}',
            "values": _values(
                [
                    round(max(0.0, 15 * k - idle), 4)
                    for k, idle in enumerate(trace["db_cpu_idle_seconds"])
                ]
            ),
        },
        {
            "series": f'node_disk_io_time_weighted_seconds_total{{{on_host},device="sda"}}',
            "values": _values(trace["db_disk_queue_seconds"]),
        },
        # The traces keep data and index reads together: as data reads of one pool.
        {
            "series": f'sap_db_bufferpool_data_physical_reads_total{{sid="{SID}",bufferpool="ALL"}}',
            "values": _values(trace["physical_reads"]),
        },
        {
            "series": f'sap_db_bufferpool_index_physical_reads_total{{sid="{SID}",bufferpool="ALL"}}',
            "values": f"0x{n - 1}",
        },
    ]


def _firing_counts(fires: dict[str, tuple[str, str, int]]) -> list[dict]:
    return [
        {
            "labels": f'{{alertname="{a}", cause="{cause}", severity="{sev}"}}',
            "value": count,
        }
        for a, (cause, sev, count) in sorted(fires.items())
    ]


def _during(count: str, fault: str, fires: dict, on: int, t: int) -> dict:
    """What fires at `t` in the fault: its cause's alerts; its symptom from its time on
    (before it, the symptom is left out of the count, whichever way it is)."""
    symptom = SYMPTOM_FIRES.get(fault)
    if symptom is None:
        return {"expr": count, "eval_time": _at(t), "exp_samples": _firing_counts(fires)}
    name, labels, by_s = symptom
    if t >= on + by_s:
        return {
            "expr": count,
            "eval_time": _at(t),
            "exp_samples": _firing_counts({**fires, name: labels}),
        }
    return {
        "expr": count.replace("alertstate='firing'", f"alertstate='firing', alertname!='{name}'"),
        "eval_time": _at(t),
        "exp_samples": _firing_counts(fires),
    }


def trace_tests() -> list[dict]:
    healthy = json.loads((TRACES / "healthy.json").read_text())
    n = len(healthy["physical_reads"])
    cases = [
        {
            "name": "A healthy hour of the model at speed 1 sends nothing: no alert even pending",
            "interval": "15s",
            "input_series": trace_series(healthy),
            "promql_expr_test": [
                {"expr": "ALERTS", "eval_time": _at(t), "exp_samples": []}
                for t in range(WARM_S, 15 * n, 60)
            ],
        }
    ]
    count = "count by (alertname, cause, severity) (ALERTS{alertstate='firing'})"
    for fault, fires in FAULT_FIRES.items():
        trace = json.loads((TRACES / f"{fault}.json").read_text())
        on, off, n = trace["fault_on_s"], trace["fault_off_s"], len(trace["physical_reads"])
        during = range(on + FIRING_BY_S, off, 30)
        after = range(off + RESOLVED_BY_S, 15 * n, 30)
        cases.append(
            {
                "name": f"{fault} in the model at speed 1: its cause's alerts fire within "
                f"{FIRING_BY_S} s and stay for the whole fault, nothing else fires, none from "
                f"{RESOLVED_BY_S} s after its removal",
                "interval": "15s",
                "input_series": trace_series(trace),
                "promql_expr_test": [
                    *(
                        {"expr": "ALERTS", "eval_time": _at(t), "exp_samples": []}
                        for t in (WARM_S, on)
                    ),
                    *(_during(count, fault, fires, on, t) for t in during),
                    *({"expr": "ALERTS", "eval_time": _at(t), "exp_samples": []} for t in after),
                ],
            }
        )
    return cases


def fast_suites() -> dict[str, list[dict]]:
    """Files evaluated every 15 s, the real scrape."""
    return {
        "SAPDialogResponseTimeHigh": response_tests(),
        "SAPRollFileInUse": roll_file_tests(),
        "SAPExtendedMemoryFull": extended_memory_tests(),
        "SAPDatabaseHost": db_host_tests(),
        "ModelTraces": trace_tests(),
    }


def slow_suites() -> dict[str, list[dict]]:
    """Files evaluated every minute (a day of history)."""
    return {"SAPDialogThroughputLow": throughput_tests()}
