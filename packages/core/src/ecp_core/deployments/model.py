"""Deployment requests and deployments as stored."""

from datetime import datetime
from typing import Annotated

import attrs

from ecp_core.constraints import AwareUtc, Range, Text, checked
from ecp_core.graphs.definition import IDENTIFIER

DeploymentRef = Annotated[str, Text(1, 512, pattern=IDENTIFIER)]


@attrs.frozen(kw_only=True, field_transformer=checked)
class CreateDeploymentRequest:
    """Body of ``POST /v1/deployments``; without ``graph_version`` the latest version is bound."""

    deployment_ref: DeploymentRef
    graph_id: Annotated[str, Text(1, 200)]
    graph_version: Annotated[int, Range(1)] | None = None
    """The graph version to bind; the latest when left out."""


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


__all__ = ["CreateDeploymentRequest", "Deployment", "DeploymentRef"]
