"""Runs, approvals, audit trails and the admin run list."""

from typing import TYPE_CHECKING

import attrs

from ecp_core.approvals.model import ApprovalResolutionRequest
from ecp_core.audit.record import (
    AuditRecordListResponse,
    AuditTimelineResponse,
    AuditVerificationResponse,
)
from ecp_core.errors import FieldError, ValidationFailed
from ecp_core.pages import MAX_PAGE
from ecp_core.permissions import Permission
from ecp_core.runs.model import (
    AdminRunListResponse,
    ApprovalResolutionResponse,
    RunStatusResponse,
    StartRunRequest,
)
from ecp_core.types import ApprovalStatus
from ecp_core.wire import structure
from ecp_http.handlers.common import int_query, preferred_wait, wait_until_settled
from ecp_http.models import (
    ApprovalListResponse,
    ApprovalStatusQuery,
    ResumeRequest,
    SigningKeysResponse,
)
from ecp_http.routing import Call, Operation, QueryParam, Reply, next_link

if TYPE_CHECKING:
    from ecp_http.bootstrap import Runtime

TAG = "runs"


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


def operations(runtime: "Runtime") -> list[Operation]:
    """Routes of this area."""
    ecp = runtime.ecp
    max_wait = runtime.settings.max_wait_seconds

    def settle(call: Call, run_id: str) -> RunStatusResponse:
        run = ecp.runs.get(call.tenant, run_id)
        seconds = preferred_wait(call.headers, max_wait)
        if seconds > 0:
            runtime.dispatcher.wake()
            run = wait_until_settled(ecp.runs, run, seconds)
        return RunStatusResponse.of(run)

    def start_run(call: Call) -> Reply:
        run, created = ecp.runs.start(call.tenant, with_idempotency_header(call))
        if created:
            runtime.dispatcher.wake()
        return Reply(body=settle(call, run.run_id), status=201 if created else 200)

    def get_run(call: Call) -> RunStatusResponse:
        return RunStatusResponse.of(ecp.runs.get(call.tenant, call.path["run_id"]))

    def resume_run(call: Call) -> RunStatusResponse:
        run = ecp.runs.resume(call.tenant, call.path["run_id"], call.body.value)
        runtime.dispatcher.wake()
        return settle(call, run.run_id)

    def list_run_approvals(call: Call) -> ApprovalListResponse:
        raw = call.query.get("status")
        status = (
            None
            if raw is None
            else structure({"status": raw}, ApprovalStatusQuery, what="the query").status
        )
        return ApprovalListResponse(
            approvals=tuple(ecp.approvals.for_run(call.tenant, call.path["run_id"], status))
        )

    def resolve_approval(call: Call) -> ApprovalResolutionResponse:
        assert call.actor is not None  # noqa: S101 - an authenticated operation
        return ecp.resolve(call.actor, call.path["ref"], call.path["approval_id"], call.body)

    def run_timeline(call: Call) -> AuditTimelineResponse:
        return ecp.audit.timeline(call.tenant, call.path["run_id"])

    def verify_run_audit(call: Call) -> AuditVerificationResponse:
        return ecp.audit.verify_run(call.tenant, call.path["run_id"])

    def deployment_audits(call: Call) -> Reply:
        limit = int_query(call.query, "limit", 50, 1, MAX_PAGE)
        body, cursor = ecp.audit.records(
            call.tenant,
            call.path["ref"],
            call.query.get("run_id"),
            limit=limit,
            cursor=call.query.get("cursor"),
        )
        return Reply(
            body=body,
            headers=next_link(f"/deployments/{call.path['ref']}/audits", call.query, cursor),
        )

    def verify_deployment_audits(call: Call) -> AuditVerificationResponse:
        return ecp.audit.verify_deployment(call.tenant, call.path["ref"])

    def signing_keys(_: Call) -> SigningKeysResponse:
        return SigningKeysResponse(keys=ecp.audit.signing_keys())

    def admin_list_runs(call: Call) -> Reply:
        limit = int_query(call.query, "limit", 50, 1, MAX_PAGE)
        runs, total, cursor = ecp.runs.page(
            call.tenant, limit=limit, cursor=call.query.get("cursor")
        )
        body = AdminRunListResponse(
            runs=tuple(RunStatusResponse.of(run) for run in runs), total=total
        )
        return Reply(body=body, headers=next_link("/admin/runs", call.query, cursor))

    prefer = "Send `Prefer: wait=N` to answer once the run waits or ends, or after N seconds."
    return [
        Operation(
            method="POST",
            path="/runs",
            handler=start_run,
            tag=TAG,
            summary="Start a run. " + prefer,
            permission=Permission.RUN_START,
            body=StartRunRequest,
            response=RunStatusResponse,
            status=201,
            extra_statuses=(200,),
            headers=(
                QueryParam(
                    name="Idempotency-Key",
                    schema={"type": "string", "minLength": 1, "maxLength": 256},
                    description="Means the same as the body's `idempotency_key` (they must agree).",
                ),
                QueryParam(
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
            summary="Resume a run waiting at an interrupt. " + prefer,
            permission=Permission.RUN_RESUME,
            body=ResumeRequest,
            response=RunStatusResponse,
        ),
        Operation(
            method="GET",
            path="/runs/{run_id}/approvals",
            handler=list_run_approvals,
            tag=TAG,
            summary="List a run's approvals",
            permission=Permission.RUN_READ,
            response=ApprovalListResponse,
            query=(QueryParam(name="status", schema={"enum": [s.value for s in ApprovalStatus]}),),
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
            query=(
                QueryParam(name="run_id", schema={"type": "string"}),
                QueryParam(
                    name="limit", schema={"type": "integer", "minimum": 1, "maximum": MAX_PAGE}
                ),
                QueryParam(name="cursor", schema={"type": "string"}),
            ),
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
            query=(
                QueryParam(
                    name="limit", schema={"type": "integer", "minimum": 1, "maximum": MAX_PAGE}
                ),
                QueryParam(name="cursor", schema={"type": "string"}),
            ),
        ),
    ]
