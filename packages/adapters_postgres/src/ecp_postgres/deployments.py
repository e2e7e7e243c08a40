"""DeploymentRepository on PostgreSQL."""

from ecp_core.deployments.model import Deployment, TenantLimits
from ecp_core.errors import exists
from ecp_core.graphs.definition import version_ref
from ecp_postgres.rows import Repository, Table
from ecp_postgres.run_context import context_columns, context_joins, limited_key, remember

DEPLOYMENTS = Table("ecp_deployments", Deployment)

_GET = f"""
SELECT {", ".join(f"d.{c}" for c in DEPLOYMENTS.columns)},
       {context_columns("d")},
       EXISTS (SELECT 1 FROM ecp_rollouts o
                WHERE o.tenant_id = d.tenant_id AND o.deployment_ref = d.deployment_ref
                  AND o.status = 'active') AS rollout_active
  FROM ecp_deployments d{context_joins("d")}
 WHERE d.tenant_id = %s AND d.deployment_ref = %s
"""  # noqa: S608 - column names are ours
"""A deployment with the context its runs' attempts read (:mod:`ecp_postgres.run_context`) and
whether it has an active rollout, which the transaction remembers (``rollout_key``): a start
under no rollout then asks nothing more (ADR 0089)."""


def rollout_key(tenant_id: str, deployment_ref: str) -> tuple[str, str, str]:
    """The transaction memo's key for whether the deployment has an active rollout."""
    return ("rollout_active", tenant_id, deployment_ref)


_SET_PAUSED = f"""
UPDATE ecp_deployments SET paused = %s WHERE tenant_id = %s AND deployment_ref = %s
RETURNING {", ".join(DEPLOYMENTS.columns)}
"""  # noqa: S608 - column names are ours

_SET_LIMIT = f"""
UPDATE ecp_deployments SET max_concurrent_runs = %s WHERE tenant_id = %s AND deployment_ref = %s
RETURNING {", ".join(DEPLOYMENTS.columns)}
"""  # noqa: S608 - column names are ours

_REBIND = f"""
UPDATE ecp_deployments SET graph_id = %s, graph_version = %s, graph_version_ref = %s
 WHERE tenant_id = %s AND deployment_ref = %s
RETURNING {", ".join(DEPLOYMENTS.columns)}
"""  # noqa: S608 - column names are ours

_TAKE_TURN = """
INSERT INTO ecp_tenant_limits (tenant_id) VALUES (%s)
    ON CONFLICT (tenant_id) DO UPDATE SET tenant_id = EXCLUDED.tenant_id
"""
"""The tenant's limits row, made if missing and held until commit: a tenant's limit writes take
turns on it, and with its admissions (``ecp_admit_run``, migration ``core_0013``)."""

_TIDY = """
DELETE FROM ecp_tenant_limits l
 WHERE l.tenant_id = %s AND l.max_concurrent_runs IS NULL
   AND NOT EXISTS (SELECT 1 FROM ecp_deployments d
                    WHERE d.tenant_id = l.tenant_id AND d.max_concurrent_runs IS NOT NULL)
"""
"""The row goes once the tenant has no limit left, so that its presence says the tenant has one
(read after :data:`_TAKE_TURN`, this statement sees every limit write committed before)."""


class PostgresDeployments(Repository):
    """DeploymentRepository on PostgreSQL."""

    def add(self, deployment: Deployment) -> None:
        """Store a new deployment (one with a limit marks its tenant as having limits)."""
        if deployment.max_concurrent_runs is not None:
            self._conn.execute(_TAKE_TURN, (deployment.tenant_id,))
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
        self._memo()[rollout_key(tenant_id, deployment_ref)] = bool(row["rollout_active"])
        return DEPLOYMENTS.load(row)

    def set_paused(self, tenant_id: str, deployment_ref: str, *, paused: bool) -> Deployment | None:
        """Pause or unpause the deployment (its row held until commit); the deployment after."""
        row = self._conn.execute(_SET_PAUSED, (paused, tenant_id, deployment_ref)).fetchone()
        return None if row is None else DEPLOYMENTS.load(row)

    def rebind(
        self, tenant_id: str, deployment_ref: str, graph_id: str, graph_version: int
    ) -> Deployment | None:
        """Bind the deployment to another graph version; the deployment after, or None."""
        ref = version_ref(graph_id, graph_version)
        row = self._conn.execute(
            _REBIND, (graph_id, graph_version, ref, tenant_id, deployment_ref)
        ).fetchone()
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

    def set_limit(
        self, tenant_id: str, deployment_ref: str, max_concurrent_runs: int | None
    ) -> Deployment | None:
        """Set (None: lift) the deployment's limit, its tenant's limits row held; after, or None."""
        self._conn.execute(_TAKE_TURN, (tenant_id,))
        row = self._conn.execute(
            _SET_LIMIT, (max_concurrent_runs, tenant_id, deployment_ref)
        ).fetchone()
        self._conn.execute(_TIDY, (tenant_id,))
        return None if row is None else DEPLOYMENTS.load(row)

    def tenant_limits(self, tenant_id: str) -> TenantLimits:
        """The tenant's own limits (no row: no limit)."""
        row = self._conn.execute(
            "SELECT max_concurrent_runs FROM ecp_tenant_limits WHERE tenant_id = %s", (tenant_id,)
        ).fetchone()
        return TenantLimits() if row is None else TenantLimits(**row)

    def set_tenant_limit(self, tenant_id: str, max_concurrent_runs: int | None) -> TenantLimits:
        """Set (None: lift) the tenant's limit, its limits row held until commit; the limits after."""
        self._conn.execute(_TAKE_TURN, (tenant_id,))
        self._conn.execute(
            "UPDATE ecp_tenant_limits SET max_concurrent_runs = %s WHERE tenant_id = %s",
            (max_concurrent_runs, tenant_id),
        )
        self._conn.execute(_TIDY, (tenant_id,))
        return TenantLimits(max_concurrent_runs=max_concurrent_runs)

    def limited(self, tenant_id: str) -> bool:
        """Whether the tenant has a limits row; remembered from a lock or deployment read."""
        memo = self._memo()
        key = limited_key(tenant_id)
        if key not in memo:
            row = self._conn.execute(
                "SELECT EXISTS (SELECT 1 FROM ecp_tenant_limits WHERE tenant_id = %s) AS limited",
                (tenant_id,),
            ).fetchone()
            memo[key] = bool(row and row["limited"])
        return bool(memo[key])
