"""What canceling does to one run: a pure step, like every move of a run (ADR 0074).

The run ends CANCELED where it stood, with one audit record naming who canceled it and why; its
pending approvals are withdrawn (each noted in its trail) and ``run.canceled`` is emitted. A run
canceled on its own tells its waiting parent, which fails as for any child that did not
complete; a run canceled with its parent does not (the parent is canceled in the same commit).
The tasks it offered are withdrawn by the caller before any run is locked (see
:mod:`ecp_core.runs.engine.control`), and named here.
"""

from collections.abc import Sequence
from datetime import datetime

import attrs

from ecp_core.graphs.definition import GraphDefinition
from ecp_core.identity import ActorIdentity
from ecp_core.runs.approvals.effects import NoteApprovalAction, SaveApproval
from ecp_core.runs.approvals.model import ApprovalActionRecord, ApprovalRecord
from ecp_core.runs.run.attempts import AttemptRecord
from ecp_core.runs.run.effects import Effect, Step, WriteAudit
from ecp_core.runs.run.events import ChildEnded, ended
from ecp_core.runs.run.model import Run
from ecp_core.runs.run.state_machine import transition
from ecp_core.runs.tasks.model import Task
from ecp_core.types import ApprovalStatus, AttemptStatus, RunStatus
from ecp_core.wire import unstructure

WITHDRAWN = "withdrawn"
"""The action an approval's trail notes when its run's cancel withdrew it."""


@attrs.frozen(kw_only=True)
class Cancellation:
    """Who cancels, why, and when: the same for every run of one cancel."""

    actor: ActorIdentity
    reason: str
    now: datetime


def canceled(
    run: Run,
    graph: GraphDefinition,
    cancellation: Cancellation,
    *,
    pending: Sequence[ApprovalRecord] = (),
    withdrawn_tasks: Sequence[Task] = (),
    with_parent: bool = False,
) -> Step:
    """``run`` (not ended) canceled: its record, its withdrawn approvals, and its event.

    ``pending`` are its pending approvals; ``withdrawn_tasks`` the tasks already withdrawn;
    ``with_parent`` says the run is canceled because its parent is.
    """
    now = cancellation.now
    node = graph.node(run.next_node_id or graph.entry)
    metadata: dict[str, object] = {
        "node_kind": str(node.kind),
        "actor": unstructure(cancellation.actor),
        "withdrawn_approval_ids": [approval.approval_id for approval in pending],
        "withdrawn_task_ids": [task.task_id for task in withdrawn_tasks],
    }
    if with_parent:
        metadata["canceled_with_parent_run_id"] = run.parent_run_id
    record = AttemptRecord(
        node_id=node.id,
        status=AttemptStatus.CANCELED,
        input_snapshot={"reason": cancellation.reason},
        execution_metadata=metadata,
    )
    after = transition(
        run,
        RunStatus.CANCELED,
        now,
        paused=None,
        pending_approval_ids=(),
        approved_action=None,
        wait_until=None,
    )
    effects: list[Effect] = [WriteAudit(record)]
    for approval in pending:
        effects.append(
            SaveApproval(attrs.evolve(approval, status=ApprovalStatus.WITHDRAWN, updated_at=now))
        )
        effects.append(
            NoteApprovalAction(
                ApprovalActionRecord(
                    approval_id=approval.approval_id,
                    action=WITHDRAWN,
                    occurred_at=now,
                    actor=cancellation.actor,
                    tenant_id=approval.tenant_id,
                    metadata={"reason": cancellation.reason},
                )
            )
        )
    effects.extend(e for e in ended(after) if not (with_parent and isinstance(e, ChildEnded)))
    return Step(after, tuple(effects))


__all__ = ["WITHDRAWN", "Cancellation", "canceled"]
