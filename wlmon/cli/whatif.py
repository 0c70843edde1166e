"""`wlmon whatif`: sweep users or any parameter through the analytic solver, side by side
for several configurations; the most users under the 2 s bound; a table, JSON or a chart."""

from __future__ import annotations

import json
import math
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from landscape_model.catalog import ConfigError
from landscape_model.terms import COMPONENT_BY_KEY
from landscape_model.whatif import PARTS, Answer, Configuration, WhatIf, parse_sweep, to_json
from wlmon.cli.common import console, err, fail, warn_unconverged
from wlmon.cli.simulate import DATA_DIR_HELP, LANDSCAPE_HELP, SET_HELP, open_catalog

app = typer.Typer()

SWEEP_HELP = (
    "what to vary: path=start:stop:step or path=a,b,c, e.g. users=200:2000:200 or "
    "landscape.database.disks.count=28,56,112 (default: users from 20 % to 160 % of the "
    "scenario's, 8 points)"
)
CONFIG_HELP = (
    "a configuration to compare, 'label: path=value; path=value' (repeatable), e.g. "
    "'ssd: landscape.database.disks.kind=ssd'"
)


@app.command()
def whatif(
    scenario: str = typer.Option("sd-benchmark-2003", help="scenario name"),
    sweep: str = typer.Option(None, "--sweep", help=SWEEP_HELP),
    config: list[str] = typer.Option([], "--config", help=CONFIG_HELP),
    max_users: bool = typer.Option(
        True, "--max-users/--no-max-users", help="find the most users under --limit"
    ),
    limit: float = typer.Option(2.0, help="average dialog response bound (s), SD benchmark: 2"),
    fault: list[str] = typer.Option([], "--fault", help="fault to apply (repeatable)"),
    landscape: Path = typer.Option(None, "--landscape", help=LANDSCAPE_HELP),
    data_dir: Path = typer.Option(None, "--data-dir", help=DATA_DIR_HELP),
    setting: list[str] = typer.Option([], "--set", help=SET_HELP),
    chart: Path = typer.Option(None, "--chart", help="write a chart (.png or .svg) here"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON document"),
) -> None:
    """Ask the analytic model what-if questions: throughput, response and its parts,
    utilisations, and the most users with an average dialog response below 2 s."""
    if not (math.isfinite(limit) and limit > 0):
        fail(f"--limit {limit:g}: a response bound in seconds, finite and above 0 (e.g. 2)")
    if chart is not None:
        # Before any solve: a chart that cannot be written loses the minute they took.
        if chart.suffix.lower() not in (".png", ".svg"):
            fail(f"--chart {chart}: use a .png or .svg file name")
        if not chart.parent.is_dir():
            fail(f"--chart {chart}: no directory {chart.parent}")
    try:
        model = WhatIf(
            scenario,
            catalog=open_catalog(data_dir),
            landscape=landscape,
            settings=setting,
            faults=fault,
        )
        configs = [Configuration.parse(c) for c in config] or [Configuration(scenario)]
        if sweep:
            parameter, values = parse_sweep(sweep)
        else:
            users = model.scenario(configs[0]).users
            parameter = "users"
            values = sorted(
                {max(1, round(users * f)) for f in (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6)}
            )
        answers = []
        for c in configs:
            # Labels are the user's text, printed escaped (rich reads "[/x]" as markup).
            with err.status(f"solving {escape(c.label)} ..."):
                answer = Answer(c.label, c.settings, points=model.sweep(c, parameter, values))
                if max_users:
                    # A users sweep already brackets the answer: its points are reused.
                    known = answer.points if parameter == "users" else ()
                    answer.max_users = model.max_users(c, limit, known=known)
            answer.unconverged = model.unconverged.get(c, [])
            answers.append(answer)
        if chart is not None:
            draw(chart, parameter, limit, answers, f"{scenario}: what-if over {parameter}")
    except (ConfigError, ValueError) as exc:
        fail(str(exc))
    except OSError as exc:  # the chart's file (the solves went well)
        fail(f"--chart {chart}: cannot write it: {exc.strerror or exc}")
    for a in answers:
        for u in a.unconverged:
            p = u.point
            # The search solves users at the configuration's own value of the parameter:
            # its point's value is its users, not one of the sweep's.
            if u.search:
                where = f"users={p.users} (most-users search)"
            elif parameter != "users":
                where = f"users={p.users}, {parameter}={p.value}"
            else:
                where = f"users={p.users}"
            label = f"{scenario}, " + (f"{a.label}, " if a.label != scenario else "")
            warn_unconverged(f"{label}{where}", p.iterations, p.residual)
    if as_json:
        print(json.dumps(to_json(parameter, limit, answers), indent=2))
        return
    _print(parameter, limit, answers, searched=max_users)
    if chart is not None:
        console.print(f"chart written to {chart}")


# Short heads so that the parts table fits an 80-column terminal.
PART_HEADS = {
    "dispatcher_wait": "wait",
    "roll_in": "roll-in",
    "load_gen": "load",
    "processing": "proc.",
    "db_request": "DB",
    "enqueue": "enq.",
    "gui": "GUI",
}


def _print(parameter: str, limit: float, answers: list[Answer], *, searched: bool) -> None:
    for a in answers:
        title = escape(a.label + (f" ({'; '.join(a.settings)})" if a.settings else ""))
        table = Table(title=f"What-if over {escape(parameter)}: {title}")
        for h in (escape(parameter), "SAPS", "response", "busiest host CPU", "DB CPU", "disks"):
            table.add_column(h, justify="right")
        parts = Table(title=f"Response parts (ms per dialog step): {title}")
        for h in (
            escape(parameter),
            *(PART_HEADS.get(k, COMPONENT_BY_KEY[k].label) for k in PARTS),
        ):
            parts.add_column(h, justify="right")
        for p in a.points:
            u = p.utilisation
            value = f"{p.value:,}" if isinstance(p.value, int) else escape(str(p.value))
            table.add_row(
                value,
                f"{p.saps:,.0f}",
                f"{p.response_s * 1000:,.0f} ms",
                *(f"{100 * u[k]:.0f} %" for k in ("host_cpu", "db_cpu", "disks")),
            )
            parts.add_row(value, *(f"{p.parts_s[k] * 1000:,.0f}" for k in PARTS))
        console.print(table)
        console.print(parts)
        _print_instances(a)
    # "none" only where the search ran and found no user count under the limit.
    if searched:
        table = Table(title=f"Most users with an average dialog response below {limit:g} s")
        for h in ("configuration", "users", "SAPS", "response", "bottleneck"):
            table.add_column(h, justify="right")
        for a in answers:
            p = a.max_users
            if p is None:
                # A search point whose solve did not converge stops the search: its response
                # tells neither side of the bound (warned about above).
                stopped = any(u.search for u in a.unconverged)
                table.add_row(escape(a.label), "not converged" if stopped else "none", "", "", "")
                continue
            neck = max(p.utilisation, key=p.utilisation.__getitem__)
            table.add_row(
                escape(a.label),
                f"{p.users:,}",
                f"{p.saps:,.0f}",
                f"{p.response_s * 1000:,.0f} ms",
                f"{neck} {100 * p.utilisation[neck]:.0f} %",
            )
        console.print(table)


def draw(
    path: Path, parameter: str, limit_s: float, answers: list[Answer], title: str = ""
) -> None:
    """Response time (with its parts for the first configuration) and throughput against
    the swept parameter, one line per configuration; PNG or SVG by the file's suffix."""
    # Loaded only when a chart is asked for: it takes a second to import.
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if path.suffix.lower() not in (".png", ".svg"):
        raise ConfigError(f"--chart {path}: use a .png or .svg file name")
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 7.5), sharex=True)
    for k, a in enumerate(answers):
        xs = [float(p.value) for p in a.points]
        colour = f"C{k}"
        if k == 0 and len(answers) == 1:
            stacks = [[p.parts_s[part] for p in a.points] for part in PARTS]
            labels = [COMPONENT_BY_KEY[part].label for part in PARTS]
            top.stackplot(xs, stacks, labels=labels, alpha=0.5)
        top.plot(xs, [p.response_s for p in a.points], "o-", color=colour, label=a.label)
        bottom.plot(xs, [p.saps for p in a.points], "o-", color=colour, label=a.label)
        if a.max_users and parameter == "users":
            top.axvline(a.max_users.users, color=colour, linestyle=":", linewidth=1)
            top.annotate(
                f"{a.max_users.users:,} users",
                (a.max_users.users, limit_s),
                textcoords="offset points",
                xytext=(4, 6 + 12 * k),
                color=colour,
                fontsize=8,
            )
    top.axhline(limit_s, color="red", linestyle="--", linewidth=1, label=f"{limit_s:g} s bound")
    top.set_ylabel("average dialog response (s)")
    highest = max((p.response_s for a in answers for p in a.points), default=limit_s)
    top.set_ylim(0, min(max(highest, limit_s) * 1.1, 3.0 * limit_s))
    top.legend(fontsize=8, loc="upper left")
    top.grid(alpha=0.3)
    bottom.set_ylabel("throughput (SAPS = dialog steps/h / 60)")
    bottom.set_xlabel(parameter)
    bottom.grid(alpha=0.3)
    if len(answers) > 1:
        bottom.legend(fontsize=8)
    fig.suptitle(title or "What-if: response and throughput")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _print_instances(a: Answer) -> None:
    """Per instance at the most-users point (else the last point), where instances differ
    by more than 1 % in response or throughput per user (e.g. a two-tier central instance
    with fewer work processes)."""
    p = a.max_users or (a.points[-1] if a.points else None)
    if p is None or len(p.instances) < 2:
        return
    resp = [i.response_s for i in p.instances]
    per_user = [i.dialog_steps_per_s / i.users for i in p.instances if i.users]
    if max(resp) <= 1.01 * min(resp) and (not per_user or max(per_user) <= 1.01 * min(per_user)):
        return
    hosts = len({i.host for i in p.instances}) > 1  # one host: it is in the names
    table = Table(title=f"Per instance at {p.users:,} users: {escape(a.label)}")
    table.add_column("instance", no_wrap=True)
    if hosts:
        table.add_column("host", no_wrap=True)
    for h in ("users", "steps/s", "response", "wait", "DB", "busy WPs"):
        table.add_column(h, justify="right")
    for i in p.instances:
        table.add_row(
            escape(i.instance),  # the landscape file's names (--landscape: the user's)
            *([escape(i.host)] if hosts else []),
            f"{i.users:,}",
            f"{i.dialog_steps_per_s:,.1f}",
            f"{i.response_s * 1000:,.0f} ms",
            f"{i.dispatcher_wait_s * 1000:,.0f} ms",
            f"{i.db_request_s * 1000:,.0f} ms",
            f"{i.busy_dialog_work_processes:.1f}",
        )
    console.print(table)
