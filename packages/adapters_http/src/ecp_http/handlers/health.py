"""Liveness and readiness."""

from typing import TYPE_CHECKING

from ecp_http.models import HealthResponse
from ecp_http.routing import Call, Operation, Reply

if TYPE_CHECKING:
    from ecp_http.bootstrap import Runtime


def operations(runtime: "Runtime") -> list[Operation]:
    """Routes of this area."""

    def live(_: Call) -> HealthResponse:
        return HealthResponse(status="live")

    def ready(_: Call) -> Reply:
        checks: dict[str, str] = {}
        try:
            checks["schema"] = "current" if runtime.schema_current() else "outdated"
        except Exception as exc:  # noqa: BLE001 - readiness reports, it does not raise
            checks["schema"] = f"unreachable: {type(exc).__name__}"
        checks["dispatcher"] = "running" if runtime.dispatcher.alive else "stopped"
        scheduler = runtime.scheduler
        checks["scheduler"] = (
            "disabled" if scheduler is None else "running" if scheduler.alive else "stopped"
        )
        ok = (
            checks["schema"] == "current"
            and checks["dispatcher"] == "running"
            and checks["scheduler"] in {"running", "disabled"}
        )
        return Reply(
            body=HealthResponse(status="ready" if ok else "degraded", checks=checks),
            status=200 if ok else 503,
        )

    return [
        Operation(
            method="GET",
            path="/health/live",
            handler=live,
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
            tag="health",
            public=True,
            summary="200 when the schema is current and the dispatcher and scheduler run; 503 otherwise",
            permission=None,
            response=HealthResponse,
            extra_statuses=(503,),
        ),
    ]
