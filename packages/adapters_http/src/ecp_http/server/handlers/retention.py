"""Retention: policy, legal holds, erasure requests and the retention audit log."""

import attrs

from ecp_core.constraints import checked
from ecp_core.permissions import Permission
from ecp_core.retention.model import (
    CreateLegalHoldRequest,
    ErasureRequest,
    LegalHold,
    ResolvedRetentionPolicy,
    RetentionAuditEntry,
    RetentionPolicyRequest,
)
from ecp_core.retention.service import ErasureReport
from ecp_http.server.routing import Call, Operation, Reply
from ecp_http.server.services import Services
from ecp_http.wire.models import PageQuery

TAG = "retention"
NEED = Permission.RETENTION_ADMIN


@attrs.frozen(kw_only=True, field_transformer=checked)
class LegalHoldListResponse:
    """The tenant's holds, released ones included (their history is kept)."""

    holds: tuple[LegalHold, ...]
    """The tenant's legal holds."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class RetentionAuditLogResponse:
    """A page of the retention audit log, newest first."""

    entries: tuple[RetentionAuditEntry, ...]
    """The erasure steps taken."""
    next_cursor: str | None = None


def put_retention_policy(call: Call, services: Services) -> ResolvedRetentionPolicy:
    """Set the tenant's TTLs; the answer is the policy now in force."""
    return services.ecp.retention.put_policy(call.tenant, call.body)


def get_retention_policy(call: Call, services: Services) -> ResolvedRetentionPolicy:
    """The policy in force and the rule that chose it."""
    return services.ecp.retention.policy(call.tenant)


def place_legal_hold(call: Call, services: Services) -> Reply:
    """Place a legal hold."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    return Reply(body=services.ecp.retention.place_hold(call.actor, call.body), status=201)


def list_legal_holds(call: Call, services: Services) -> LegalHoldListResponse:
    """The tenant's legal holds."""
    return LegalHoldListResponse(holds=tuple(services.ecp.retention.holds(call.tenant)))


def release_legal_hold(call: Call, services: Services) -> LegalHold:
    """Release a legal hold."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    return services.ecp.retention.release_hold(call.actor, call.path["hold_id"])


def request_erasure(call: Call, services: Services) -> ErasureReport:
    """Erase a run or the whole tenant now."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    return services.ecp.retention.request_erasure(call.actor, call.body)


def retention_audit_log(call: Call, services: Services) -> RetentionAuditLogResponse:
    """A page of the retention audit log, newest first."""
    query: PageQuery = call.params
    entries = services.ecp.retention.log(call.tenant, limit=query.limit + 1, before=query.cursor)
    more = len(entries) > query.limit
    entries = entries[: query.limit]
    return RetentionAuditLogResponse(
        entries=tuple(entries), next_cursor=entries[-1].entry_id if more else None
    )


OPERATIONS = [
    Operation(
        method="PUT",
        path="/v1/retention/policy",
        handler=put_retention_policy,
        operation_id="retention_put_policy",
        tag=TAG,
        summary="Set the tenant's TTLs (null keeps forever); the answer is the resolved policy",
        permission=NEED,
        body=RetentionPolicyRequest,
        response=ResolvedRetentionPolicy,
    ),
    Operation(
        method="GET",
        path="/v1/retention/policy",
        handler=get_retention_policy,
        operation_id="retention_get_policy",
        tag=TAG,
        summary="The policy in force and the rule that chose it",
        permission=NEED,
        response=ResolvedRetentionPolicy,
    ),
    Operation(
        method="POST",
        path="/v1/retention/legal-holds",
        handler=place_legal_hold,
        operation_id="retention_place_legal_hold",
        tag=TAG,
        summary="Place a run-scoped or tenant-wide legal hold",
        permission=NEED,
        body=CreateLegalHoldRequest,
        response=LegalHold,
        status=201,
    ),
    Operation(
        method="GET",
        path="/v1/retention/legal-holds",
        handler=list_legal_holds,
        operation_id="retention_list_legal_holds",
        tag=TAG,
        summary="The tenant's legal holds",
        permission=NEED,
        response=LegalHoldListResponse,
    ),
    Operation(
        method="DELETE",
        path="/v1/retention/legal-holds/{hold_id}",
        handler=release_legal_hold,
        operation_id="retention_release_legal_hold",
        tag=TAG,
        summary="Release a legal hold (its record stays)",
        permission=NEED,
        response=LegalHold,
    ),
    Operation(
        method="POST",
        path="/v1/retention/erasure-requests",
        handler=request_erasure,
        operation_id="retention_request_erasure",
        tag=TAG,
        summary="Erase a run or the whole tenant now; 409 while a legal hold covers it",
        permission=NEED,
        body=ErasureRequest,
        response=ErasureReport,
    ),
    Operation(
        method="GET",
        path="/v1/retention/audit-log",
        handler=retention_audit_log,
        operation_id="retention_audit_log",
        tag=TAG,
        summary="The append-only log of erasure steps, newest first",
        permission=NEED,
        response=RetentionAuditLogResponse,
        query=PageQuery,
    ),
]
