"""The deployment port: deployments per tenant."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ecp_core.deployments.model import Deployment, TenantLimits


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

    def rebind(
        self, tenant_id: str, deployment_ref: str, graph_id: str, graph_version: int
    ) -> Deployment | None:
        """Bind the deployment to another graph version (new runs run it); after, or None."""
        ...

    def page(self, tenant_id: str, *, limit: int, after: str | None = None) -> list[Deployment]:
        """Up to ``limit`` deployments by ref (code point order), after ``after`` when given."""
        ...

    def set_limit(
        self, tenant_id: str, deployment_ref: str, max_concurrent_runs: int | None
    ) -> Deployment | None:
        """Set (None: lift) the deployment's concurrency limit; the deployment after, or None.

        Limit writes of one tenant take turns (and with its admissions, ADR 0079), so
        :meth:`limited` stays exact.
        """
        ...

    def tenant_limits(self, tenant_id: str) -> TenantLimits:
        """The tenant's own limits (none set: no limit)."""
        ...

    def set_tenant_limit(self, tenant_id: str, max_concurrent_runs: int | None) -> TenantLimits:
        """Set (None: lift) the tenant's concurrency limit over all its deployments; after."""
        ...

    def limited(self, tenant_id: str) -> bool:
        """Whether the tenant or any of its deployments has a concurrency limit.

        Only then may a run of the tenant need admission by the claim before an attempt.
        """
        ...


class WithDeployments(Protocol):
    """A unit of work that reaches the deployments."""

    @property
    def deployments(self) -> DeploymentRepository:
        """The deployments."""
        ...


__all__ = ["DeploymentRepository", "WithDeployments"]
