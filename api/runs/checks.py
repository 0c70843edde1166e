"""Verdicts a pipeline can gate on: each criterion with its value, bound and pass/fail.

Built in: the SD benchmark's average dialog response under 2 s at 10 s think time (seed
000), every whitepaper indicator's worst 5-minute mean under its threshold, BAIT's 60
consecutive minutes (ramp-up excluded), and with a baseline the repeatability within 5 %
(seed 001). An SLA file adds bounds on any report figure and tolerances against the
baseline. A criterion the run has no data for is skipped, not passed: it says why."""

from __future__ import annotations

import difflib

from api.runs.report import BAIT_WINDOW_S, REPEATABLE_PCT, compare, figures, unit_of
from api.runs.sla import Sla, SlaError
from exporters.thresholds import Thresholds
from exporters.vocabulary import DIALOG_RESPONSE, INDICATORS

SD_THINK_TIME_S = 10.0  # the SD benchmark's think time (seed 000 section 2)


def _criterion(
    name: str,
    source: str,
    figure: str,
    value: float | None,
    op: str,
    bound: float,
    unit: str,
    detail: str,
    passed: bool | None = None,
) -> dict:
    if value is None and passed is None:
        status = "skipped"
    elif value is None:
        status = "passed" if passed else "failed"
    else:
        ok = passed
        if ok is None:
            ok = {
                "<": value < bound,
                "<=": value <= bound,
                ">=": value >= bound,
                "within": abs(value) <= bound,
                "==": abs(value - bound) < 1e-6,
            }[op]
        status = "passed" if ok else "failed"
    return {
        "name": name,
        "source": source,
        "figure": figure,
        "value": None if value is None else round(float(value), 6),
        "op": op,
        "bound": bound,
        "unit": unit,
        "status": status,
        "detail": detail,
    }


def _sd_detail(sd: dict, think: float | None) -> str:
    """Why the SD verdict is what it is: judged only at a known think time, on a measured
    response time."""
    if not sd:
        return "no dialog steps in this run"
    if sd.get("dialog_response_s") is None:
        return f"not measured: {sd.get('response_not_measured', 'no response time')}"
    if think is None:
        return (
            f"not measured: the think time is unknown (the run does not say; give "
            f"--think-time), dialog response {sd['dialog_response_s']:g} s"
        )
    return "seed 000: the average dialog response stays under 2 s"


def built_in(report: dict, thresholds: Thresholds, think_time_s: float | None = None) -> list[dict]:
    """`think_time_s`: the think time the user states (`--think-time`) for a run that does
    not record one (an import); the run's own wins when it has one."""
    sd = report["benchmark"].get("sd") or {}
    bait = report["benchmark"].get("bait") or {}
    bound = thresholds.seconds(DIALOG_RESPONSE)
    recorded = sd.get("think_time_s")
    think = recorded if recorded is not None else think_time_s
    think = think or None  # 0: a run without think time (fromprom's default) says nothing
    out = [
        _criterion(
            "SD: average dialog response",
            "built-in",
            "dialog_response_s",
            sd.get("dialog_response_s") if think is not None else None,
            "<",
            bound,
            "s",
            _sd_detail(sd, think),
        )
    ]
    out.append(
        _criterion(
            "SD: think time",
            "built-in",
            "think_time_s",
            think,
            "==",
            SD_THINK_TIME_S,
            "s",
            (
                "the SD benchmark's 2 s bound holds at 10 s think time"
                + ("" if recorded is not None else " (think time as given, --think-time)")
            )
            if think
            else "think time unknown in this run (give --think-time)",
        )
    )
    peaks = {row["indicator"]: row for row in report["indicators"]}
    if peaks:
        for row in peaks.values():
            out.append(
                _criterion(
                    f"indicator {row['indicator']} ({row['rule']})",
                    "built-in",
                    f"{row['indicator']}_peak_ms",
                    row["peak_ms"],
                    "<",
                    row["threshold_ms"],
                    "ms",
                    "worst instance's 5-minute mean per dialog step in the steady state"
                    if row["peak_ms"] is not None
                    else "no full 5-minute window in this run: the indicator cannot be judged",
                )
            )
    else:
        out += [
            _criterion(
                f"indicator {ind.component} ({ind.alert})",
                "built-in",
                f"{ind.component}_peak_ms",
                None,
                "<",
                1000 * thresholds.seconds(ind),
                "ms",
                "no per-instance series in this run: the indicator cannot be judged",
            )
            for ind in INDICATORS
        ]
    for t in report.get("targets") or []:
        # One criterion (a JUnit test case) per transaction target of the NFR sheet.
        out.append(
            _criterion(
                f"target {t['transaction']} {t['statistic']}",
                "targets",
                f"{t['task_type'] or 'dialog'}.{t['transaction']}_{t['statistic']}_s",
                t["measured_s"],
                "<=",
                t["target_s"],
                "s",
                t["detail"],
            )
        )
    gaps = report.get("gaps") or []
    # Judged on the longest stretch without a hole in the data, not the window's length.
    clear = bait.get("longest_gap_free_s", bait.get("measured_window_s"))
    out.append(
        _criterion(
            "BAIT: 60 consecutive minutes measured",
            "built-in",
            "longest_gap_free_s",
            clear,
            ">=",
            BAIT_WINDOW_S,
            "s",
            (
                f"not measured: {bait['not_measured']}"
                if bait.get("not_measured")
                else f"the longest gap-free stretch of the steady state ({len(gaps)} gap(s) in it)"
                if gaps
                else "the steady state, ramp-up excluded"
            )
            if bait
            else "no dialog steps in this run",
        )
    )
    return out


NOTHING_JUDGED = "no criterion could be judged"


def _judged(criteria: list[dict]) -> dict:
    """A check in which every criterion was skipped judged nothing: a failure, so a
    pipeline gating on it does not pass a run it never looked at."""
    return _criterion(
        "at least one criterion judged",
        "built-in",
        "criteria",
        float(sum(c["status"] != "skipped" for c in criteria)),
        ">=",
        1.0,
        "",
        f"{NOTHING_JUDGED}: every criterion was skipped for want of data",
    )


def _unknown(figure: str, known: dict, line: int, who: str) -> SlaError:
    """`who`: "run X has" (or "runs X and Y have")."""
    near = difflib.get_close_matches(figure, list(known), n=3)
    hint = f" (did you mean {', '.join(near)}?)" if near else ""
    return SlaError(f"line {line}: {who} no figure {figure!r}{hint}")


def from_sla(report: dict, sla: Sla) -> list[dict]:
    known = figures(report)
    unmeasured = report.get("not_measured", {})
    out = []
    for b in sla.bounds:
        if b.figure not in known and b.figure not in unmeasured:
            raise _unknown(b.figure, known, b.line, f"run {report['run'].id} has")
        # A figure the run could have but does not measure: skipped, saying why.
        value = known[b.figure].value if b.figure in known else None
        # A figure the run lacks (not measured) has no OS host or key: its name ends in its unit.
        unit = known[b.figure].unit if b.figure in known else unit_of(b.figure)
        for op, bound, line in ((">=", b.min, b.min_line), ("<=", b.max, b.max_line)):
            if bound is None:
                continue
            # Named by figure and bound, citing the line of its own bound: two bounds on
            # one figure are two testcases a CI tells apart.
            label = f"{b.figure} {op} {bound:g}"
            detail = f"SLA line {line or b.line}"
            if value is None:
                detail += f": not measured ({unmeasured[b.figure]})"
            out.append(
                _criterion(
                    label if b.name == b.figure else f"{b.name} ({label})",
                    "sla",
                    b.figure,
                    value,
                    op,
                    bound,
                    unit,
                    detail,
                )
            )
    return out


def against_baseline(report: dict, baseline: dict, sla: Sla | None) -> list[dict]:
    tolerances = {t.figure: t.pct for t in sla.tolerances} if sla else {}
    cmp = compare(baseline, report, tolerances)
    rows = {r["figure"]: r for r in cmp["figures"]}
    thr, resp = rows.get("dialog_steps_per_hour"), rows.get("dialog_response_s")
    deltas = [r["delta_pct"] for r in (thr, resp) if r]
    # From 0 (no delta): no relative change to judge, said in the criterion's detail.
    worst = max(abs(d) for d in deltas) if len(deltas) == 2 and None not in deltas else None
    out = [
        _criterion(
            f"repeatable against {baseline['run'].id}",
            "baseline",
            "dialog_steps_per_hour, dialog_response_s",
            worst,
            "within",
            REPEATABLE_PCT,
            "%",
            "seed 001: throughput and response within 5 % of the baseline"
            if worst is not None
            else "no dialog steps in one of the runs",
        )
    ]
    for t in sla.tolerances if sla else []:
        row = rows.get(t.figure)
        if row is None:
            # Name the run that lacks it: the baseline, this run, or both.
            lacking = [
                f"{'baseline ' if r is baseline else ''}{r['run'].id}"
                for r in (report, baseline)
                if t.figure not in figures(r)
            ]
            who = (
                f"run {lacking[0]} has"
                if len(lacking) == 1
                else f"runs {' and '.join(lacking)} have"
            )
            raise _unknown(t.figure, rows, t.line, who)
        out.append(
            _criterion(
                f"{t.figure} against {baseline['run'].id}",
                "baseline",
                t.figure,
                row["delta_pct"],
                "within",
                t.pct,
                "%",
                f"{row['base']:g} → {row['new']:g}; SLA line {t.line}"
                + (
                    "; from 0: no percentage, a change all the same"
                    if row["delta_pct"] is None
                    else ""
                ),
                # From 0 to anything else fails a tolerance: it is no percentage, yet it moved.
                passed=False if row["delta_pct"] is None and row["new"] != row["base"] else None,
            )
        )
    return out


def evaluate(
    report: dict,
    thresholds: Thresholds,
    sla: Sla | None = None,
    baseline: dict | None = None,
    think_time_s: float | None = None,
) -> dict:
    """Every criterion; `passed` unless one failed. Raises SlaError for an SLA naming a
    figure the run lacks (bad input, not a failed criterion)."""
    criteria = built_in(report, thresholds, think_time_s)
    if sla:
        criteria += from_sla(report, sla)
    if baseline is not None:
        criteria += against_baseline(report, baseline, sla)
    else:
        # Tolerances are judged against a baseline: without one each is skipped, saying so
        # (the SLA's bounds still count), not an error that hides them. A figure the run
        # does not have is still a mistake in the file.
        known, unmeasured = figures(report), report.get("not_measured", {})
        for t in sla.tolerances if sla else []:
            if t.figure not in known and t.figure not in unmeasured:
                raise _unknown(t.figure, known, t.line, f"run {report['run'].id} has")
        criteria += [
            _criterion(
                f"{t.figure} within {t.pct:g} % of a baseline",
                "baseline",
                t.figure,
                None,
                "within",
                t.pct,
                "%",
                f"SLA line {t.line}: no baseline given (--baseline)",
            )
            for t in (sla.tolerances if sla else [])
        ]
        criteria.append(
            _criterion(
                "repeatable against a baseline",
                "baseline",
                "dialog_steps_per_hour, dialog_response_s",
                None,
                "within",
                REPEATABLE_PCT,
                "%",
                "no baseline given",
            )
        )
    message = ""
    if all(c["status"] == "skipped" for c in criteria):
        criteria.append(_judged(criteria))
        message = NOTHING_JUDGED
    counts = {k: sum(c["status"] == k for c in criteria) for k in ("passed", "failed", "skipped")}
    return {
        "run": report["run"].id,
        "baseline": baseline["run"].id if baseline else None,
        "passed": counts["failed"] == 0,
        "message": message,
        "counts": counts,
        "criteria": criteria,
    }
