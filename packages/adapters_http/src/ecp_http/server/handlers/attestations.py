"""Attestations: submit (first write wins per correlation), read, verify a presented copy (ADR 0041)."""

import attrs

from ecp_core.attestations.model import (
    AckStatus,
    AttestationAck,
    AttestationResponse,
    AttestationSubmission,
    AttestationVerificationResponse,
)
from ecp_core.constraints import checked
from ecp_core.permissions import Permission
from ecp_http.server.routing import Call, Operation, Reply
from ecp_http.server.services import Services
from ecp_http.wire.query import described

TAG = "attestations"


@described(
    correlation_id="The presented correlation id (compared with the path's).",
    deployment_ref="The presented deployment ref.",
    graph_version="The presented graph version.",
    adapter_version="The presented adapter version.",
    inventory_fingerprint="The presented inventory fingerprint.",
    claimed_level="The presented claimed level.",
    digest="The digest the submission's acknowledgement named.",
)
@attrs.frozen(kw_only=True, field_transformer=checked)
class PresentedAttestation:
    """A presented copy of an attestation; each field given is compared, the others are not."""

    correlation_id: str | None = None
    deployment_ref: str | None = None
    graph_version: str | None = None
    adapter_version: str | None = None
    inventory_fingerprint: str | None = None
    claimed_level: str | None = None
    digest: str | None = None


def submit_attestation(call: Call, services: Services) -> Reply:
    """Issue, sign and store an attestation unless another holds its correlation.

    201 when it is new and in force; 200 when it replays the one in force exactly or conflicts
    with it (``authoritative`` false); the digest and expiry are always those of the one in force.
    """
    ack = services.ecp.attestations.submit(call.tenant, call.body)
    return Reply(body=ack, status=201 if ack.status == AckStatus.ACCEPTED else 200)


def get_attestation(call: Call, services: Services) -> AttestationResponse:
    """The correlation's latest attestation (in force or expired) with its digest and signature."""
    return services.ecp.attestations.read(call.tenant, call.path["correlation_id"])


def verify_attestation(call: Call, services: Services) -> AttestationVerificationResponse:
    """Re-hash and check the signature of the stored attestation; compare a presented copy."""
    presented: PresentedAttestation = call.params
    return services.ecp.attestations.verify(
        call.tenant, call.path["correlation_id"], attrs.asdict(presented)
    )


OPERATIONS = [
    Operation(
        method="POST",
        path="/v1/attestations",
        handler=submit_attestation,
        operation_id="attestations_submit",
        tag=TAG,
        summary="Submit an attestation; the server times and signs it, first write wins",
        permission=Permission.ATTESTATION_SUBMIT,
        body=AttestationSubmission,
        response=AttestationAck,
        status=201,
        extra_statuses=(200,),
    ),
    Operation(
        method="GET",
        path="/v1/attestations/{correlation_id}",
        handler=get_attestation,
        operation_id="attestations_get",
        tag=TAG,
        summary="The correlation's latest attestation (in force or expired)",
        permission=Permission.AUDIT_READ,
        response=AttestationResponse,
    ),
    Operation(
        method="GET",
        path="/v1/attestations/{correlation_id}/verify",
        handler=verify_attestation,
        operation_id="attestations_verify",
        tag=TAG,
        summary="Verify the stored attestation and list where a presented copy differs",
        permission=Permission.AUDIT_READ,
        response=AttestationVerificationResponse,
        query=PresentedAttestation,
    ),
]
