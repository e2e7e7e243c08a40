"""Steps that start from an external task: a worker's completion, failure, or an expired lock.

Like every step they read no storage: :class:`TaskSteps` decides, :mod:`ecp_core.runs.engine.lifecycle`
applies. Each task attempt is one audit record naming the worker that held it
(``execution_metadata.worker_id``); a completion merges the task's output into the run state and
moves on, and the failure of the last attempt ends the run with ``task_failed``.
"""

from typing import Any

import attrs

from ecp_core.canonical import thaw
from ecp_core.graphs.definition import GraphDefinition, NodeDefinition
from ecp_core.ports.system import Clock
from ecp_core.runs.run import model as m
from ecp_core.runs.run.attempts import AttemptRecord
from ecp_core.runs.run.effects import Step, WriteAudit
from ecp_core.runs.run.model import Run
from ecp_core.runs.run.moves import Moves
from ecp_core.runs.run.walk import action_metadata
from ecp_core.runs.tasks.model import Task, TaskStatus
from ecp_core.runs.tasks.rules import LOCK_EXPIRED
from ecp_core.types import AttemptStatus


def task_metadata(node: NodeDefinition, task: Task) -> dict[str, Any]:
    """What an attempt's record says of the task: the action, the attempt and its worker."""
    assert node.action is not None  # noqa: S101 - graph validation guarantees it
    return {
        "node_kind": str(node.kind),
        **action_metadata(node.action),
        "task_id": task.task_id,
        "topic": task.topic,
        "task_attempt": task.attempt,
        "max_attempts": task.max_attempts,
        "worker_id": task.worker_id,
    }


class TaskSteps:
    """Decides what a task's completion or failed attempt does to the run that waits for it."""

    def __init__(self, steps: Moves, clock: Clock) -> None:
        """Continue or end runs through ``steps``; stamp changes with ``clock``."""
        self._steps = steps
        self._clock = clock

    def completed(self, run: Run, graph: GraphDefinition, task: Task) -> Step:
        """``task`` completed (applied now): record the attempt, merge its output, move on."""
        output = thaw(task.output or {})
        record = AttemptRecord(
            node_id=task.node_id,
            status=AttemptStatus.SUCCEEDED,
            input_snapshot=thaw(task.arguments),
            output_snapshot=output,
            execution_metadata=task_metadata(graph.node(task.node_id), task),
        )
        return self._steps.move_on(run, graph, record, {**run.state, **output})

    def attempt_failed(self, run: Run, graph: GraphDefinition, task: Task) -> Step:
        """An attempt of ``task`` failed (reported or its lock expired): record it.

        When that was the last attempt (the task is failed for good) the run ends FAILED with
        ``task_failed``; otherwise it keeps waiting while the task waits for the next claim.
        """
        error = task.error or "failed"
        kind = "LockExpired" if error == LOCK_EXPIRED else "TaskFailed"
        record = AttemptRecord(
            node_id=task.node_id,
            status=AttemptStatus.FAILED,
            input_snapshot=thaw(task.arguments),
            execution_metadata=task_metadata(graph.node(task.node_id), task),
            error={"type": kind, "message": error},
        )
        if task.status is TaskStatus.FAILED:
            message = f"task {task.topic!r} failed on attempt {task.attempt}: {error}"
            return self._steps.fail(run, record, m.TASK_FAILED, message)
        still = attrs.evolve(run, updated_at=self._clock.now())
        return Step(still, (WriteAudit(record),))


__all__ = ["TaskSteps", "task_metadata"]
