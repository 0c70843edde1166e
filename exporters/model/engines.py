"""Which engine runs a model: the one place that maps an engine's name to its class.

Two engines give the same `Snapshot` (engine.py), so collectors, reports and runs take
either: "des" (des.py, every dialog step as discrete events: real transients, drained
queues, peaks) and "analytic" (engine.Simulation, the solver's operating point moved
through time by dynamics.py). The command line (`wlmon simulate`, `wlmon run`,
`wlmon exporter`), POST /runs and the run recorder all choose here; a live model that
rebuilds keeps its own class (`ModelRun.rebuild`).
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from exporters.model.des import DiscreteEventSimulation
from exporters.model.engine import ModelRun, Simulation

EngineName = Literal["des", "analytic"]
ENGINES: tuple[str, ...] = get_args(EngineName)
# What-if, sizing, `wlmon simulate`, the live exporter and POST /runs default to the solver;
# `wlmon run` defaults to the discrete-event engine (RUN_ENGINE), issue 24 item 5.
DEFAULT_ENGINE: EngineName = "analytic"
RUN_ENGINE: EngineName = "des"
ENGINE_HELP = "des: every dialog step as discrete events (real queues); analytic: the solver"

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
    engine: str = DEFAULT_ENGINE, scenario: str = "sd-benchmark-2003", **options: Any
) -> ModelRun:
    """The model of a scenario on the engine asked for. `options`: those both engines take
    (`ModelRun`: faults, seed, dt, catalog, overrides, landscape, settings)."""
    return engine_class(engine)(scenario, **options)
