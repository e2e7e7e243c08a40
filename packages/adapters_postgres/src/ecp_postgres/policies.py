"""PolicyRepository (deployment policies) on PostgreSQL."""

from ecp_core.policies.model import DeploymentPolicy
from ecp_postgres.rows import Repository, Table

POLICIES = Table("ecp_policies", DeploymentPolicy, jsonb=["deny_capabilities"])


class PostgresPolicies(Repository):
    """PolicyRepository on PostgreSQL: one row per deployment, replaced by each put."""

    def put(self, policy: DeploymentPolicy) -> None:
        """Store the current policy."""
        sets = ", ".join(f"{c} = EXCLUDED.{c}" for c in POLICIES.columns)
        self._conn.execute(
            f"{POLICIES.insert_sql()} ON CONFLICT (tenant_id, deployment_ref) DO UPDATE SET {sets}",
            POLICIES.params(policy),
        )

    def get(self, tenant_id: str, deployment_ref: str) -> DeploymentPolicy | None:
        """The current policy, or None."""
        return self._one(
            POLICIES, "tenant_id = %s AND deployment_ref = %s", (tenant_id, deployment_ref)
        )
