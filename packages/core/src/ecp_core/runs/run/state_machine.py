"""The run state machine: which status may follow which."""

from datetime import datetime
from typing import Any

from ecp_core.errors import IllegalTransition
from ecp_core.evolve import evolve
from ecp_core.runs.run.model import Run
from ecp_core.types import RunStatus

S = RunStatus

TRANSITIONS: dict[RunStatus, frozenset[RunStatus]] = {
    S.PENDING: frozenset({S.RUNNING, S.CANCELED}),
    S.RUNNING: frozenset(
        {
            S.WAITING_APPROVAL,
            S.WAITING_INTERRUPT,
            S.WAITING_TASK,
            S.WAITING_CHILD,
            S.WAITING_TIMER,
            S.COMPLETED,
            S.FAILED,
            S.CANCELED,
        }
    ),
    S.WAITING_APPROVAL: frozenset({S.RUNNING, S.FAILED, S.CANCELED}),
    S.WAITING_INTERRUPT: frozenset({S.RUNNING, S.CANCELED}),
    S.WAITING_TASK: frozenset({S.RUNNING, S.FAILED, S.CANCELED}),
    S.WAITING_CHILD: frozenset({S.RUNNING, S.FAILED, S.CANCELED}),
    S.WAITING_TIMER: frozenset({S.RUNNING, S.CANCELED}),
    S.COMPLETED: frozenset(),
    S.FAILED: frozenset(),
    S.TERMINATED_BY_POLICY: frozenset(),
    S.CANCELED: frozenset(),
}
"""Every legal move. A run changes node while RUNNING without changing status; any run that has
not ended may be canceled."""

TERMINAL = frozenset(status for status, nexts in TRANSITIONS.items() if not nexts)
WAITING = frozenset(
    {S.WAITING_APPROVAL, S.WAITING_INTERRUPT, S.WAITING_TASK, S.WAITING_CHILD, S.WAITING_TIMER}
)
RUNNABLE = frozenset({S.PENDING, S.RUNNING})
"""Statuses a dispatcher advances."""


def can_transition(current: RunStatus, target: RunStatus) -> bool:
    """Say whether a run may move from ``current`` to ``target``."""
    return target in TRANSITIONS[current]


def transition(run: Run, target: RunStatus, now: datetime, **changes: Any) -> Run:  # noqa: ANN401
    """Return ``run`` moved to ``target`` with ``changes``; raise IllegalTransition otherwise."""
    if not can_transition(run.status, target):
        raise IllegalTransition(
            f"run {run.run_id} cannot go from {run.status.value} to {target.value}"
        )
    return evolve(run, status=target, updated_at=now, **changes)
