"""Deployments: a named, tenant-scoped binding of a graph version that runs start from."""

from ecp_core.deployments.model import CreateDeploymentRequest, Deployment, DeploymentRef

__all__ = ["CreateDeploymentRequest", "Deployment", "DeploymentRef"]
