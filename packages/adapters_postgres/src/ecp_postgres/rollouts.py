"""RolloutRepository on PostgreSQL."""

from collections.abc import Collection
from datetime import datetime

from ecp_core.errors import Conflict
from ecp_core.rollouts.model import Assignment, Rollout
from ecp_postgres.deployments import rollout_key
from ecp_postgres.rows import Repository, Table

ROLLOUTS = Table("ecp_rollouts", Rollout, jsonb=["arms"])
ASSIGNMENTS = Table("ecp_rollout_assignments", Assignment)

_ASSIGN = f"""
WITH added AS ({ASSIGNMENTS.insert_sql(on_conflict_nothing=True)} RETURNING arm, assigned_at)
SELECT arm, assigned_at FROM added
 UNION ALL
SELECT arm, assigned_at FROM ecp_rollout_assignments
 WHERE tenant_id = %(tenant_id)s AND rollout_id = %(rollout_id)s AND period = %(period)s
   AND unit_id = %(unit_id)s
"""  # noqa: S608 - column names are ours
"""Adds the unit's assignment or, when one is recorded, reads it (the insert's snapshot cannot
see its own row, so at most one branch answers)."""

_RECORDED = """
SELECT arm, assigned_at FROM ecp_rollout_assignments
 WHERE tenant_id = %(tenant_id)s AND rollout_id = %(rollout_id)s AND period = %(period)s
   AND unit_id = %(unit_id)s
"""


class PostgresRollouts(Repository):
    """RolloutRepository on PostgreSQL; a partial unique index keeps one active per deployment."""

    def add(self, rollout: Rollout) -> None:
        """Store a new rollout."""
        self._memo().pop(rollout_key(rollout.tenant_id, rollout.deployment_ref), None)
        msg = f"deployment {rollout.deployment_ref!r} has an active rollout"
        self._insert(ROLLOUTS, rollout, Conflict(msg))

    def get(self, tenant_id: str, rollout_id: str) -> Rollout | None:
        """One rollout, or None."""
        return self._one(ROLLOUTS, "tenant_id = %s AND rollout_id = %s", (tenant_id, rollout_id))

    def active(self, tenant_id: str, deployment_ref: str) -> Rollout | None:
        """The deployment's active rollout, or None (no read when its deployment read said so)."""
        if self._memo().get(rollout_key(tenant_id, deployment_ref)) is False:
            return None
        return self._one(
            ROLLOUTS,
            "tenant_id = %s AND deployment_ref = %s AND status = 'active'",
            (tenant_id, deployment_ref),
        )

    def replace(self, rollout: Rollout) -> None:
        """Store the rollout's new state (matched on tenant and id)."""
        self._memo().pop(rollout_key(rollout.tenant_id, rollout.deployment_ref), None)
        sets = ", ".join(
            f"{c} = %({c})s" for c in ROLLOUTS.columns if c not in ("tenant_id", "rollout_id")
        )
        self._conn.execute(
            f"UPDATE ecp_rollouts SET {sets}"  # noqa: S608 - column names are ours
            " WHERE tenant_id = %(tenant_id)s AND rollout_id = %(rollout_id)s",
            ROLLOUTS.params(rollout),
        )

    def page(self, tenant_id: str, *, limit: int, after: str | None = None) -> list[Rollout]:
        """The tenant's rollouts by id, after ``after``."""
        if after is None:
            return self._all(
                ROLLOUTS, "WHERE tenant_id = %s ORDER BY rollout_id LIMIT %s", (tenant_id, limit)
            )
        return self._all(
            ROLLOUTS,
            "WHERE tenant_id = %s AND rollout_id > %s ORDER BY rollout_id LIMIT %s",
            (tenant_id, after, limit),
        )

    def assign(self, assignment: Assignment) -> Assignment:
        """Record the unit's first assignment in its period; the recorded one."""
        params = ASSIGNMENTS.params(assignment)
        row = self._conn.execute(_ASSIGN, params).fetchone()
        if row is None:  # a concurrent first assignment committed after this statement began
            row = self._conn.execute(_RECORDED, params).fetchone()
        assert row is not None  # noqa: S101 - recorded by now, by this or another transaction
        return Assignment(
            tenant_id=assignment.tenant_id,
            rollout_id=assignment.rollout_id,
            period=assignment.period,
            unit_id=assignment.unit_id,
            arm=row["arm"],
            assigned_at=row["assigned_at"],
        )

    def assignments(
        self, tenant_id: str, rollout_id: str, period: int
    ) -> list[tuple[int, datetime]]:
        """The (arm, assigned_at) of the period's assignments, oldest first."""
        rows = self._conn.execute(
            "SELECT arm, assigned_at FROM ecp_rollout_assignments"
            " WHERE tenant_id = %s AND rollout_id = %s AND period = %s ORDER BY assigned_at",
            (tenant_id, rollout_id, period),
        ).fetchall()
        return [(row["arm"], row["assigned_at"]) for row in rows]

    def unit_arms(
        self, tenant_id: str, rollout_id: str, unit_ids: Collection[str]
    ) -> dict[str, frozenset[int]]:
        """The arms each of ``unit_ids`` was assigned in any period (units never assigned: none)."""
        rows = self._conn.execute(
            "SELECT unit_id, array_agg(DISTINCT arm) AS arms FROM ecp_rollout_assignments"
            " WHERE tenant_id = %s AND rollout_id = %s AND unit_id = ANY(%s) GROUP BY unit_id",
            (tenant_id, rollout_id, list(unit_ids)),
        ).fetchall()
        return {row["unit_id"]: frozenset(row["arms"]) for row in rows}


__all__ = ["PostgresRollouts"]
