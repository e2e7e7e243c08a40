"""DeploymentRepository in memory."""

from ecp_core.deployments.model import Deployment
from ecp_core.errors import exists
from ecp_core.memory.tables import Repository, detached


class MemoryDeployments(Repository):
    """Deployments keyed by (tenant, ref)."""

    def add(self, deployment: Deployment) -> None:
        """Store a new deployment."""
        key = (deployment.tenant_id, deployment.deployment_ref)
        if key in self._t.table("deployments"):
            raise exists("deployment", deployment.deployment_ref)
        self._t.put("deployments", key, deployment)

    @detached
    def get(self, tenant_id: str, deployment_ref: str) -> Deployment | None:
        """One deployment, or None."""
        found: Deployment | None = self._t.table("deployments").get((tenant_id, deployment_ref))
        return found
