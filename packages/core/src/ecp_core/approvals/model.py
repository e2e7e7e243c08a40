"""Approval records, their resolutions and the per-action trail."""

from datetime import datetime
from typing import Annotated, Any

import attrs

from ecp_core.constraints import AwareUtc, Text, checked
from ecp_core.identity import DEFAULT_TENANT, ActorIdentity
from ecp_core.types import ApprovalDecision, ApprovalStatus, HumanInteractionType

Reason = Annotated[str, Text(1, 1000)]

ALL_DECISIONS = tuple(ApprovalDecision)


@attrs.frozen(kw_only=True, field_transformer=checked)
class ApprovalResolution:
    """How a reviewer resolved an approval."""

    decision: ApprovalDecision
    actor: ActorIdentity
    resolved_at: Annotated[datetime, AwareUtc()]
    edited_payload: dict[str, Any] | None = None
    reason: Reason | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class ApprovalRecord:
    """A request for a human decision on one paused run."""

    run_id: str
    node_id: str
    graph_version_ref: str
    deployment_ref: str
    summary: str
    rationale: str
    approval_id: str
    created_at: Annotated[datetime, AwareUtc()]
    updated_at: Annotated[datetime, AwareUtc()]
    status: ApprovalStatus = ApprovalStatus.PENDING
    interaction_type: HumanInteractionType = HumanInteractionType.APPROVAL
    requested_decision: ApprovalDecision = ApprovalDecision.APPROVE
    allowed_actions: tuple[ApprovalDecision, ...] = ALL_DECISIONS
    proposed_payload: dict[str, Any] | None = None
    context_excerpt: dict[str, Any] = attrs.field(factory=dict)
    urgency_metadata: dict[str, Any] = attrs.field(factory=dict)
    requested_by: ActorIdentity | None = None
    resolution: ApprovalResolution | None = None
    resolution_schema_ref: str | None = None
    sla_deadline: Annotated[datetime, AwareUtc()] | None = None
    escalated_from_id: str | None = None
    escalation_action: str | None = None
    thread_id: str | None = None
    tenant_id: str = DEFAULT_TENANT
    workspace_id: str | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class ApprovalResolutionRequest:
    """Body of ``POST /deployments/{ref}/approvals/{approval_id}/resolve``."""

    decision: ApprovalDecision
    edited_payload: dict[str, Any] | None = None
    reason: Reason | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class ApprovalActionRecord:
    """One thing that happened to an approval (requested, approved, denied, edited, escalated)."""

    approval_id: str
    action: str
    occurred_at: Annotated[datetime, AwareUtc()]
    actor: ActorIdentity | None = None
    metadata: dict[str, Any] = attrs.field(factory=dict)
    tenant_id: str = DEFAULT_TENANT
