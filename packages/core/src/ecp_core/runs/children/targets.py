"""Where a subgraph node's deployment leads, read before the step (the step reads no storage).

The parent's side of a child's end is in :mod:`ecp_core.runs.engine.lifecycle` (it applies the parent's
step in the child's transaction) and :mod:`ecp_core.runs.children.steps` (what that step is).
"""

from typing import Protocol

from ecp_core.errors import NotFound
from ecp_core.graphs.definition import GraphDefinition
from ecp_core.ports.deployments import WithDeployments
from ecp_core.ports.graphs import WithGraphs
from ecp_core.registry.service import require_graph
from ecp_core.runs.children.start import ChildTarget, subgraph_call
from ecp_core.runs.run.model import Run
from ecp_core.types import NodeKind

CHILDREN_CURSOR = "children"


class ChildTargetUnit(WithDeployments, WithGraphs, Protocol):
    """What finding a child's deployment reads: deployments and graphs."""


def child_target(uow: ChildTargetUnit, run: Run, graph: GraphDefinition) -> ChildTarget | None:
    """What the subgraph node ``run`` attempts next leads to; None for any other node.

    A deployment the tenant does not have (or whose graph version is gone) resolves to a target
    without a graph version, and the step fails the node with ``child_deployment_missing``.
    """
    node = graph.node(run.next_node_id or graph.entry)
    if node.kind is not NodeKind.SUBGRAPH:
        return None
    ref = subgraph_call(node).deployment_ref
    deployment = uow.deployments.get(run.tenant_id, ref)
    if deployment is None:
        return ChildTarget(deployment_ref=ref)
    try:
        child_graph = require_graph(uow, run.tenant_id, deployment.graph_version_ref)
    except NotFound:
        return ChildTarget(deployment_ref=ref)
    return ChildTarget(
        deployment_ref=ref, graph_version_ref=deployment.graph_version_ref, entry=child_graph.entry
    )


__all__ = ["CHILDREN_CURSOR", "ChildTargetUnit", "child_target"]
