"""Version comparisons, retained decision history and decision schedules."""

from typing import TYPE_CHECKING

from ecp_core.decisions.model import (
    CompareRequest,
    CreateScheduleRequest,
    DecisionArtifact,
    DecisionList,
    DecisionSchedule,
    ScheduleList,
)
from ecp_core.pages import DEFAULT_PAGE, MAX_PAGE
from ecp_core.permissions import Permission
from ecp_http.handlers.common import int_query
from ecp_http.routing import Call, Operation, QueryParam, Reply, next_link

if TYPE_CHECKING:
    from ecp_http.bootstrap import Runtime

TAG = "decisions"


def operations(runtime: "Runtime") -> list[Operation]:
    """Routes of this area."""
    decisions = runtime.ecp.decisions

    def compare(call: Call) -> Reply:
        assert call.actor is not None  # noqa: S101 - an authenticated operation
        artifact, created = decisions.compare(call.actor, call.body)
        return Reply(body=artifact, status=201 if created else 200)

    def history(call: Call) -> Reply:
        limit = int_query(call.query, "limit", DEFAULT_PAGE, 1, MAX_PAGE)
        found, cursor = decisions.history(
            call.tenant,
            limit=limit,
            cursor=call.query.get("cursor"),
            workflow_id=call.query.get("workflow_id"),
        )
        return Reply(
            body=DecisionList(decisions=tuple(found), next_cursor=cursor),
            headers=next_link("/v1/decisions", call.query, cursor),
        )

    def create_schedule(call: Call) -> Reply:
        assert call.actor is not None  # noqa: S101 - an authenticated operation
        return Reply(body=decisions.create_schedule(call.actor, call.body), status=201)

    def list_schedules(call: Call) -> ScheduleList:
        return ScheduleList(schedules=tuple(decisions.schedules(call.tenant)))

    return [
        Operation(
            method="POST",
            path="/v1/decisions/compare",
            handler=compare,
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
            tag=TAG,
            summary="Retained decisions, newest first, with their original calculation inputs",
            permission=Permission.REPORT_READ,
            response=DecisionList,
            query=(
                QueryParam(name="workflow_id", schema={"type": "string", "minLength": 1}),
                QueryParam(
                    name="limit", schema={"type": "integer", "minimum": 1, "maximum": MAX_PAGE}
                ),
                QueryParam(name="cursor", schema={"type": "string"}),
            ),
        ),
        Operation(
            method="POST",
            path="/v1/decision-schedules",
            handler=create_schedule,
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
            tag=TAG,
            summary="The tenant's decision schedules",
            permission=Permission.REPORT_READ,
            response=ScheduleList,
        ),
    ]
