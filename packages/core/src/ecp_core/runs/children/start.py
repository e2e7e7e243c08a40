"""Starting a child run from a ``subgraph`` node: its target, its input, and the run (pure).

The run service resolves the node's deployment before the step (:func:`ecp_core.runs.children.
child_target`); the step then starts the child, or fails the node when the deployment is
missing or the child would nest deeper than :data:`MAX_CHILD_DEPTH` (ADR 0046).
"""

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import attrs

from ecp_core.canonical import thaw
from ecp_core.graphs.definition import NodeDefinition, SubgraphCall
from ecp_core.runs.run import model as m
from ecp_core.runs.run.attempts import AttemptRecord
from ecp_core.runs.run.model import Run
from ecp_core.runs.run.operations import apply_operations
from ecp_core.types import AttemptStatus, RunStatus

MAX_CHILD_DEPTH = 8
"""How many levels of child runs may nest below a root run (its children are level 1)."""


@attrs.frozen(kw_only=True)
class ChildTarget:
    """What a subgraph node's deployment resolved to; ``graph_version_ref`` None: missing."""

    deployment_ref: str
    graph_version_ref: str | None = None
    entry: str | None = None


@attrs.frozen(kw_only=True)
class ChildRefusal:
    """Why the node starts no child: the run's failure reason and the node's failed attempt."""

    reason: str
    message: str
    attempt: AttemptRecord


def subgraph_call(node: NodeDefinition) -> SubgraphCall:
    """The node's call (graph validation guarantees a subgraph node has one)."""
    assert node.subgraph is not None  # noqa: S101 - graph validation guarantees it
    return node.subgraph


def child_input(call: SubgraphCall, state: Mapping[str, Any]) -> dict[str, Any]:
    """The child's input: the parent's whole state, or what ``call.input`` builds from it.

    Raises :class:`~ecp_core.runs.run.operations.MissingSource` for a copy from a missing path.
    """
    if call.input is None:
        return dict(thaw(state))
    return apply_operations(call.input, {}, source=state)[0]


def subgraph_metadata(call: SubgraphCall) -> dict[str, Any]:
    """What an attempt's record says of the subgraph call."""
    return {
        "deployment_ref": call.deployment_ref,
        "capabilities": [str(c) for c in call.capability_refs],
    }


def start_child(
    run: Run,
    node: NodeDefinition,
    child_in: dict[str, Any],
    target: ChildTarget | None,
    metadata: dict[str, Any],
    *,
    run_id: str,
    now: datetime,
) -> Run | ChildRefusal:
    """The PENDING child run ``node`` starts for ``run``, or why it starts none.

    The child has its own id and chain, the parent's thread and campaign, and its ancestors.
    """
    call = subgraph_call(node)
    depth = len(run.ancestor_run_ids) + 1
    if target is None or target.graph_version_ref is None or target.entry is None:
        reason, kind = m.CHILD_DEPLOYMENT_MISSING, "ChildDeploymentMissing"
        message = f"no deployment {call.deployment_ref!r} to start a child run of"
    elif depth > MAX_CHILD_DEPTH:
        reason, kind = m.CHILD_DEPTH_EXCEEDED, "ChildDepthExceeded"
        message = f"a child run would nest {depth} levels deep; the limit is {MAX_CHILD_DEPTH}"
    else:
        return Run(
            run_id=run_id,
            tenant_id=run.tenant_id,
            deployment_ref=target.deployment_ref,
            graph_version_ref=target.graph_version_ref,
            thread_id=run.thread_id,
            status=RunStatus.PENDING,
            state=child_in,
            next_node_id=target.entry,
            parent_run_id=run.run_id,
            campaign_id=run.campaign_id,
            ancestor_run_ids=(run.run_id, *run.ancestor_run_ids),
            started_by=run.started_by,
            created_at=now,
            updated_at=now,
        )
    attempt = AttemptRecord(
        node_id=node.id,
        status=AttemptStatus.FAILED,
        input_snapshot=child_in,
        execution_metadata=metadata,
        error={"type": kind, "message": message},
    )
    return ChildRefusal(reason=reason, message=message, attempt=attempt)


__all__ = [
    "MAX_CHILD_DEPTH",
    "ChildRefusal",
    "ChildTarget",
    "child_input",
    "start_child",
    "subgraph_call",
    "subgraph_metadata",
]
