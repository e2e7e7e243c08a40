"""Task queues by topic: what waits, what is locked and by whom, what ran out (ADR 0084).

``/console/tasks`` lists the tenant's topics with open tasks, each with how many wait, how many
are locked, how many locks ran out unreleased, and how long the oldest has waited, one keyset
page read in one statement (``TaskWork.topics``). ``/console/tasks?topic=…`` lists one topic's
tasks as the API's task list does (``TaskWork.page``): state, run, node, attempts, the worker
that holds the lock and until when. Both need ``task_read``, the permission of ``GET /v1/tasks``.
Nothing of a task's arguments, state or output is shown.
"""

from datetime import UTC, datetime
from typing import Any

from starlette.responses import Response

from ecp_core.errors import FieldError, ValidationFailed
from ecp_core.permissions import Permission
from ecp_core.runs.tasks.model import Task, TaskStatus, TopicQueue
from ecp_http.server.console.browser import Visit, signed_in
from ecp_http.server.console.views import duration, when
from ecp_http.wire.models import ConsoleTasksQuery

TOPICS_PAGE = 50
"""Topics per overview page."""
TASKS_PAGE = 25
"""Tasks per topic page."""
ERROR_SHOWN = 200
"""How much of a task's last error a row shows."""


def status_filter(text: str | None) -> TaskStatus | None:
    """The status a filter names (empty: none); ValidationFailed for one that is not a status."""
    if not text:
        return None
    try:
        return TaskStatus(text)
    except ValueError as exc:
        msg = f"one of: {', '.join(status.value for status in TaskStatus)}"
        raise ValidationFailed(
            "no such task status", errors=[FieldError(loc=("query", "status"), msg=msg)]
        ) from exc


def topic_row(queue: TopicQueue, now: datetime) -> dict[str, Any]:
    """What the overview shows of one topic."""
    oldest = queue.oldest_waiting_at
    return {
        "topic": queue.topic,
        "waiting": queue.waiting,
        "locked": queue.locked,
        "expired": queue.expired,
        "oldest": "" if oldest is None else duration(now - oldest),
        "oldest_at": "" if oldest is None else when(oldest),
    }


def _state(task: Task, now: datetime) -> tuple[str, str]:
    """A task's state as a badge says it, and the badge's kind."""
    if task.status is TaskStatus.LOCKED and task.locked_until and task.locked_until <= now:
        return "lock expired", "warn"
    if task.status is TaskStatus.WAITING and task.not_before and task.not_before > now:
        return "retry later", "wait"
    kinds = {
        TaskStatus.WAITING: "wait",
        TaskStatus.LOCKED: "busy",
        TaskStatus.COMPLETED: "ok",
        TaskStatus.FAILED: "bad",
        TaskStatus.WITHDRAWN: "muted",
    }
    return task.status.value, kinds[task.status]


def task_row(task: Task, now: datetime) -> dict[str, Any]:
    """What a topic's page shows of one task (never its arguments, state, output or token)."""
    state, kind = _state(task, now)
    until = task.locked_until if task.status is TaskStatus.LOCKED else None
    left = "" if until is None else duration(until - now)
    error = task.error or ""
    return {
        "task_id": task.task_id,
        "state": state,
        "kind": kind,
        "run_id": task.run_id,
        "node_id": task.node_id,
        "attempts": f"{task.attempt} of {task.max_attempts}",
        "worker": task.worker_id if until else "",
        "until": when(until) if until else "",
        "until_left": ""
        if until is None
        else f"in {left}"
        if until > now
        else f"ran out {left} ago",
        "retry_at": when(task.not_before) if state == "retry later" and task.not_before else "",
        "error": error if len(error) <= ERROR_SHOWN else error[:ERROR_SHOWN] + "…",
        "created_at": when(task.created_at),
    }


def _tasks(visit: Visit) -> Response:
    """The topics with open tasks, or one topic's tasks (``?topic=``)."""
    visit.actor(Permission.TASK_READ)
    query: ConsoleTasksQuery = visit.call.params or ConsoleTasksQuery()
    tenant, work, now = visit.session.tenant_id, visit.services.ecp.tasks, datetime.now(UTC)
    if not query.topic:
        topics, cursor = work.topics(tenant, limit=TOPICS_PAGE, cursor=query.cursor or None)
        return visit.page(
            "console_tasks.html",
            section="tasks",
            rows=[topic_row(queue, now) for queue in topics],
            next_cursor=cursor,
            first_page=bool(query.cursor),
        )
    status = status_filter(query.status)
    found, cursor = work.page(
        tenant, status=status, topic=query.topic, limit=TASKS_PAGE, cursor=query.cursor or None
    )
    return visit.page(
        "console_topic.html",
        section="tasks",
        topic=query.topic,
        chosen=query.status or "",
        statuses=[status.value for status in TaskStatus],
        rows=[task_row(task, now) for task in found],
        next_cursor=cursor,
        first_page=bool(query.cursor),
    )


tasks = signed_in(_tasks)

__all__ = ["TASKS_PAGE", "TOPICS_PAGE", "status_filter", "task_row", "tasks", "topic_row"]
