"""Steps that start from an approval: a reviewer's resolution and an SLA escalation.

Like every step they read no storage: :class:`ApprovalSteps` decides, :mod:`ecp_core.runs.engine.lifecycle`
applies.
"""

from typing import Any

from ecp_core.canonical import thaw
from ecp_core.evolve import evolve
from ecp_core.graphs.definition import GraphDefinition, NodeDefinition
from ecp_core.ports.system import Clock, IdFactory
from ecp_core.runs.approvals.effects import NoteApprovalAction, SaveApproval
from ecp_core.runs.approvals.events import resolved
from ecp_core.runs.approvals.model import (
    ApprovalActionRecord,
    ApprovalRecord,
    ApprovalResolution,
)
from ecp_core.runs.approvals.request import approval_step
from ecp_core.runs.run import model as m
from ecp_core.runs.run.attempts import AttemptRecord
from ecp_core.runs.run.effects import Effect, Step, WriteAudit
from ecp_core.runs.run.model import ApprovedAction, Run
from ecp_core.runs.run.moves import Moves
from ecp_core.types import ApprovalDecision, ApprovalStatus, AttemptStatus, NodeKind
from ecp_core.wire import unstructure

_ACTION_NAMES = {
    ApprovalDecision.APPROVE: "approved",
    ApprovalDecision.EDIT_AND_APPROVE: "edited",
    ApprovalDecision.REJECT: "denied",
}


_GRANTED_KINDS = (NodeKind.ACTION, NodeKind.TASK, NodeKind.SUBGRAPH)
"""Gated nodes an approval grants (the next attempt runs, offers or starts what was approved)."""


def _approved_payload(approval: ApprovalRecord, resolution: ApprovalResolution) -> dict[str, Any]:
    """What ``resolution`` approves: its edited payload, or the proposed one."""
    approved: dict[str, Any] = thaw(
        resolution.edited_payload
        if resolution.edited_payload is not None
        else approval.proposed_payload or {}
    )
    return approved


def _attempt(
    node: NodeDefinition, approval: ApprovalRecord, resolution: ApprovalResolution
) -> AttemptRecord:
    """The audit record of one person's decision on ``approval``.

    ``approval_count`` is the approvals given so far, this one included when it approves.
    """
    return AttemptRecord(
        node_id=node.id,
        status=AttemptStatus.DENIED
        if resolution.decision is ApprovalDecision.REJECT
        else AttemptStatus.APPROVED,
        input_snapshot={
            "decision": str(resolution.decision),
            "edited_payload": resolution.edited_payload,
            "reason": resolution.reason,
        },
        output_snapshot=_approved_payload(approval, resolution),
        execution_metadata={
            "node_kind": str(node.kind),
            "approval_id": approval.approval_id,
            "actor": unstructure(resolution.actor),
            "approval_count": len(approval.approvals),
            "min_approvals": approval.min_approvals,
        },
    )


def _noted(approval: ApprovalRecord, resolution: ApprovalResolution) -> tuple[Effect, ...]:
    """Save ``approval`` and note ``resolution`` in its trail."""
    return (
        SaveApproval(approval),
        NoteApprovalAction(
            ApprovalActionRecord(
                approval_id=approval.approval_id,
                action=_ACTION_NAMES[resolution.decision],
                occurred_at=resolution.resolved_at,
                actor=resolution.actor,
                tenant_id=approval.tenant_id,
                metadata={} if resolution.reason is None else {"reason": resolution.reason},
            )
        ),
    )


class ApprovalSteps:
    """Decides what a resolution or an escalation does to the run it paused."""

    def __init__(self, steps: Moves, clock: Clock, ids: IdFactory) -> None:
        """Continue runs through ``steps``; stamp escalations with ``clock``, name them by ``ids``."""
        self._steps = steps
        self._clock = clock
        self._ids = ids

    def decided(self, run: Run, graph: GraphDefinition, approval: ApprovalRecord) -> Step:
        """A reviewer resolved ``approval`` (resolution set): record it and continue the run.

        Reject ends the run; approving an action node grants it (the next attempt runs it with
        the approved arguments); approving an approval node moves on, with the edited payload as
        the new state when the reviewer edited it.
        """
        resolution = approval.resolution
        assert resolution is not None  # noqa: S101 - the caller resolved it
        step = self._continue(run, graph, approval).after(*_noted(approval, resolution))
        return evolve(step, effects=(*step.effects, resolved(step.run, approval)))

    def approved_in_part(self, run: Run, graph: GraphDefinition, approval: ApprovalRecord) -> Step:
        """An approval that is not the last needed: record it; the run keeps waiting (ADR 0075).

        It is the last of ``approval.approvals``, fewer than ``approval.min_approvals``.
        """
        resolution = approval.approvals[-1]
        record = _attempt(graph.node(approval.node_id), approval, resolution)
        waiting = evolve(run, updated_at=resolution.resolved_at)
        return Step(waiting, (*_noted(approval, resolution), WriteAudit(record)))

    def _continue(self, run: Run, graph: GraphDefinition, approval: ApprovalRecord) -> Step:
        resolution = approval.resolution
        assert resolution is not None  # noqa: S101 - see decided
        node = graph.node(approval.node_id)
        payload = _approved_payload(approval, resolution)
        record = _attempt(node, approval, resolution)
        if resolution.decision is ApprovalDecision.REJECT:
            return self._steps.fail(
                run, record, m.APPROVAL_REJECTED, f"approval {approval.approval_id} was rejected"
            )
        if node.kind in _GRANTED_KINDS:
            granted = ApprovedAction(
                node_id=node.id, approval_id=approval.approval_id, arguments=thaw(payload)
            )
            return self._steps.stay(run, record, approved_action=granted)
        state = payload if resolution.edited_payload is not None else dict(run.state)
        return self._steps.move_on(run, graph, record, state)

    def escalate(self, run: Run, graph: GraphDefinition, approval: ApprovalRecord) -> Step:
        """``approval`` passed its SLA: mark it escalated and pause on a fresh one instead."""
        now = self._clock.now()
        escalated = evolve(
            approval, status=ApprovalStatus.ESCALATED, escalation_action="replaced", updated_at=now
        )
        node = graph.node(approval.node_id)
        step = approval_step(
            run,
            node,
            approval.proposed_payload or {},
            {"node_kind": str(node.kind)},
            approval_id=self._ids.new_id(),
            now=self._clock.now(),
            escalated_from=escalated,
        )
        return step.after(
            SaveApproval(escalated),
            NoteApprovalAction(
                ApprovalActionRecord(
                    approval_id=approval.approval_id,
                    action="escalated",
                    occurred_at=now,
                    tenant_id=approval.tenant_id,
                )
            ),
        )


__all__ = ["ApprovalSteps"]
