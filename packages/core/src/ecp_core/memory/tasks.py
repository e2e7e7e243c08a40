"""TaskRepository in memory."""

from collections.abc import Collection
from datetime import datetime

from ecp_core.errors import exists, missing
from ecp_core.memory.tables import Repository, detached
from ecp_core.runs.tasks import rules
from ecp_core.runs.tasks.model import Claim, Task, TaskStatus, TopicQueue, new_lock_token
from ecp_core.runs.tasks.storage import RuleApplyingTasks


class MemoryTasks(Repository, RuleApplyingTasks):
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
    ) -> list[Claim]:
        """Take up to ``limit`` claimable tasks of the topics, oldest first (``rules.take``)."""
        ready = sorted(
            (
                t
                for t in self._t.table("tasks").values()
                if t.tenant_id == tenant_id and t.topic in topics and rules.claimable(t, now)
            ),
            key=lambda t: (t.created_at, t.task_id),
        )
        claims = []
        for task in ready[:limit]:
            taken = rules.take(
                task,
                worker_id=worker_id,
                lock_token=new_lock_token(),
                now=now,
                lock_seconds=lock_seconds,
            )
            self._save(taken.task)
            claims.append(taken)
        return claims

    def _expired(
        self, tenant_id: str | None, topics: Collection[str] | None, now: datetime, limit: int
    ) -> list[Task]:
        found = sorted(
            (
                t
                for t in self._t.table("tasks").values()
                if (tenant_id is None or t.tenant_id == tenant_id)
                and (topics is None or t.topic in topics)
                and rules.expired(t, now)
            ),
            key=lambda t: (t.locked_until, t.task_id),
        )
        return found[:limit]

    def _open_of_run(self, tenant_id: str, run_id: str) -> list[Task]:
        return sorted(
            (
                t
                for t in self._t.table("tasks").values()
                if t.tenant_id == tenant_id and t.run_id == run_id and t.status in rules.OPEN
            ),
            key=lambda t: t.task_id,
        )

    def erase_run(self, tenant_id: str, run_id: str) -> int:
        """Empty the payloads of a run's tasks; how many changed."""
        changed = 0
        for stored in list(self._t.table("tasks").values()):
            if stored.tenant_id == tenant_id and stored.run_id == run_id:
                emptied = rules.erased(stored)
                if emptied != stored:
                    self._save(emptied)
                    changed += 1
        return changed

    def _save(self, task: Task) -> None:
        self._t.put("tasks", task.task_id, task)

    @detached
    def for_run(self, tenant_id: str, run_id: str, *, limit: int) -> list[Task]:
        """The run's tasks, the oldest first."""
        found = sorted(
            (
                t
                for t in self._t.table("tasks").values()
                if t.tenant_id == tenant_id and t.run_id == run_id
            ),
            key=lambda t: (t.created_at, t.task_id),
        )
        return found[:limit]

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

    @detached
    def topics(
        self, tenant_id: str, now: datetime, *, limit: int, after: str | None = None
    ) -> list[TopicQueue]:
        """The tenant's topics with open tasks by name, each with its counts."""
        by_topic: dict[str, list[Task]] = {}
        for t in self._t.table("tasks").values():
            mine = t.tenant_id == tenant_id and t.status in rules.OPEN
            if mine and (after is None or t.topic > after):
                by_topic.setdefault(t.topic, []).append(t)
        found = []
        for topic in sorted(by_topic)[:limit]:
            tasks = by_topic[topic]
            waiting = [t.created_at for t in tasks if t.status is TaskStatus.WAITING]
            locked = [t for t in tasks if t.status is TaskStatus.LOCKED]
            expired = sum(rules.expired(t, now) for t in locked)
            found.append(
                TopicQueue(
                    topic=topic,
                    waiting=len(waiting),
                    locked=len(locked) - expired,
                    expired=expired,
                    oldest_waiting_at=min(waiting, default=None),
                )
            )
        return found
