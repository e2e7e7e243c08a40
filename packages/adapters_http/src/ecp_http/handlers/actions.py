"""The actions the server can run (built-ins and plug-ins)."""

from ecp_core.permissions import Permission
from ecp_core.runs.actions import ActionList
from ecp_http.routing import Call, Operation
from ecp_http.services import Services

TAG = "actions"


def list_actions(_: Call, services: Services) -> ActionList:
    """Every registered action with its descriptor metadata and source, by name."""
    return services.ecp.actions.listing()


OPERATIONS = [
    Operation(
        method="GET",
        path="/v1/actions",
        handler=list_actions,
        tag=TAG,
        summary="List the actions this server can run: built-ins and plug-ins",
        permission=Permission.GRAPH_READ,
        response=ActionList,
    ),
]
