"""The API's deployments models, generated from clients/openapi.json: do not edit by hand.

``make clients`` (scripts/generate_python_client.py) writes this package; a test fails when it
is stale. Enumerations are plain ``str`` and unknown keys are ignored, so that a newer server's
answer still reads; a discriminated union (a graph's nodes) stays a ``dict``.
"""

from datetime import datetime

import attrs

__all__ = [
    "Deployment",
    "DeploymentListResponse",
]


@attrs.frozen(kw_only=True)
class Deployment:
    """A deployment as stored and returned."""

    created_at: datetime
    """When it was created (RFC 3339, UTC)."""
    deployment_ref: str
    """The deployment's name within the tenant."""
    graph_id: str
    """The graph's id within the tenant."""
    graph_version: int
    """The graph version the deployment runs."""
    graph_version_ref: str
    """The graph version, as `<graph_id>@<version>`."""
    max_concurrent_runs: int | None = None
    """At most this many of its runs run at once; null: no limit (ADR 0079)."""
    paused: bool = False
    """While true the deployment accepts and queues new runs and dispatches none of its runs."""
    tenant_id: str
    """The tenant it belongs to; every read and write is scoped to the caller's."""


@attrs.frozen(kw_only=True)
class DeploymentListResponse:
    """The tenant's deployments by deployment_ref; ``next_cursor`` when more remain."""

    deployments: list[Deployment]
    """The tenant's deployments."""
    next_cursor: str | None = None
    """The cursor of the next page (also in the `Link` header); null on the last."""
