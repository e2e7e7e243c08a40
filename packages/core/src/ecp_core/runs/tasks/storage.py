"""How a storage adapter applies the task rules: load the row held, apply the rule, write it back.

Both adapters inherit :class:`RuleApplyingTasks` and supply its primitives (find the expired
and a run's open tasks, hold one task, save one task), so the expiry, heartbeat, completion and
failure paths are written once and the adapters can differ only in how they lock. Each claims in
its own way (``rules.take`` in memory, one statement on PostgreSQL), held to the same results by
the conformance suite.
"""

from abc import ABC, abstractmethod
from collections.abc import Collection
from datetime import datetime
from typing import Any

from ecp_core.runs.tasks import rules
from ecp_core.runs.tasks.model import Task


class RuleApplyingTasks(ABC):
    """The write paths of ``TaskRepository`` over three storage primitives."""

    @abstractmethod
    def _expired(
        self, tenant_id: str | None, topics: Collection[str] | None, now: datetime, limit: int
    ) -> list[Task]:
        """Up to ``limit`` tasks whose lock ran out by ``now``, held for this unit.

        None for ``tenant_id`` or ``topics``: of every tenant or topic.
        """

    @abstractmethod
    def _open_of_run(self, tenant_id: str, run_id: str) -> list[Task]:
        """The run's tasks that have not ended, by task id, held for this unit."""

    @abstractmethod
    def _held(self, tenant_id: str, task_id: str) -> Task:
        """The tenant's task, held until the unit of work ends; NotFound when absent."""

    @abstractmethod
    def _save(self, task: Task) -> None:
        """Replace the stored task."""

    def expire(
        self,
        now: datetime,
        *,
        limit: int,
        tenant_id: str | None = None,
        topics: Collection[str] | None = None,
    ) -> list[Task]:
        """Release up to ``limit`` tasks whose lock ran out (see ``rules.expire``); the results."""
        released = []
        for task in self._expired(tenant_id, topics, now, limit):
            after = rules.expire(task, now)
            self._save(after)
            released.append(after)
        return released

    def withdraw(self, tenant_id: str, run_id: str, now: datetime) -> list[Task]:
        """Withdraw the run's open tasks (its run was canceled); the tasks withdrawn."""
        withdrawn = [rules.withdraw(task, now) for task in self._open_of_run(tenant_id, run_id)]
        for task in withdrawn:
            self._save(task)
        return withdrawn

    def repoint(self, tenant_id: str, run_id: str, node_id: str, now: datetime) -> list[Task]:
        """Point the run's open tasks at ``node_id`` (its run moved version); the tasks moved."""
        moved = [rules.repoint(task, node_id, now) for task in self._open_of_run(tenant_id, run_id)]
        for task in moved:
            self._save(task)
        return moved

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
        task = self._held(tenant_id, task_id)
        extended = rules.heartbeat(task, lock_token=lock_token, now=now, lock_seconds=lock_seconds)
        self._save(extended)
        return extended

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
        task = self._held(tenant_id, task_id)
        done, applied = rules.complete(task, lock_token=lock_token, output=output, now=now)
        if applied:
            self._save(done)
        return done, applied

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
        task = self._held(tenant_id, task_id)
        failed, applied = rules.fail(
            task,
            lock_token=lock_token,
            error=error,
            now=now,
            retry_after_seconds=retry_after_seconds,
        )
        if applied:
            self._save(failed)
        return failed, applied


__all__ = ["RuleApplyingTasks"]
