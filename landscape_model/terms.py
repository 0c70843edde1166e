"""What the model computes, in ST03's words: the task types and the time components of a step.

The model is the bottom layer of wlmon, so its terms are the ones every layer above reads (the
collectors, the report, the CLI tables, the alert and dashboard builders, through
`exporters.vocabulary` for what the exporters add: indicators, causes, OS counters). A component
is added here once.
"""

from __future__ import annotations

from dataclasses import dataclass

TASK_TYPES: tuple[str, ...] = ("dialog", "update")


@dataclass(frozen=True)
class Component:
    """One time component of a step, as ST03/STAD splits it."""

    key: str
    label: str  # how a table heading or a legend names it
    help: str  # the ST03 field it mirrors, for HELP texts


COMPONENTS_INFO: tuple[Component, ...] = (
    Component(
        "response",
        "Response",
        "Response time (ST03 'Response time'): from dispatcher entry to answer sent.",
    ),
    Component(
        "dispatcher_wait",
        "Dispatcher wait",
        "Wait in the dispatcher queue for a free work process (ST03 'Wait time').",
    ),
    Component(
        "roll_in",
        "Roll-in",
        "Roll-in time: user context copied into the work process (ST03 'Roll in time').",
    ),
    Component(
        "roll_out",
        "Roll-out",
        "Roll-out time: user context saved after the step (ST03 'Roll out time').",
    ),
    Component("load_gen", "Load+gen", "Program load and generation time (ST03 'Load+gen time')."),
    Component(
        "processing",
        "Processing",
        "Processing time: ABAP work including CPU wait (ST03 'Processing time').",
    ),
    Component("cpu", "CPU", "CPU time of the work process (ST03 'CPU time')."),
    Component(
        "db_request", "DB request", "Database request time (ST03 'DB time' / 'DB req. time')."
    ),
    Component(
        "enqueue",
        "Enqueue",
        "Enqueue time: lock requests to the enqueue server (ST03 'Enqueue time').",
    ),
    Component(
        "gui", "GUI", "GUI time: front-end round trips counted in the response (ST03 'GUI time')."
    ),
)
COMPONENTS: tuple[str, ...] = tuple(c.key for c in COMPONENTS_INFO)
COMPONENT_BY_KEY: dict[str, Component] = {c.key: c for c in COMPONENTS_INFO}
# Response = these parts; roll-out and cpu are outside it (cpu lies within processing,
# roll-out happens after the answer has left).
RESPONSE_PARTS: tuple[str, ...] = (
    "dispatcher_wait",
    "roll_in",
    "load_gen",
    "processing",
    "db_request",
    "enqueue",
    "gui",
)
# The order in which reports and tables print the components of a step.
REPORT_ORDER: tuple[str, ...] = (
    "response",
    "dispatcher_wait",
    "cpu",
    "db_request",
    "enqueue",
    "roll_in",
    "roll_out",
    "load_gen",
    "processing",
    "gui",
)
