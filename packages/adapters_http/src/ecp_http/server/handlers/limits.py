"""Concurrency limits: how many runs of a deployment, or of the tenant, run at once (ADR 0079)."""

from ecp_core.deployments.model import Deployment, LimitsRequest, TenantLimits
from ecp_core.permissions import Permission
from ecp_http.server.routing import Call, Operation
from ecp_http.server.services import Services

_COUNTS = (
    " A run counts while it is runnable or running; one waiting for a person, a worker or a "
    "child run does not. Runs beyond the limit stay `pending`, in their order; a run already "
    "running is never stopped, and a lowered limit admits no run until fewer run than it allows."
)


def put_deployment_limits(call: Call, services: Services) -> Deployment:
    """Set or lift the deployment's limit; the dispatcher is woken (more may run now)."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    request: LimitsRequest = call.body
    deployment = services.ecp.runs.set_deployment_limit(call.actor, call.path["ref"], request)
    services.background.wake()
    return deployment


def get_tenant_limits(call: Call, services: Services) -> TenantLimits:
    """The tenant's own limit over all its deployments."""
    return services.ecp.runs.tenant_limits(call.tenant)


def put_tenant_limits(call: Call, services: Services) -> TenantLimits:
    """Set or lift the tenant's limit; the dispatcher is woken (more may run now)."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    limits = services.ecp.runs.set_tenant_limit(call.actor, call.body)
    services.background.wake()
    return limits


OPERATIONS = [
    Operation(
        method="PUT",
        path="/v1/deployments/{ref}/limits",
        handler=put_deployment_limits,
        operation_id="graphs_put_deployment_limits",
        tag="graphs",
        summary="Set how many of the deployment's runs run at once (`max_concurrent_runs`, 1 to "
        "100,000; null: no limit)." + _COUNTS,
        permission=Permission.RUN_CONTROL,
        body=LimitsRequest,
        response=Deployment,
    ),
    Operation(
        method="GET",
        path="/v1/limits",
        handler=get_tenant_limits,
        operation_id="runs_get_limits",
        tag="runs",
        summary="The tenant's own limit of runs running at once, over all its deployments",
        permission=Permission.RUN_CONTROL,
        response=TenantLimits,
    ),
    Operation(
        method="PUT",
        path="/v1/limits",
        handler=put_tenant_limits,
        operation_id="runs_put_limits",
        tag="runs",
        summary="Set how many of the tenant's runs run at once over all its deployments "
        "(`max_concurrent_runs`, 1 to 100,000; null: no limit); each deployment's own limit "
        "applies too." + _COUNTS,
        permission=Permission.TENANT_LIMITS,
        body=LimitsRequest,
        response=TenantLimits,
    ),
]
