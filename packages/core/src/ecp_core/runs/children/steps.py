"""The step a child run's end makes in its parent: the subgraph node's one attempt (ADR 0046).

Pure like every step. The lifecycle hands a parent that waits in ``WAITING_CHILD`` the child that
ended, in the transaction of the child's final save. A completed child's output is written at the
node's ``target_path`` (by default the node id) and the parent moves on; any other end fails the
node and the parent with ``child_failed``. Either way the parent's chain gets one record naming
the child (``execution_metadata.child_run_id``); the child's own records stay in its own chain.
"""

from typing import Any

from ecp_core.canonical import thaw
from ecp_core.graphs.definition import GraphDefinition, NodeDefinition
from ecp_core.graphs.paths import set_path
from ecp_core.runs.children.start import child_input, subgraph_call
from ecp_core.runs.run import model as m
from ecp_core.runs.run.attempts import AttemptRecord
from ecp_core.runs.run.effects import Step
from ecp_core.runs.run.model import Run
from ecp_core.runs.run.moves import Moves
from ecp_core.runs.run.operations import MissingSource
from ecp_core.types import AttemptStatus, NodeKind, RunStatus


def awaits(parent: Run, child: Run) -> bool:
    """Whether ``parent`` waits for ``child`` (its own child, at a subgraph node) to end."""
    return (
        child.parent_run_id == parent.run_id
        and child.tenant_id == parent.tenant_id
        and parent.status is RunStatus.WAITING_CHILD
        and parent.next_node_id is not None
    )


def child_metadata(node: NodeDefinition, child: Run) -> dict[str, Any]:
    """What the parent's record says of the child: which run, of which deployment, how it ended."""
    return {
        "node_kind": str(NodeKind.SUBGRAPH),
        "deployment_ref": child.deployment_ref,
        "graph_version_ref": child.graph_version_ref,
        "child_run_id": child.run_id,
        "child_status": child.public_status.value,
        "capabilities": [str(c) for c in subgraph_call(node).capability_refs],
    }


def _input_of(parent: Run, node: NodeDefinition) -> dict[str, Any] | None:
    """The input the child started with: granted by an approval, or built from the state."""
    approved = parent.approved_action
    if approved is not None and approved.node_id == node.id:
        return dict(thaw(approved.arguments))
    try:
        return child_input(subgraph_call(node), parent.state)
    except MissingSource:  # the state has not changed since the start; kept total anyway
        return None


class ChildSteps:
    """Decides what a child's end does to the parent that waits for it."""

    def __init__(self, steps: Moves) -> None:
        """Continue or end parents through ``steps``."""
        self._steps = steps

    def ended(self, parent: Run, graph: GraphDefinition, child: Run) -> Step:
        """``child`` reached a terminal status: record the parent's node and continue or fail."""
        node = graph.node(parent.next_node_id or graph.entry)
        metadata = child_metadata(node, child)
        started_with = _input_of(parent, node)
        if child.status is RunStatus.COMPLETED:
            target = node.target_path or node.id
            output = thaw(child.output or {})
            record = AttemptRecord(
                node_id=node.id,
                status=AttemptStatus.SUCCEEDED,
                input_snapshot=started_with,
                output_snapshot={target: output},
                execution_metadata=metadata,
            )
            return self._steps.move_on(
                parent, graph, record, set_path(parent.state, target, output)
            )
        failure = child.failure_state
        why = "" if failure is None else f" ({failure.reason})"
        message = f"child run {child.run_id} ended {child.public_status.value}{why}"
        record = AttemptRecord(
            node_id=node.id,
            status=AttemptStatus.FAILED,
            input_snapshot=started_with,
            execution_metadata=metadata,
            error={"type": "ChildFailed", "message": message},
        )
        return self._steps.fail(parent, record, m.CHILD_FAILED, message)


__all__ = ["ChildSteps", "awaits", "child_metadata"]
