"""Retention: policy, legal holds, erasure requests and the retention audit log."""

from typing import TYPE_CHECKING

import attrs

from ecp_core.constraints import checked
from ecp_core.pages import MAX_PAGE
from ecp_core.permissions import Permission
from ecp_core.retention.model import (
    CreateLegalHoldRequest,
    ErasureRequest,
    LegalHold,
    ResolvedPolicy,
    RetentionAuditEntry,
    RetentionPolicyRequest,
)
from ecp_core.retention.service import ErasureReport
from ecp_http.handlers.common import int_query
from ecp_http.routing import Call, Operation, QueryParam, Reply

if TYPE_CHECKING:
    from ecp_http.bootstrap import Runtime

TAG = "retention"


@attrs.frozen(kw_only=True, field_transformer=checked)
class LegalHoldListResponse:
    """The tenant's holds, released ones included (their history is kept)."""

    holds: tuple[LegalHold, ...]


@attrs.frozen(kw_only=True, field_transformer=checked)
class RetentionAuditLogResponse:
    """A page of the retention audit log, newest first."""

    entries: tuple[RetentionAuditEntry, ...]
    next_cursor: str | None = None


def operations(runtime: "Runtime") -> list[Operation]:
    """Routes of this area."""
    retention = runtime.ecp.retention

    def put_retention_policy(call: Call) -> ResolvedPolicy:
        return retention.put_policy(call.tenant, call.body)

    def get_retention_policy(call: Call) -> ResolvedPolicy:
        return retention.policy(call.tenant)

    def place_legal_hold(call: Call) -> Reply:
        assert call.actor is not None  # noqa: S101 - an authenticated operation
        return Reply(body=retention.place_hold(call.actor, call.body), status=201)

    def list_legal_holds(call: Call) -> LegalHoldListResponse:
        return LegalHoldListResponse(holds=tuple(retention.holds(call.tenant)))

    def release_legal_hold(call: Call) -> LegalHold:
        assert call.actor is not None  # noqa: S101
        return retention.release_hold(call.actor, call.path["hold_id"])

    def request_erasure(call: Call) -> ErasureReport:
        assert call.actor is not None  # noqa: S101
        return retention.request_erasure(call.actor, call.body)

    def retention_audit_log(call: Call) -> RetentionAuditLogResponse:
        limit = int_query(call.query, "limit", 50, 1, MAX_PAGE)
        entries = retention.log(call.tenant, limit=limit + 1, before=call.query.get("cursor"))
        more = len(entries) > limit
        entries = entries[:limit]
        return RetentionAuditLogResponse(
            entries=tuple(entries), next_cursor=entries[-1].entry_id if more else None
        )

    need = Permission.RETENTION_ADMIN
    return [
        Operation(
            method="PUT",
            path="/v1/retention/policy",
            handler=put_retention_policy,
            tag=TAG,
            summary="Set the tenant's TTLs (null keeps forever); the answer is the resolved policy",
            permission=need,
            body=RetentionPolicyRequest,
            response=ResolvedPolicy,
        ),
        Operation(
            method="GET",
            path="/v1/retention/policy",
            handler=get_retention_policy,
            tag=TAG,
            summary="The policy in force and the rule that chose it",
            permission=need,
            response=ResolvedPolicy,
        ),
        Operation(
            method="POST",
            path="/v1/retention/legal-holds",
            handler=place_legal_hold,
            tag=TAG,
            summary="Place a run-scoped or tenant-wide legal hold",
            permission=need,
            body=CreateLegalHoldRequest,
            response=LegalHold,
            status=201,
        ),
        Operation(
            method="GET",
            path="/v1/retention/legal-holds",
            handler=list_legal_holds,
            tag=TAG,
            summary="The tenant's legal holds",
            permission=need,
            response=LegalHoldListResponse,
        ),
        Operation(
            method="DELETE",
            path="/v1/retention/legal-holds/{hold_id}",
            handler=release_legal_hold,
            tag=TAG,
            summary="Release a legal hold (its record stays)",
            permission=need,
            response=LegalHold,
        ),
        Operation(
            method="POST",
            path="/v1/retention/erasure-requests",
            handler=request_erasure,
            tag=TAG,
            summary="Erase a run or the whole tenant now; 409 while a legal hold covers it",
            permission=need,
            body=ErasureRequest,
            response=ErasureReport,
        ),
        Operation(
            method="GET",
            path="/v1/retention/audit-log",
            handler=retention_audit_log,
            tag=TAG,
            summary="The append-only log of erasure steps, newest first",
            permission=need,
            response=RetentionAuditLogResponse,
            query=(
                QueryParam(
                    name="limit", schema={"type": "integer", "minimum": 1, "maximum": MAX_PAGE}
                ),
                QueryParam(name="cursor", schema={"type": "string"}),
            ),
        ),
    ]
