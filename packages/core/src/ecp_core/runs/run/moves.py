"""What a concept's steps need of the engine: the moves that end or continue a run.

Approvals, tasks and child runs decide what their events do to a run in terms of these moves;
the engine's :class:`~ecp_core.runs.engine.step.Stepper` makes them, and its
:class:`~ecp_core.runs.engine.lifecycle.RunLifecycle` applies the resulting step. Typing the
concepts against these protocols keeps them below the engine, which composes them.
"""

from typing import Any, Protocol

from ecp_core.graphs.definition import GraphDefinition
from ecp_core.ports.runs import RunsUnit
from ecp_core.runs.run.attempts import AttemptRecord
from ecp_core.runs.run.effects import Step
from ecp_core.runs.run.model import Run


class Moves(Protocol):
    """The moves that end a run, keep it at its node, or take it to the next node."""

    def fail(self, run: Run, attempt: AttemptRecord, reason: str, message: str) -> Step:
        """Write ``attempt`` and end the run FAILED with ``reason``."""
        ...

    def stay(self, run: Run, attempt: AttemptRecord, **changes: Any) -> Step:  # noqa: ANN401
        """Write ``attempt`` and keep the run RUNNING at the same node."""
        ...

    def move_on(
        self, run: Run, graph: GraphDefinition, attempt: AttemptRecord, state: dict[str, Any]
    ) -> Step:
        """Follow the exits with the new ``state``, write ``attempt``, then advance or finish."""
        ...


class StepApplier(Protocol):
    """Applies a step's effects inside a unit of work."""

    def apply(self, uow: RunsUnit, step: Step) -> Run:
        """Apply ``step``'s effects; the run with the attempt count its chain now has."""
        ...


__all__ = ["Moves", "StepApplier"]
