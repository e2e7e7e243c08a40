"""The deployment-policy port: the policy in force per deployment."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ecp_core.policies.model import DeploymentPolicy


class PolicyRepository(Protocol):
    """The policy in force per deployment."""

    def put(self, policy: DeploymentPolicy) -> None:
        """Store ``policy`` as the deployment's current policy."""
        ...

    def get(self, tenant_id: str, deployment_ref: str) -> DeploymentPolicy | None:
        """The current policy, or None."""
        ...

    def of_deployments(
        self, tenant_id: str, deployment_refs: Sequence[str]
    ) -> dict[str, DeploymentPolicy]:
        """The current policies of ``deployment_refs`` (those that have one), by ref: one read."""
        ...


class WithPolicies(Protocol):
    """A unit of work that reaches the deployment policies."""

    @property
    def policies(self) -> PolicyRepository:
        """The deployment policies."""
        ...


__all__ = ["PolicyRepository", "WithPolicies"]
