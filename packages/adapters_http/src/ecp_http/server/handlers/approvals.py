"""Approvals: a run's approvals, the approver inbox, one approval, its trail, resolving."""

from ecp_core.permissions import Permission
from ecp_core.runs.approvals.model import (
    ApprovalRecord,
    ApprovalResolutionRequest,
    ApprovalResolutionResponse,
)
from ecp_http.server.routing import Call, Operation
from ecp_http.server.services import Services
from ecp_http.wire.models import (
    ApprovalActionListResponse,
    ApprovalInboxQuery,
    ApprovalListResponse,
    ApprovalPageResponse,
    ApprovalStatusQuery,
)


def list_run_approvals(call: Call, services: Services) -> ApprovalListResponse:
    """A run's approvals, of one status when asked."""
    query: ApprovalStatusQuery = call.params
    found = services.ecp.approvals.for_run(call.tenant, call.path["run_id"], query.status)
    return ApprovalListResponse(approvals=tuple(found))


def list_approvals(call: Call, services: Services) -> ApprovalPageResponse:
    """The approver inbox: the tenant's approvals the caller may resolve (ADR 0075), filtered."""
    query: ApprovalInboxQuery = call.params
    found, cursor = services.ecp.approvals.page(
        call.tenant,
        limit=query.limit,
        cursor=query.cursor,
        status=query.status,
        deployment_ref=query.deployment_ref,
        run_id=query.run_id,
        approver=call.actor,
    )
    return ApprovalPageResponse(approvals=tuple(found), next_cursor=cursor)


def get_approval(call: Call, services: Services) -> ApprovalRecord:
    """One approval of the tenant."""
    return services.ecp.approvals.get(call.tenant, call.path["approval_id"])


def resolve_approval(call: Call, services: Services) -> ApprovalResolutionResponse:
    """Resolve a pending approval."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    return services.ecp.resolve(call.actor, call.path["ref"], call.path["approval_id"], call.body)


def approval_actions(call: Call, services: Services) -> ApprovalActionListResponse:
    """An approval's action trail, oldest first."""
    approval_id = call.path["approval_id"]
    found = services.ecp.approvals.actions(call.tenant, approval_id)
    return ApprovalActionListResponse(approval_id=approval_id, actions=tuple(found))


OPERATIONS = [
    Operation(
        method="GET",
        path="/runs/{run_id}/approvals",
        handler=list_run_approvals,
        operation_id="approvals_list_for_run",
        tag="approvals",
        summary="List a run's approvals (the same permission as reading one by id)",
        permission=Permission.APPROVAL_READ,
        response=ApprovalListResponse,
        query=ApprovalStatusQuery,
    ),
    Operation(
        method="GET",
        path="/v1/approvals",
        handler=list_approvals,
        operation_id="approvals_list",
        tag="approvals",
        summary="The approver inbox: the tenant's approvals across runs that the caller may "
        "resolve by their approval rules, oldest first, filtered",
        permission=Permission.APPROVAL_READ,
        response=ApprovalPageResponse,
        query=ApprovalInboxQuery,
    ),
    Operation(
        method="GET",
        path="/v1/approvals/{approval_id}",
        handler=get_approval,
        operation_id="approvals_get",
        tag="approvals",
        summary="Read an approval",
        permission=Permission.APPROVAL_READ,
        response=ApprovalRecord,
    ),
    Operation(
        method="GET",
        path="/v1/approvals/{approval_id}/actions",
        handler=approval_actions,
        operation_id="approvals_list_actions",
        tag="approvals",
        summary="An approval's action trail (requested, approved, denied, escalated ...), oldest "
        "first: one ApprovalActionRecord per action",
        permission=Permission.APPROVAL_READ,
        response=ApprovalActionListResponse,
    ),
    Operation(
        method="POST",
        path="/deployments/{ref}/approvals/{approval_id}/resolve",
        handler=resolve_approval,
        operation_id="approvals_resolve",
        tag="approvals",
        summary="Resolve a pending approval; the answer holds the run after it continued. An "
        "approval asking for `min_approvals` counts each person's approval (409 "
        "`already_approved` for a second one) and continues the run on the last needed; only "
        "its approvers may resolve it (403 `not_an_approver`, `self_approval_forbidden`)",
        permission=Permission.APPROVAL_RESOLVE,
        forbidden_codes=("not_an_approver", "self_approval_forbidden"),
        body=ApprovalResolutionRequest,
        response=ApprovalResolutionResponse,
    ),
]
