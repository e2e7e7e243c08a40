"""Steps that start from an approval: a reviewer's resolution and an SLA escalation.

Like every step they read no storage: :class:`ApprovalSteps` decides, :mod:`ecp_core.runs.engine.lifecycle`
applies.
"""

import attrs

from ecp_core.canonical import thaw
from ecp_core.graphs.definition import GraphDefinition
from ecp_core.ports.system import Clock, IdFactory
from ecp_core.runs.approvals.effects import NoteApprovalAction, SaveApproval
from ecp_core.runs.approvals.events import resolved
from ecp_core.runs.approvals.model import ApprovalActionRecord, ApprovalRecord
from ecp_core.runs.approvals.request import approval_step
from ecp_core.runs.run import model as m
from ecp_core.runs.run.attempts import AttemptRecord
from ecp_core.runs.run.effects import Step
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
        noted = (
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
        step = self._continue(run, graph, approval).after(*noted)
        return attrs.evolve(step, effects=(*step.effects, resolved(step.run, approval)))

    def _continue(self, run: Run, graph: GraphDefinition, approval: ApprovalRecord) -> Step:
        resolution = approval.resolution
        assert resolution is not None  # noqa: S101 - see decided
        node = graph.node(approval.node_id)
        payload = thaw(
            resolution.edited_payload
            if resolution.edited_payload is not None
            else approval.proposed_payload or {}
        )
        record = AttemptRecord(
            node_id=node.id,
            status=AttemptStatus.DENIED
            if resolution.decision is ApprovalDecision.REJECT
            else AttemptStatus.APPROVED,
            input_snapshot={
                "decision": str(resolution.decision),
                "edited_payload": resolution.edited_payload,
                "reason": resolution.reason,
            },
            output_snapshot=payload,
            execution_metadata={
                "node_kind": str(node.kind),
                "approval_id": approval.approval_id,
                "actor": unstructure(resolution.actor),
            },
        )
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
        escalated = attrs.evolve(
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
