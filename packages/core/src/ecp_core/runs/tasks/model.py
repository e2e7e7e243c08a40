"""An external task: one offer of a task node's work to the workers of its topic."""

import enum
import secrets
from datetime import datetime
from typing import Annotated, Any

import attrs

from ecp_core.constraints import AwareUtc, Items, Range, Text, checked

DEFAULT_LOCK_SECONDS = 60
"""How long a claim holds a task when neither the node nor the worker says."""

DEFAULT_MAX_ATTEMPTS = 3
"""How many attempts a task gets when its node does not say."""


class TaskStatus(enum.StrEnum):
    """Where a task stands: waiting to be claimed, held by a worker, or done either way."""

    WAITING = "waiting"
    LOCKED = "locked"
    COMPLETED = "completed"
    FAILED = "failed"
    WITHDRAWN = "withdrawn"
    """Its run was canceled while the task was open; nothing a worker reports is applied."""


def new_lock_token() -> str:
    """A fresh opaque lock token, unguessable, handed to the worker that claims a task."""
    return secrets.token_urlsafe(24)


@attrs.frozen(kw_only=True, field_transformer=checked)
class Task:
    """A stored task.

    ``attempt`` counts claims (0 until the first). ``worker_id`` and ``lock_token`` name the
    latest claim and stay after it ends, so that a repeated completion or failure is recognised;
    ``locked_until`` is set only while locked. ``not_before`` holds a failed attempt's retry back.
    """

    task_id: Annotated[str, Text(1, 512)]
    tenant_id: Annotated[str, Text(1, 512)]
    run_id: Annotated[str, Text(1, 512)]
    node_id: Annotated[str, Text(1, 512)]
    topic: Annotated[str, Text(1, 512)]
    arguments: dict[str, Any] = attrs.field(factory=dict)
    state: dict[str, Any] = attrs.field(factory=dict)
    status: TaskStatus = TaskStatus.WAITING
    attempt: Annotated[int, Range(0)] = 0
    max_attempts: Annotated[int, Range(1)] = DEFAULT_MAX_ATTEMPTS
    lock_seconds: Annotated[int, Range(1, 3600)] = DEFAULT_LOCK_SECONDS
    worker_id: str | None = None
    lock_token: str | None = None
    locked_until: Annotated[datetime, AwareUtc()] | None = None
    not_before: Annotated[datetime, AwareUtc()] | None = None
    output: dict[str, Any] | None = None
    error: str | None = None
    created_at: Annotated[datetime, AwareUtc()]
    updated_at: Annotated[datetime, AwareUtc()]


@attrs.frozen
class Claim:
    """A task a claim took: locked under its new token, and its lost attempt if it had one."""

    task: Task
    """The task as claimed."""
    lost: Task | None = None
    """The same task after its previous lock ran out (the attempt to record), or None."""


WorkerId = Annotated[str, Text(1, 256, trimmed=True)]
Topic = Annotated[str, Text(1, 512)]
LockToken = Annotated[str, Text(1, 256)]


@attrs.frozen(kw_only=True, field_transformer=checked)
class NextClaim:
    """Which tasks a worker takes: its id, its topics, how many and for how long.

    A completion may carry one (``claim_next``) to take the worker's next tasks in the same
    request; it never waits. ``lock_seconds`` None locks for each task's own time.
    """

    worker_id: WorkerId
    """The worker's id; the task is held in its name."""
    topics: Annotated[tuple[Topic, ...], Items(1, 100)]
    """The topics the worker takes tasks of."""
    max_tasks: Annotated[int, Range(1, 100)] = 1
    """How many tasks to take at most."""
    lock_seconds: Annotated[int, Range(1, 3600)] | None = None
    """Seconds the worker holds the tasks; null takes each task's own lock time."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class TaskClaimRequest(NextClaim):
    """Body of ``POST /v1/tasks/claim``: which tasks the worker takes, and how long it waits."""

    wait_seconds: Annotated[int, Range(0, 30)] = 0
    """How long to wait for a task when none is ready (long polling)."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class TaskHeartbeatRequest:
    """Body of ``POST /v1/tasks/{task_id}/heartbeat``; None extends by the task's lock time."""

    lock_token: LockToken
    lock_seconds: Annotated[int, Range(1, 3600)] | None = None
    """Seconds more the worker holds the task; null takes the task's own lock time."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class TaskCompleteRequest:
    """Body of ``POST /v1/tasks/{task_id}/complete``: the output merged into the run state."""

    lock_token: LockToken
    output: dict[str, Any] = attrs.field(factory=dict)
    """The task's result, handed back to the run."""
    claim_next: NextClaim | None = None
    """The worker's next tasks to claim in the same request, as a claim would without waiting;
    null claims nothing. A repeated completion claims nothing either."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class TaskFailRequest:
    """Body of ``POST /v1/tasks/{task_id}/fail``; a retry waits ``retry_after_seconds``."""

    lock_token: LockToken
    error: Annotated[str, Text(1, 4000)]
    """What went wrong."""
    retry_after_seconds: Annotated[int, Range(0, 86_400)] = 0
    """Seconds before the task may be claimed again, when attempts remain."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class ClaimedTask:
    """A task as its claiming worker gets it: the work, and the token that holds it."""

    task_id: str
    lock_token: str
    run_id: str
    node_id: str
    attempt: int
    """Which attempt this is (1 on the first)."""
    topic: str
    """The topic the task was queued on."""
    arguments: dict[str, Any]
    """The task's arguments, from the node."""
    state: dict[str, Any]
    """The run's state when the task was queued."""
    locked_until: datetime

    @classmethod
    def of(cls, task: Task) -> "ClaimedTask":
        """The claimed view of a task a claim just locked."""
        assert task.lock_token is not None  # noqa: S101 - a claimed task is locked
        assert task.locked_until is not None  # noqa: S101
        return cls(
            task_id=task.task_id,
            lock_token=task.lock_token,
            run_id=task.run_id,
            node_id=task.node_id,
            attempt=task.attempt,
            topic=task.topic,
            arguments=task.arguments,
            state=task.state,
            locked_until=task.locked_until,
        )


@attrs.frozen(kw_only=True, field_transformer=checked)
class TaskClaimResponse:
    """Answer to a claim: the tasks now locked for the worker (none when nothing was claimable)."""

    tasks: tuple[ClaimedTask, ...]
    """The tasks claimed; empty when none was ready."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class TaskLockResponse:
    """Answer to a heartbeat: until when the worker now holds the task."""

    task_id: str
    locked_until: datetime


@attrs.frozen(kw_only=True, field_transformer=checked)
class TaskSummary:
    """A task as operators list it: where it stands and who holds it, never its lock token."""

    task_id: str
    run_id: str
    node_id: str
    topic: str
    """The topic the task was queued on."""
    status: TaskStatus
    """Where the task is in its life."""
    attempt: int
    """How many attempts were made."""
    max_attempts: int
    """How many attempts are allowed."""
    worker_id: str | None
    """The worker holding it, if one does."""
    locked_until: datetime | None
    not_before: datetime | None
    """When it may be claimed next (RFC 3339, UTC)."""
    error: str | None
    """The last attempt's error."""
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, task: Task) -> "TaskSummary":
        """The summary of a stored task."""
        return cls(
            task_id=task.task_id,
            run_id=task.run_id,
            node_id=task.node_id,
            topic=task.topic,
            status=task.status,
            attempt=task.attempt,
            max_attempts=task.max_attempts,
            worker_id=task.worker_id,
            locked_until=task.locked_until,
            not_before=task.not_before,
            error=task.error,
            created_at=task.created_at,
            updated_at=task.updated_at,
        )


@attrs.frozen(kw_only=True, field_transformer=checked)
class TaskCompletion(TaskSummary):
    """Answer to a completion: the task, and the next tasks claimed when ``claim_next`` asked."""

    next_tasks: tuple[ClaimedTask, ...]
    """The tasks ``claim_next`` claimed for the worker; empty when it was not given, when none
    was ready, or when this completion repeated an earlier one."""

    @classmethod
    def completed(cls, task: Task, claimed: list[Task]) -> "TaskCompletion":
        """The answer for ``task``, completed, and the tasks claimed with it."""
        summary = attrs.asdict(TaskSummary.of(task), recurse=False)
        return cls(**summary, next_tasks=tuple(ClaimedTask.of(next_task) for next_task in claimed))


@attrs.frozen(kw_only=True, field_transformer=checked)
class TaskListResponse:
    """Answer to ``GET /v1/tasks``: a page of the tenant's tasks by id, and the next cursor."""

    tasks: tuple[TaskSummary, ...]
    """The tenant's tasks."""
    next_cursor: str | None


@attrs.frozen(kw_only=True)
class TopicQueue:
    """A topic's open tasks in one tenant as they stand at a moment (the console's overview).

    ``locked`` counts the locks still live, ``expired`` the locks past their deadline that no
    sweep or claim has released yet; ``oldest_waiting_at`` is when the oldest waiting task was
    offered (None when none waits).
    """

    topic: str
    waiting: int
    locked: int
    expired: int
    oldest_waiting_at: datetime | None
