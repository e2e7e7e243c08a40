"""Steps of a wait node: the run starts waiting, and it wakes (ADR 0078).

Each is one audit record: ``waiting_timer`` with the due time when the run starts waiting, and
``succeeded`` with the due time and the moment it woke when it goes on. A time from the state that
has already passed is one ``succeeded`` record and no wait. A time that cannot be read ends the
run with ``wait_time_invalid``.
"""

from typing import Any

import attrs

from ecp_core.graphs.definition import GraphDefinition, NodeDefinition
from ecp_core.ports.system import Clock
from ecp_core.runs.run import model as m
from ecp_core.runs.run.attempts import AttemptRecord
from ecp_core.runs.run.effects import Step, WriteAudit
from ecp_core.runs.run.model import Run
from ecp_core.runs.run.moves import Moves
from ecp_core.runs.run.state_machine import transition
from ecp_core.runs.timers.due import WaitTimeInvalid, due_time
from ecp_core.types import AttemptStatus, NodeKind, RunStatus
from ecp_core.wire import format_timestamp


def wait_metadata(node: NodeDefinition) -> dict[str, Any]:
    """What a wait node's records say of how it waits: its ``seconds`` or its ``until_path``."""
    if node.seconds is not None:
        return {"seconds": node.seconds}
    return {"until_path": node.until_path}


class TimerSteps:
    """Decides what reaching a wait node, and its time coming, do to a run."""

    def __init__(self, moves: Moves, clock: Clock) -> None:
        """Continue or end runs through ``moves``; read the time from ``clock``."""
        self._moves = moves
        self._clock = clock

    def wait(
        self, run: Run, graph: GraphDefinition, node: NodeDefinition, base: dict[str, Any]
    ) -> Step:
        """``run`` reached ``node``: it waits until its due time (or goes on, if that passed)."""
        now = self._clock.now()
        metadata = {**base, **wait_metadata(node)}
        try:
            due = due_time(node, run.state, now)
        except WaitTimeInvalid as exc:
            error = {"type": type(exc).__name__, "message": str(exc)}
            record = AttemptRecord(
                node_id=node.id,
                status=AttemptStatus.FAILED,
                execution_metadata=metadata,
                error=error,
            )
            return self._moves.fail(run, record, m.WAIT_TIME_INVALID, str(exc))
        metadata["wait_until"] = format_timestamp(due)
        if due <= now:
            metadata["woke_at"] = format_timestamp(now)
            record = AttemptRecord(
                node_id=node.id, status=AttemptStatus.SUCCEEDED, execution_metadata=metadata
            )
            return self._moves.move_on(run, graph, record, dict(run.state))
        record = AttemptRecord(
            node_id=node.id, status=AttemptStatus.WAITING_TIMER, execution_metadata=metadata
        )
        waiting = transition(
            run, RunStatus.WAITING_TIMER, now, next_node_id=node.id, wait_until=due
        )
        return Step(waiting, (WriteAudit(record),))

    def woke(self, run: Run, graph: GraphDefinition) -> Step:
        """``run``'s time came (it is WAITING_TIMER, its ``wait_until`` passed): it goes on."""
        assert run.wait_until is not None  # noqa: S101 - a waiting run has its due time
        assert run.next_node_id is not None  # noqa: S101 - and waits at its wait node
        node = graph.node(run.next_node_id)
        now = self._clock.now()
        metadata = {
            "node_kind": str(NodeKind.WAIT),
            **wait_metadata(node),
            "wait_until": format_timestamp(run.wait_until),
            "woke_at": format_timestamp(now),
        }
        record = AttemptRecord(
            node_id=node.id, status=AttemptStatus.SUCCEEDED, execution_metadata=metadata
        )
        return self._moves.move_on(
            attrs.evolve(run, wait_until=None), graph, record, dict(run.state)
        )


__all__ = ["TimerSteps", "wait_metadata"]
