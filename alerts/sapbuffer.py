"""sapbuffer.rules.yml: SAP buffers (ST02), seed 000 section 4.3.1 guidelines 1 and 2."""

from __future__ import annotations

from alerts.rules import INSTANCE, RuleFile, alert, number, value
from alerts.settings import MonitoringConfig

WHY = """
SAP buffers (ST02), seed 000 section 4.3.1 guidelines 1 and 2. The program, single-record
and export/import buffers may run below the hit-ratio floor (guideline 1), so the hit-ratio
alert leaves them out; no buffer may swap (guideline 2).
"""
CHECKED = 'buffer!~"program|single_record|export_import"'
BY = "sum by (sid, sap_instance, buffer)"


def rule_file(config: MonitoringConfig) -> RuleFile:
    pct = number(100 * config.thresholds.sap_buffer_hit_ratio_min)
    hit_ratio = alert(
        "SAPBufferHitRatioLow",
        f"100 * {BY} (rate(sap_buffer_hits_total{{{CHECKED}}}[5m]))\n"
        f"  / ({BY} (rate(sap_buffer_requests_total{{{CHECKED}}}[5m])) >= 1)\n< {pct}\n",
        for_="10m",
        severity="warning",
        summary=f"An SAP buffer serves less than {pct} % of its requests.",
        description=f"The {{{{ $labels.buffer }}}} buffer of {INSTANCE} serves {value('%.1f')} % "
        f"of requests from memory (at least {pct} % expected).",
        diagnosis=f"R/3 buffers should hit {pct} % or better; only the program, single-record and "
        "export/import buffers may run lower (seed 000, 4.3.1 guideline 1). Enlarge the buffer "
        "or its maximum number of entries.",
    )
    swaps = alert(
        "SAPBufferSwaps",
        f"{BY} (rate(sap_buffer_swaps_total[5m])) > 0",
        severity="warning",
        summary="An SAP buffer displaces objects for lack of room.",
        description=f"The {{{{ $labels.buffer }}}} buffer of {INSTANCE} swaps {value('%.2f')} "
        "objects/s.",
        diagnosis="There should be no swaps in any R/3 buffer; increase the buffer's memory size "
        "or its maximum number of entries (seed 000, 4.3.1 guideline 2).",
    )
    return RuleFile(
        "sapbuffer.rules.yml", WHY, [{"name": "sap-buffers", "rules": [hit_ratio, swaps]}]
    )
