"""The API's runs models, generated from clients/openapi.json: do not edit by hand.

``make clients`` (scripts/generate_python_client.py) writes this package; a test fails when it
is stale. Enumerations are plain ``str`` and unknown keys are ignored, so that a newer server's
answer still reads; a discriminated union (a graph's nodes) stays a ``dict``.
"""

from datetime import datetime
from typing import Any

import attrs

__all__ = [
    "AdminRunListResponse",
    "ApprovalPausedState",
    "FailureState",
    "RunStatusResponse",
]


@attrs.frozen(kw_only=True)
class ApprovalPausedState:
    """Where a run waits for an approval, and the payload the reviewer sees."""

    approval_id: str | None = None
    """The approval's id."""
    input_payload: dict[str, Any] = attrs.Factory(dict)
    """The payload under review."""
    node_id: str
    """The id of a node of the run's graph."""


@attrs.frozen(kw_only=True)
class FailureState:
    """Why a run failed: a stable ``reason`` code, the node, and a message."""

    message: str | None = None
    """What happened, for a person."""
    node_id: str | None = None
    """The id of a node of the run's graph."""
    reason: str
    """A stable code of why the run failed (docs/api/errors.md lists them)."""


@attrs.frozen(kw_only=True)
class RunStatusResponse:
    """A run as clients see it."""

    arm: int | None = None
    """The rollout arm the run was assigned (its number); null without a rollout."""
    campaign_id: str | None
    """The campaign the run counts toward, which its child runs inherit; null when none."""
    created_at: datetime
    """When it was created (RFC 3339, UTC)."""
    deployment_ref: str
    """The deployment's name within the tenant."""
    failure_state: FailureState | None
    """Why the run failed; null unless it did."""
    graph_version_ref: str
    """The graph version, as `<graph_id>@<version>`."""
    output: dict[str, Any] | None
    """The run's final state once it completed; null before."""
    parent_run_id: str | None
    """For a child run: the run whose subgraph node started it."""
    paused: ApprovalPausedState | None = None
    """While the run waits for an approval: the node, the approval and the payload under review."""
    pending_approval_ids: list[str]
    """The approvals the run waits for."""
    priority: int = 5
    """0 to 9: higher runs first within the tenant's dispatch."""
    rollout_id: str | None = None
    """The rollout that assigned the run its graph version; null when none did."""
    run_id: str
    """The run's id."""
    started_by: str | None = None
    """Who started the run (the caller's subject; a child run's is its root run's); null when it was started without one."""
    status: str
    """Where the run is."""
    tenant_id: str
    """The tenant it belongs to; every read and write is scoped to the caller's."""
    thread_id: str
    """The thread the run belongs to; runs started with the same thread share it."""
    updated_at: datetime
    """When it last changed (RFC 3339, UTC)."""
    wait_until: datetime | None = None
    """While the run waits at a wait node (`waiting_timer`): when it goes on; null otherwise."""


@attrs.frozen(kw_only=True)
class AdminRunListResponse:
    """``GET /admin/runs``: a page of runs and the total."""

    runs: list[RunStatusResponse]
    """The page of runs, newest first."""
    total: int
    """How many runs the tenant has."""
