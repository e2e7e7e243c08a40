"""Graphs: the declarative definition, the Python builder, validation, CEL conditions."""

from typing import Any

from ecp_core.graphs.builder import ApprovalRules, GraphBuilder
from ecp_core.graphs.conditions import ConditionError, condition_holds
from ecp_core.graphs.definition import (
    ActionDescriptorV1,
    Condition,
    ConstantMappingOperation,
    CopyMappingOperation,
    EdgeDefinition,
    GraphDefinition,
    GraphRegistration,
    GraphVersion,
    MappingOperation,
    NodeDefinition,
    SubgraphCall,
    graph_digest,
)
from ecp_core.graphs.validation import graph_errors, validate_graph
from ecp_core.wire import converter

_OPERATIONS: dict[str, type[ConstantMappingOperation | CopyMappingOperation]] = {
    "constant": ConstantMappingOperation,
    "copy": CopyMappingOperation,
}


def _structure_operation(data: Any, _: object) -> MappingOperation:  # noqa: ANN401
    """Pick the mapping operation by its ``operation`` tag (``constant`` when absent)."""
    if not isinstance(data, dict):
        msg = "expected an object"
        raise TypeError(msg)
    kind = _OPERATIONS.get(data.get("operation", "constant"))
    if kind is None:
        msg = "operation must be 'constant' or 'copy'"
        raise ValueError(msg)
    return converter.structure(data, kind)


converter.register_structure_hook(MappingOperation, _structure_operation)

__all__ = [
    "ActionDescriptorV1",
    "ApprovalRules",
    "Condition",
    "ConditionError",
    "ConstantMappingOperation",
    "CopyMappingOperation",
    "EdgeDefinition",
    "GraphBuilder",
    "GraphDefinition",
    "GraphRegistration",
    "GraphVersion",
    "MappingOperation",
    "NodeDefinition",
    "SubgraphCall",
    "condition_holds",
    "graph_digest",
    "graph_errors",
    "validate_graph",
]
