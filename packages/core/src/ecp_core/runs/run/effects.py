"""What one move of a run produces besides the run: its effects, in the order they apply.

:mod:`ecp_core.runs.engine.step` and the concepts' steps (approvals, tasks, children) return a
:class:`Step`; :mod:`ecp_core.runs.engine.lifecycle` applies its effects inside the move's unit of
work. Each concept declares its own effects (``runs.approvals.effects``, ``runs.tasks.effects``).
"""

import attrs

from ecp_core.evolve import evolve
from ecp_core.runs.run.actions import AttemptWrite
from ecp_core.runs.run.attempts import AttemptRecord
from ecp_core.runs.run.model import Run


class Effect:
    """Something a move of a run asks to be done in its unit of work (the engine applies it).

    The lifecycle matches on the concrete kinds; each concept declares its own.
    """

    __slots__ = ()


@attrs.frozen
class WriteAudit(Effect):
    """Seal ``attempt`` into the run's audit chain."""

    attempt: AttemptRecord


@attrs.frozen
class InAttempt(Effect):
    """Call an action's ``write`` with the move's unit of work (ADR 0098)."""

    write: AttemptWrite


@attrs.frozen
class StartChild(Effect):
    """Store a subgraph node's new child run (PENDING, so dispatch takes it up)."""

    child: Run


@attrs.frozen
class Step:
    """The run after one move, and the effects of the move in the order they apply."""

    run: Run
    effects: tuple[Effect, ...] = ()

    @property
    def attempts(self) -> tuple[AttemptRecord, ...]:
        """The audit records the move writes (one per node attempt)."""
        return tuple(e.attempt for e in self.effects if isinstance(e, WriteAudit))

    def after(self, *effects: Effect) -> "Step":
        """This step with ``effects`` applied before its own."""
        return evolve(self, effects=(*effects, *self.effects))


__all__ = [
    "Effect",
    "InAttempt",
    "StartChild",
    "Step",
    "WriteAudit",
]
