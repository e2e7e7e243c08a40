"""DeploymentRepository in memory."""

import attrs

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

    def set_paused(self, tenant_id: str, deployment_ref: str, *, paused: bool) -> Deployment | None:
        """Pause or unpause the deployment; the deployment after, or None."""
        found = self.get(tenant_id, deployment_ref)
        if found is None:
            return None
        changed = attrs.evolve(found, paused=paused)
        self._t.put("deployments", (tenant_id, deployment_ref), changed)
        return changed

    @detached
    def page(self, tenant_id: str, *, limit: int, after: str | None = None) -> list[Deployment]:
        """The tenant's deployments by ref, after ``after``."""
        found = sorted(
            (
                d
                for (t, ref), d in self._t.table("deployments").items()
                if t == tenant_id and (after is None or ref > after)
            ),
            key=lambda d: d.deployment_ref,
        )
        return found[:limit]
