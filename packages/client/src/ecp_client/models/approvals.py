"""The API's approvals models, generated from clients/openapi.json: do not edit by hand.

``make clients`` (scripts/generate_python_client.py) writes this package; a test fails when it
is stale. Enumerations are plain ``str`` and unknown keys are ignored, so that a newer server's
answer still reads; a discriminated union (a graph's nodes) stays a ``dict``.
"""

from datetime import datetime
from typing import Any

import attrs

from ecp_client.models.runs import RunStatusResponse

__all__ = [
    "ActorIdentity",
    "ApprovalPageResponse",
    "ApprovalRecord",
    "ApprovalResolution",
    "ApprovalResolutionResponse",
]


@attrs.frozen(kw_only=True)
class ActorIdentity:
    """An authenticated subject acting for one tenant with some roles."""

    auth_method: str
    """How the actor authenticated."""
    roles: list[str] = attrs.Factory(list)
    """The roles the actor held when acting."""
    subject: str
    """Who acted: the token's or API key's subject."""
    tenant_id: str = "default"
    """The tenant it belongs to; every read and write is scoped to the caller's."""
    workspace_id: str | None = None
    """The workspace within the tenant, when there is one."""


@attrs.frozen(kw_only=True)
class ApprovalResolution:
    """How a reviewer resolved an approval."""

    actor: ActorIdentity
    """Who resolved it."""
    decision: str
    """What the approver decided."""
    edited_payload: dict[str, Any] | None = None
    """The payload as the approver changed it, when the decision was to edit."""
    reason: str | None = None
    """Why, in the approver's words."""
    resolved_at: datetime
    """When it was resolved (RFC 3339, UTC)."""


@attrs.frozen(kw_only=True)
class ApprovalRecord:
    """A request for a human decision on one paused run."""

    action_digest: str = ""
    """What an approver decides on, as a digest (ADR 0080): the approval id, its status, the proposed payload, the allowed actions, `min_approvals` and the approvals so far. Send it back in a resolution to have it refused (409 `approval_changed`) should any of these have changed since; computed from the record, so a value given here is replaced."""
    allowed_actions: list[str] = attrs.Factory(lambda: ["approve", "reject", "edit_and_approve"])
    """The decisions the approver may take."""
    approval_id: str
    """The approval's id."""
    approvals: list[ApprovalResolution] = attrs.Factory(list)
    """The approvals given so far, oldest first, one per person; the approval is resolved when they number `min_approvals` (or by a rejection, which is in `resolution` only)."""
    approver_roles: list[str] | None = None
    """Roles whose holders may resolve it; null with `approver_subjects` null: anyone allowed to resolve approvals may."""
    approver_subjects: list[str] | None = None
    """Subjects who may resolve it (either list admits)."""
    context_excerpt: dict[str, Any] = attrs.Factory(dict)
    """Parts of the run state shown to the approver for context."""
    created_at: datetime
    """When it was created (RFC 3339, UTC)."""
    deployment_ref: str
    """The deployment's name within the tenant."""
    escalated_from_id: str | None = None
    """The approval this one replaced when it was escalated."""
    escalation_action: str | None = None
    """What the escalation did."""
    forbid_self_approval: bool = False
    """Whether the person who started the run is refused as its approver."""
    graph_version_ref: str
    """The graph version, as `<graph_id>@<version>`."""
    interaction_type: str = "approval"
    """What kind of human interaction is asked for."""
    min_approvals: int = 1
    """How many distinct people must approve before the run moves on; one rejection rejects."""
    node_id: str
    """The id of a node of the run's graph."""
    proposed_payload: dict[str, Any] | None = None
    """What the approver reviews: the arguments of the gated action, or the run state."""
    rationale: str
    """Why a person decides here."""
    requested_by: ActorIdentity | None = None
    """Who started the run that asks."""
    requested_decision: str = "approve"
    """The decision the run asks for."""
    resolution: ApprovalResolution | None = None
    """The decision once taken."""
    resolution_schema_ref: str | None = None
    """A contract an edited payload must satisfy."""
    run_id: str
    """The run's id."""
    run_started_by: str | None = None
    """Who started the run that asks (the subject `forbid_self_approval` refuses); null when the run was started without one."""
    sla_deadline: datetime | None = None
    """When the approval is escalated if still pending."""
    status: str = "pending"
    """Where the approval is: pending, resolved or escalated."""
    summary: str
    """What the approver is asked, in a line."""
    tenant_id: str = "default"
    """The tenant it belongs to; every read and write is scoped to the caller's."""
    thread_id: str | None = None
    """The thread the run belongs to; runs started with the same thread share it."""
    updated_at: datetime
    """When it last changed (RFC 3339, UTC)."""
    urgency_metadata: dict[str, Any] = attrs.Factory(dict)
    """How urgent the approval is, such as its deadline."""
    workspace_id: str | None = None
    """The workspace within the tenant, when there is one."""


@attrs.frozen(kw_only=True)
class ApprovalPageResponse:
    """A page of approvals in approval id order (oldest first); ``next_cursor`` when more remain."""

    approvals: list[ApprovalRecord]
    """One page of approvals."""
    next_cursor: str | None = None
    """The cursor of the next page (also in the `Link` header); null on the last."""


@attrs.frozen(kw_only=True)
class ApprovalResolutionResponse:
    """The resolved approval and the run after it continued."""

    approval: ApprovalRecord
    """The approval as resolved."""
    run: RunStatusResponse
    """The run after it continued."""
