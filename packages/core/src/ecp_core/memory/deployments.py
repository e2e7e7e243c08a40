"""DeploymentRepository in memory."""

import attrs

from ecp_core.deployments.model import Deployment, TenantLimits
from ecp_core.errors import exists
from ecp_core.graphs.definition import version_ref
from ecp_core.memory.tables import Repository, Tables, detached


def tenant_limits(tables: Tables, tenant_id: str) -> TenantLimits:
    """The tenant's own limits as stored (none: no limit)."""
    found: TenantLimits | None = tables.table("tenant_limits").get(tenant_id)
    return found or TenantLimits()


def deployment_limits(tables: Tables, tenant_id: str) -> dict[str, int]:
    """The limits of the tenant's deployments that have one, by ref."""
    return {
        ref: d.max_concurrent_runs
        for (t, ref), d in tables.table("deployments").items()
        if t == tenant_id and d.max_concurrent_runs is not None
    }


def limited(tables: Tables, tenant_id: str) -> bool:
    """Whether the tenant or any of its deployments has a concurrency limit."""
    own = tenant_limits(tables, tenant_id).max_concurrent_runs is not None
    return own or bool(deployment_limits(tables, tenant_id))


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

    def rebind(
        self, tenant_id: str, deployment_ref: str, graph_id: str, graph_version: int
    ) -> Deployment | None:
        """Bind the deployment to another graph version; the deployment after, or None."""
        found = self.get(tenant_id, deployment_ref)
        if found is None:
            return None
        changed = attrs.evolve(
            found,
            graph_id=graph_id,
            graph_version=graph_version,
            graph_version_ref=version_ref(graph_id, graph_version),
        )
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

    def set_limit(
        self, tenant_id: str, deployment_ref: str, max_concurrent_runs: int | None
    ) -> Deployment | None:
        """Set (None: lift) the deployment's concurrency limit; the deployment after, or None."""
        found = self.get(tenant_id, deployment_ref)
        if found is None:
            return None
        changed = attrs.evolve(found, max_concurrent_runs=max_concurrent_runs)
        self._t.put("deployments", (tenant_id, deployment_ref), changed)
        return changed

    @detached
    def tenant_limits(self, tenant_id: str) -> TenantLimits:
        """The tenant's own limits (none set: no limit)."""
        return tenant_limits(self._t, tenant_id)

    def set_tenant_limit(self, tenant_id: str, max_concurrent_runs: int | None) -> TenantLimits:
        """Set (None: lift) the tenant's concurrency limit; the limits after."""
        after = TenantLimits(max_concurrent_runs=max_concurrent_runs)
        self._t.put("tenant_limits", tenant_id, after)
        return after

    def limited(self, tenant_id: str) -> bool:
        """Whether the tenant or any of its deployments has a concurrency limit."""
        return limited(self._t, tenant_id)
