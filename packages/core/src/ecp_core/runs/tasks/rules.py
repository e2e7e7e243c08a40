"""The task queue's rules as pure functions; both storage adapters apply exactly these.

A claim hands out a task that is waiting (and past its retry backoff) or whose lock expired with
attempts left (at-least-once; the lost attempt is the claim's to record). Only the current lock
token heartbeats, completes or fails it; once another claim took the task, the old token gets
:class:`~ecp_core.errors.LockLost`. Completing or failing again with the token that did it
changes nothing (idempotent), so exactly one completion is applied.
"""

from datetime import datetime, timedelta
from typing import Any

import attrs

from ecp_core.errors import LockLost, RunCanceled
from ecp_core.runs.tasks.model import Claim, Task, TaskStatus

LOCK_EXPIRED = "lock expired"
"""The error an attempt whose lock ran out is recorded with."""


def expired(task: Task, now: datetime) -> bool:
    """Whether ``task`` is locked under a lock that ran out by ``now``."""
    return (
        task.status is TaskStatus.LOCKED
        and task.locked_until is not None
        and task.locked_until <= now
    )


def claimable(task: Task, now: datetime) -> bool:
    """Whether a claim at ``now`` may take ``task``: waiting and due, or its lock ran out.

    A task whose lock ran out on its last attempt has none left: the lock-expiry sweep fails it.
    """
    if task.status is TaskStatus.WAITING:
        return task.not_before is None or task.not_before <= now
    return expired(task, now) and task.attempt < task.max_attempts


def expire(task: Task, now: datetime) -> Task:
    """``task`` after its lock ran out: the attempt failed with :data:`LOCK_EXPIRED`.

    Like a reported failure, it waits again (at once) unless that was its last attempt, which
    fails it for good. The claim's worker id and token stay, so the old holder's late
    completion gets LockLost and its late failure is a repeat.
    """
    if not expired(task, now):
        return task
    status = TaskStatus.FAILED if task.attempt >= task.max_attempts else TaskStatus.WAITING
    return attrs.evolve(
        task, status=status, error=LOCK_EXPIRED, locked_until=None, not_before=None, updated_at=now
    )


def claim(
    task: Task, *, worker_id: str, lock_token: str, now: datetime, lock_seconds: int | None
) -> Task:
    """``task`` claimed by ``worker_id`` under ``lock_token`` (the task's own lock time if None)."""
    seconds = task.lock_seconds if lock_seconds is None else lock_seconds
    return attrs.evolve(
        task,
        status=TaskStatus.LOCKED,
        attempt=task.attempt + 1,
        worker_id=worker_id,
        lock_token=lock_token,
        locked_until=now + timedelta(seconds=seconds),
        not_before=None,
        updated_at=now,
    )


def take(
    task: Task, *, worker_id: str, lock_token: str, now: datetime, lock_seconds: int | None
) -> Claim:
    """A claimable ``task`` taken: its lost attempt first when its lock ran out, then claimed."""
    lost = expire(task, now) if expired(task, now) else None
    taken = claim(
        lost or task, worker_id=worker_id, lock_token=lock_token, now=now, lock_seconds=lock_seconds
    )
    return Claim(task=taken, lost=lost)


def _holds(task: Task, lock_token: str) -> None:
    """Raise LockLost unless ``lock_token`` is the lock the task is held under.

    A task withdrawn with its canceled run raises RunCanceled, whoever asks.
    """
    if task.status is TaskStatus.WITHDRAWN:
        raise RunCanceled(f"task {task.task_id}: its run was canceled and the task withdrawn")
    if task.status is not TaskStatus.LOCKED or task.lock_token != lock_token:
        raise LockLost(f"task {task.task_id}: the lock of this token was lost")


def heartbeat(task: Task, *, lock_token: str, now: datetime, lock_seconds: int | None) -> Task:
    """``task`` locked ``lock_seconds`` (or its own lock time) longer from ``now``."""
    _holds(task, lock_token)
    seconds = task.lock_seconds if lock_seconds is None else lock_seconds
    return attrs.evolve(task, locked_until=now + timedelta(seconds=seconds), updated_at=now)


def complete(
    task: Task, *, lock_token: str, output: dict[str, Any], now: datetime
) -> tuple[Task, bool]:
    """``task`` completed with ``output``, and whether that was applied now (False: again)."""
    if task.status is TaskStatus.COMPLETED and task.lock_token == lock_token:
        return task, False
    _holds(task, lock_token)  # a withdrawn task: RunCanceled
    done = attrs.evolve(
        task, status=TaskStatus.COMPLETED, output=output, locked_until=None, updated_at=now
    )
    return done, True


def fail(
    task: Task,
    *,
    lock_token: str,
    error: str,
    now: datetime,
    retry_after_seconds: int = 0,
) -> tuple[Task, bool]:
    """``task`` after a failed attempt, and whether that was applied now (False: again).

    It waits again, not before ``retry_after_seconds`` from ``now``, until its last attempt;
    a failure of the last attempt fails it for good.
    """
    released = task.status in (TaskStatus.WAITING, TaskStatus.FAILED)
    if released and task.lock_token == lock_token and task.error is not None:
        return task, False
    _holds(task, lock_token)
    if task.attempt >= task.max_attempts:
        failed = attrs.evolve(
            task, status=TaskStatus.FAILED, error=error, locked_until=None, updated_at=now
        )
        return failed, True
    retry = attrs.evolve(
        task,
        status=TaskStatus.WAITING,
        error=error,
        locked_until=None,
        not_before=now + timedelta(seconds=retry_after_seconds),
        updated_at=now,
    )
    return retry, True


OPEN = frozenset({TaskStatus.WAITING, TaskStatus.LOCKED})
"""Statuses of a task that has not ended: a cancel withdraws these."""


def withdraw(task: Task, now: datetime) -> Task:
    """``task`` withdrawn because its run was canceled (an ended task stays as it is).

    The lock's worker and token stay, so the holder's late report gets RunCanceled.
    """
    if task.status not in OPEN:
        return task
    return attrs.evolve(
        task, status=TaskStatus.WITHDRAWN, locked_until=None, not_before=None, updated_at=now
    )


def repoint(task: Task, node_id: str, now: datetime) -> Task:
    """``task`` offered by ``node_id`` instead: its run moved to another graph version (ADR 0090).

    Only an open task moves (an ended one stays as it is); its lock, worker and token stay, so its
    holder reports as before.
    """
    if task.status not in OPEN:
        return task
    return attrs.evolve(task, node_id=node_id, updated_at=now)


def erased(task: Task) -> Task:
    """``task`` without its payloads: no arguments, state, output or error text."""
    return attrs.evolve(
        task, arguments={}, state={}, output=None if task.output is None else {}, error=None
    )
