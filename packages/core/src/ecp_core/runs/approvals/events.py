"""Approval events: a run paused for an approval, and an approval resolved."""

from ecp_core.runs.approvals.model import ApprovalRecord
from ecp_core.runs.run.events import EmitEvent, event_of
from ecp_core.runs.run.model import Run
from ecp_core.webhooks.model import WebhookEventType as E


def waiting_approval(run: Run, approval: ApprovalRecord) -> tuple[EmitEvent, ...]:
    """A run paused for a new approval."""
    return (
        event_of(
            E.APPROVAL_REQUESTED, run, approval_id=approval.approval_id, node_id=approval.node_id
        ),
        event_of(E.RUN_WAITING_APPROVAL, run, approval_id=approval.approval_id),
    )


def resolved(run: Run, approval: ApprovalRecord) -> EmitEvent:
    """A reviewer resolved an approval."""
    decision = approval.resolution.decision.value if approval.resolution is not None else None
    return event_of(E.APPROVAL_RESOLVED, run, approval_id=approval.approval_id, decision=decision)


__all__ = ["resolved", "waiting_approval"]
