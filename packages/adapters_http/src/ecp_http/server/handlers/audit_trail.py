"""Audit trails: a run's timeline, a deployment's records, verification, the signing keys."""

from ecp_core.audit.record import (
    AuditRecordListResponse,
    AuditTimelineResponse,
    AuditVerificationResponse,
)
from ecp_core.permissions import Permission
from ecp_http.server.routing import Call, Operation, Reply, next_link
from ecp_http.server.services import Services
from ecp_http.wire.models import DeploymentAuditQuery, SigningKeysResponse


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


OPERATIONS = [
    Operation(
        method="GET",
        path="/runs/{run_id}/timeline",
        handler=run_timeline,
        operation_id="audit_timeline",
        tag="audit",
        summary="A run's audit records in chain order",
        permission=Permission.AUDIT_READ,
        response=AuditTimelineResponse,
    ),
    Operation(
        method="GET",
        path="/runs/{run_id}/audit/verify",
        handler=verify_run_audit,
        operation_id="audit_verify_run",
        tag="audit",
        summary="Verify a run's audit chain and signatures",
        permission=Permission.AUDIT_READ,
        response=AuditVerificationResponse,
    ),
    Operation(
        method="GET",
        path="/deployments/{ref}/audits",
        handler=deployment_audits,
        operation_id="audit_list_deployment_records",
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
        operation_id="audit_verify_deployment",
        tag="audit",
        summary="Verify every run chain of a deployment",
        permission=Permission.AUDIT_READ,
        response=AuditVerificationResponse,
    ),
    Operation(
        method="GET",
        path="/v1/audit/signing-keys",
        handler=signing_keys,
        operation_id="audit_signing_keys",
        tag="audit",
        summary="Public keys that verify audit signatures",
        permission=None,
        response=SigningKeysResponse,
        public=True,
    ),
]
