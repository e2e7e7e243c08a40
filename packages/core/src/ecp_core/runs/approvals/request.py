"""Requesting an approval: the step that opens a pending approval and pauses the run on it.

Pure, like every step: :class:`~ecp_core.runs.engine.step.Stepper` hands in the new approval's id and the
time. Approval nodes, gated actions, tasks and subgraph calls, and escalations all pass here.
"""

from datetime import datetime, timedelta
from typing import Any

import attrs

from ecp_core.graphs.definition import NodeDefinition
from ecp_core.runs.approvals.effects import NoteApprovalAction, OpenApproval
from ecp_core.runs.approvals.events import waiting_approval
from ecp_core.runs.approvals.model import ALL_DECISIONS, ApprovalActionRecord, ApprovalRecord
from ecp_core.runs.run.attempts import AttemptRecord
from ecp_core.runs.run.effects import Step, WriteAudit
from ecp_core.runs.run.model import ApprovalPausedState, Run
from ecp_core.runs.run.state_machine import transition
from ecp_core.types import AttemptStatus, RunStatus


def _summary(node: NodeDefinition) -> str:
    if node.subgraph is not None:
        return f"Approve a child run of {node.subgraph.deployment_ref}"
    return f"Approve action {node.action.name if node.action else node.id}"


def approval_step(
    run: Run,
    node: NodeDefinition,
    payload: dict[str, Any],
    metadata: dict[str, Any],
    *,
    approval_id: str,
    now: datetime,
    escalated_from: ApprovalRecord | None = None,
) -> Step:
    """Open approval ``approval_id`` for ``node`` with ``payload`` and pause the run on it.

    Escalating (``escalated_from``) keeps the run waiting at the node on the new approval,
    which carries the approvals given so far. The node's approval rules and the run's starter
    are copied onto the approval (ADR 0075), so the inbox can filter by them.
    """
    approval = ApprovalRecord(
        approval_id=approval_id,
        run_id=run.run_id,
        node_id=node.id,
        graph_version_ref=run.graph_version_ref,
        deployment_ref=run.deployment_ref,
        summary=node.summary or _summary(node),
        rationale=node.rationale or "The action requires approval before it runs",
        proposed_payload=payload,
        allowed_actions=node.allowed_actions or ALL_DECISIONS,
        resolution_schema_ref=node.resolution_schema_ref,
        sla_deadline=None
        if node.sla_seconds is None
        else now + timedelta(seconds=node.sla_seconds),
        escalated_from_id=None if escalated_from is None else escalated_from.approval_id,
        min_approvals=node.min_approvals or 1,
        forbid_self_approval=bool(node.forbid_self_approval),
        approver_roles=node.approver_roles,
        approver_subjects=node.approver_subjects,
        run_started_by=run.started_by,
        approvals=() if escalated_from is None else escalated_from.approvals,
        thread_id=run.thread_id,
        tenant_id=run.tenant_id,
        created_at=now,
        updated_at=now,
    )
    opened = (
        OpenApproval(approval),
        NoteApprovalAction(
            ApprovalActionRecord(
                approval_id=approval.approval_id,
                action="requested",
                occurred_at=now,
                tenant_id=run.tenant_id,
                metadata={}
                if escalated_from is None
                else {"escalated_from_id": escalated_from.approval_id},
            )
        ),
    )
    paused = ApprovalPausedState(
        node_id=node.id, approval_id=approval.approval_id, input_payload=payload
    )
    if escalated_from is not None:
        record = AttemptRecord(
            node_id=node.id,
            status=AttemptStatus.ESCALATED,
            input_snapshot={"escalated_from_id": escalated_from.approval_id},
            output_snapshot={"approval_id": approval.approval_id},
            execution_metadata=metadata,
        )
        still = attrs.evolve(
            run, paused=paused, pending_approval_ids=(approval.approval_id,), updated_at=now
        )
        return Step(still, (*opened, WriteAudit(record)))
    record = AttemptRecord(
        node_id=node.id,
        status=AttemptStatus.WAITING_APPROVAL,
        input_snapshot=payload,
        output_snapshot={"approval_id": approval.approval_id},
        execution_metadata=metadata,
    )
    waiting = transition(
        run,
        RunStatus.WAITING_APPROVAL,
        now,
        next_node_id=node.id,
        paused=paused,
        pending_approval_ids=(approval.approval_id,),
    )
    return Step(waiting, (*opened, WriteAudit(record), *waiting_approval(waiting, approval)))


__all__ = ["approval_step"]
