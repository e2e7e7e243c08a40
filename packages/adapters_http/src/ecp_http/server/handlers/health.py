"""Liveness and readiness."""

from ecp_http.server.routing import Call, Operation, Reply
from ecp_http.server.services import Services
from ecp_http.wire.models import HealthResponse


def live(_: Call, __: Services) -> HealthResponse:
    """Live as soon as the process serves."""
    return HealthResponse(status="live")


def ready(_: Call, services: Services) -> Reply:
    """Ready when the schema is current and the workers run; 503 (degraded) otherwise.

    The schema is ``pending`` while migrations remain to apply and ``newer`` once the database
    holds migrations this build does not know (a newer release migrated it: this process should
    be replaced).
    """
    background = services.background
    checks: dict[str, str] = {}
    try:
        checks["schema"] = background.schema_state()
    except Exception as exc:  # noqa: BLE001 - readiness reports, it does not raise
        checks["schema"] = f"unreachable: {type(exc).__name__}"
    checks["dispatcher"] = "running" if background.dispatcher_alive() else "stopped"
    scheduler = background.scheduler_alive()
    checks["scheduler"] = "disabled" if scheduler is None else "running" if scheduler else "stopped"
    ok = (
        checks["schema"] == "current"
        and checks["dispatcher"] == "running"
        and checks["scheduler"] in {"running", "disabled"}
    )
    return Reply(
        body=HealthResponse(status="ready" if ok else "degraded", checks=checks),
        status=200 if ok else 503,
    )


OPERATIONS = [
    Operation(
        method="GET",
        path="/health/live",
        handler=live,
        operation_id="health_live",
        tag="health",
        public=True,
        summary="200 as soon as the process serves",
        permission=None,
        response=HealthResponse,
    ),
    Operation(
        method="GET",
        path="/health/ready",
        handler=ready,
        operation_id="health_ready",
        tag="health",
        public=True,
        summary="200 when the schema is current and the dispatcher and scheduler run; 503 otherwise",
        permission=None,
        response=HealthResponse,
        extra_statuses=(503,),
    ),
]
