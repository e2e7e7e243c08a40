"""The deployment port: deployments per tenant."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ecp_core.deployments.model import Deployment


class DeploymentRepository(Protocol):
    """Deployments per tenant."""

    def add(self, deployment: Deployment) -> None:
        """Store a new deployment (Conflict when the ref exists)."""
        ...

    def get(self, tenant_id: str, deployment_ref: str) -> Deployment | None:
        """One deployment, or None."""
        ...

    def set_paused(self, tenant_id: str, deployment_ref: str, *, paused: bool) -> Deployment | None:
        """Pause or unpause the deployment, held until commit; the deployment after, or None."""
        ...

    def page(self, tenant_id: str, *, limit: int, after: str | None = None) -> list[Deployment]:
        """Up to ``limit`` deployments by ref (code point order), after ``after`` when given."""
        ...


class WithDeployments(Protocol):
    """A unit of work that reaches the deployments."""

    @property
    def deployments(self) -> DeploymentRepository:
        """The deployments."""
        ...


__all__ = ["DeploymentRepository", "WithDeployments"]
