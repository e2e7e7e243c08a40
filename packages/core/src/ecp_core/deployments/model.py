"""Deployment requests and deployments as stored."""

from datetime import datetime
from typing import Annotated

import attrs

from ecp_core.constraints import AwareUtc, Range, Text, checked
from ecp_core.graphs.definition import IDENTIFIER

DeploymentRef = Annotated[str, Text(1, 512, pattern=IDENTIFIER)]

MAX_CONCURRENT_RUNS_CAP = 100_000
"""The largest concurrency limit accepted (ADR 0079)."""

ConcurrencyLimit = Annotated[int, Range(1, MAX_CONCURRENT_RUNS_CAP)] | None
"""How many runs may hold a slot at once; None: no limit."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class CreateDeploymentRequest:
    """Body of ``POST /v1/deployments``; without ``graph_version`` the latest version is bound."""

    deployment_ref: DeploymentRef
    graph_id: Annotated[str, Text(1, 200)]
    graph_version: Annotated[int, Range(1)] | None = None
    """The graph version to bind; the latest when left out."""
    max_concurrent_runs: ConcurrencyLimit = None
    """At most this many of the deployment's runs run at once (1 to 100,000); null or left out:
    no limit. The rest wait `pending`, in order."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class LimitsRequest:
    """Body of ``PUT /v1/deployments/{ref}/limits`` and ``PUT /v1/limits``."""

    max_concurrent_runs: ConcurrencyLimit
    """At most this many runs run at once (1 to 100,000); null: no limit. Runs waiting for a
    person, a worker or a child run do not count."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class TenantLimits:
    """A tenant's own limits (``GET /v1/limits``), over all its deployments."""

    max_concurrent_runs: int | None = None
    """At most this many of the tenant's runs run at once; null: no limit."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class Deployment:
    """A deployment as stored and returned."""

    tenant_id: str
    deployment_ref: str
    graph_id: str
    graph_version: int
    """The graph version the deployment runs."""
    graph_version_ref: str
    created_at: Annotated[datetime, AwareUtc()]
    paused: bool = False
    """While true the deployment accepts and queues new runs and dispatches none of its runs."""
    max_concurrent_runs: int | None = None
    """At most this many of its runs run at once; null: no limit (ADR 0079)."""


__all__ = [
    "MAX_CONCURRENT_RUNS_CAP",
    "ConcurrencyLimit",
    "CreateDeploymentRequest",
    "Deployment",
    "DeploymentRef",
    "LimitsRequest",
    "TenantLimits",
]
