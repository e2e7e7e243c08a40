"""The actions the server can run (built-ins and plug-ins)."""

from ecp_core.permissions import Permission
from ecp_core.runs.run.actions import ActionListResponse
from ecp_http.server.routing import Call, Operation
from ecp_http.server.services import Services

TAG = "actions"


def list_actions(call: Call, services: Services) -> ActionListResponse:
    """Every action the server runs, and the task actions of the tenant's graphs, by name."""
    return services.ecp.actions.listing(services.ecp.graphs.task_actions(call.tenant))


OPERATIONS = [
    Operation(
        method="GET",
        path="/v1/actions",
        handler=list_actions,
        operation_id="actions_list",
        tag=TAG,
        summary=(
            "List the actions this server can run (built-ins and plug-ins) and the task actions"
            " the tenant's graphs offer to workers"
        ),
        permission=Permission.GRAPH_READ,
        response=ActionListResponse,
    ),
]
