"""Walking a graph: which exit a node takes, and what an attempt's record says of its action."""

from collections.abc import Mapping
from typing import Any

from ecp_core.canonical import thaw
from ecp_core.errors import EcpError
from ecp_core.graphs.conditions import condition_holds
from ecp_core.graphs.definition import ActionDescriptorV1, GraphDefinition, NodeDefinition
from ecp_core.runs.run import model as m


class NoMatchingEdge(EcpError):
    """A node has exits but none of their conditions holds."""

    code = m.NO_MATCHING_EDGE


def next_node(graph: GraphDefinition, node_id: str, state: Mapping[str, Any]) -> str | None:
    """The target of the first exit whose condition holds; None when the node has no exits."""
    exits = graph.outgoing(node_id)
    if not exits:
        return None
    for edge in exits:
        if condition_holds(edge.condition, state):
            return edge.target
    raise NoMatchingEdge(f"no exit of node {node_id!r} has a condition that holds")


def error_of(exc: BaseException) -> dict[str, str]:
    """An attempt's ``error``: the exception's type name and message, never a traceback."""
    return {"type": type(exc).__name__, "message": str(exc)}


def node_input(node: NodeDefinition) -> Any:  # noqa: ANN401
    """A node's input before it runs: its action's arguments (None for other nodes)."""
    return None if node.action is None else thaw(node.action.arguments)


def action_metadata(action: ActionDescriptorV1) -> dict[str, Any]:
    """What an attempt's audit record says of the action it ran (or offered as a task)."""
    return {
        "action": action.name,
        "fingerprint": action.fingerprint,
        "capabilities": [str(c) for c in action.capability_refs],
        "side_effect": str(action.side_effect),
    }


__all__ = ["NoMatchingEdge", "action_metadata", "error_of", "next_node", "node_input"]
