"""Deployments: a named, tenant-scoped binding of a graph version that runs start from."""

from datetime import datetime
from typing import Annotated

from ecp_core.constraints import AwareUtc, Range, Text, model
from ecp_core.graphs.definition import IDENTIFIER

DeploymentRef = Annotated[str, Text(1, 512, pattern=IDENTIFIER)]


@model
class CreateDeploymentRequest:
    """Body of ``POST /v1/deployments``; without ``graph_version`` the latest version is bound."""

    deployment_ref: DeploymentRef
    graph_id: Annotated[str, Text(1, 200)]
    graph_version: Annotated[int, Range(1)] | None = None


@model
class Deployment:
    """A deployment as stored and returned."""

    tenant_id: str
    deployment_ref: str
    graph_id: str
    graph_version: int
    graph_version_ref: str
    created_at: Annotated[datetime, AwareUtc()]


__all__ = ["CreateDeploymentRequest", "Deployment", "DeploymentRef"]
