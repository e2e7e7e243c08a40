"""PolicyRepository (deployment policies) on PostgreSQL."""

from collections.abc import Sequence

from ecp_core.policies.model import DeploymentPolicy
from ecp_postgres.rows import Repository, Table

POLICIES = Table("ecp_policies", DeploymentPolicy, jsonb=["deny_capabilities"])


def policy_key(tenant_id: str, deployment_ref: str) -> tuple[str, str, str]:
    """The memo key of a deployment's policy (see :mod:`ecp_postgres.session`)."""
    return ("policy", tenant_id, deployment_ref)


class PostgresPolicies(Repository):
    """PolicyRepository on PostgreSQL: one row per deployment, replaced by each put."""

    def put(self, policy: DeploymentPolicy) -> None:
        """Store the current policy."""
        self._memo().pop(policy_key(policy.tenant_id, policy.deployment_ref), None)
        sets = ", ".join(f"{c} = EXCLUDED.{c}" for c in POLICIES.columns)
        self._conn.execute(
            f"{POLICIES.insert_sql()} ON CONFLICT (tenant_id, deployment_ref) DO UPDATE SET {sets}",
            POLICIES.params(policy),
        )

    def get(self, tenant_id: str, deployment_ref: str) -> DeploymentPolicy | None:
        """The current policy, or None (read once per transaction)."""
        memo = self._memo()
        key = policy_key(tenant_id, deployment_ref)
        if key not in memo:
            memo[key] = self._one(
                POLICIES, "tenant_id = %s AND deployment_ref = %s", (tenant_id, deployment_ref)
            )
        policy: DeploymentPolicy | None = memo[key]
        return policy

    def of_deployments(
        self, tenant_id: str, deployment_refs: Sequence[str]
    ) -> dict[str, DeploymentPolicy]:
        """The current policies of ``deployment_refs`` that have one, by ref (one statement)."""
        if not deployment_refs:
            return {}
        found = self._all(
            POLICIES,
            "WHERE tenant_id = %s AND deployment_ref = ANY(%s)",
            (tenant_id, list(deployment_refs)),
        )
        return {policy.deployment_ref: policy for policy in found}
