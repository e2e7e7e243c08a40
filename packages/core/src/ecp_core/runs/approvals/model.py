"""Approval records, their resolutions and the per-action trail."""

from datetime import datetime
from typing import Annotated, Any

import attrs

from ecp_core.canonical import json_digest
from ecp_core.constraints import AwareUtc, Range, Text, checked
from ecp_core.identity import DEFAULT_TENANT, ActorIdentity
from ecp_core.runs.run.model import RunStatusResponse
from ecp_core.types import ApprovalDecision, ApprovalStatus, HumanInteractionType, ServiceRole

Reason = Annotated[str, Text(1, 1000)]
Digest = Annotated[str, Text(pattern=r"sha256:[0-9a-f]{64}")]

ALL_DECISIONS = tuple(ApprovalDecision)


@attrs.frozen(kw_only=True, field_transformer=checked)
class ApprovalResolution:
    """How a reviewer resolved an approval."""

    decision: ApprovalDecision
    """What the approver decided."""
    actor: ActorIdentity
    """Who resolved it."""
    resolved_at: Annotated[datetime, AwareUtc()]
    """When it was resolved (RFC 3339, UTC)."""
    edited_payload: dict[str, Any] | None = None
    """The payload as the approver changed it, when the decision was to edit."""
    reason: Reason | None = None
    """Why, in the approver's words."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class ApprovalRecord:
    """A request for a human decision on one paused run."""

    run_id: str
    node_id: str
    graph_version_ref: str
    deployment_ref: str
    summary: str
    """What the approver is asked, in a line."""
    rationale: str
    """Why a person decides here."""
    approval_id: str
    created_at: Annotated[datetime, AwareUtc()]
    updated_at: Annotated[datetime, AwareUtc()]
    status: ApprovalStatus = ApprovalStatus.PENDING
    """Where the approval is: pending, resolved or escalated."""
    interaction_type: HumanInteractionType = HumanInteractionType.APPROVAL
    """What kind of human interaction is asked for."""
    requested_decision: ApprovalDecision = ApprovalDecision.APPROVE
    """The decision the run asks for."""
    allowed_actions: tuple[ApprovalDecision, ...] = ALL_DECISIONS
    """The decisions the approver may take."""
    proposed_payload: dict[str, Any] | None = None
    """What the approver reviews: the arguments of the gated action, or the run state."""
    context_excerpt: dict[str, Any] = attrs.field(factory=dict)
    """Parts of the run state shown to the approver for context."""
    urgency_metadata: dict[str, Any] = attrs.field(factory=dict)
    """How urgent the approval is, such as its deadline."""
    requested_by: ActorIdentity | None = None
    """Who started the run that asks."""
    resolution: ApprovalResolution | None = None
    """The decision once taken."""
    resolution_schema_ref: str | None = None
    """A contract an edited payload must satisfy."""
    sla_deadline: Annotated[datetime, AwareUtc()] | None = None
    """When the approval is escalated if still pending."""
    escalated_from_id: str | None = None
    """The approval this one replaced when it was escalated."""
    escalation_action: str | None = None
    """What the escalation did."""
    thread_id: str | None = None
    tenant_id: str = DEFAULT_TENANT
    workspace_id: str | None = None
    min_approvals: Annotated[int, Range(1, 10)] = 1
    """How many distinct people must approve before the run moves on; one rejection rejects."""
    forbid_self_approval: bool = False
    """Whether the person who started the run is refused as its approver."""
    approver_roles: tuple[ServiceRole, ...] | None = None
    """Roles whose holders may resolve it; null with `approver_subjects` null: anyone allowed to
    resolve approvals may."""
    approver_subjects: tuple[str, ...] | None = None
    """Subjects who may resolve it (either list admits)."""
    run_started_by: str | None = None
    """Who started the run that asks (the subject `forbid_self_approval` refuses); null when the
    run was started without one."""
    approvals: tuple[ApprovalResolution, ...] = ()
    """The approvals given so far, oldest first, one per person; the approval is resolved when
    they number `min_approvals` (or by a rejection, which is in `resolution` only)."""
    action_digest: str = ""
    """What an approver decides on, as a digest (ADR 0080): the approval id, its status, the
    proposed payload, the allowed actions, `min_approvals` and the approvals so far. Send it back
    in a resolution to have it refused (409 `approval_changed`) should any of these have changed
    since; computed from the record, so a value given here is replaced."""

    def __attrs_post_init__(self) -> None:
        """Compute ``action_digest`` from the fields it covers (whatever value was given)."""
        object.__setattr__(self, "action_digest", action_digest(self))

    def admits(self, actor: ActorIdentity) -> bool:
        """Whether ``actor`` may resolve it: admitted by its lists, and not a refused starter.

        With ``forbid_self_approval``, the subject that started the run is refused; a run started
        without a known subject has nobody to refuse.
        """
        if self.forbid_self_approval and self.run_started_by == actor.subject:
            return False
        return self.names(actor)

    def names(self, actor: ActorIdentity) -> bool:
        """Whether the approver lists admit ``actor`` (both lists left out admit everyone)."""
        if self.approver_roles is None and self.approver_subjects is None:
            return True
        return actor.subject in (self.approver_subjects or ()) or any(
            role in (self.approver_roles or ()) for role in actor.roles
        )

    def approved_by(self, subject: str) -> bool:
        """Whether ``subject`` gave one of the approvals so far."""
        return any(given.actor.subject == subject for given in self.approvals)


def action_digest(approval: ApprovalRecord) -> str:
    """The ``sha256:`` digest of what an approver decides on (ADR 0080).

    The approval id, its status, the proposed payload, the allowed actions, how many approvals
    it needs and, for each approval so far, who gave it, which decision and which edited
    payload. An escalation or a withdrawal changes the status, another approver's vote the
    approvals; the SLA, the summary and the context do not enter (they do not change what is
    decided).
    """
    return json_digest(
        {
            "approval_id": approval.approval_id,
            "status": approval.status.value,
            "proposed_payload": approval.proposed_payload,
            "allowed_actions": [action.value for action in approval.allowed_actions],
            "min_approvals": approval.min_approvals,
            "approvals": [
                {
                    "subject": given.actor.subject,
                    "decision": given.decision.value,
                    "edited_payload": given.edited_payload,
                }
                for given in approval.approvals
            ],
        }
    )


@attrs.frozen(kw_only=True, field_transformer=checked)
class ApprovalResolutionRequest:
    """Body of ``POST /deployments/{ref}/approvals/{approval_id}/resolve``."""

    decision: ApprovalDecision
    """The decision, one of the approval's `allowed_actions`."""
    edited_payload: dict[str, Any] | None = None
    """With `edit_and_approve`: the payload the approver changed, checked against the approval's
    contract."""
    reason: Reason | None = None
    """Why, in the approver's words; written into the audit record."""
    action_digest: Digest | None = None
    """The approval's `action_digest` as the approver saw it: when given and the approval has
    changed since (escalated, withdrawn, approved by another), nothing is resolved and the answer
    is 409 `approval_changed`."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class ApprovalActionRecord:
    """One thing that happened to an approval (requested, approved, denied, edited, escalated)."""

    approval_id: str
    action: str
    """What happened: requested, approved, denied, edited, escalated ..."""
    occurred_at: Annotated[datetime, AwareUtc()]
    actor: ActorIdentity | None = None
    """Who did it; null when the service did."""
    metadata: dict[str, Any] = attrs.field(factory=dict)
    """Details of the action, such as the decision's reason."""
    tenant_id: str = DEFAULT_TENANT


@attrs.frozen(kw_only=True, field_transformer=checked)
class ApprovalResolutionResponse:
    """The resolved approval and the run after it continued."""

    approval: ApprovalRecord
    """The approval as resolved."""
    run: RunStatusResponse
    """The run after it continued."""
