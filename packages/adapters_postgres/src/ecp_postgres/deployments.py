"""DeploymentRepository on PostgreSQL."""

from ecp_core.deployments.model import Deployment
from ecp_core.errors import exists
from ecp_postgres.rows import Repository, Table

DEPLOYMENTS = Table("ecp_deployments", Deployment)


class PostgresDeployments(Repository):
    """DeploymentRepository on PostgreSQL."""

    def add(self, deployment: Deployment) -> None:
        """Store a new deployment."""
        self._insert(DEPLOYMENTS, deployment, exists("deployment", deployment.deployment_ref))

    def get(self, tenant_id: str, deployment_ref: str) -> Deployment | None:
        """One deployment, or None."""
        return self._one(
            DEPLOYMENTS, "tenant_id = %s AND deployment_ref = %s", (tenant_id, deployment_ref)
        )

    def page(self, tenant_id: str, *, limit: int, after: str | None = None) -> list[Deployment]:
        """The tenant's deployments by ref, after ``after``."""
        if after is None:
            return self._all(
                DEPLOYMENTS,
                "WHERE tenant_id = %s ORDER BY deployment_ref LIMIT %s",
                (tenant_id, limit),
            )
        return self._all(
            DEPLOYMENTS,
            "WHERE tenant_id = %s AND deployment_ref > %s ORDER BY deployment_ref LIMIT %s",
            (tenant_id, after, limit),
        )
