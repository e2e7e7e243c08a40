"""What one move of a run produces besides the run: its effects, in the order they apply.

:mod:`ecp_core.runs.step` and :mod:`ecp_core.runs.resolution` return a :class:`Step`;
:mod:`ecp_core.runs.lifecycle` applies its effects inside the move's unit of work.
"""

import attrs

from ecp_core.approvals.model import ApprovalActionRecord, ApprovalRecord
from ecp_core.runs.audit_writer import AttemptRecord
from ecp_core.runs.events import ChildEnded, EmitEvent
from ecp_core.runs.model import Run
from ecp_core.tasks.model import Task


@attrs.frozen
class WriteAudit:
    """Seal ``attempt`` into the run's audit chain."""

    attempt: AttemptRecord


@attrs.frozen
class OpenApproval:
    """Store a new pending approval."""

    approval: ApprovalRecord


@attrs.frozen
class SaveApproval:
    """Replace a stored approval (resolved or escalated)."""

    approval: ApprovalRecord


@attrs.frozen
class NoteApprovalAction:
    """Append to an approval's action trail."""

    action: ApprovalActionRecord


@attrs.frozen
class OfferTask:
    """Offer a task node's work to the workers of its topic."""

    task: Task


@attrs.frozen
class StartChild:
    """Store a subgraph node's new child run (PENDING, so dispatch takes it up)."""

    child: Run


Effect = (
    WriteAudit
    | OpenApproval
    | SaveApproval
    | NoteApprovalAction
    | OfferTask
    | EmitEvent
    | StartChild
    | ChildEnded
)


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
        return attrs.evolve(self, effects=(*effects, *self.effects))


__all__ = [
    "ChildEnded",
    "Effect",
    "EmitEvent",
    "NoteApprovalAction",
    "OfferTask",
    "OpenApproval",
    "SaveApproval",
    "StartChild",
    "Step",
    "WriteAudit",
]
