"""Runs, approvals, audit trails and the admin run list."""

import time

import attrs

from ecp_core.approvals.model import ApprovalRecord, ApprovalResolutionRequest
from ecp_core.audit.record import (
    AuditRecordListResponse,
    AuditTimelineResponse,
    AuditVerificationResponse,
)
from ecp_core.errors import FieldError, ValidationFailed
from ecp_core.permissions import Permission
from ecp_core.runs.model import (
    AdminRunListResponse,
    ApprovalResolutionResponse,
    ChildRunListResponse,
    ChildRunSummaryResponse,
    RunStatusResponse,
    StartRunRequest,
)
from ecp_core.wire import structure
from ecp_http.handlers.common import preferred_wait, settled
from ecp_http.long_poll import Poll
from ecp_http.models import (
    ApprovalInboxQuery,
    ApprovalListResponse,
    ApprovalPageResponse,
    ApprovalStatusQuery,
    DeploymentAuditQuery,
    PageQuery,
    ResumeRequest,
    SigningKeysResponse,
)
from ecp_http.routing import Call, HeaderParam, Operation, Reply, next_link
from ecp_http.services import Services

TAG = "runs"
PREFER = "Send `Prefer: wait=N` to answer once the run waits or ends, or after N seconds."


def with_idempotency_header(call: Call) -> StartRunRequest:
    """The body, with an ``Idempotency-Key`` header as its ``idempotency_key`` (they must agree)."""
    body: StartRunRequest = call.body
    key = call.headers.get("idempotency-key")
    if key is None or key == body.idempotency_key:
        return body
    if body.idempotency_key is not None:
        raise ValidationFailed(
            "the Idempotency-Key header and the body's idempotency_key differ",
            errors=[FieldError(loc=("header", "Idempotency-Key"), msg="differs from the body")],
        )
    fields = {"deployment_ref": body.deployment_ref, "idempotency_key": key}
    try:
        structure(fields, StartRunRequest, what="the request")
    except ValidationFailed as exc:
        raise ValidationFailed(
            "invalid Idempotency-Key header",
            errors=[FieldError(loc=("header", "Idempotency-Key"), msg=e.msg) for e in exc.errors],
        ) from None
    return attrs.evolve(body, idempotency_key=key)


def _settled(call: Call, services: Services, run_id: str) -> RunStatusResponse | Poll:
    """The run, once it waits or ends if ``Prefer: wait=N`` asks (at most ``ECP_MAX_WAIT_SECONDS``).

    The wait is a :class:`Poll`: it happens on the event loop, never in a worker thread.
    """
    runs, tenant = services.ecp.runs, call.tenant
    run = runs.get(tenant, run_id)
    seconds = preferred_wait(call.headers, services.settings.max_wait_seconds)
    if seconds <= 0 or settled(run):
        return RunStatusResponse.of(run)
    services.background.wake()

    def again() -> RunStatusResponse | None:
        now = runs.get(tenant, run_id)
        return RunStatusResponse.of(now) if settled(now) else None

    return Poll(
        again=again,
        at_deadline=lambda: RunStatusResponse.of(runs.get(tenant, run_id)),
        deadline=time.monotonic() + seconds,
        bell=services.runs_moved,
    )


def start_run(call: Call, services: Services) -> Reply | Poll:
    """Start a run (201), or find the one its idempotency key started (200)."""
    run, created = services.ecp.runs.start(call.tenant, with_idempotency_header(call))
    if created:
        services.background.wake()
    status = 201 if created else 200
    answer = _settled(call, services, run.run_id)
    if isinstance(answer, Poll):
        return attrs.evolve(answer, then=lambda body: Reply(body=body, status=status))
    return Reply(body=answer, status=status)


def get_run(call: Call, services: Services) -> RunStatusResponse:
    """A run."""
    return RunStatusResponse.of(services.ecp.runs.get(call.tenant, call.path["run_id"]))


def resume_run(call: Call, services: Services) -> RunStatusResponse | Poll:
    """Resume a run waiting at an interrupt with the value it waits for."""
    run = services.ecp.runs.resume(call.tenant, call.path["run_id"], call.body.value)
    services.background.wake()
    return _settled(call, services, run.run_id)


def list_run_children(call: Call, services: Services) -> Reply:
    """A page of the child runs a run's subgraph nodes started, oldest first (ADR 0046)."""
    query: PageQuery = call.params
    run_id = call.path["run_id"]
    children, cursor = services.ecp.runs.children(
        call.tenant, run_id, limit=query.limit, cursor=query.cursor
    )
    body = ChildRunListResponse(
        children=tuple(ChildRunSummaryResponse.of(child) for child in children),
        next_cursor=cursor,
    )
    return Reply(body=body, headers=next_link(f"/runs/{run_id}/children", call.query, cursor))


def list_run_approvals(call: Call, services: Services) -> ApprovalListResponse:
    """A run's approvals, of one status when asked."""
    query: ApprovalStatusQuery = call.params
    found = services.ecp.approvals.for_run(call.tenant, call.path["run_id"], query.status)
    return ApprovalListResponse(approvals=tuple(found))


def list_approvals(call: Call, services: Services) -> ApprovalPageResponse:
    """The approver inbox: a page of the tenant's approvals across runs, filtered."""
    query: ApprovalInboxQuery = call.params
    found, cursor = services.ecp.approvals.page(
        call.tenant,
        limit=query.limit,
        cursor=query.cursor,
        status=query.status,
        deployment_ref=query.deployment_ref,
        run_id=query.run_id,
    )
    return ApprovalPageResponse(approvals=tuple(found), next_cursor=cursor)


def get_approval(call: Call, services: Services) -> ApprovalRecord:
    """One approval of the tenant."""
    return services.ecp.approvals.get(call.tenant, call.path["approval_id"])


def resolve_approval(call: Call, services: Services) -> ApprovalResolutionResponse:
    """Resolve a pending approval."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    return services.ecp.resolve(call.actor, call.path["ref"], call.path["approval_id"], call.body)


def run_timeline(call: Call, services: Services) -> AuditTimelineResponse:
    """A run's audit records in chain order."""
    return services.ecp.audit.timeline(call.tenant, call.path["run_id"])


def verify_run_audit(call: Call, services: Services) -> AuditVerificationResponse:
    """Verify a run's audit chain."""
    return services.ecp.audit.verify_run(call.tenant, call.path["run_id"])


def deployment_audits(call: Call, services: Services) -> Reply:
    """A page of a deployment's audit records; the next page is in the ``Link`` header."""
    query: DeploymentAuditQuery = call.params
    ref = call.path["ref"]
    body, cursor = services.ecp.audit.records(
        call.tenant, ref, query.run_id, limit=query.limit, cursor=query.cursor
    )
    return Reply(body=body, headers=next_link(f"/deployments/{ref}/audits", call.query, cursor))


def verify_deployment_audits(call: Call, services: Services) -> AuditVerificationResponse:
    """Verify every run chain of a deployment."""
    return services.ecp.audit.verify_deployment(call.tenant, call.path["ref"])


def signing_keys(_: Call, services: Services) -> SigningKeysResponse:
    """The public keys that verify audit signatures."""
    return SigningKeysResponse(keys=services.ecp.audit.signing_keys())


def admin_list_runs(call: Call, services: Services) -> Reply:
    """A page of the tenant's runs, newest first."""
    query: PageQuery = call.params
    runs, total, cursor = services.ecp.runs.page(
        call.tenant, limit=query.limit, cursor=query.cursor
    )
    body = AdminRunListResponse(runs=tuple(RunStatusResponse.of(run) for run in runs), total=total)
    return Reply(body=body, headers=next_link("/admin/runs", call.query, cursor))


OPERATIONS = [
    Operation(
        method="POST",
        path="/runs",
        handler=start_run,
        tag=TAG,
        summary="Start a run. " + PREFER,
        permission=Permission.RUN_START,
        body=StartRunRequest,
        response=RunStatusResponse,
        status=201,
        extra_statuses=(200,),
        headers=(
            HeaderParam(
                name="Idempotency-Key",
                schema={"type": "string", "minLength": 1, "maxLength": 256},
                description="Means the same as the body's `idempotency_key` (they must agree).",
            ),
            HeaderParam(
                name="Prefer",
                schema={"type": "string"},
                description="`wait=N` (RFC 7240): answer once the run waits or ends, or after N s.",
            ),
        ),
    ),
    Operation(
        method="GET",
        path="/runs/{run_id}",
        handler=get_run,
        tag=TAG,
        summary="Read a run",
        permission=Permission.RUN_READ,
        response=RunStatusResponse,
    ),
    Operation(
        method="POST",
        path="/runs/{run_id}/resume",
        handler=resume_run,
        tag=TAG,
        summary="Resume a run waiting at an interrupt. " + PREFER,
        permission=Permission.RUN_RESUME,
        body=ResumeRequest,
        response=RunStatusResponse,
    ),
    Operation(
        method="GET",
        path="/runs/{run_id}/children",
        handler=list_run_children,
        tag=TAG,
        summary="The child runs a run's subgraph nodes started, oldest first; the next page is "
        "in next_cursor and the Link header",
        permission=Permission.RUN_READ,
        response=ChildRunListResponse,
        query=PageQuery,
    ),
    Operation(
        method="GET",
        path="/runs/{run_id}/approvals",
        handler=list_run_approvals,
        tag=TAG,
        summary="List a run's approvals",
        permission=Permission.RUN_READ,
        response=ApprovalListResponse,
        query=ApprovalStatusQuery,
    ),
    Operation(
        method="GET",
        path="/v1/approvals",
        handler=list_approvals,
        tag="approvals",
        summary="The approver inbox: the tenant's approvals across runs, oldest first, filtered",
        permission=Permission.APPROVAL_READ,
        response=ApprovalPageResponse,
        query=ApprovalInboxQuery,
    ),
    Operation(
        method="GET",
        path="/v1/approvals/{approval_id}",
        handler=get_approval,
        tag="approvals",
        summary="Read an approval",
        permission=Permission.APPROVAL_READ,
        response=ApprovalRecord,
    ),
    Operation(
        method="POST",
        path="/deployments/{ref}/approvals/{approval_id}/resolve",
        handler=resolve_approval,
        tag=TAG,
        summary="Resolve a pending approval; the answer holds the run after it continued",
        permission=Permission.APPROVAL_RESOLVE,
        body=ApprovalResolutionRequest,
        response=ApprovalResolutionResponse,
    ),
    Operation(
        method="GET",
        path="/runs/{run_id}/timeline",
        handler=run_timeline,
        tag="audit",
        summary="A run's audit records in chain order",
        permission=Permission.AUDIT_READ,
        response=AuditTimelineResponse,
    ),
    Operation(
        method="GET",
        path="/runs/{run_id}/audit/verify",
        handler=verify_run_audit,
        tag="audit",
        summary="Verify a run's audit chain and signatures",
        permission=Permission.AUDIT_READ,
        response=AuditVerificationResponse,
    ),
    Operation(
        method="GET",
        path="/deployments/{ref}/audits",
        handler=deployment_audits,
        tag="audit",
        summary="A deployment's audit records",
        permission=Permission.AUDIT_READ,
        response=AuditRecordListResponse,
        query=DeploymentAuditQuery,
    ),
    Operation(
        method="GET",
        path="/deployments/{ref}/audits/verify",
        handler=verify_deployment_audits,
        tag="audit",
        summary="Verify every run chain of a deployment",
        permission=Permission.AUDIT_READ,
        response=AuditVerificationResponse,
    ),
    Operation(
        method="GET",
        path="/v1/audit/signing-keys",
        handler=signing_keys,
        tag="audit",
        summary="Public keys that verify audit signatures",
        permission=None,
        response=SigningKeysResponse,
        public=True,
    ),
    Operation(
        method="GET",
        path="/admin/runs",
        handler=admin_list_runs,
        tag="admin",
        summary="The tenant's runs, newest first; the next page is in the Link header",
        permission=Permission.RUN_LIST_ADMIN,
        response=AdminRunListResponse,
        query=PageQuery,
    ),
]
