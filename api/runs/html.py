"""The report as one self-contained HTML page: inline CSS and SVG charts, no script and
nothing fetched, so it opens offline and can be mailed or archived as it is."""

from __future__ import annotations

import html
from datetime import UTC, datetime

import numpy as np

from api.runs.recorder import RunData

PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#393b79",
    "#637939",
)
CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:22px;margin-bottom:4px} h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:8px 0;font-size:13px} th,td{border:1px solid #ddd;padding:3px 8px}
th{background:#f4f4f4;text-align:left} td.n{text-align:right;font-variant-numeric:tabular-nums}
.ok{color:#1a7f37;font-weight:600} .bad{color:#cf222e;font-weight:600} .meta{color:#666;font-size:13px}
svg{background:#fff;border:1px solid #e5e5e5} .legend span{display:inline-block;margin-right:12px;font-size:12px}
.legend i{display:inline-block;width:10px;height:10px;margin-right:4px}
"""


def _esc(value) -> str:
    return html.escape(str(value))


def _fmt(value) -> str:
    if isinstance(value, bool):
        return f'<span class="{"ok" if value else "bad"}">{"yes" if value else "no"}</span>'
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 1000 else f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return _esc(value)


def table(rows: list[dict], columns: list[str] | None = None) -> str:
    if not rows:
        return '<p class="meta">none</p>'
    columns = columns or list(rows[0])
    head = "".join(f"<th>{_esc(c)}</th>" for c in columns)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="{"n" if isinstance(r.get(c), int | float) and not isinstance(r.get(c), bool) else ""}">'
            f"{_fmt(r.get(c, ''))}</td>"
            for c in columns
        )
        + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def line_chart(
    title: str,
    x: np.ndarray,
    series: dict[str, np.ndarray],
    unit: str,
    shade: tuple | None = None,
    width: int = 1100,
    height: int = 260,
) -> str:
    """An SVG line chart; `shade` marks a window (start_s, end_s), e.g. the steady state."""
    left, right, top, bottom = 60, 10, 10, 30
    finite = [v[np.isfinite(v)] for v in series.values() if v.size]
    ymax = max((float(v.max()) for v in finite if v.size), default=1.0) or 1.0
    xmin, xmax = (float(x.min()), float(x.max())) if x.size else (0.0, 1.0)
    span = (xmax - xmin) or 1.0

    def px(t: float) -> float:
        return left + (t - xmin) / span * (width - left - right)

    def py(v: float) -> float:
        return top + (1 - v / ymax) * (height - top - bottom)

    parts = [
        f'<svg role="img" aria-label="{_esc(title)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">'
    ]
    if shade:
        parts.append(
            f'<rect x="{px(shade[0]):.1f}" y="{top}" width="{px(shade[1]) - px(shade[0]):.1f}" '
            f'height="{height - top - bottom}" fill="#eef6ff"/>'
        )
    for frac in (0.0, 0.5, 1.0):
        y = py(ymax * frac)
        parts.append(
            f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>'
        )
        parts.append(
            f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end">'
            f"{ymax * frac:,.4g}</text>"
        )
    parts.append(f'<text x="{left}" y="{height - 8}" font-size="11">{xmin:,.0f} s</text>')
    parts.append(
        f'<text x="{width - right}" y="{height - 8}" font-size="11" text-anchor="end">{xmax:,.0f} s</text>'
    )
    legend = []
    for k, (name, values) in enumerate(series.items()):
        color = PALETTE[k % len(PALETTE)]
        pts = " ".join(
            f"{px(t):.1f},{py(v):.1f}" for t, v in zip(x, values, strict=True) if np.isfinite(v)
        )
        parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{pts}"/>')
        legend.append(f'<span><i style="background:{color}"></i>{_esc(name)}</span>')
    parts.append("</svg>")
    return (
        f'<h3>{_esc(title)} <span class="meta">({_esc(unit)})</span></h3>'
        + "".join(parts)
        + f'<div class="legend">{"".join(legend)}</div>'
    )


def render(report: dict, data: RunData) -> str:
    run, ss = report["run"], report["steady_state"]
    idx = {c: i for i, c in enumerate(data.columns)}
    x = data.times
    charts = []
    if "st03.dialog.steps" in idx:
        steps = data.values[:, idx["st03.dialog.steps"]]
        parts = {}
        for comp in (
            "response",
            "dispatcher_wait",
            "db_request",
            "enqueue",
            "roll_in",
            "roll_out",
            "processing",
        ):
            col = f"st03.dialog.{comp}"
            if col in idx:
                parts[comp] = np.divide(
                    1000 * data.values[:, idx[col]],
                    steps,
                    out=np.full_like(steps, np.nan),
                    where=steps > 0,
                )
        charts.append(
            line_chart(
                "Dialog response time and its parts per step",
                x,
                parts,
                "ms",
                shade=(ss["start_s"], ss["end_s"]),
            )
        )
    for key, title, unit in (
        ("cpu_pct", "Processor\\% Processor Time", "%"),
        ("available_mb", "Memory\\Available MBytes", "MB"),
        ("pages_per_s", "Memory\\Pages/sec", "pages/s"),
        ("disk_queue", "PhysicalDisk\\Avg. Disk Queue Length", "requests"),
    ):
        cols = {
            c.split(".")[1]: data.values[:, i]
            for c, i in idx.items()
            if c.startswith("os.") and c.endswith(f".{key}")
        }
        if cols:
            charts.append(line_chart(title, x, cols, unit, shade=(ss["start_s"], ss["end_s"])))
    sd, bait = report["benchmark"].get("sd", {}), report["benchmark"].get("bait", {})
    checks = []
    if sd:
        law = sd["response_time_law"]
        checks = [
            {
                "check": "average dialog response < 2 s (seed 000)",
                "value": sd["dialog_response_s"],
                "passed": sd["dialog_response_below_2s"],
            },
            {
                "check": "X = N / (R + Z) within 1 %",
                "value": law["residual_pct"],
                "passed": law["holds_within_1pct"],
            },
            {"check": "SAPS (dialog steps per hour / 60)", "value": sd["saps"], "passed": True},
            {
                "check": "line items per hour (vs steps / 3, %)",
                "value": sd["line_items_vs_steps_over_3_pct"],
                "passed": abs(sd["line_items_vs_steps_over_3_pct"] or 0) < 1,
            },
            {
                "check": "BAIT: 60 consecutive minutes measured",
                "value": bait.get("measured_window_s"),
                "passed": bait.get("sixty_consecutive_minutes", False),
            },
        ]
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    alerts = (
        "<h2>Alerts that fired</h2>"
        + table(
            report["alerts_fired"],
            ["starts_at", "alertname", "severity", "sap_instance", "summary"],
        )
        if report.get("alerts_fired") is not None
        else ""
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>wlmon run {_esc(run["id"])}</title>
<style>{CSS}</style></head><body>
<h1>Run {_esc(run["id"])} {_esc(run.get("label") or "")}</h1>
<p class="meta">{_esc(run.get("kind", ""))} · scenario {_esc(run.get("scenario", ""))} · {
        _esc(run.get("start", ""))
    }
to {_esc(run.get("end", ""))} · steady state {ss["start_s"]:,.0f}–{
        ss["end_s"]:,.0f} s (shaded in the charts)
· report made {stamp}</p>
<h2>Benchmark checks</h2>{table(checks)}
<h2>ST03 workload by task type</h2>{table(report["st03"])}
<h2>By transaction</h2>{table(report["transactions"])}
<h2>Threshold breaches</h2>{
        table(
            report["breaches"], ["rule", "start_s", "end_s", "peak_ms", "threshold_ms", "diagnosis"]
        )
    }
{alerts}<h2>Charts</h2>{"".join(charts) or '<p class="meta">no series</p>'}
<h2>OS counters: average / minimum / maximum</h2>{table(report["os_counters"])}
<h2>Expensive SQL (elapsed DB time)</h2>{
        table(
            report["top_sql"],
            ["table", "operation", "executions", "records", "elapsed_s", "per_execution_ms", "sql"],
        )
    }
<h2>Buffer pools</h2>{table(report["bufferpools"])}
</body></html>
"""
