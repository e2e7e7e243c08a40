"""DeploymentRepository on PostgreSQL."""

from ecp_core.deployments.model import Deployment
from ecp_core.errors import exists
from ecp_postgres.rows import Repository, Table
from ecp_postgres.run_context import context_columns, context_joins, remember

DEPLOYMENTS = Table("ecp_deployments", Deployment)

_GET = f"""
SELECT {", ".join(f"d.{c}" for c in DEPLOYMENTS.columns)},
       {context_columns("d")}
  FROM ecp_deployments d{context_joins("d")}
 WHERE d.tenant_id = %s AND d.deployment_ref = %s
"""  # noqa: S608 - column names are ours
"""A deployment with the context its runs' attempts read (:mod:`ecp_postgres.run_context`)."""

_SET_PAUSED = f"""
UPDATE ecp_deployments SET paused = %s WHERE tenant_id = %s AND deployment_ref = %s
RETURNING {", ".join(DEPLOYMENTS.columns)}
"""  # noqa: S608 - column names are ours


class PostgresDeployments(Repository):
    """DeploymentRepository on PostgreSQL."""

    def add(self, deployment: Deployment) -> None:
        """Store a new deployment."""
        self._insert(DEPLOYMENTS, deployment, exists("deployment", deployment.deployment_ref))

    def get(self, tenant_id: str, deployment_ref: str) -> Deployment | None:
        """One deployment, or None.

        The same statement reads what a run of the deployment needs for its attempts, which the
        transaction remembers (:mod:`ecp_postgres.run_context`): a start reads the deployment,
        then adds and attempts its run without another read (ADR 0067).
        """
        row = self._conn.execute(_GET, (tenant_id, deployment_ref)).fetchone()
        if row is None:
            return None
        remember(self._conn, row, tenant_id, deployment_ref, read_subscriptions=False)
        return DEPLOYMENTS.load(row)

    def set_paused(self, tenant_id: str, deployment_ref: str, *, paused: bool) -> Deployment | None:
        """Pause or unpause the deployment (its row held until commit); the deployment after."""
        row = self._conn.execute(_SET_PAUSED, (paused, tenant_id, deployment_ref)).fetchone()
        return None if row is None else DEPLOYMENTS.load(row)

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
