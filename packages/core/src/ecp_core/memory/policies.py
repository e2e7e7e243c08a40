"""PolicyRepository (deployment policies) in memory."""

from collections.abc import Sequence

from ecp_core.memory.tables import Repository, detached
from ecp_core.policies.model import DeploymentPolicy


class MemoryPolicies(Repository):
    """The current policy keyed by (tenant, deployment ref)."""

    def put(self, policy: DeploymentPolicy) -> None:
        """Store the current policy."""
        self._t.put("policies", (policy.tenant_id, policy.deployment_ref), policy)

    @detached
    def get(self, tenant_id: str, deployment_ref: str) -> DeploymentPolicy | None:
        """The current policy, or None."""
        found: DeploymentPolicy | None = self._t.table("policies").get((tenant_id, deployment_ref))
        return found

    @detached
    def of_deployments(
        self, tenant_id: str, deployment_refs: Sequence[str]
    ) -> dict[str, DeploymentPolicy]:
        """The current policies of ``deployment_refs`` that have one, by ref."""
        table = self._t.table("policies")
        return {ref: table[(tenant_id, ref)] for ref in deployment_refs if (tenant_id, ref) in table}
