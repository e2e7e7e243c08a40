"""Certifications of application builds: create, read (evaluated now), move, override (ADR 0043)."""

from typing import Annotated

import attrs

from ecp_core.certification.model import (
    CertificationListResponse,
    CertificationOverrideRequest,
    CertificationResponse,
    CertificationState,
    CreateCertificationRequest,
    TransitionRequest,
)
from ecp_core.constraints import Range, Text, checked
from ecp_core.pages import DEFAULT_PAGE, MAX_PAGE
from ecp_core.permissions import Permission
from ecp_http.config.terms import blocker_in_server_terms
from ecp_http.server.routing import Call, Operation, Reply
from ecp_http.server.services import Services

TAG = "certifications"
ITEM = "/v1/certifications/{certification_id}"


@attrs.frozen(kw_only=True, field_transformer=checked)
class CertificationListQuery:
    """A page of the tenant's certifications by id, of one app and in one state when given."""

    app_name: Annotated[str, Text(1, 200)] | None = None
    state: CertificationState | None = None
    limit: Annotated[int, Range(1, MAX_PAGE)] = DEFAULT_PAGE
    cursor: str | None = None


def _served(response: CertificationResponse) -> CertificationResponse:
    """``response`` with each blocker's remediation naming the server's setting, where one lifts it."""
    evaluation = response.evaluation
    blockers = tuple(blocker_in_server_terms(blocker) for blocker in evaluation.blockers)
    return attrs.evolve(response, evaluation=attrs.evolve(evaluation, blockers=blockers))


def create_certification(call: Call, services: Services) -> Reply:
    """A new ``buildable`` certification (201 with Location); the same build again: 200."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    certification, created = services.ecp.certifications.create(call.actor, call.body)
    location = f"/v1/certifications/{certification.certification_id}"
    return Reply(
        body=_served(certification), status=201 if created else 200, headers={"Location": location}
    )


def list_certifications(call: Call, services: Services) -> CertificationListResponse:
    """The tenant's certifications by id, each evaluated now."""
    query: CertificationListQuery = call.params
    found, cursor = services.ecp.certifications.page(
        call.tenant,
        limit=query.limit,
        cursor=query.cursor,
        app_name=query.app_name,
        state=query.state,
    )
    return CertificationListResponse(certifications=tuple(map(_served, found)), next_cursor=cursor)


def get_certification(call: Call, services: Services) -> CertificationResponse:
    """One certification, evaluated now, with its events in order."""
    return _served(services.ecp.certifications.get(call.tenant, call.path["certification_id"]))


def transition_certification(call: Call, services: Services) -> CertificationResponse:
    """Move a certification to the state asked for, when its table and evaluation allow."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    return _served(
        services.ecp.certifications.transition(call.actor, call.path["certification_id"], call.body)
    )


def grant_override(call: Call, services: Services) -> CertificationResponse:
    """Grant (or replace) a certification's time-boxed override."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    return _served(
        services.ecp.certifications.grant_override(
            call.actor, call.path["certification_id"], call.body
        )
    )


def withdraw_override(call: Call, services: Services) -> CertificationResponse:
    """Withdraw a certification's override (active or expired)."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    return _served(
        services.ecp.certifications.withdraw_override(call.actor, call.path["certification_id"])
    )


OPERATIONS = [
    Operation(
        method="POST",
        path="/v1/certifications",
        handler=create_certification,
        operation_id="certifications_create",
        tag=TAG,
        summary="Certify a build (app, commit, image digest) running as a deployment: 201 new"
        " in state buildable; 200 for the same request again; 409 for another deployment_ref",
        permission=Permission.CERTIFICATION_WRITE,
        body=CreateCertificationRequest,
        response=CertificationResponse,
        status=201,
        extra_statuses=(200,),
    ),
    Operation(
        method="GET",
        path="/v1/certifications",
        handler=list_certifications,
        operation_id="certifications_list",
        tag=TAG,
        summary="The tenant's certifications by id, each evaluated now",
        permission=Permission.CERTIFICATION_READ,
        response=CertificationListResponse,
        query=CertificationListQuery,
    ),
    Operation(
        method="GET",
        path=ITEM,
        handler=get_certification,
        operation_id="certifications_get",
        tag=TAG,
        summary="One certification: its evaluation now (blockers, verdicts) and its events",
        permission=Permission.CERTIFICATION_READ,
        response=CertificationResponse,
    ),
    Operation(
        method="POST",
        path=f"{ITEM}/transitions",
        handler=transition_certification,
        operation_id="certifications_transition",
        tag=TAG,
        summary="Move to another state as the transition table allows (409 names from and to);"
        " promoting also needs certification_promote and a promotion_target_key;"
        " revoking needs a reason",
        permission=Permission.CERTIFICATION_WRITE,
        body=TransitionRequest,
        response=CertificationResponse,
    ),
    Operation(
        method="PUT",
        path=f"{ITEM}/override",
        handler=grant_override,
        operation_id="certifications_grant_override",
        tag=TAG,
        summary="Grant or replace a time-boxed override (at most 30 days) of overridable"
        " blockers; the caller is its actor",
        permission=Permission.CERTIFICATION_OVERRIDE,
        body=CertificationOverrideRequest,
        response=CertificationResponse,
    ),
    Operation(
        method="DELETE",
        path=f"{ITEM}/override",
        handler=withdraw_override,
        operation_id="certifications_withdraw_override",
        tag=TAG,
        summary="Withdraw the override (404 when there is none)",
        permission=Permission.CERTIFICATION_OVERRIDE,
        response=CertificationResponse,
    ),
]
