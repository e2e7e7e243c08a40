"""The API's tasks models, generated from clients/openapi.json: do not edit by hand.

``make clients`` (scripts/generate_python_client.py) writes this package; a test fails when it
is stale. Enumerations are plain ``str`` and unknown keys are ignored, so that a newer server's
answer still reads; a discriminated union (a graph's nodes) stays a ``dict``.
"""

from datetime import datetime
from typing import Any

import attrs

__all__ = [
    "ClaimedTask",
    "TaskClaimResponse",
    "TaskCompletion",
    "TaskListResponse",
    "TaskLockResponse",
    "TaskSummary",
]


@attrs.frozen(kw_only=True)
class ClaimedTask:
    """A task as its claiming worker gets it: the work, and the token that holds it."""

    arguments: dict[str, Any]
    """The task's arguments, from the node."""
    attempt: int
    """Which attempt this is (1 on the first)."""
    lock_token: str = attrs.field(repr=False)
    """Proves the worker holds the task; sent back with heartbeat, complete and fail."""
    locked_until: datetime
    """When the worker's hold on the task ends unless a heartbeat extends it."""
    node_id: str
    """The id of a node of the run's graph."""
    run_id: str
    """The run's id."""
    state: dict[str, Any]
    """The run's state when the task was queued."""
    task_id: str
    """The task's id."""
    topic: str
    """The topic the task was queued on."""


@attrs.frozen(kw_only=True)
class TaskClaimResponse:
    """Answer to a claim: the tasks now locked for the worker (none when nothing was claimable)."""

    tasks: list[ClaimedTask]
    """The tasks claimed; empty when none was ready."""


@attrs.frozen(kw_only=True)
class TaskCompletion:
    """Answer to a completion: the task, and the next tasks claimed when ``claim_next`` asked."""

    attempt: int
    """How many attempts were made."""
    created_at: datetime
    """When it was created (RFC 3339, UTC)."""
    error: str | None
    """The last attempt's error."""
    locked_until: datetime | None
    """When the worker's hold on the task ends unless a heartbeat extends it."""
    max_attempts: int
    """How many attempts are allowed."""
    next_tasks: list[ClaimedTask]
    """The tasks ``claim_next`` claimed for the worker; empty when it was not given, when none was ready, or when this completion repeated an earlier one."""
    node_id: str
    """The id of a node of the run's graph."""
    not_before: datetime | None
    """When it may be claimed next (RFC 3339, UTC)."""
    run_id: str
    """The run's id."""
    status: str
    """Where the task is in its life."""
    task_id: str
    """The task's id."""
    topic: str
    """The topic the task was queued on."""
    updated_at: datetime
    """When it last changed (RFC 3339, UTC)."""
    worker_id: str | None
    """The worker holding it, if one does."""


@attrs.frozen(kw_only=True)
class TaskSummary:
    """A task as operators list it: where it stands and who holds it, never its lock token."""

    attempt: int
    """How many attempts were made."""
    created_at: datetime
    """When it was created (RFC 3339, UTC)."""
    error: str | None
    """The last attempt's error."""
    locked_until: datetime | None
    """When the worker's hold on the task ends unless a heartbeat extends it."""
    max_attempts: int
    """How many attempts are allowed."""
    node_id: str
    """The id of a node of the run's graph."""
    not_before: datetime | None
    """When it may be claimed next (RFC 3339, UTC)."""
    run_id: str
    """The run's id."""
    status: str
    """Where the task is in its life."""
    task_id: str
    """The task's id."""
    topic: str
    """The topic the task was queued on."""
    updated_at: datetime
    """When it last changed (RFC 3339, UTC)."""
    worker_id: str | None
    """The worker holding it, if one does."""


@attrs.frozen(kw_only=True)
class TaskListResponse:
    """Answer to ``GET /v1/tasks``: a page of the tenant's tasks by id, and the next cursor."""

    next_cursor: str | None
    """The cursor of the next page (also in the `Link` header); null on the last."""
    tasks: list[TaskSummary]
    """The tenant's tasks."""


@attrs.frozen(kw_only=True)
class TaskLockResponse:
    """Answer to a heartbeat: until when the worker now holds the task."""

    locked_until: datetime
    """When the worker's hold on the task ends unless a heartbeat extends it."""
    task_id: str
    """The task's id."""
