"""Version comparisons, retained decision history and decision schedules."""

from ecp_core.decisions.model import (
    CompareRequest,
    CreateScheduleRequest,
    DecisionArtifact,
    DecisionListResponse,
    DecisionSchedule,
    ScheduleListResponse,
)
from ecp_core.permissions import Permission
from ecp_http.server.routing import Call, Operation, Reply, next_link
from ecp_http.server.services import Services
from ecp_http.wire.models import DecisionHistoryQuery

TAG = "decisions"


def compare(call: Call, services: Services) -> Reply:
    """Compare two versions (201), or return the retained artifact (200)."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    artifact, created = services.ecp.decisions.compare(call.actor, call.body)
    return Reply(body=artifact, status=201 if created else 200)


def history(call: Call, services: Services) -> Reply:
    """A page of retained decisions, newest first."""
    query: DecisionHistoryQuery = call.params
    found, cursor = services.ecp.decisions.history(
        call.tenant, limit=query.limit, cursor=query.cursor, workflow_id=query.workflow_id
    )
    return Reply(
        body=DecisionListResponse(decisions=tuple(found), next_cursor=cursor),
        headers=next_link("/v1/decisions", call.query, cursor),
    )


def create_schedule(call: Call, services: Services) -> Reply:
    """Create a recurring comparison."""
    assert call.actor is not None  # noqa: S101 - an authenticated operation
    return Reply(body=services.ecp.decisions.create_schedule(call.actor, call.body), status=201)


def list_schedules(call: Call, services: Services) -> ScheduleListResponse:
    """The tenant's decision schedules."""
    return ScheduleListResponse(schedules=tuple(services.ecp.decisions.schedules(call.tenant)))


OPERATIONS = [
    Operation(
        method="POST",
        path="/v1/decisions/compare",
        handler=compare,
        operation_id="decisions_compare",
        tag=TAG,
        summary="Compare two exact workflow versions (201 new artifact; 200 the retained one)",
        permission=Permission.DECISION_REQUEST,
        body=CompareRequest,
        response=DecisionArtifact,
        status=201,
        extra_statuses=(200,),
    ),
    Operation(
        method="GET",
        path="/v1/decisions",
        handler=history,
        operation_id="decisions_list",
        tag=TAG,
        summary="Retained decisions, newest first, with their original calculation inputs",
        permission=Permission.REPORT_READ,
        response=DecisionListResponse,
        query=DecisionHistoryQuery,
    ),
    Operation(
        method="POST",
        path="/v1/decision-schedules",
        handler=create_schedule,
        operation_id="decisions_create_schedule",
        tag=TAG,
        summary="Create a recurring comparison (first occurrence due at once)",
        permission=Permission.DECISION_REQUEST,
        body=CreateScheduleRequest,
        response=DecisionSchedule,
        status=201,
    ),
    Operation(
        method="GET",
        path="/v1/decision-schedules",
        handler=list_schedules,
        operation_id="decisions_list_schedules",
        tag=TAG,
        summary="The tenant's decision schedules",
        permission=Permission.REPORT_READ,
        response=ScheduleListResponse,
    ),
]
