"""An external task: one offer of a task node's work to the workers of its topic."""

import enum
import secrets
from datetime import datetime
from typing import Annotated, Any

import attrs

from ecp_core.constraints import AwareUtc, Range, Text, checked

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
