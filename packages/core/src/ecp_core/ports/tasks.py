"""The external task port: the queue task nodes offer work on and workers claim it from."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from ecp_core.ports.unit import Transaction

if TYPE_CHECKING:
    from collections.abc import Collection
    from datetime import datetime

    from ecp_core.runs.tasks.model import Claim, Task, TaskStatus, TopicQueue


class TaskRepository(Protocol):
    """External tasks of every tenant; each change follows :mod:`ecp_core.runs.tasks.rules`."""

    def offer(self, task: Task) -> None:
        """Store a new task (Conflict when its id exists, in any tenant).

        A store may raise the Conflict at the unit's next statement or commit.
        """
        ...

    def get(self, tenant_id: str, task_id: str) -> Task | None:
        """One task of the tenant, or None."""
        ...

    def claim(
        self,
        tenant_id: str,
        topics: Collection[str],
        *,
        worker_id: str,
        now: datetime,
        lock_seconds: int | None,
        limit: int,
    ) -> list[Claim]:
        """Lock up to ``limit`` claimable tasks of the topics, oldest first, each with a new token.

        Each follows ``rules.take``: a task whose lock ran out comes with its lost attempt.
        ``lock_seconds`` None locks each for its own lock time. Tasks another transaction holds
        are skipped.
        """
        ...

    def expire(
        self,
        now: datetime,
        *,
        limit: int,
        tenant_id: str | None = None,
        topics: Collection[str] | None = None,
    ) -> list[Task]:
        """Release up to ``limit`` tasks whose lock ran out by ``now`` and return them after.

        Each follows ``rules.expire``: waiting again, or failed at its last attempt. Only the
        tenant's and the topics' tasks when given; tasks another transaction holds are skipped.
        """
        ...

    def heartbeat(
        self,
        tenant_id: str,
        task_id: str,
        *,
        lock_token: str,
        now: datetime,
        lock_seconds: int | None,
    ) -> Task:
        """Extend the lock (NotFound, or LockLost when the token is not the current lock)."""
        ...

    def complete(
        self,
        tenant_id: str,
        task_id: str,
        *,
        lock_token: str,
        output: dict[str, Any],
        now: datetime,
    ) -> tuple[Task, bool]:
        """Complete the task; True when applied now, False when this token completed it before."""
        ...

    def fail(
        self,
        tenant_id: str,
        task_id: str,
        *,
        lock_token: str,
        error: str,
        now: datetime,
        retry_after_seconds: int = 0,
    ) -> tuple[Task, bool]:
        """Fail the attempt; True when applied now, False when this token failed it before."""
        ...

    def withdraw(self, tenant_id: str, run_id: str, now: datetime) -> list[Task]:
        """Withdraw the run's open (waiting or locked) tasks, held until commit; those withdrawn.

        A later heartbeat, completion or failure of one of them raises RunCanceled.
        """
        ...

    def repoint(self, tenant_id: str, run_id: str, node_id: str, now: datetime) -> list[Task]:
        """Point the run's open (waiting or locked) tasks at ``node_id``, held until commit.

        Their run moved to another version of its graph (ADR 0090); locks, workers and tokens
        stay. The tasks moved, by task id.
        """
        ...

    def erase_run(self, tenant_id: str, run_id: str) -> int:
        """Empty the payloads (arguments, state, output, error) of a run's tasks; how many changed.

        The erasure of a run calls it: what a task carried is personal data like the run's state.
        """
        ...

    def for_run(self, tenant_id: str, run_id: str, *, limit: int) -> list[Task]:
        """Up to ``limit`` of the run's tasks, the oldest first (then by task id)."""
        ...

    def page(
        self,
        tenant_id: str,
        *,
        status: TaskStatus | None = None,
        topic: str | None = None,
        limit: int,
        after: str | None = None,
    ) -> list[Task]:
        """The tenant's tasks by id, after task id ``after``, optionally of one status and topic."""
        ...

    def topics(
        self, tenant_id: str, now: datetime, *, limit: int, after: str | None = None
    ) -> list[TopicQueue]:
        """The tenant's topics with open tasks by name, after ``after``: each with its counts.

        Waiting, locked (lock live at ``now``) and expired (locked, lock ran out by ``now``) tasks,
        and the oldest waiting task's offer time. Topics whose tasks all ended are not listed.
        """
        ...


class WithTasks(Protocol):
    """A unit of work that reaches the external tasks."""

    @property
    def tasks(self) -> TaskRepository:
        """The external tasks."""
        ...


class TasksUnit(Transaction, WithTasks, Protocol):
    """What the task use cases need."""


__all__ = ["TaskRepository", "TasksUnit", "WithTasks"]
