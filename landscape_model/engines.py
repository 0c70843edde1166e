"""Which engine runs a model: the one place that maps an engine's name to its class.

Two engines give the same `Snapshot` (engine.py), so collectors, reports and runs take
either: "des" (des.py, every dialog step as discrete events: real transients, drained
queues, peaks) and "analytic" (engine.Simulation, the solver's operating point moved
through time by dynamics.py). The command line (`wlmon simulate`, `wlmon run`,
`wlmon exporter`), POST /runs and the run recorder all choose here; a live model that
rebuilds keeps its own class (`ModelRun.rebuild`).

Which engine is the default for what (issue 24 item 5), here and nowhere else:
- RUN_ENGINE, the discrete-event engine, for everything that produces a time series of a
  run: `wlmon run`, `wlmon simulate` (a fast run printed instead of recorded),
  `wlmon st05 top --simulate` (the trace of such a run), POST /runs and the recorder, and
  the live exporter (`wlmon exporter`, so `wlmon up` and the compose
  stack). A run's seconds then show what a queue does between operating points: the
  transient after a fault, a queue draining when it ends (the solver loses that wait,
  defect 3), and the peaks of a 1-minute window. One default for all of them, so a scenario
  gives the same figures live, recorded and printed.
- What-if and sizing (`wlmon whatif`, whatif.py) ask for an operating point, not a time
  series: they call the analytic solver directly (many configurations in seconds, the
  answer a mean), so they have no engine to default.
Every command that takes `--engine` still takes `--engine analytic`.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from landscape_model.des import DiscreteEventSimulation
from landscape_model.engine import ModelRun, Simulation

EngineName = Literal["des", "analytic"]
ENGINES: tuple[str, ...] = get_args(EngineName)
# The default of everything that produces a run's time series (above).
RUN_ENGINE: EngineName = "des"
ENGINE_HELP = (
    "des: every dialog step as discrete events (real transients, drained queues, peaks); "
    "analytic: the solver's operating point moved through time (what what-if and sizing "
    f"solve); default: {RUN_ENGINE}"
)

_CLASSES: dict[str, type[ModelRun]] = {
    "des": DiscreteEventSimulation,
    "analytic": Simulation,
}


def engine_class(engine: str) -> type[ModelRun]:
    """The class that runs `engine`; ValueError naming the known ones otherwise."""
    try:
        return _CLASSES[engine]
    except KeyError:
        raise ValueError(
            f"engine: unknown engine {engine!r} (known: {', '.join(ENGINES)})"
        ) from None


def make_simulation(
    engine: str = RUN_ENGINE, scenario: str = "sd-benchmark-2003", **options: Any
) -> ModelRun:
    """The model of a scenario on the engine asked for. `options`: those both engines take
    (`ModelRun`: faults, seed, dt, catalog, overrides, landscape, settings)."""
    return engine_class(engine)(scenario, **options)
