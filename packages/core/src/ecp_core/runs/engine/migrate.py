"""What moving a waiting run to another version of its graph does: a pure rule and step (ADR 0090).

A run moves when it waits (for an approval, an interrupt, a task or a timer) at a node that the
target version has under the same id, or under the id the node map gives it, and that node is
of the same kind (and, for an approval, still asks for one). Everything else about the run
stays: its state, its steps, what it waits for. The node it waits at, its pending approvals and
its open tasks point at the node in the target; one ``migrated`` record in its chain says from
which version to which, and with which map. Any other case is refused with the reason, and
nothing changes.
"""

from collections.abc import Mapping, Sequence
from datetime import datetime

import attrs

from ecp_core.graphs.definition import GraphDefinition
from ecp_core.identity import ActorIdentity
from ecp_core.runs.approvals.effects import NoteApprovalAction, SaveApproval
from ecp_core.runs.approvals.model import ApprovalActionRecord, ApprovalRecord
from ecp_core.runs.run.attempts import AttemptRecord
from ecp_core.runs.run.effects import Effect, Step, WriteAudit
from ecp_core.runs.run.model import Run
from ecp_core.runs.run.state_machine import TERMINAL
from ecp_core.runs.tasks.model import Task
from ecp_core.types import AttemptStatus, RunStatus
from ecp_core.wire import unstructure

MIGRATED = "migrated"
"""The action an approval's trail notes when its run moved to another version."""

MOVABLE = {
    RunStatus.WAITING_APPROVAL: "an approval",
    RunStatus.WAITING_INTERRUPT: "an interrupt",
    RunStatus.WAITING_TASK: "a task",
    RunStatus.WAITING_TIMER: "a timer",
}
"""The waits a run can move in, and how a reason names each."""

_SHOWN = 128
"""Characters of a name a reason shows (a node id has at most 128; longer names are cut, with …)."""


@attrs.frozen(kw_only=True)
class Migration:
    """Who moves the run, to which version, with which node map, and when."""

    actor: ActorIdentity
    target_ref: str
    node_map: Mapping[str, str] = attrs.field(factory=dict)
    now: datetime


def _graph_of(ref: str) -> str:
    return ref.rpartition("@")[0]


def _names(names: Sequence[str]) -> str:
    return ", ".join(repr(n if len(n) <= _SHOWN else n[:_SHOWN] + "…") for n in sorted(names))


def _unknown(node_map: Mapping[str, str], source: GraphDefinition, target: GraphDefinition) -> str:
    """Why the map names nodes neither version has (old ones in the source, new in the target)."""
    old = {node.id for node in source.nodes}
    new = {node.id for node in target.nodes}
    missing_old = [name for name in node_map if name not in old]
    missing_new = [name for name in node_map.values() if name not in new]
    reasons = []
    if missing_old:
        reasons.append(f"the run's version has no node {_names(missing_old)}")
    if missing_new:
        reasons.append(f"the target version has no node {_names(missing_new)}")
    return "the node map names unknown nodes: " + "; ".join(reasons) if reasons else ""


def refusal(
    run: Run, source: GraphDefinition, target: GraphDefinition, migration: Migration
) -> str | None:
    """Why ``run`` (on ``source``) cannot move to ``target`` as ``migration`` asks; None: it can."""
    ref = migration.target_ref
    if run.status in TERMINAL:
        return f"run {run.run_id} has ended ({run.public_status.value})"
    if _graph_of(ref) != _graph_of(run.graph_version_ref):
        return (
            f"{ref} is a version of graph {_graph_of(ref)!r}, not of the run's graph "
            f"{_graph_of(run.graph_version_ref)!r}"
        )
    if ref == run.graph_version_ref:
        return f"run {run.run_id} is on {ref} already"
    unknown = _unknown(migration.node_map, source, target)
    if unknown:
        return unknown
    wait = MOVABLE.get(run.status)
    if wait is None or run.next_node_id is None:
        if run.status is RunStatus.WAITING_CHILD:
            return (
                f"run {run.run_id} waits for a child run; only a run waiting for an approval, "
                "an interrupt, a task or a timer can move"
            )
        return f"run {run.run_id} is {run.public_status.value}, not waiting"
    old = source.node(run.next_node_id)
    name = migration.node_map.get(old.id, old.id)
    mapped = "" if name == old.id else f" (mapped to {name!r})"
    found = next((node for node in target.nodes if node.id == name), None)
    if found is None:
        return f"node {old.id!r}{mapped}, where the run waits for {wait}, does not exist in {ref}"
    if found.kind is not old.kind:
        return (
            f"node {name!r} is a {found.kind} node in {ref}, but the run waits for {wait} at "
            f"{old.id!r}, a {old.kind} node"
        )
    if run.status is RunStatus.WAITING_APPROVAL and not found.asks_approval:
        return f"node {name!r} in {ref} asks for no approval, and the run waits for one"
    return None


def target_node(run: Run, migration: Migration) -> str:
    """The id of the node ``run`` waits at once it moved (its node, renamed through the map)."""
    assert run.next_node_id is not None  # noqa: S101 - a movable run waits at a node
    return migration.node_map.get(run.next_node_id, run.next_node_id)


def migrated(
    run: Run,
    target: GraphDefinition,
    migration: Migration,
    *,
    pending: Sequence[ApprovalRecord] = (),
    moved_tasks: Sequence[Task] = (),
) -> Step:
    """``run`` (movable: :func:`refusal` said None) on the target version, and its record.

    ``pending`` are its pending approvals, pointed at the node here; ``moved_tasks`` the open
    tasks the caller pointed at it already, named in the record.
    """
    now = migration.now
    node = target.node(target_node(run, migration))
    paused = None if run.paused is None else attrs.evolve(run.paused, node_id=node.id)
    after = attrs.evolve(
        run,
        graph_version_ref=migration.target_ref,
        next_node_id=node.id,
        paused=paused,
        updated_at=now,
    )
    facts = {
        "from_graph_version_ref": run.graph_version_ref,
        "to_graph_version_ref": migration.target_ref,
        "from_node_id": run.next_node_id,
        "node_map": dict(migration.node_map),
    }
    record = AttemptRecord(
        node_id=node.id,
        status=AttemptStatus.MIGRATED,
        execution_metadata={
            "node_kind": str(node.kind),
            "actor": unstructure(migration.actor),
            **facts,
            "approval_ids": [approval.approval_id for approval in pending],
            "task_ids": [task.task_id for task in moved_tasks],
        },
    )
    effects: list[Effect] = [WriteAudit(record)]
    for approval in pending:
        moved = attrs.evolve(
            approval, node_id=node.id, graph_version_ref=migration.target_ref, updated_at=now
        )
        effects.append(SaveApproval(moved))
        effects.append(
            NoteApprovalAction(
                ApprovalActionRecord(
                    approval_id=approval.approval_id,
                    action=MIGRATED,
                    occurred_at=now,
                    actor=migration.actor,
                    tenant_id=approval.tenant_id,
                    metadata=facts,
                )
            )
        )
    return Step(after, tuple(effects))


__all__ = ["MIGRATED", "MOVABLE", "Migration", "migrated", "refusal", "target_node"]
