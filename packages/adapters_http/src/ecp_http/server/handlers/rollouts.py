"""Randomized rollouts: create, list, read, assign, change weights, end, verify (ADR 0089)."""

from ecp_core.errors import JwtRequired
from ecp_core.permissions import Permission
from ecp_core.rollouts.model import (
    AssignRequest,
    AssignResponse,
    CreateRolloutRequest,
    EndRolloutRequest,
    RolloutListResponse,
    RolloutResponse,
    UpdateRolloutRequest,
    VerifyResponse,
)
from ecp_core.types import AuthMethod
from ecp_http.server.routing import Call, Operation
from ecp_http.server.services import Services
from ecp_http.wire.models import PageQuery

TAG = "rollouts"
JWT_ONLY = ("jwt_required",)


def _require_jwt(call: Call) -> None:
    """JwtRequired unless the caller sent a JWT in ``Authorization`` (not a key, not a cookie)."""
    actor = call.actor
    if (
        actor is None
        or actor.auth_method is not AuthMethod.BEARER
        or not call.headers.get("authorization")
    ):
        msg = "this operation takes a JWT bearer token, not an API key or a browser session"
        raise JwtRequired(msg)


def create_rollout(call: Call, services: Services) -> RolloutResponse:
    """Start a rollout over the deployment's arms (JWT only)."""
    _require_jwt(call)
    return RolloutResponse.of(services.ecp.rollouts.create(call.tenant, call.body))


def list_rollouts(call: Call, services: Services) -> RolloutListResponse:
    """A page of the tenant's rollouts by id."""
    query: PageQuery = call.params
    found, cursor = services.ecp.rollouts.page(call.tenant, limit=query.limit, cursor=query.cursor)
    return RolloutListResponse(
        rollouts=tuple(RolloutResponse.of(r) for r in found), next_cursor=cursor
    )


def get_rollout(call: Call, services: Services) -> RolloutResponse:
    """One rollout."""
    return RolloutResponse.of(services.ecp.rollouts.get(call.tenant, call.path["rollout_id"]))


def update_rollout(call: Call, services: Services) -> RolloutResponse:
    """New weights for the rollout's arms."""
    body: UpdateRolloutRequest = call.body
    changed = services.ecp.rollouts.update(call.tenant, call.path["rollout_id"], body)
    return RolloutResponse.of(changed)


def assign_unit(call: Call, services: Services) -> AssignResponse:
    """The arm of a unit (JWT only)."""
    _require_jwt(call)
    body: AssignRequest = call.body
    return services.ecp.rollouts.assign(call.tenant, call.path["rollout_id"], body.unit_id)


def end_rollout(call: Call, services: Services) -> RolloutResponse:
    """Promote one arm; the deployment runs its graph version from now on."""
    body: EndRolloutRequest = call.body
    ended = services.ecp.rollouts.end(call.tenant, call.path["rollout_id"], body.graph_version_ref)
    return RolloutResponse.of(ended)


def verify_rollout(call: Call, services: Services) -> VerifyResponse:
    """Whether the assignments followed the weights (JWT only)."""
    _require_jwt(call)
    return services.ecp.rollouts.verify(call.tenant, call.path["rollout_id"])


OPERATIONS = [
    Operation(
        method="POST",
        path="/v1/rollouts",
        handler=create_rollout,
        operation_id="rollouts_create",
        tag=TAG,
        summary="Start a randomized rollout of a deployment over arms of graph versions with "
        "weights summing to 100 (one active per deployment: 409); takes a JWT (403 "
        "`jwt_required` for API keys and browser sessions)",
        permission=Permission.DEPLOYMENT_WRITE,
        forbidden_codes=JWT_ONLY,
        body=CreateRolloutRequest,
        response=RolloutResponse,
        status=201,
    ),
    Operation(
        method="GET",
        path="/v1/rollouts",
        handler=list_rollouts,
        operation_id="rollouts_list",
        tag=TAG,
        summary="The tenant's rollouts by id",
        permission=Permission.RUN_READ,
        response=RolloutListResponse,
        query=PageQuery,
    ),
    Operation(
        method="GET",
        path="/v1/rollouts/{rollout_id}",
        handler=get_rollout,
        operation_id="rollouts_get",
        tag=TAG,
        summary="Read a rollout",
        permission=Permission.RUN_READ,
        response=RolloutResponse,
    ),
    Operation(
        method="PUT",
        path="/v1/rollouts/{rollout_id}",
        handler=update_rollout,
        operation_id="rollouts_update",
        tag=TAG,
        summary="Change the weights of an active rollout's arms; a new weight period starts and "
        "units move only out of arms that shrink",
        permission=Permission.DEPLOYMENT_WRITE,
        body=UpdateRolloutRequest,
        response=RolloutResponse,
    ),
    Operation(
        method="POST",
        path="/v1/rollouts/{rollout_id}/assign",
        handler=assign_unit,
        operation_id="rollouts_assign",
        tag=TAG,
        summary="The arm a unit is assigned (the same every time while the weights stay); "
        "takes a JWT",
        permission=Permission.RUN_START,
        forbidden_codes=JWT_ONLY,
        body=AssignRequest,
        response=AssignResponse,
    ),
    Operation(
        method="POST",
        path="/v1/rollouts/{rollout_id}/end",
        handler=end_rollout,
        operation_id="rollouts_end",
        tag=TAG,
        summary="End a rollout by promoting one arm: the deployment runs its graph version",
        permission=Permission.DEPLOYMENT_WRITE,
        body=EndRolloutRequest,
        response=RolloutResponse,
    ),
    Operation(
        method="GET",
        path="/v1/rollouts/{rollout_id}/verify",
        handler=verify_rollout,
        operation_id="rollouts_verify",
        tag=TAG,
        summary="Whether the current weight period's assignments followed the weights "
        "(`homogeneous-assignment-v1`: sample-ratio and drift tests); takes a JWT",
        permission=Permission.RUN_READ,
        forbidden_codes=JWT_ONLY,
        response=VerifyResponse,
    ),
]
