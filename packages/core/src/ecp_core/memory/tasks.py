"""TaskRepository in memory."""

from collections.abc import Collection
from datetime import datetime
from typing import Any

from ecp_core.errors import exists, missing
from ecp_core.memory.tables import Repository, detached
from ecp_core.tasks import rules
from ecp_core.tasks.model import Task, TaskStatus, new_lock_token


class MemoryTasks(Repository):
    """External tasks in memory."""

    def offer(self, task: Task) -> None:
        """Store a new task."""
        if task.task_id in self._t.table("tasks"):
            raise exists("task", task.task_id)
        self._t.put("tasks", task.task_id, task)

    @detached
    def get(self, tenant_id: str, task_id: str) -> Task | None:
        """One task of the tenant, or None."""
        found: Task | None = self._t.table("tasks").get(task_id)
        return found if found is not None and found.tenant_id == tenant_id else None

    def _held(self, tenant_id: str, task_id: str) -> Task:
        found = self.get(tenant_id, task_id)
        if found is None:
            raise missing("task", task_id)
        return found

    def claim(
        self,
        tenant_id: str,
        topics: Collection[str],
        *,
        worker_id: str,
        now: datetime,
        lock_seconds: int | None,
        limit: int,
    ) -> list[Task]:
        """Lock up to ``limit`` claimable tasks of the topics, oldest first."""
        ready = sorted(
            (
                t
                for t in self._t.table("tasks").values()
                if t.tenant_id == tenant_id and t.topic in topics and rules.claimable(t, now)
            ),
            key=lambda t: (t.created_at, t.task_id),
        )
        claimed = []
        for task in ready[:limit]:
            locked = rules.claim(
                task,
                worker_id=worker_id,
                lock_token=new_lock_token(),
                now=now,
                lock_seconds=lock_seconds,
            )
            self._t.put("tasks", locked.task_id, locked)
            claimed.append(locked)
        return claimed

    def heartbeat(
        self,
        tenant_id: str,
        task_id: str,
        *,
        lock_token: str,
        now: datetime,
        lock_seconds: int | None,
    ) -> Task:
        """Extend the lock."""
        task = self._held(tenant_id, task_id)
        extended = rules.heartbeat(task, lock_token=lock_token, now=now, lock_seconds=lock_seconds)
        self._t.put("tasks", task_id, extended)
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
        """Complete the task once."""
        task = self._held(tenant_id, task_id)
        done, applied = rules.complete(task, lock_token=lock_token, output=output, now=now)
        if applied:
            self._t.put("tasks", task_id, done)
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
        """Fail the attempt once."""
        task = self._held(tenant_id, task_id)
        failed, applied = rules.fail(
            task,
            lock_token=lock_token,
            error=error,
            now=now,
            retry_after_seconds=retry_after_seconds,
        )
        if applied:
            self._t.put("tasks", task_id, failed)
        return failed, applied

    @detached
    def page(
        self,
        tenant_id: str,
        *,
        status: TaskStatus | None = None,
        topic: str | None = None,
        limit: int,
        after: str | None = None,
    ) -> list[Task]:
        """The tenant's tasks by id."""
        found = sorted(
            (
                t
                for t in self._t.table("tasks").values()
                if t.tenant_id == tenant_id
                and (status is None or t.status is status)
                and (topic is None or t.topic == topic)
                and (after is None or t.task_id > after)
            ),
            key=lambda t: t.task_id,
        )
        return found[:limit]
